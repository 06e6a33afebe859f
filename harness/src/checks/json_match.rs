//! The JSON condition shared by `json`, `every_event` and `poll_until`.

use serde_json::Value;

use crate::case::{JsonExpect, JsonType};
use crate::template::{Scope, TemplateError};

/// Why a JSON condition does not hold: `(expected, actual)` rendered for a diff.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Mismatch {
    /// What was expected.
    pub expected: String,
    /// What was found.
    pub actual: String,
}

/// Evaluates `expect` against `document` (the pointer is resolved here).
pub(crate) fn json_condition(
    document: Option<&Value>,
    expect: &JsonExpect,
    scope: &Scope,
) -> Result<Result<(), Mismatch>, TemplateError> {
    // `*` as a whole pointer segment: the condition holds for every element of the array there
    // (`/facts/*/unit`), so a rule about every item is not read off the first one alone.
    if let Some((head, tail)) = split_wildcard(&expect.pointer) {
        let container = document.and_then(|d| {
            if head.is_empty() {
                Some(d)
            } else {
                d.pointer(head)
            }
        });
        let Some(items) = container.and_then(Value::as_array) else {
            if expect.optional == Some(true) && container.is_none() {
                return Ok(Ok(()));
            }
            return Ok(Err(Mismatch {
                expected: format!("an array at `{head}`"),
                actual: container.map_or_else(|| "(absent)".to_string(), Value::to_string),
            }));
        };
        for (i, item) in items.iter().enumerate() {
            let mut each = expect.clone();
            each.pointer = tail.to_string();
            if let Err(mismatch) = json_condition(Some(item), &each, scope)? {
                return Ok(Err(Mismatch {
                    expected: format!("at `{head}/{i}{tail}`: {}", mismatch.expected),
                    actual: mismatch.actual,
                }));
            }
        }
        return Ok(Ok(()));
    }
    let found = document.and_then(|d| d.pointer(&expect.pointer));
    let render = |v: Option<&Value>| v.map_or_else(|| "(absent)".to_string(), |v| v.to_string());
    let mismatch = |expected: String| {
        Ok(Err(Mismatch {
            expected,
            actual: render(found),
        }))
    };
    let has_value_condition = expect.equals.is_some()
        || expect.not_equals.is_some()
        || expect.one_of.is_some()
        || expect.matches.is_some()
        || expect.json_type.is_some()
        || expect.min.is_some()
        || expect.max.is_some()
        || expect.length.is_some()
        || expect.min_length.is_some()
        || expect.max_length.is_some()
        || expect.contains.is_some()
        || expect.keys.is_some()
        || expect.in_registry.is_some()
        || expect.text_absent.is_some()
        || expect.text_present.is_some();
    if expect.optional == Some(true) && found.is_none() {
        return Ok(Ok(()));
    }
    match (expect.present, found) {
        (Some(false), Some(_)) => return mismatch(format!("no member at `{}`", expect.pointer)),
        (Some(false), None) => return Ok(Ok(())),
        (_, None) if expect.present == Some(true) || has_value_condition => {
            return mismatch(format!("a member at `{}`", expect.pointer));
        }
        (_, None) => return Ok(Ok(())),
        (_, Some(_)) => {}
    }
    let value = found.expect("checked above");
    if let Some(want) = &expect.equals {
        let want = scope.expand(want)?;
        if !json_equal(value, &want) {
            return mismatch(want.to_string());
        }
    }
    if let Some(unwanted) = &expect.not_equals {
        let unwanted = scope.expand(unwanted)?;
        if json_equal(value, &unwanted) {
            return mismatch(format!("anything but {unwanted}"));
        }
    }
    if let Some(options) = &expect.one_of {
        let options: Vec<Value> = options
            .iter()
            .map(|o| scope.expand(o))
            .collect::<Result<_, _>>()?;
        if !options.iter().any(|o| json_equal(value, o)) {
            return mismatch(format!("one of {}", Value::Array(options)));
        }
    }
    if let Some(registry) = expect.in_registry
        && !registry.admits(value)
    {
        return mismatch(format!("one of {:?}", registry.members()));
    }
    if let Some(pattern) = &expect.matches {
        let matched = value
            .as_str()
            .is_some_and(|s| regex::Regex::new(pattern).is_ok_and(|r| r.is_match(s)));
        if !matched {
            return mismatch(format!("a string matching /{pattern}/"));
        }
    }
    if let Some(kind) = expect.json_type
        && !is_type(value, kind)
    {
        return mismatch(format!("a value of type {kind:?}").to_lowercase());
    }
    if let Some(min) = &expect.min {
        let min = number_bound(min, scope)?;
        if !value.as_f64().is_some_and(|v| v >= min) {
            return mismatch(format!("a number ≥ {min}"));
        }
    }
    if let Some(max) = &expect.max {
        let max = number_bound(max, scope)?;
        if !value.as_f64().is_some_and(|v| v <= max) {
            return mismatch(format!("a number ≤ {max}"));
        }
    }
    if let Some(length) = expect.length
        && length_of(value) != Some(length as usize)
    {
        return mismatch(format!("length {length}"));
    }
    if let Some(min) = &expect.min_length {
        let min = number_bound(min, scope)?;
        if !length_of(value).is_some_and(|l| l as f64 >= min) {
            return mismatch(format!("a length ≥ {min}"));
        }
    }
    if let Some(max) = &expect.max_length {
        let max = number_bound(max, scope)?;
        if !length_of(value).is_some_and(|l| l as f64 <= max) {
            return mismatch(format!("a length ≤ {max}"));
        }
    }
    if let Some(needle) = &expect.contains {
        let needle = scope.expand(needle)?;
        let contained = match (value, &needle) {
            (Value::Array(items), _) => items.iter().any(|i| json_equal(i, &needle)),
            (Value::String(s), Value::String(n)) => s.contains(n.as_str()),
            _ => false,
        };
        if !contained {
            return mismatch(format!("containing {needle}"));
        }
    }
    if let Some(keys) = &expect.keys {
        let mut actual: Vec<&str> = value
            .as_object()
            .map(|o| o.keys().map(String::as_str).collect())
            .unwrap_or_default();
        let mut wanted: Vec<&str> = keys.iter().map(String::as_str).collect();
        actual.sort_unstable();
        wanted.sort_unstable();
        if actual != wanted {
            return mismatch(format!("an object with exactly the members {wanted:?}"));
        }
    }
    if let Some(needles) = &expect.text_absent {
        for needle in needles {
            let needle = scope.interpolate(needle)?;
            if !needle.is_empty() && holds_text(value, &needle) {
                return mismatch(format!("no `{needle}` anywhere in the value"));
            }
        }
    }
    if let Some(needles) = &expect.text_present {
        for needle in needles {
            let needle = scope.interpolate(needle)?;
            if !holds_text(value, &needle) {
                return mismatch(format!("`{needle}` somewhere in the value"));
            }
        }
    }
    Ok(Ok(()))
}

/// The length of an array (items), string (characters) or object (members); none for the rest.
fn length_of(value: &Value) -> Option<usize> {
    match value {
        Value::Array(a) => Some(a.len()),
        Value::String(s) => Some(s.chars().count()),
        Value::Object(o) => Some(o.len()),
        _ => None,
    }
}

/// Whether `needle` occurs in a string, member name or number within `value`.
fn holds_text(value: &Value, needle: &str) -> bool {
    match value {
        Value::String(s) => s.contains(needle),
        Value::Number(n) => n.to_string().contains(needle),
        Value::Array(items) => items.iter().any(|i| holds_text(i, needle)),
        Value::Object(map) => map
            .iter()
            .any(|(k, v)| k.contains(needle) || holds_text(v, needle)),
        Value::Bool(_) | Value::Null => false,
    }
}

/// A `min`/`max` (or length) bound, expanded: a number, or an expression whose value is one.
fn number_bound(bound: &Value, scope: &Scope) -> Result<f64, TemplateError> {
    let expanded = scope.expand(bound)?;
    expanded.as_f64().ok_or_else(|| {
        let expression = bound
            .as_str()
            .and_then(|text| text.strip_prefix("${")?.strip_suffix('}'))
            .map_or_else(|| bound.to_string(), str::to_string);
        TemplateError::Missing(
            expression,
            format!("a `min`/`max` (or length) bound must be a number, not {expanded}"),
        )
    })
}

/// JSON equality where numbers compare by value (`1` equals `1.0`).
pub(crate) fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_equal(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
    }
}

/// The JSON pointer of the first place where `a` and `b` differ (as [`json_equal`] compares
/// them), `None` when they are equal. Members are visited in `a`'s order, then those only `b`
/// has.
pub(crate) fn first_difference(a: &Value, b: &Value) -> Option<String> {
    let escape = |key: &str| key.replace('~', "~0").replace('/', "~1");
    match (a, b) {
        (Value::Array(x), Value::Array(y)) => {
            let inner = x
                .iter()
                .zip(y)
                .enumerate()
                .find_map(|(i, (a, b))| first_difference(a, b).map(|p| format!("/{i}{p}")));
            inner.or_else(|| (x.len() != y.len()).then(|| format!("/{}", x.len().min(y.len()))))
        }
        (Value::Object(x), Value::Object(y)) => x
            .iter()
            .find_map(|(k, v)| match y.get(k) {
                Some(w) => first_difference(v, w).map(|p| format!("/{}{p}", escape(k))),
                None => Some(format!("/{}", escape(k))),
            })
            .or_else(|| {
                y.keys()
                    .find(|k| !x.contains_key(*k))
                    .map(|k| format!("/{}", escape(k)))
            }),
        _ => (!json_equal(a, b)).then(String::new),
    }
}

fn is_type(value: &Value, kind: JsonType) -> bool {
    match kind {
        JsonType::Null => value.is_null(),
        JsonType::Boolean => value.is_boolean(),
        JsonType::Number => value.is_number(),
        JsonType::Integer => value.as_i64().is_some() || value.as_u64().is_some(),
        JsonType::String => value.is_string(),
        JsonType::Array => value.is_array(),
        JsonType::Object => value.is_object(),
    }
}

/// A pointer with a `*` segment split around its first one: (`/facts`, `/unit`) for
/// `/facts/*/unit`; `None` without one.
fn split_wildcard(pointer: &str) -> Option<(&str, &str)> {
    let mut at = 0;
    for segment in pointer.split('/').skip(1) {
        let start = at + 1;
        if segment == "*" {
            return Some((&pointer[..at], &pointer[start + 1..]));
        }
        at = start + segment.len();
    }
    None
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_first_difference_is_named_by_its_pointer() {
        use super::first_difference;
        use serde_json::json;
        let doc = json!({"sequence": 3, "payload": {"chunk": "a/b", "meta": [1, 2]}});
        assert_eq!(first_difference(&doc, &doc.clone()), None);
        assert_eq!(
            first_difference(&json!(1), &json!(1.0)),
            None,
            "numbers compare by value"
        );
        let mut other = doc.clone();
        other["payload"]["meta"][1] = json!(3);
        assert_eq!(
            first_difference(&doc, &other).as_deref(),
            Some("/payload/meta/1")
        );
        other = doc.clone();
        other["payload"]["meta"] = json!([1, 2, 3]);
        assert_eq!(
            first_difference(&doc, &other).as_deref(),
            Some("/payload/meta/2")
        );
        other = doc.clone();
        other["payload"]["x/y"] = json!(true);
        assert_eq!(
            first_difference(&doc, &other).as_deref(),
            Some("/payload/x~1y")
        );
        assert_eq!(
            first_difference(&json!(1), &json!("1")).as_deref(),
            Some("")
        );
    }

    #[test]
    fn a_wildcard_segment_holds_for_every_element() {
        use serde_json::json;
        let expect = |pointer: &str| JsonExpect {
            pointer: pointer.into(),
            json_type: Some(crate::case::JsonType::Number),
            min: Some(serde_json::json!(0.0)),
            ..JsonExpect::default()
        };
        let scope = Scope::default();
        let good = json!({"facts": [{"quantity": 1}, {"quantity": 2}, {"quantity": 0}]});
        let bad = json!({"facts": [{"quantity": 1}, {"quantity": 2}, {"quantity": -3}]});
        assert!(matches!(
            json_condition(Some(&good), &expect("/facts/*/quantity"), &scope),
            Ok(Ok(()))
        ));
        let Ok(Err(mismatch)) = json_condition(Some(&bad), &expect("/facts/*/quantity"), &scope)
        else {
            panic!("a bad third fact must fail");
        };
        assert!(
            mismatch.expected.contains("/facts/2/quantity"),
            "{mismatch:?}"
        );
        assert!(matches!(
            json_condition(Some(&json!({})), &expect("/facts/*/quantity"), &scope),
            Ok(Err(_))
        ));
        assert_eq!(split_wildcard("/facts/*/unit"), Some(("/facts", "/unit")));
        assert_eq!(split_wildcard("/*"), Some(("", "")));
        assert_eq!(split_wildcard("/a/b"), None);
        assert_eq!(split_wildcard("/a*/b"), None);
    }

    use super::*;
    use serde_json::json;

    fn check(doc: Value, expect: Value) -> bool {
        let expect: JsonExpect = serde_json::from_value(expect).unwrap();
        json_condition(Some(&doc), &expect, &Scope::default())
            .unwrap()
            .is_ok()
    }

    #[test]
    fn a_bound_may_be_an_expression_expanding_to_a_number() {
        let mut scope = Scope::default();
        scope.vars.insert("first".into(), json!(100));
        scope.vars.insert("text".into(), json!("many"));
        let judge = |value: Value, expect: Value| {
            let expect: JsonExpect = serde_json::from_value(expect).unwrap();
            json_condition(Some(&json!({"budget": value})), &expect, &scope).map(|r| r.is_ok())
        };
        let at_most_first = json!({"pointer": "/budget", "max": "${var.first}"});
        assert_eq!(judge(json!(100), at_most_first.clone()), Ok(true));
        assert_eq!(judge(json!(64), at_most_first.clone()), Ok(true));
        assert_eq!(judge(json!(101), at_most_first), Ok(false));
        assert_eq!(
            judge(
                json!(99),
                json!({"pointer": "/budget", "min": "${var.first}"})
            ),
            Ok(false)
        );
        // A bound that expands to no number cannot be judged: the case's error, not the host's.
        assert!(
            judge(
                json!(1),
                json!({"pointer": "/budget", "max": "${var.text}"})
            )
            .is_err()
        );
    }

    #[test]
    fn a_length_may_be_bounded_by_an_expression() {
        let mut scope = Scope::default();
        scope.vars.insert("rounds".into(), json!(3));
        let judge = |calls: usize, expect: Value| {
            let expect: JsonExpect = serde_json::from_value(expect).unwrap();
            let doc = json!({"calls": vec![json!({}); calls]});
            json_condition(Some(&doc), &expect, &scope).map(|r| r.is_ok())
        };
        let within =
            json!({"pointer": "/calls", "min_length": 1, "max_length": "${var.rounds + 1}"});
        assert_eq!(judge(1, within.clone()), Ok(true));
        assert_eq!(judge(4, within.clone()), Ok(true));
        assert_eq!(judge(5, within.clone()), Ok(false));
        assert_eq!(judge(0, within), Ok(false));
        // A number has no length: not within any bound.
        let expect: JsonExpect =
            serde_json::from_value(json!({"pointer": "/n", "max_length": 9})).unwrap();
        assert!(matches!(
            json_condition(Some(&json!({"n": 3})), &expect, &scope),
            Ok(Err(_))
        ));
    }

    #[test]
    fn conditions() {
        let doc = json!({"a": 1, "s": "hello", "l": [1, 2], "o": {"x": 1, "y": 2}, "n": null});
        assert!(check(doc.clone(), json!({"pointer": "/a", "equals": 1.0})));
        assert!(!check(doc.clone(), json!({"pointer": "/a", "equals": 2})));
        assert!(check(
            doc.clone(),
            json!({"pointer": "/missing", "present": false})
        ));
        assert!(!check(
            doc.clone(),
            json!({"pointer": "/a", "present": false})
        ));
        assert!(!check(
            doc.clone(),
            json!({"pointer": "/missing", "type": "string"})
        ));
        assert!(check(
            doc.clone(),
            json!({"pointer": "/s", "matches": "^hel"})
        ));
        assert!(check(
            doc.clone(),
            json!({"pointer": "/l", "length": 2, "contains": 2})
        ));
        assert!(check(
            doc.clone(),
            json!({"pointer": "/o", "keys": ["y", "x"]})
        ));
        assert!(!check(doc.clone(), json!({"pointer": "/o", "keys": ["x"]})));
        assert!(check(
            doc.clone(),
            json!({"pointer": "/a", "in": [0, 1], "min": 1, "max": 1, "type": "integer"})
        ));
        assert!(check(doc.clone(), json!({"pointer": "/n", "type": "null"})));
        assert!(check(
            doc,
            json!({"pointer": "/s", "not_equals": "bye", "contains": "ell"})
        ));
    }

    #[test]
    fn a_provider_native_code_is_outside_the_portable_registry() {
        let registry = json!({"pointer": "/error/code", "in_registry": "execution_portable_codes"});
        for code in ["provider_unavailable", "deadline_exceeded", "not_found"] {
            assert!(
                check(json!({"error": {"code": code}}), registry.clone()),
                "{code}"
            );
        }
        for code in [json!("http_503"), json!("server_error"), json!(503)] {
            assert!(
                !check(json!({"error": {"code": code}}), registry.clone()),
                "{code}"
            );
        }
        assert!(!check(json!({"error": {}}), registry));
    }
}
