//! Anthropic Messages, streaming (`POST <base>/v1/messages`, `x-api-key`,
//! `anthropic-version: 2023-06-01`).
//!
//! Sent: every input part as one user turn, `stream: true`, `max_tokens` (4096 unless the
//! request extension `anthropic.request` says otherwise; its other members pass through except
//! the ones the adapter owns). Read: `content_block_start` of a `tool_use` block →
//! `tool.call.started`; `text_delta` → `output.delta` (text blocks are numbered 0, 1, … in order
//! of first appearance, so tool blocks between them do not shift output indexes);
//! `input_json_delta` → `tool.call.arguments.delta` (non-empty fragments only; a fragment for a
//! block that is not a started tool call is a protocol error); usage merged key-wise from
//! `message_start` and `message_delta` (cumulative counters, the later value wins) and reported
//! once at `message_stop`, the completion signal. `input_token` = `input_tokens` +
//! `cache_read_input_tokens` + `cache_creation_input_tokens` (Anthropic's counter excludes cached
//! input). An `error` event fails the attempt; `ping` is ignored.

use std::collections::HashMap;

use serde_json::{Map, Value, json};
use spec::execution::{EventBody, InputPart, UsageFact};

use super::http::{in_band_failure, send, status_failure};
use super::sse_reader::SseReader;
use super::{Adapter, AttemptFailure, Emit, ProviderCall};

const OWNED_MEMBERS: [&str; 3] = ["model", "messages", "stream"];
const DEFAULT_MAX_TOKENS: u64 = 4096;

fn content_part(part: &InputPart) -> Value {
    match part {
        InputPart::Text { text } => json!({"type": "text", "text": text}),
        InputPart::Json { value } => json!({"type": "text", "text": value.to_string()}),
        InputPart::Image(media) => {
            json!({"type": "image", "source": {"type": "url", "url": media.uri}})
        }
        InputPart::Audio(media) | InputPart::Video(media) | InputPart::File(media) => {
            json!({"type": "document", "source": {"type": "url", "url": media.uri}})
        }
    }
}

fn request_body(call: &ProviderCall<'_>) -> Value {
    let mut body = Map::new();
    body.insert("max_tokens".into(), json!(DEFAULT_MAX_TOKENS));
    body.extend(super::extension_members(
        call,
        "anthropic.request",
        &OWNED_MEMBERS,
    ));
    let content: Vec<Value> = call.request.input.iter().map(content_part).collect();
    body.insert("model".into(), json!(call.model));
    body.insert(
        "messages".into(),
        json!([{"role": "user", "content": content}]),
    );
    body.insert("stream".into(), json!(true));
    Value::Object(body)
}

/// The content blocks of the message, by the provider's block index.
enum Block {
    Text { output_index: u32 },
    Tool { call_id: String },
    Other,
}

#[derive(Default)]
struct MessageState {
    blocks: HashMap<u64, Block>,
    text_blocks: u32,
    usage: Map<String, Value>,
}

impl MessageState {
    fn merge_usage(&mut self, usage: Option<&Value>) {
        if let Some(Value::Object(fields)) = usage {
            for (key, value) in fields {
                if !value.is_null() {
                    self.usage.insert(key.clone(), value.clone());
                }
            }
        }
    }

    fn usage_facts(&self) -> Vec<UsageFact> {
        let count = |key: &str| self.usage.get(key).and_then(Value::as_f64);
        let fact = super::provider_fact;
        let cache_read = count("cache_read_input_tokens");
        let cache_write = count("cache_creation_input_tokens");
        let input = count("input_tokens")
            .map(|input| input + cache_read.unwrap_or(0.0) + cache_write.unwrap_or(0.0));
        [
            fact("input_token", input),
            fact("output_token", count("output_tokens")),
            fact("cache_read_token", cache_read),
            fact("cache_write_token", cache_write),
        ]
        .into_iter()
        .flatten()
        .collect()
    }

    fn block_index(event: &Value) -> Result<u64, AttemptFailure> {
        event
            .get("index")
            .and_then(Value::as_u64)
            .ok_or_else(|| AttemptFailure::protocol("Provider content block has no index"))
    }

    fn start_block(&mut self, event: &Value, out: &mut dyn Emit) -> Result<(), AttemptFailure> {
        let index = Self::block_index(event)?;
        let block = event.get("content_block").unwrap_or(&Value::Null);
        let kind = block.get("type").and_then(Value::as_str).unwrap_or("");
        let entry = match kind {
            "text" => {
                let output_index = self.text_blocks;
                self.text_blocks += 1;
                if let Some(text) = block.get("text").and_then(Value::as_str)
                    && !text.is_empty()
                {
                    out.emit(EventBody::OutputDelta {
                        output_index,
                        delta: text.to_string(),
                    })?;
                }
                Block::Text { output_index }
            }
            "tool_use" => {
                let id = block.get("id").and_then(Value::as_str).unwrap_or("");
                let name = block.get("name").and_then(Value::as_str).unwrap_or("");
                if id.is_empty() || name.is_empty() {
                    return Err(AttemptFailure::protocol(
                        "Provider tool call has an empty id or name",
                    ));
                }
                out.emit(EventBody::ToolCallStarted {
                    call_id: id.to_string(),
                    name: name.to_string(),
                })?;
                Block::Tool {
                    call_id: id.to_string(),
                }
            }
            _ => Block::Other,
        };
        self.blocks.insert(index, entry);
        Ok(())
    }

    fn block_delta(&mut self, event: &Value, out: &mut dyn Emit) -> Result<(), AttemptFailure> {
        let index = Self::block_index(event)?;
        let delta = event.get("delta").unwrap_or(&Value::Null);
        match (
            delta.get("type").and_then(Value::as_str),
            self.blocks.get(&index),
        ) {
            (Some("text_delta"), Some(Block::Text { output_index })) => {
                let text = delta.get("text").and_then(Value::as_str).unwrap_or("");
                if !text.is_empty() {
                    out.emit(EventBody::OutputDelta {
                        output_index: *output_index,
                        delta: text.to_string(),
                    })?;
                }
                Ok(())
            }
            (Some("input_json_delta"), Some(Block::Tool { call_id })) => {
                let fragment = delta
                    .get("partial_json")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                if !fragment.is_empty() {
                    out.emit(EventBody::ToolCallArgumentsDelta {
                        call_id: call_id.clone(),
                        delta: fragment.to_string(),
                    })?;
                }
                Ok(())
            }
            (Some("text_delta" | "input_json_delta"), _) => Err(AttemptFailure::protocol(
                "Provider sent a delta for a block it did not start",
            )),
            // thinking_delta, signature_delta, … carry nothing the protocol exposes.
            _ => Ok(()),
        }
    }
}

pub(super) async fn run(
    adapter: &Adapter,
    call: ProviderCall<'_>,
    out: &mut dyn Emit,
) -> Result<(), AttemptFailure> {
    let request = adapter
        .client
        .post(adapter.endpoint("v1/messages"))
        .header("x-api-key", call.credential)
        .header("anthropic-version", "2023-06-01")
        .header("accept", "text/event-stream")
        .json(&request_body(&call));
    let response = send(request, &adapter.settings).await?;
    if !response.status().is_success() {
        return Err(status_failure(response, &adapter.settings).await);
    }
    let mut reader = SseReader::new(response);
    let mut state = MessageState::default();
    while let Some(message) = reader.next().await? {
        let event: Value = serde_json::from_str(&message.data)
            .map_err(|_| AttemptFailure::protocol("Provider sent a malformed stream frame"))?;
        let kind = message
            .event
            .as_deref()
            .or_else(|| event.get("type").and_then(Value::as_str))
            .unwrap_or("");
        match kind {
            "message_start" => state.merge_usage(event.pointer("/message/usage")),
            "content_block_start" => state.start_block(&event, out)?,
            "content_block_delta" => state.block_delta(&event, out)?,
            "message_delta" => state.merge_usage(event.get("usage")),
            "message_stop" => {
                let facts = state.usage_facts();
                if !facts.is_empty() {
                    out.emit(EventBody::UsageReported { facts })?;
                }
                return Ok(());
            }
            "error" => {
                return Err(in_band_failure(event.get("error").unwrap_or(&Value::Null)));
            }
            // ping, content_block_stop and future event types.
            _ => {}
        }
    }
    Err(AttemptFailure::protocol(
        "Provider stream ended without its completion signal",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_merges_cumulatively_and_folds_cache_into_input() {
        let mut state = MessageState::default();
        state.merge_usage(Some(
            &json!({"input_tokens": 20, "cache_read_input_tokens": 100,
            "cache_creation_input_tokens": 0, "output_tokens": 1}),
        ));
        state.merge_usage(Some(&json!({"output_tokens": 30})));
        let facts: Vec<(String, f64)> = state
            .usage_facts()
            .into_iter()
            .map(|f| (f.unit, f.quantity))
            .collect();
        assert_eq!(
            facts,
            [
                ("input_token".to_string(), 120.0),
                ("output_token".to_string(), 30.0),
                ("cache_read_token".to_string(), 100.0),
                ("cache_write_token".to_string(), 0.0)
            ]
        );
    }
}
