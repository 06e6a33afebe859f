//! An execution's materialised result as a defective fold writes it, re-derived from the
//! execution's events: each output's last `output.delta` dropped (`x-text-output-truncated`),
//! each tool call's argument fragments joined in reverse order (`x-tool-arguments-wrong-order`).
//! The clean fold (`execution/fold.rs`) writes the snapshot; the layer rewrites its `result`
//! on `GET /v1/executions/{id}` and `GET /v1/executions/{id}/result`.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use spec::execution::{EventBody, ExecutionEvent};

use crate::store::StoredEvent;

/// What a result's rewrites need of the log, read the way the fold reads it.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Streamed {
    /// Each output's last delta's length (bytes), by `output_index`.
    last_delta_len: BTreeMap<u32, usize>,
    /// Each tool call's argument fragments in log order, by `call_id` (a call restarted by a
    /// second `tool.call.started` loses its earlier fragments; a fragment of an unknown call is
    /// dropped, as the fold drops it).
    fragments: Vec<(String, Vec<String>)>,
    /// Whether the provider sent its own result (`output.result`), which the fold prefers to
    /// streamed text: then nothing is rewritten.
    provider_result: bool,
}

impl Streamed {
    /// Reads `events` (the fold's events: those up to the snapshot's last sequence).
    pub(super) fn of(events: &[StoredEvent]) -> Self {
        let mut streamed = Streamed::default();
        for stored in events {
            let Ok(event) = serde_json::from_str::<ExecutionEvent>(&stored.json) else {
                continue;
            };
            match event.body {
                EventBody::OutputDelta {
                    output_index,
                    delta,
                } => {
                    streamed.last_delta_len.insert(output_index, delta.len());
                }
                EventBody::ToolCallStarted { call_id, .. } => {
                    match streamed.fragments.iter_mut().find(|(id, _)| *id == call_id) {
                        Some((_, fragments)) => fragments.clear(),
                        None => streamed.fragments.push((call_id, Vec::new())),
                    }
                }
                EventBody::ToolCallArgumentsDelta { call_id, delta } => {
                    if let Some((_, fragments)) =
                        streamed.fragments.iter_mut().find(|(id, _)| *id == call_id)
                    {
                        fragments.push(delta);
                    }
                }
                EventBody::OutputResult { .. } => streamed.provider_result = true,
                _ => {}
            }
        }
        streamed
    }
}

/// `result` (a materialised text result: `outputs` and `tool_calls`) with each output's last
/// delta dropped (`truncate`) and each tool call's fragments joined in reverse (`reverse`).
pub(super) fn rewrite(result: &mut Value, streamed: &Streamed, truncate: bool, reverse: bool) {
    if streamed.provider_result {
        return;
    }
    if truncate && let Some(outputs) = result.get_mut("outputs").and_then(Value::as_array_mut) {
        for output in outputs {
            let index = output.get("index").and_then(Value::as_u64);
            let last = index
                .and_then(|i| u32::try_from(i).ok())
                .and_then(|i| streamed.last_delta_len.get(&i).copied())
                .unwrap_or(0);
            if let Some(text) = output.get("text").and_then(Value::as_str) {
                let keep = text.len().saturating_sub(last);
                if text.is_char_boundary(keep) {
                    output["text"] = json!(text[..keep]);
                }
            }
        }
    }
    if reverse && let Some(calls) = result.get_mut("tool_calls").and_then(Value::as_array_mut) {
        for call in calls {
            let call_id = call.get("call_id").and_then(Value::as_str).unwrap_or("");
            if let Some((_, fragments)) = streamed.fragments.iter().find(|(id, _)| id == call_id) {
                let reversed: String = fragments.iter().rev().map(String::as_str).collect();
                call["arguments"] = json!(reversed);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(bodies: Vec<EventBody>) -> Vec<StoredEvent> {
        bodies
            .into_iter()
            .enumerate()
            .map(|(i, body)| {
                let event = ExecutionEvent {
                    execution_id: "e1".into(),
                    sequence: i as u64 + 1,
                    time: chrono::Utc::now(),
                    body,
                };
                StoredEvent {
                    sequence: event.sequence,
                    time: event.time,
                    event_type: event.event_type().as_str().into(),
                    terminal: false,
                    json: serde_json::to_string(&event).expect("an event").into(),
                }
            })
            .collect()
    }

    fn delta(delta: &str) -> EventBody {
        EventBody::OutputDelta {
            output_index: 0,
            delta: delta.into(),
        }
    }

    fn fragment(call_id: &str, delta: &str) -> EventBody {
        EventBody::ToolCallArgumentsDelta {
            call_id: call_id.into(),
            delta: delta.into(),
        }
    }

    fn streamed() -> Streamed {
        Streamed::of(&events(vec![
            delta("Hel"),
            EventBody::ToolCallStarted {
                call_id: "c1".into(),
                name: "read".into(),
            },
            fragment("c1", "{\"a\":"),
            delta("lo"),
            fragment("c1", "1}"),
            fragment("c9", "x"),
        ]))
    }

    fn folded() -> Value {
        json!({
            "outputs": [{"index": 0, "kind": "text", "text": "Hello"}],
            "tool_calls": [{"call_id": "c1", "name": "read", "arguments": "{\"a\":1}"}],
        })
    }

    #[test]
    fn the_log_is_read_as_the_fold_reads_it() {
        let streamed = streamed();
        assert_eq!(streamed.last_delta_len.get(&0), Some(&2));
        assert_eq!(
            streamed.fragments,
            [(
                "c1".to_string(),
                vec!["{\"a\":".to_string(), "1}".to_string()]
            )]
        );
        assert!(!streamed.provider_result);
    }

    #[test]
    fn each_defect_rewrites_its_part_and_none_leaves_the_result_alone() {
        let streamed = streamed();
        let mut untouched = folded();
        rewrite(&mut untouched, &streamed, false, false);
        assert_eq!(untouched, folded());
        let mut truncated = folded();
        rewrite(&mut truncated, &streamed, true, false);
        assert_eq!(truncated["outputs"][0]["text"], "Hel");
        assert_eq!(truncated["tool_calls"], folded()["tool_calls"]);
        let mut reversed = folded();
        rewrite(&mut reversed, &streamed, false, true);
        assert_eq!(reversed["tool_calls"][0]["arguments"], "1}{\"a\":");
        assert_eq!(reversed["outputs"], folded()["outputs"]);
    }

    #[test]
    fn a_providers_own_result_is_never_rewritten() {
        let streamed = Streamed::of(&events(vec![
            delta("Hel"),
            EventBody::OutputResult {
                result: json!({"text": "Hello"}),
                artifacts: None,
            },
        ]));
        let mut result = json!({"text": "Hello"});
        rewrite(&mut result, &streamed, true, true);
        assert_eq!(result, json!({"text": "Hello"}));
    }
}
