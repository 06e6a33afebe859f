//! The two spellings of an entry of upstream's mock-AI program seam (open point
//! `w.seams.mock-program-entries`), enforced by lint: upstream's suite and its conformance mock
//! take a `MockBehavior` (`{stopReason, content, refusalText}`), upstream's canonical seam
//! document gives `{mode: "envelope", envelope}` and `{mode: "refusal", refusalReason}`. A host
//! may read either, so an entry carries both wherever both can say the same answer, and they
//! must agree:
//!
//! | the `MockBehavior` says | the entry also carries |
//! |---|---|
//! | a refusal (`stopReason: safety` or `refusalText`) | `mode: refusal`, `refusalReason` = `refusalText` |
//! | a clean stop (`stopReason` absent, `end_turn` or `stop_sequence`) whose `content` is a JSON object | `mode: envelope`, `envelope` = that object |
//! | anything else (a truncation, raw text: invalid JSON, prose, a fence) | no `mode`: the document's shape cannot say it |

use serde_json::Value;

/// Reports, at its JSON pointer, every entry of a program posted to the seam (`body` is the
/// request's `json`) whose two spellings disagree or which leaves out the document's where it
/// could say the same.
pub(crate) fn lint(body: &Value, pointer: &str, report: &mut dyn FnMut(&str, String)) {
    let Some(program) = body.get("program").and_then(Value::as_array) else {
        return;
    };
    for (i, entry) in program.iter().enumerate() {
        if let Some(problem) = entry.as_object().and_then(entry_problem) {
            report(&format!("{pointer}/program/{i}"), problem);
        }
    }
}

/// What the seam document's spelling of a `MockBehavior` is: `None` where it cannot say it.
fn document_spelling(entry: &serde_json::Map<String, Value>) -> Option<(&'static str, Value)> {
    let stop = entry.get("stopReason").and_then(Value::as_str);
    if stop == Some("safety") || entry.contains_key("refusalText") {
        let reason = entry.get("refusalText").cloned().unwrap_or(Value::Null);
        return Some(("refusal", reason));
    }
    if !matches!(stop, None | Some("end_turn" | "stop_sequence")) {
        return None;
    }
    let content = entry.get("content").and_then(Value::as_str)?;
    serde_json::from_str::<Value>(content)
        .ok()
        .filter(Value::is_object)
        .map(|envelope| ("envelope", envelope))
}

fn entry_problem(entry: &serde_json::Map<String, Value>) -> Option<String> {
    let mode = entry.get("mode").and_then(Value::as_str);
    match (document_spelling(entry), mode) {
        (None, None) => None,
        (None, Some(mode)) => Some(format!(
            "the entry says `mode: {mode}`, which its MockBehavior members (a truncation, or raw text) contradict: the seam document's spelling cannot say this answer, so leave `mode` out"
        )),
        (Some((expected, _)), None) => Some(format!(
            "the entry leaves out the seam document's spelling of its answer: add `\"mode\": \"{expected}\"` with {} (a host may read either spelling; open point w.seams.mock-program-entries)",
            member_of(expected)
        )),
        (Some((expected, value)), Some(mode)) => {
            let member = member_of(expected);
            let carried = entry.get(member).cloned().unwrap_or(Value::Null);
            if mode != expected {
                Some(format!(
                    "the entry says `mode: {mode}` where its MockBehavior members say `{expected}`"
                ))
            } else if carried != value {
                Some(format!(
                    "the entry's `{member}` is {carried} where its MockBehavior members say {value}: the two spellings must give the same answer"
                ))
            } else {
                None
            }
        }
    }
}

fn member_of(mode: &str) -> &'static str {
    if mode == "refusal" {
        "refusalReason"
    } else {
        "envelope"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn problems(program: Value) -> Vec<(String, String)> {
        let mut out = Vec::new();
        lint(&json!({ "program": program }), "/json", &mut |p, m| {
            out.push((p.to_string(), m))
        });
        out
    }

    #[test]
    fn entries_carry_both_spellings_where_both_can_say_the_answer() {
        assert!(
            problems(json!([
                {"stopReason": "end_turn", "content": "{\"valid\": true}",
                 "mode": "envelope", "envelope": {"valid": true}},
                {"stopReason": "safety", "refusalText": "no",
                 "mode": "refusal", "refusalReason": "no"},
                {"stopReason": "max_tokens", "content": "{\"valid\": true}"},
                {"content": "```json\n{}\n```"},
            ]))
            .is_empty()
        );
        let found = problems(json!([
            {"stopReason": "end_turn", "content": "{\"valid\": true}"},
            {"refusalText": "no"},
            {"content": "{\"valid\": true}", "mode": "envelope", "envelope": {"valid": false}},
            {"stopReason": "max_tokens", "content": "{}", "mode": "envelope", "envelope": {}},
            {"stopReason": "safety", "refusalText": "no", "mode": "envelope", "envelope": {}},
        ]));
        let at: Vec<&str> = found.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            at,
            [
                "/json/program/0",
                "/json/program/1",
                "/json/program/2",
                "/json/program/3",
                "/json/program/4"
            ]
        );
        assert!(
            found[0].1.contains("\"mode\": \"envelope\""),
            "{}",
            found[0].1
        );
        assert!(
            found[1].1.contains("\"mode\": \"refusal\""),
            "{}",
            found[1].1
        );
        assert!(
            found[2].1.contains("must give the same answer"),
            "{}",
            found[2].1
        );
        assert!(found[3].1.contains("leave `mode` out"), "{}", found[3].1);
        assert!(found[4].1.contains("say `refusal`"), "{}", found[4].1);
    }
}
