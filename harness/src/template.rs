//! `${…}` expressions in case files.
//!
//! Grammar: `${ path ( "|" filter )* ( ("+" | "-") integer )? }`. A path starts at one of the
//! roots below and descends with `.name` or `[index]`:
//!
//! | root | value |
//! |---|---|
//! | `steps.<id>` | what a step recorded: `status`, `headers.<name>`, `body`, `events`, `sequences`, `first_sequence`, `last_sequence`, `count`, `frames`, `answered_in_ms` (when the answer ended, ms since its request), `responses[i]` |
//! | `var.<name>` | a `repeat` or `generate` variable |
//! | `defs.<name>` | a reusable value of the case |
//! | `uuid.<name>` | a fresh UUID per case run, the same for the same name |
//! | `script.<name>` | the marker that selects the case's fake-provider script |
//! | `provider.<role>` | the target's provider id for a role (`text-primary`, …) |
//! | `target.<fact>` | a fact of the target (`keepalive_window_ms`, `subscriber_limit`, …) |
//! | `anchor.<id>` | an annotation's `target` of the kind the host lists in `feedback.targets` (the fact `feedback_anchor`), read from the run's log as step `<id>` recorded it: `null` for the run, `{nodeId}`, `{eventId}` |
//!
//! `[index]` selects an array element, `[last]` the last one; `[member=value]` selects the first
//! element (an object)
//! whose `member` is the string `value`, so a value the host chose is read from what it sent:
//! `${steps.suspended.events[type=node.suspended].payload.nodeId|segment}` is the node id of the
//! first `node.suspended` event a step read (the value may contain `.`, not `]`).
//!
//! Filters: `path` (a tenant-bound id encoded for a URL path segment, `/` → `~2F`, or `%2F` on a
//! host that reads only that form: [`RunIdPathEncoding`]), `pct`
//! (the same id percent-encoded, `/` → `%2F`), `segment` (any string percent-encoded as one URL
//! path segment: every byte outside RFC 3986's unreserved set), `json` (the value as JSON
//! text), `len`, `times:N` (an integer times `N`: a window of `N` intervals,
//! `${target.heartbeat_interval_ms|times:3 + 2000}`), `or:TEXT` (the text when the path has no
//! value or holds `null`: a default the seed states,
//! e.g. `${steps.discovery.body.heartbeat.deliveryChannel|or:/host/events}`; an integer text is
//! a number, so `${target.keepalive_interval_ms|or:30000 + 4000}` adds to it), `absent` (an
//! object member whose value is this one expression is left out when it holds `null`:
//! `"target": "${anchor.logged|absent}"` sends no anchor for a run).
//! A string that is exactly one expression becomes the value itself (a number stays a number);
//! otherwise values are interpolated as text. An array of two or more lone `${provider.<role>}`
//! expressions expands to the distinct ids, in order (two roles bound to one provider, a host
//! with two models of it, name it once in `routing.provider_order`).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::feedback_anchor::{AnchorKind, FEEDBACK_ANCHOR_FACT};

/// Why an expression could not be expanded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    /// The expression is malformed (a case-authoring error; `conformance lint` finds these).
    #[error("malformed expression `${{{0}}}`: {1}")]
    Syntax(String, String),
    /// The value is not there: typically a host response lacked a member a later step needs.
    #[error("`${{{0}}}` has no value: {1}")]
    Missing(String, String),
}

/// Everything an expression can refer to.
#[derive(Debug, Default, Clone)]
pub struct Scope {
    /// Step views by step id.
    pub steps: BTreeMap<String, Value>,
    /// Loop variables.
    pub vars: BTreeMap<String, Value>,
    /// The case's `defs`.
    pub defs: BTreeMap<String, Value>,
    /// Script markers by local name.
    pub scripts: BTreeMap<String, String>,
    /// Provider ids by role.
    pub providers: BTreeMap<String, String>,
    /// Facts of the target.
    pub target: BTreeMap<String, Value>,
    /// The fixture chosen for each of the case's `fixture:A|B|…` needs, keyed by its first
    /// alternative: `${fixture.A}` is the first alternative the host lists.
    pub fixtures: BTreeMap<String, String>,
    /// The seed from which `uuid.<name>` values derive.
    pub uuid_seed: String,
}

impl Scope {
    /// Expands every string in a JSON value (object keys are left alone).
    pub fn expand(&self, value: &Value) -> Result<Value, TemplateError> {
        Ok(match value {
            Value::String(text) => self.expand_str(text)?,
            Value::Array(items) if is_provider_list(items) => {
                // Two roles bound to one provider name it once: a host may refuse duplicate
                // `provider_order` entries.
                let mut distinct: Vec<Value> = Vec::new();
                for item in items {
                    let value = self.expand(item)?;
                    if !distinct.contains(&value) {
                        distinct.push(value);
                    }
                }
                Value::Array(distinct)
            }
            Value::Array(items) => Value::Array(
                items
                    .iter()
                    .map(|v| self.expand(v))
                    .collect::<Result<_, _>>()?,
            ),
            Value::Object(map) => {
                let mut expanded = serde_json::Map::with_capacity(map.len());
                for (name, written) in map {
                    let value = self.expand(written)?;
                    if !(value.is_null() && leaves_out_null(written)) {
                        expanded.insert(name.clone(), value);
                    }
                }
                Value::Object(expanded)
            }
            other => other.clone(),
        })
    }

    /// Expands a string: a lone expression yields its value, anything else yields text.
    pub fn expand_str(&self, text: &str) -> Result<Value, TemplateError> {
        if let Some(inner) = lone_expression(text) {
            return self.evaluate(inner);
        }
        Ok(Value::String(self.interpolate(text)?))
    }

    /// Expands a string to text.
    pub fn interpolate(&self, text: &str) -> Result<String, TemplateError> {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(start) = rest.find("${") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            let end = after.find('}').ok_or_else(|| {
                TemplateError::Syntax(after.to_string(), "missing closing `}`".into())
            })?;
            out.push_str(&to_text(&self.evaluate(&after[..end])?));
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }

    /// The run-id path encoding the target reads (the probe's fact; `~2F` without one).
    pub fn run_id_path_encoding(&self) -> RunIdPathEncoding {
        RunIdPathEncoding::of(&self.target)
    }

    /// Evaluates one expression (without `${` `}`).
    pub fn evaluate(&self, expression: &str) -> Result<Value, TemplateError> {
        let parsed = parse(expression)?;
        let fallback = parsed.filters.iter().find_map(|f| match f {
            Filter::Or(text) => Some(text),
            _ => None,
        });
        let mut value = match (self.resolve(expression, &parsed.path), fallback) {
            (Err(TemplateError::Missing(..)) | Ok(Value::Null), Some(text)) => text
                .parse::<i64>()
                .map_or_else(|_| Value::String(text.to_string()), Value::from),
            (resolved, _) => resolved?,
        };
        let run_id_encoding = self.run_id_path_encoding();
        for filter in &parsed.filters {
            value = apply_filter(expression, filter, value, run_id_encoding)?;
        }
        if let Some(offset) = parsed.offset {
            let base = value.as_i64().ok_or_else(|| {
                TemplateError::Missing(
                    expression.to_string(),
                    format!("`{value}` is not an integer"),
                )
            })?;
            value = Value::from(base + offset);
        }
        Ok(value)
    }

    fn resolve(&self, expression: &str, path: &[Segment]) -> Result<Value, TemplateError> {
        let missing = |why: String| TemplateError::Missing(expression.to_string(), why);
        let syntax = |why: &str| TemplateError::Syntax(expression.to_string(), why.to_string());
        let (Some(Segment::Name(root)), Some(Segment::Name(name))) = (path.first(), path.get(1))
        else {
            return Err(syntax("expected `<root>.<name>`"));
        };
        let rest = &path[2..];
        let start: Value = match root.as_str() {
            "steps" => self
                .steps
                .get(name)
                .cloned()
                .ok_or_else(|| missing(format!("step `{name}` has not run")))?,
            "var" => self
                .vars
                .get(name)
                .cloned()
                .ok_or_else(|| missing(format!("no variable `{name}`")))?,
            // A def may itself contain expressions: expand it in this scope.
            "defs" => self.expand(self.defs.get(name).ok_or_else(|| syntax("unknown def"))?)?,
            "script" => Value::String(
                self.scripts
                    .get(name)
                    .cloned()
                    .ok_or_else(|| syntax("unknown script"))?,
            ),
            "provider" => Value::String(
                self.providers
                    .get(name)
                    .cloned()
                    .ok_or_else(|| missing(format!("the target has no `{name}` provider")))?,
            ),
            "target" => self
                .target
                .get(name)
                .cloned()
                .ok_or_else(|| missing(format!("the target has no `{name}`")))?,
            "uuid" => Value::String(derived_uuid(&self.uuid_seed, name)),
            "anchor" => {
                let kind = self
                    .target
                    .get(FEEDBACK_ANCHOR_FACT)
                    .and_then(Value::as_str)
                    .and_then(AnchorKind::parse)
                    .ok_or_else(|| {
                        missing(format!("the target has no `{FEEDBACK_ANCHOR_FACT}`"))
                    })?;
                let step = self
                    .steps
                    .get(name)
                    .ok_or_else(|| missing(format!("step `{name}` has not run")))?;
                let events = step
                    .get("events")
                    .and_then(Value::as_array)
                    .map_or(&[][..], Vec::as_slice);
                kind.target(events)
                    .map_err(|why| missing(format!("step `{name}`: {why}")))?
            }
            "fixture" => Value::String(self.fixtures.get(name).cloned().ok_or_else(|| {
                missing(format!(
                    "no `fixture:{name}|…` need of the case names a fixture the host lists"
                ))
            })?),
            _ => {
                return Err(syntax(
                    "unknown root (steps, var, defs, script, provider, target, uuid, fixture, anchor)",
                ));
            }
        };
        descend(start, rest).map_err(|at| missing(format!("nothing at `{at}`")))
    }
}

/// Whether an array is a list of provider ids: two or more strings, each exactly one
/// `${provider.<role>}` expression.
fn is_provider_list(items: &[Value]) -> bool {
    items.len() > 1
        && items.iter().all(|item| {
            item.as_str()
                .and_then(lone_expression)
                .is_some_and(|inner| inner.trim().starts_with("provider."))
        })
}

/// Whether an object member's value, as written, is one expression with the `absent` filter
/// (the member is left out when it expands to `null`).
fn leaves_out_null(written: &Value) -> bool {
    written
        .as_str()
        .and_then(lone_expression)
        .and_then(|inner| parse(inner).ok())
        .is_some_and(|parsed| parsed.filters.contains(&Filter::Absent))
}

fn to_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn lone_expression(text: &str) -> Option<&str> {
    let inner = text.strip_prefix("${")?.strip_suffix('}')?;
    (!inner.contains("${") && !inner.contains('}')).then_some(inner)
}

#[derive(Debug, Clone, PartialEq)]
enum Segment {
    Name(String),
    Index(usize),
    /// The first array element whose member `0` is the string `1`.
    Where(String, String),
    /// The last array element.
    Last,
}

struct Parsed {
    path: Vec<Segment>,
    filters: Vec<Filter>,
    offset: Option<i64>,
}

/// A filter after `|`, parsed once with its expression.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Filter {
    /// `path`: the run id encoded for a path segment.
    Path,
    /// `pct`: `/` as `%2F`.
    Pct,
    /// `segment`: every byte outside the unreserved set percent-encoded.
    Segment,
    /// `json`: the value as JSON text.
    Json,
    /// `len`: the length of an array, string or object.
    Len,
    /// `times:N`: an integer times `N`.
    Times(i64),
    /// `or:TEXT`: the text (a number when it is an integer) when the path has no value or
    /// holds `null`.
    Or(String),
    /// `absent`: the object member holding the expression is left out when it holds `null`.
    Absent,
}

impl Filter {
    fn parse(text: &str) -> Option<Filter> {
        Some(match text {
            "path" => Filter::Path,
            "pct" => Filter::Pct,
            "segment" => Filter::Segment,
            "json" => Filter::Json,
            "len" => Filter::Len,
            "absent" => Filter::Absent,
            _ => {
                if let Some(fallback) = text.strip_prefix("or:") {
                    Filter::Or(fallback.to_string())
                } else {
                    Filter::Times(text.strip_prefix("times:")?.trim().parse().ok()?)
                }
            }
        })
    }
}

fn parse(expression: &str) -> Result<Parsed, TemplateError> {
    let syntax = |why: &str| TemplateError::Syntax(expression.to_string(), why.to_string());
    let text = expression.trim();
    let (body, offset) = match text
        .rfind(['+', '-'])
        .filter(|&i| text[i + 1..].trim().parse::<i64>().is_ok())
    {
        Some(i) if text[..i].ends_with(' ') => {
            let n: i64 = text[i + 1..]
                .trim()
                .parse()
                .map_err(|_| syntax("bad offset"))?;
            (
                text[..i].trim_end(),
                Some(if text.as_bytes()[i] == b'-' { -n } else { n }),
            )
        }
        _ => (text, None),
    };
    let mut parts = body.split('|');
    let path_text = parts.next().unwrap_or_default().trim();
    let filters = parts
        .map(|f| {
            Filter::parse(f.trim()).ok_or_else(|| {
                syntax("unknown filter (path, pct, segment, json, len, times:N, or:TEXT, absent)")
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut path = Vec::new();
    for piece in split_outside_brackets(path_text) {
        let (name, mut indices) = match piece.find('[') {
            Some(i) => (&piece[..i], &piece[i..]),
            None => (piece, ""),
        };
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(syntax(
                "path segments are names of letters, digits, `_` and `-`",
            ));
        }
        path.push(Segment::Name(name.to_string()));
        while let Some(close) = indices.find(']') {
            let inner = &indices[1..close];
            match inner.split_once('=') {
                Some((member, value)) if !member.is_empty() && !value.is_empty() => {
                    path.push(Segment::Where(member.to_string(), value.to_string()));
                }
                Some(_) => return Err(syntax("a selector is `[member=value]`")),
                None if inner == "last" => path.push(Segment::Last),
                None => {
                    let index = inner.parse().map_err(|_| {
                        syntax("index must be a non-negative integer or `member=value`")
                    })?;
                    path.push(Segment::Index(index));
                }
            }
            indices = &indices[close + 1..];
        }
        if !indices.is_empty() {
            return Err(syntax("unbalanced `[`"));
        }
    }
    Ok(Parsed {
        path,
        filters,
        offset,
    })
}

/// Splits a path at the `.`s that are not inside `[…]` (a selector's value may hold dots).
fn split_outside_brackets(text: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (i, c) in text.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            '.' if depth == 0 => {
                pieces.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    pieces.push(&text[start..]);
    pieces
}

fn descend(mut value: Value, path: &[Segment]) -> Result<Value, String> {
    let mut at = String::new();
    for segment in path {
        value = match segment {
            Segment::Name(name) => {
                at.push('.');
                at.push_str(name);
                match value {
                    Value::Object(mut map) => map
                        .remove(name)
                        .or_else(|| map.remove(&name.to_ascii_lowercase()))
                        .ok_or_else(|| at.clone())?,
                    _ => return Err(at),
                }
            }
            Segment::Index(index) => {
                at.push_str(&format!("[{index}]"));
                match value {
                    Value::Array(mut items) if *index < items.len() => items.swap_remove(*index),
                    _ => return Err(at),
                }
            }
            Segment::Last => {
                at.push_str("[last]");
                match value {
                    Value::Array(mut items) => items.pop().ok_or_else(|| at.clone())?,
                    _ => return Err(at),
                }
            }
            Segment::Where(member, wanted) => {
                at.push_str(&format!("[{member}={wanted}]"));
                match value {
                    Value::Array(items) => items
                        .into_iter()
                        .find(|item| {
                            item.get(member).and_then(Value::as_str) == Some(wanted.as_str())
                        })
                        .ok_or_else(|| at.clone())?,
                    _ => return Err(at),
                }
            }
        };
    }
    Ok(value)
}

fn apply_filter(
    expression: &str,
    filter: &Filter,
    value: Value,
    run_id_encoding: RunIdPathEncoding,
) -> Result<Value, TemplateError> {
    let missing = |why: &str| TemplateError::Missing(expression.to_string(), why.to_string());
    Ok(match filter {
        Filter::Path => Value::String(
            run_id_encoding.encode(value.as_str().ok_or_else(|| missing("not a string"))?),
        ),
        Filter::Pct => Value::String(
            value
                .as_str()
                .ok_or_else(|| missing("not a string"))?
                .replace('/', "%2F"),
        ),
        Filter::Segment => Value::String(percent_encode_segment(
            value.as_str().ok_or_else(|| missing("not a string"))?,
        )),
        Filter::Json => Value::String(value.to_string()),
        Filter::Len => Value::from(match &value {
            Value::Array(a) => a.len(),
            Value::String(s) => s.chars().count(),
            Value::Object(o) => o.len(),
            _ => return Err(missing("`len` needs an array, string or object")),
        }),
        Filter::Times(n) => {
            let base = value
                .as_i64()
                .ok_or_else(|| missing("`times` needs an integer"))?;
            Value::from(base.saturating_mul(*n))
        }
        // The fallback is taken before any filter runs; a member is left out by `expand`.
        Filter::Or(_) | Filter::Absent => value,
    })
}

/// Percent-encodes a string as one URL path segment: every byte outside RFC 3986's unreserved
/// set.
pub(crate) fn percent_encode_segment(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// How the host reads a tenant-bound id in a request path. Upstream's identity chapter has
/// hosts accept both forms; its OpenAPI parameter text names only the percent form, and an
/// upstream host that reads only that one exists. The probe finds which one the host reads
/// (fact [`RUN_ID_PATH_ENCODING_FACT`]); the `path` filter writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RunIdPathEncoding {
    /// `/` → `~2F` (upstream's identity chapter, this project's CONTRACT).
    #[default]
    Tilde,
    /// `/` → `%2F` (upstream's OpenAPI parameter text).
    Percent,
}

/// The target fact naming the run-id path encoding the host reads (`tilde` or `percent`).
pub const RUN_ID_PATH_ENCODING_FACT: &str = "run_id_path_encoding";

impl RunIdPathEncoding {
    /// The encoding a target's facts name ([`RUN_ID_PATH_ENCODING_FACT`]; `~2F` without one).
    pub fn of(facts: &BTreeMap<String, Value>) -> RunIdPathEncoding {
        match facts.get(RUN_ID_PATH_ENCODING_FACT).and_then(Value::as_str) {
            Some("percent") => RunIdPathEncoding::Percent,
            _ => RunIdPathEncoding::Tilde,
        }
    }

    /// The fact value naming this encoding.
    pub fn as_str(self) -> &'static str {
        match self {
            RunIdPathEncoding::Tilde => "tilde",
            RunIdPathEncoding::Percent => "percent",
        }
    }

    /// Encodes a tenant-bound id for a path segment.
    pub fn encode(self, id: &str) -> String {
        match self {
            RunIdPathEncoding::Tilde => spec::openwop::encode_run_id_for_path(id),
            RunIdPathEncoding::Percent => percent_encode_segment(id),
        }
    }
}

/// A UUID-shaped value derived from a seed and a name (stable within a case run).
pub(crate) fn derived_uuid(seed: &str, name: &str) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(format!("{seed}/{name}").as_bytes());
    let hex = hex::encode(&digest[..16]);
    format!(
        "{}-{}-4{}-a{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[13..16],
        &hex[17..20],
        &hex[20..32]
    )
}

/// Every expression in a JSON value (for lint).
pub(crate) fn expressions_in(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(text) => expressions_in_text(text, out),
        Value::Array(items) => items.iter().for_each(|v| expressions_in(v, out)),
        Value::Object(map) => map.values().for_each(|v| expressions_in(v, out)),
        _ => {}
    }
}

/// Every expression in a string (for lint); an unclosed one runs to the end.
pub(crate) fn expressions_in_text(text: &str, out: &mut Vec<String>) {
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        let after = &rest[start + 2..];
        match after.find('}') {
            Some(end) => {
                out.push(after[..end].to_string());
                rest = &after[end + 1..];
            }
            None => {
                out.push(after.to_string());
                break;
            }
        }
    }
}

/// Checks an expression's syntax and root without evaluating it (for lint).
pub(crate) fn check_syntax(expression: &str) -> Result<(), TemplateError> {
    let parsed = parse(expression)?;
    match parsed.path.first() {
        Some(Segment::Name(root))
            if [
                "steps", "var", "defs", "script", "provider", "target", "uuid", "fixture", "anchor",
            ]
            .contains(&root.as_str())
                && parsed.path.len() >= 2 =>
        {
            Ok(())
        }
        _ => Err(TemplateError::Syntax(
            expression.into(),
            "unknown root or missing name".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn scope() -> Scope {
        let mut scope = Scope {
            uuid_seed: "seed".into(),
            ..Scope::default()
        };
        scope.steps.insert(
            "create".into(),
            json!({"status": 201, "body": {"runId": "tenant-a/run_0123456789abcdef"}, "last_sequence": 4,
                   "headers": {"content-type": "application/json"}, "events": [{"type": "a"}, {"type": "b"}]}),
        );
        scope.vars.insert("n".into(), json!(3));
        scope.scripts.insert("main".into(), "[[script:abc]]".into());
        scope
            .providers
            .insert("text-primary".into(), "openai-primary".into());
        scope
    }

    #[test]
    fn an_anchor_is_read_from_the_log_and_absent_for_the_run() {
        let mut s = scope();
        s.steps.insert(
            "logged".into(),
            json!({"events": [{"eventId": "e-0", "type": "run.started", "payload": {}},
                              {"eventId": "e-1", "type": "node.started", "payload": {"nodeId": "n-1"}}]}),
        );
        let body = json!({"target": "${anchor.logged|absent}", "signal": {"kind": "flag"}});
        assert!(matches!(s.expand(&body), Err(TemplateError::Missing(..))));
        s.target.insert(FEEDBACK_ANCHOR_FACT.into(), json!("run"));
        assert_eq!(
            s.expand(&body).unwrap(),
            json!({"signal": {"kind": "flag"}})
        );
        s.target.insert(FEEDBACK_ANCHOR_FACT.into(), json!("node"));
        assert_eq!(
            s.expand(&body).unwrap(),
            json!({"target": {"nodeId": "n-1"}, "signal": {"kind": "flag"}})
        );
        s.target.insert(FEEDBACK_ANCHOR_FACT.into(), json!("event"));
        assert_eq!(
            s.expand(&body).unwrap()["target"],
            json!({"eventId": "e-0"})
        );
        // Without `absent` a null stays a member; with it, only a null is left out.
        assert_eq!(
            s.expand(&json!({"a": "${steps.none.x|or:1|absent}", "b": null}))
                .unwrap(),
            json!({"a": 1, "b": null})
        );
        assert!(check_syntax("anchor.logged|absent").is_ok());
    }

    #[test]
    fn or_gives_the_stated_default_only_when_nothing_is_there() {
        let s = scope();
        assert_eq!(
            s.expand_str("${steps.create.body.channel|or:/host/events}")
                .unwrap(),
            json!("/host/events")
        );
        assert_eq!(
            s.expand_str("${steps.create.headers.content-type|or:/host/events}")
                .unwrap(),
            json!("application/json")
        );
        assert!(matches!(
            s.evaluate("steps.create.body.channel"),
            Err(TemplateError::Missing(..))
        ));
    }

    #[test]
    fn an_integer_default_is_a_number_an_offset_adds_to() {
        let mut s = scope();
        assert_eq!(
            s.evaluate("target.keepalive_interval_ms|or:30000 + 4000")
                .unwrap(),
            json!(34_000)
        );
        // An operator's `null` fact says "unknown": the default stands in for it.
        s.target.insert("keepalive_interval_ms".into(), Value::Null);
        assert_eq!(
            s.evaluate("target.keepalive_interval_ms|or:30000 + 4000")
                .unwrap(),
            json!(34_000)
        );
        s.target
            .insert("keepalive_interval_ms".into(), json!(1_000));
        assert_eq!(
            s.evaluate("target.keepalive_interval_ms|or:30000 + 4000")
                .unwrap(),
            json!(5_000)
        );
    }

    #[test]
    fn selectors_read_a_value_the_host_chose() {
        let mut s = scope();
        s.steps.insert(
            "suspended".into(),
            json!({"events": [
                {"type": "run.started", "payload": {}},
                {"type": "node.suspended", "payload": {"nodeId": "gate/1 a"}},
                {"type": "node.suspended", "payload": {"nodeId": "second"}}
            ]}),
        );
        assert_eq!(
            s.expand_str("${steps.suspended.events[type=node.suspended].payload.nodeId}")
                .unwrap(),
            json!("gate/1 a")
        );
        assert_eq!(
            s.interpolate(
                "/interrupts/${steps.suspended.events[type=node.suspended].payload.nodeId|segment}"
            )
            .unwrap(),
            "/interrupts/gate%2F1%20a"
        );
        assert!(matches!(
            s.evaluate("steps.suspended.events[type=node.resumed].payload.nodeId"),
            Err(TemplateError::Missing(..))
        ));
        assert_eq!(
            s.expand_str("${steps.suspended.events[last].payload.nodeId}")
                .unwrap(),
            json!("second")
        );
        assert!(matches!(
            s.evaluate("steps.suspended.events[=x]"),
            Err(TemplateError::Syntax(..))
        ));
    }

    #[test]
    fn lone_expressions_keep_their_type() {
        let s = scope();
        assert_eq!(s.expand_str("${var.n}").unwrap(), json!(3));
        assert_eq!(
            s.expand_str("${steps.create.last_sequence + 1000}")
                .unwrap(),
            json!(1004)
        );
        assert_eq!(
            s.expand_str("${steps.create.last_sequence - 1}").unwrap(),
            json!(3)
        );
        assert_eq!(
            s.expand_str("${steps.create.events[1].type}").unwrap(),
            json!("b")
        );
        assert_eq!(
            s.expand_str("${steps.create.events|len}").unwrap(),
            json!(2)
        );
    }

    #[test]
    fn a_run_id_is_written_in_the_path_form_the_host_reads() {
        let mut s = Scope::default();
        s.vars
            .insert("id".into(), json!("tenant-a/run_0123456789abcdef"));
        assert_eq!(
            s.interpolate("/runs/${var.id|path}").unwrap(),
            "/runs/tenant-a~2Frun_0123456789abcdef"
        );
        s.target.insert(
            RUN_ID_PATH_ENCODING_FACT.into(),
            json!(RunIdPathEncoding::Percent.as_str()),
        );
        assert_eq!(s.run_id_path_encoding(), RunIdPathEncoding::Percent);
        assert_eq!(
            s.interpolate("/runs/${var.id|path}").unwrap(),
            "/runs/tenant-a%2Frun_0123456789abcdef"
        );
        assert_eq!(
            RunIdPathEncoding::Percent.encode("anon:t/run_0123456789abcdef"),
            "anon%3At%2Frun_0123456789abcdef"
        );
    }

    #[test]
    fn an_integer_may_be_multiplied_before_its_offset() {
        let mut s = Scope::default();
        s.target.insert("interval".into(), json!(1500));
        assert_eq!(
            s.expand_str("${target.interval|times:3 + 2000}").unwrap(),
            json!(6500)
        );
        assert!(s.expand_str("${target.interval|times:x}").is_err());
        s.target.insert("text".into(), json!("slow"));
        assert!(matches!(
            s.expand_str("${target.text|times:2}"),
            Err(TemplateError::Missing(..))
        ));
    }

    #[test]
    fn interpolation_and_filters() {
        let s = scope();
        assert_eq!(
            s.expand_str("/runs/${steps.create.body.runId|path}/events")
                .unwrap(),
            json!("/runs/tenant-a~2Frun_0123456789abcdef/events")
        );
        assert_eq!(
            s.expand_str("/runs/${steps.create.body.runId|pct}")
                .unwrap(),
            json!("/runs/tenant-a%2Frun_0123456789abcdef")
        );
        assert_eq!(
            s.expand_str("${script.main} hello").unwrap(),
            json!("[[script:abc]] hello")
        );
        assert_eq!(
            s.expand_str("${provider.text-primary}").unwrap(),
            json!("openai-primary")
        );
        assert_eq!(
            s.expand_str("${steps.create.headers.Content-Type}")
                .unwrap(),
            json!("application/json")
        );
    }

    #[test]
    fn uuids_are_stable_per_name_and_distinct_across_names() {
        let s = scope();
        let a = s.expand_str("${uuid.k}").unwrap();
        assert_eq!(a, s.expand_str("${uuid.k}").unwrap());
        assert_ne!(a, s.expand_str("${uuid.other}").unwrap());
        assert_eq!(a.as_str().unwrap().len(), 36);
    }

    #[test]
    fn missing_and_malformed_are_told_apart() {
        let s = scope();
        assert!(matches!(
            s.expand_str("${steps.create.body.nope}"),
            Err(TemplateError::Missing(..))
        ));
        assert!(matches!(
            s.expand_str("${steps.later.status}"),
            Err(TemplateError::Missing(..))
        ));
        assert!(matches!(
            s.expand_str("${bogus.x}"),
            Err(TemplateError::Syntax(..))
        ));
        assert!(matches!(
            s.expand_str("${var.n|frobnicate}"),
            Err(TemplateError::Syntax(..))
        ));
        assert!(matches!(
            s.expand_str("${var.n"),
            Err(TemplateError::Syntax(..))
        ));
        assert!(check_syntax("steps.a.body").is_ok());
        assert!(check_syntax("nope").is_err());
    }

    #[test]
    fn a_provider_list_names_a_shared_provider_once() {
        let mut scope = scope();
        scope
            .providers
            .insert("text-secondary".into(), "openai-primary".into());
        let list = serde_json::json!(["${provider.text-primary}", "${provider.text-secondary}"]);
        assert_eq!(
            scope.expand(&list).unwrap(),
            serde_json::json!(["openai-primary"])
        );
        scope
            .providers
            .insert("text-secondary".into(), "anthropic".into());
        assert_eq!(
            scope.expand(&list).unwrap(),
            serde_json::json!(["openai-primary", "anthropic"])
        );
    }

    #[test]
    fn expands_nested_json() {
        let s = scope();
        let v = s
            .expand(
                &json!({"input": [{"type": "text", "text": "${script.main} hi"}], "n": "${var.n}"}),
            )
            .unwrap();
        assert_eq!(
            v,
            json!({"input": [{"type": "text", "text": "[[script:abc]] hi"}], "n": 3})
        );
        let mut s = s;
        s.defs.insert(
            "body".into(),
            json!({"text": "${script.main}", "n": "${var.n}"}),
        );
        assert_eq!(
            s.expand_str("${defs.body}").unwrap(),
            json!({"text": "[[script:abc]]", "n": 3})
        );
    }
}
