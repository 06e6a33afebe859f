//! OpenAI Chat Completions, streaming (`POST <base>/v1/chat/completions`).
//!
//! Sent: every input part as one user turn, `stream: true`,
//! `stream_options.include_usage: true`, plus the members of the request extension
//! `openai.request` (e.g. `tools`, `tool_choice`, `max_tokens`) except the ones the adapter owns.
//! Read: `data:`-only frames; `choices[].delta.content` → `output.delta` (`output_index` = choice
//! index); `delta.tool_calls[]` by `index` → `tool.call.started` on the fragment carrying `id`
//! and `function.name`, then `tool.call.arguments.delta` per non-empty `function.arguments`; the
//! usage chunk → `usage.reported`; `data: [DONE]` is the completion signal. An in-band
//! `{"error": …}` frame fails the attempt; a body that ends before `[DONE]` is a
//! `provider_protocol_error`.

use std::collections::HashMap;

use serde_json::{Map, Value, json};
use spec::execution::{EventBody, InputPart, UsageFact};

use super::http::{in_band_failure, send, status_failure};
use super::sse_reader::SseReader;
use super::{Adapter, AttemptFailure, Emit, ProviderCall};

const OWNED_MEMBERS: [&str; 4] = ["model", "messages", "stream", "stream_options"];

fn content_part(part: &InputPart) -> Value {
    match part {
        InputPart::Text { text } => json!({"type": "text", "text": text}),
        InputPart::Json { value } => json!({"type": "text", "text": value.to_string()}),
        InputPart::Image(media) => json!({"type": "image_url", "image_url": {"url": media.uri}}),
        InputPart::Audio(media) | InputPart::Video(media) | InputPart::File(media) => {
            json!({"type": "file", "file": {"file_data": media.uri}})
        }
    }
}

fn request_body(call: &ProviderCall<'_>) -> Value {
    let mut body = Map::new();
    body.extend(super::extension_members(
        call,
        "openai.request",
        &OWNED_MEMBERS,
    ));
    let content: Vec<Value> = call.request.input.iter().map(content_part).collect();
    body.insert("model".into(), json!(call.model));
    body.insert(
        "messages".into(),
        json!([{"role": "user", "content": content}]),
    );
    body.insert("stream".into(), json!(true));
    body.insert("stream_options".into(), json!({"include_usage": true}));
    Value::Object(body)
}

/// Usage facts from a Chat Completions usage object. `prompt_tokens` already includes cached
/// tokens, which is what `input_token` means.
fn usage_facts(usage: &Value) -> Vec<UsageFact> {
    let fact = |unit: &str, value: Option<&Value>| {
        super::provider_fact(unit, value.and_then(Value::as_f64))
    };
    [
        fact("input_token", usage.get("prompt_tokens")),
        fact("output_token", usage.get("completion_tokens")),
        fact(
            "cache_read_token",
            usage.pointer("/prompt_tokens_details/cached_tokens"),
        ),
        fact(
            "reasoning_token",
            usage.pointer("/completion_tokens_details/reasoning_tokens"),
        ),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// Tool calls seen so far, by the provider's `index`.
#[derive(Default)]
struct ToolCalls {
    by_index: HashMap<u64, String>,
}

impl ToolCalls {
    fn handle(&mut self, fragment: &Value, out: &mut dyn Emit) -> Result<(), AttemptFailure> {
        let index = fragment
            .get("index")
            .and_then(Value::as_u64)
            .ok_or_else(|| AttemptFailure::protocol("Provider tool call fragment has no index"))?;
        let id = fragment.get("id").and_then(Value::as_str);
        let name = fragment.pointer("/function/name").and_then(Value::as_str);
        if let (Some(id), Some(name)) = (id, name)
            && !self.by_index.contains_key(&index)
        {
            if id.is_empty() || name.is_empty() {
                return Err(AttemptFailure::protocol(
                    "Provider tool call has an empty id or name",
                ));
            }
            self.by_index.insert(index, id.to_string());
            out.emit(EventBody::ToolCallStarted {
                call_id: id.to_string(),
                name: name.to_string(),
            })?;
        }
        let arguments = fragment
            .pointer("/function/arguments")
            .and_then(Value::as_str)
            .unwrap_or("");
        if !arguments.is_empty() {
            let call_id = self.by_index.get(&index).ok_or_else(|| {
                AttemptFailure::protocol("Provider sent tool arguments before the tool call")
            })?;
            out.emit(EventBody::ToolCallArgumentsDelta {
                call_id: call_id.clone(),
                delta: arguments.to_string(),
            })?;
        }
        Ok(())
    }
}

pub(super) async fn run(
    adapter: &Adapter,
    call: ProviderCall<'_>,
    out: &mut dyn Emit,
) -> Result<(), AttemptFailure> {
    let request = adapter
        .client
        .post(adapter.endpoint("v1/chat/completions"))
        .bearer_auth(call.credential)
        .header("accept", "text/event-stream")
        .json(&request_body(&call));
    let response = send(request, &adapter.settings).await?;
    if !response.status().is_success() {
        return Err(status_failure(response, &adapter.settings).await);
    }
    let mut reader = SseReader::new(response);
    let mut tools = ToolCalls::default();
    while let Some(message) = reader.next().await? {
        if message.data == "[DONE]" {
            return Ok(());
        }
        let chunk: Value = serde_json::from_str(&message.data)
            .map_err(|_| AttemptFailure::protocol("Provider sent a malformed stream frame"))?;
        if let Some(error) = chunk.get("error") {
            return Err(in_band_failure(error));
        }
        for choice in chunk
            .get("choices")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let output_index = choice.get("index").and_then(Value::as_u64).unwrap_or(0);
            let output_index = u32::try_from(output_index)
                .map_err(|_| AttemptFailure::protocol("Provider choice index is out of range"))?;
            let delta = choice.get("delta").unwrap_or(&Value::Null);
            if let Some(text) = delta.get("content").and_then(Value::as_str)
                && !text.is_empty()
            {
                out.emit(EventBody::OutputDelta {
                    output_index,
                    delta: text.to_string(),
                })?;
            }
            for fragment in delta
                .get("tool_calls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                tools.handle(fragment, out)?;
            }
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            let facts = usage_facts(usage);
            if !facts.is_empty() {
                out.emit(EventBody::UsageReported { facts })?;
            }
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
    fn usage_maps_prompt_tokens_to_input_token_including_cache() {
        let facts = usage_facts(&json!({
            "prompt_tokens": 120, "completion_tokens": 30,
            "prompt_tokens_details": {"cached_tokens": 100},
            "completion_tokens_details": {"reasoning_tokens": 5}
        }));
        let units: Vec<(&str, f64)> = facts
            .iter()
            .map(|f| (f.unit.as_str(), f.quantity))
            .collect();
        assert_eq!(
            units,
            [
                ("input_token", 120.0),
                ("output_token", 30.0),
                ("cache_read_token", 100.0),
                ("reasoning_token", 5.0)
            ]
        );
    }
}
