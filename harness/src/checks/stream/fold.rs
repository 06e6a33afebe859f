//! `fold_equals`: folding an execution log's deltas gives the materialised result.

use serde_json::{Value, json};

use crate::checks::context::Outcome;
use crate::checks::events::ObservedEvent;
use crate::checks::json_match::json_equal;
use crate::transcript::StepRecord;
use crate::verdict::CheckOutcome;

/// Folds an execution log's deltas into the materialised result: `output.delta` per
/// `output_index`, tool calls by `call_id` in order of first appearance.
fn fold_execution_events(events: &[ObservedEvent]) -> Value {
    let mut outputs: std::collections::BTreeMap<u64, String> = std::collections::BTreeMap::new();
    let mut calls: Vec<(String, String, String)> = Vec::new();
    for event in events {
        let doc = &event.doc;
        match event.event_type.as_deref() {
            Some("output.delta") => {
                // The origin types `output_index` as a number: `1.0` names output 1.
                let index = doc
                    .get("output_index")
                    .and_then(|i| {
                        i.as_u64().or_else(|| {
                            i.as_f64()
                                .filter(|f| f.fract() == 0.0 && *f >= 0.0)
                                .map(|f| f as u64)
                        })
                    })
                    .unwrap_or(0);
                outputs
                    .entry(index)
                    .or_default()
                    .push_str(doc.get("delta").and_then(Value::as_str).unwrap_or_default());
            }
            Some("tool.call.started") => {
                let id = doc
                    .get("call_id")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                let name = doc
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                match calls.iter_mut().find(|c| c.0 == id) {
                    Some(call) => call.1 = name,
                    None => calls.push((id, name, String::new())),
                }
            }
            Some("tool.call.arguments.delta") => {
                let id = doc
                    .get("call_id")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let delta = doc.get("delta").and_then(Value::as_str).unwrap_or_default();
                if let Some(call) = calls.iter_mut().find(|c| c.0 == id) {
                    call.2.push_str(delta);
                }
            }
            _ => {}
        }
    }
    json!({
        "outputs": outputs.into_iter().map(|(index, text)| json!({"index": index, "type": "text", "text": text})).collect::<Vec<_>>(),
        "tool_calls": calls.into_iter().map(|(call_id, name, arguments)| json!({"call_id": call_id, "name": name, "arguments": arguments})).collect::<Vec<_>>(),
    })
}

/// The folded deltas equal the given (expanded) result; absent `outputs` / `tool_calls` read
/// as empty.
pub(in crate::checks) fn fold_equals(
    out: &Outcome<'_>,
    step: &StepRecord,
    result: &Value,
) -> CheckOutcome {
    let (_, observed) = observed!(out, step);
    let want = match out.ctx.scope.expand(result) {
        Ok(v) => v,
        Err(e) => return out.template(&e),
    };
    let folded = fold_execution_events(&observed.events);
    let normalise = |v: &Value| {
        let mut v = v.clone();
        for key in ["outputs", "tool_calls"] {
            if v.get(key).is_none() {
                v[key] = json!([]);
            }
        }
        v
    };
    if json_equal(&normalise(&folded), &normalise(&want)) {
        out.pass("the materialised result equals the folded deltas")
    } else {
        out.fail(
            "the materialised result differs from the folded deltas",
            serde_json::to_string_pretty(&folded).unwrap_or_default(),
            serde_json::to_string_pretty(&want).unwrap_or_default(),
        )
    }
}
