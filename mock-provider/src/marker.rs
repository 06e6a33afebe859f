//! The marker that selects a script: `[[script:<id>]]` anywhere in a request body.

use crate::validate::script_id_is_valid;

const MARKER_OPEN: &str = "[[script:";
const MARKER_CLOSE: &str = "]]";
/// How deep JSON nested inside JSON strings is searched.
const MAX_NESTING: usize = 4;

/// The marker a case puts into the text it sends to the host, e.g. `[[script:case-7-x1]]`.
///
/// The host forwards the text to the provider; the fake finds the marker anywhere in the raw
/// request body, or JSON-escaped inside any string of a JSON body (also JSON text nested in a
/// string, such as tool arguments).
///
/// ```
/// assert_eq!(mock_provider::marker("case-7-x1"), "[[script:case-7-x1]]");
/// ```
pub fn marker(script_id: &str) -> String {
    format!("{MARKER_OPEN}{script_id}{MARKER_CLOSE}")
}

/// The distinct script ids marked in a request body, in order of discovery.
pub(crate) fn marked_script_ids(body: &[u8]) -> Vec<String> {
    let mut found = Vec::new();
    let text = String::from_utf8_lossy(body);
    collect_from_text(&text, &mut found);
    if let Ok(json) = serde_json::from_slice::<serde_json::Value>(body) {
        collect_from_json(&json, &mut found, 0);
    }
    found
}

fn collect_from_text(text: &str, found: &mut Vec<String>) {
    let mut rest = text;
    while let Some(start) = rest.find(MARKER_OPEN) {
        rest = &rest[start + MARKER_OPEN.len()..];
        if let Some(end) = rest.find(MARKER_CLOSE) {
            let id = &rest[..end];
            if script_id_is_valid(id) && !found.iter().any(|known| known == id) {
                found.push(id.to_owned());
            }
        }
    }
}

fn collect_from_json(value: &serde_json::Value, found: &mut Vec<String>, depth: usize) {
    match value {
        serde_json::Value::String(text) => {
            collect_from_text(text, found);
            let trimmed = text.trim_start();
            if depth < MAX_NESTING
                && (trimmed.starts_with('{') || trimmed.starts_with('['))
                && let Ok(nested) = serde_json::from_str::<serde_json::Value>(text)
            {
                collect_from_json(&nested, found, depth + 1);
            }
        }
        serde_json::Value::Array(items) => {
            for item in items {
                collect_from_json(item, found, depth);
            }
        }
        serde_json::Value::Object(fields) => {
            for (key, item) in fields {
                collect_from_text(key, found);
                collect_from_json(item, found, depth);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_raw_marker() {
        let body = br#"{"messages":[{"role":"user","content":"hi [[script:a-1]] there"}]}"#;
        assert_eq!(marked_script_ids(body), vec!["a-1".to_owned()]);
    }

    #[test]
    fn finds_a_json_escaped_marker() {
        let body = br#"{"input":"\u005b\u005bscript:esc.1\u005d\u005d"}"#;
        assert_eq!(marked_script_ids(body), vec!["esc.1".to_owned()]);
    }

    #[test]
    fn finds_a_marker_in_json_nested_in_a_string() {
        let body = br#"{"arguments":"{\"q\":\"\\u005b\\u005bscript:deep\\u005d\\u005d\"}"}"#;
        assert_eq!(marked_script_ids(body), vec!["deep".to_owned()]);
    }

    #[test]
    fn reports_each_distinct_id_once() {
        let body = b"[[script:a]] [[script:b]] [[script:a]] [[script:bad/id]]";
        assert_eq!(
            marked_script_ids(body),
            vec!["a".to_owned(), "b".to_owned()]
        );
    }

    #[test]
    fn finds_nothing_without_a_marker() {
        assert!(marked_script_ids(b"{\"text\":\"[[script:]]\"}").is_empty());
    }
}
