//! OpenAI Responses, streaming (`POST <base>/v1/responses`).
//!
//! Sent: every input part as one user message of `input_*` content parts, `stream: true`, plus
//! the members of the request extension `openai.request` (e.g. `tools`, `max_output_tokens`)
//! except the ones the adapter owns.
//! Read: `event:` + `data:` frames, dispatched on the payload's `type`.
//! `response.output_text.delta` → `output.delta` (`output_index` = the message item's position
//! among the message items, in order of first appearance); a `function_call` item in
//! `response.output_item.added` → `tool.call.started` (`call_id`, `name`);
//! `response.function_call_arguments.delta` (which names the *item* id) → the item's call's
//! `tool.call.arguments.delta`; the terminal response's `usage` → `usage.reported`
//! (`input_tokens` already includes cached tokens, which is what `input_token` means).
//! `response.completed` is the completion signal. `response.incomplete` and `response.failed`
//! fail the attempt, as does a standalone `error` event; a body that ends before a terminal
//! event is a `provider_protocol_error`. Provider messages are never copied.

use std::collections::HashMap;

use serde_json::{Map, Value, json};
use spec::execution::{ErrorCode, EventBody, InputPart, UsageFact};

use super::http::{in_band_failure, send, status_failure};
use super::sse_reader::SseReader;
use super::{Adapter, AttemptFailure, Emit, ProviderCall};

const OWNED_MEMBERS: [&str; 3] = ["model", "input", "stream"];

fn content_part(part: &InputPart) -> Value {
    match part {
        InputPart::Text { text } => json!({"type": "input_text", "text": text}),
        InputPart::Json { value } => json!({"type": "input_text", "text": value.to_string()}),
        InputPart::Image(media) => json!({"type": "input_image", "image_url": media.uri}),
        InputPart::Audio(media) | InputPart::Video(media) | InputPart::File(media) => {
            json!({"type": "input_file", "file_url": media.uri})
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
        "input".into(),
        json!([{"type": "message", "role": "user", "content": content}]),
    );
    body.insert("stream".into(), json!(true));
    Value::Object(body)
}

/// Usage facts from a Responses usage object.
fn usage_facts(usage: &Value) -> Vec<UsageFact> {
    let fact = |unit: &str, value: Option<&Value>| {
        super::provider_fact(unit, value.and_then(Value::as_f64))
    };
    [
        fact("input_token", usage.get("input_tokens")),
        fact("output_token", usage.get("output_tokens")),
        fact(
            "cache_read_token",
            usage.pointer("/input_tokens_details/cached_tokens"),
        ),
        fact(
            "reasoning_token",
            usage.pointer("/output_tokens_details/reasoning_tokens"),
        ),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// Output items seen so far, by the provider's item id.
#[derive(Default)]
struct Items {
    /// Message item id → text output index.
    texts: HashMap<String, u32>,
    /// Function call item id → call id.
    calls: HashMap<String, String>,
}

fn str_member<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

impl Items {
    fn item_added(&mut self, item: &Value, out: &mut dyn Emit) -> Result<(), AttemptFailure> {
        if str_member(item, "type") != Some("function_call") {
            return Ok(());
        }
        let (Some(item_id), Some(call_id), Some(name)) = (
            str_member(item, "id"),
            str_member(item, "call_id"),
            str_member(item, "name"),
        ) else {
            return Err(AttemptFailure::protocol(
                "Provider function call item lacks its id, call id or name",
            ));
        };
        if item_id.is_empty() || call_id.is_empty() || name.is_empty() {
            return Err(AttemptFailure::protocol(
                "Provider function call item has an empty id, call id or name",
            ));
        }
        if self.calls.contains_key(item_id) {
            return Err(AttemptFailure::protocol(
                "Provider announced the same output item twice",
            ));
        }
        self.calls.insert(item_id.to_string(), call_id.to_string());
        out.emit(EventBody::ToolCallStarted {
            call_id: call_id.to_string(),
            name: name.to_string(),
        })?;
        // A call item may arrive with its arguments already filled in.
        if let Some(arguments) = str_member(item, "arguments").filter(|a| !a.is_empty()) {
            out.emit(EventBody::ToolCallArgumentsDelta {
                call_id: call_id.to_string(),
                delta: arguments.to_string(),
            })?;
        }
        Ok(())
    }

    fn text_delta(&mut self, event: &Value, out: &mut dyn Emit) -> Result<(), AttemptFailure> {
        let item_id = str_member(event, "item_id")
            .ok_or_else(|| AttemptFailure::protocol("Provider text delta names no item"))?;
        let next = u32::try_from(self.texts.len())
            .map_err(|_| AttemptFailure::protocol("Provider sent too many output items"))?;
        let output_index = *self.texts.entry(item_id.to_string()).or_insert(next);
        let delta = str_member(event, "delta").unwrap_or("");
        if !delta.is_empty() {
            out.emit(EventBody::OutputDelta {
                output_index,
                delta: delta.to_string(),
            })?;
        }
        Ok(())
    }

    fn arguments_delta(&self, event: &Value, out: &mut dyn Emit) -> Result<(), AttemptFailure> {
        let call_id = str_member(event, "item_id")
            .and_then(|item_id| self.calls.get(item_id))
            .ok_or_else(|| {
                AttemptFailure::protocol("Provider sent arguments for an unknown function call")
            })?;
        let delta = str_member(event, "delta").unwrap_or("");
        if !delta.is_empty() {
            out.emit(EventBody::ToolCallArgumentsDelta {
                call_id: call_id.clone(),
                delta: delta.to_string(),
            })?;
        }
        Ok(())
    }
}

/// Emits the usage of a terminal response, if it reports any.
fn report_usage(response: &Value, out: &mut dyn Emit) -> Result<(), AttemptFailure> {
    if let Some(usage) = response.get("usage").filter(|u| u.is_object()) {
        let facts = usage_facts(usage);
        if !facts.is_empty() {
            out.emit(EventBody::UsageReported { facts })?;
        }
    }
    Ok(())
}

/// The failure of a `response.incomplete`: the provider stopped before finishing (token
/// budget or content filter). Not retryable: the same request would stop the same way.
fn incomplete_failure(response: &Value) -> AttemptFailure {
    let message = match response
        .pointer("/incomplete_details/reason")
        .and_then(Value::as_str)
    {
        Some("max_output_tokens") => "Provider response is incomplete: output token limit reached",
        Some("content_filter") => "Provider response is incomplete: content filtered",
        _ => "Provider response is incomplete",
    };
    AttemptFailure::new(ErrorCode::ProviderUnavailable, message, false)
}

/// The failure of a `response.failed` or a standalone `error` event, classified by its code.
fn reported_failure(error: Option<&Value>) -> AttemptFailure {
    let code = error.and_then(|e| e.get("code")).cloned();
    in_band_failure(&json!({ "code": code }))
}

pub(super) async fn run(
    adapter: &Adapter,
    call: ProviderCall<'_>,
    out: &mut dyn Emit,
) -> Result<(), AttemptFailure> {
    let request = adapter
        .client
        .post(adapter.endpoint("v1/responses"))
        .bearer_auth(call.credential)
        .header("accept", "text/event-stream")
        .json(&request_body(&call));
    let response = send(request, &adapter.settings).await?;
    if !response.status().is_success() {
        return Err(status_failure(response, &adapter.settings).await);
    }
    let mut reader = SseReader::new(response);
    let mut items = Items::default();
    while let Some(message) = reader.next().await? {
        let event: Value = serde_json::from_str(&message.data)
            .map_err(|_| AttemptFailure::protocol("Provider sent a malformed stream frame"))?;
        let kind = str_member(&event, "type")
            .or(message.event.as_deref())
            .unwrap_or("");
        let terminal = event.get("response").unwrap_or(&Value::Null);
        match kind {
            "response.output_item.added" => {
                items.item_added(event.get("item").unwrap_or(&Value::Null), out)?;
            }
            "response.output_text.delta" => items.text_delta(&event, out)?,
            "response.function_call_arguments.delta" => items.arguments_delta(&event, out)?,
            "response.completed" => {
                report_usage(terminal, out)?;
                return Ok(());
            }
            "response.incomplete" => {
                report_usage(terminal, out)?;
                return Err(incomplete_failure(terminal));
            }
            "response.failed" => return Err(reported_failure(terminal.get("error"))),
            "error" => return Err(reported_failure(Some(&event))),
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
    fn usage_maps_input_tokens_to_input_token_including_cache() {
        let facts = usage_facts(&json!({
            "input_tokens": 120, "output_tokens": 30, "total_tokens": 150,
            "input_tokens_details": {"cached_tokens": 100},
            "output_tokens_details": {"reasoning_tokens": 5}
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

    #[test]
    fn failures_are_classified_by_code_and_never_copy_the_message() {
        let failure = reported_failure(Some(
            &json!({"code": "server_error", "message": "boom sk-secret"}),
        ));
        assert!(failure.error.retryable);
        assert!(!failure.error.message.contains("sk-secret"));
        let failure = reported_failure(Some(&json!({"code": "rate_limit_exceeded"})));
        assert_eq!(failure.error.code, ErrorCode::RateLimited);
        assert!(
            !reported_failure(Some(&json!({"code": "invalid_prompt"})))
                .error
                .retryable
        );
        assert!(!reported_failure(None).error.retryable);
        let incomplete =
            incomplete_failure(&json!({"incomplete_details": {"reason": "max_output_tokens"}}));
        assert!(!incomplete.error.retryable);
    }
}
