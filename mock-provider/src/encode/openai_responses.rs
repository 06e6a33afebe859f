//! OpenAI Responses: `event:` + `data:` SSE whose payloads carry `type` and an increasing
//! `sequence_number` (from 0), ending after a terminal `response.*` event (no `[DONE]`), and
//! the non-streaming `response` object.
//!
//! Text chunks of one `output_index` become one `message` output item (one `output_text`
//! content part); each tool call becomes one `function_call` output item. Items are numbered
//! in order of first appearance and stay open until the end, where they are closed in order.

use std::collections::HashMap;

use bytes::Bytes;
use serde_json::{Value, json};

use crate::encode::context::CompletionContext;
use crate::plan::{FrameRole, WireFrame};
use crate::script::{Chunk, Completion, FinishReason, Usage};

/// The `usage` object of a response.
pub(crate) fn usage_json(usage: &Usage) -> Value {
    json!({
        "input_tokens": usage.input_tokens,
        "input_tokens_details": {"cached_tokens": usage.cache_read_tokens},
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
        "total_tokens": usage.input_tokens.saturating_add(usage.output_tokens),
    })
}

/// Terminal status and `incomplete_details.reason` of a finish reason.
fn terminal(reason: FinishReason) -> (&'static str, Option<&'static str>) {
    match reason {
        FinishReason::Stop | FinishReason::ToolCalls => ("completed", None),
        FinishReason::Length => ("incomplete", Some("max_output_tokens")),
        FinishReason::ContentFilter => ("incomplete", Some("content_filter")),
    }
}

enum ItemKind<'a> {
    Message,
    FunctionCall { call_id: &'a str, name: &'a str },
}

/// One output item with everything its chunks contributed.
struct Item<'a> {
    id: String,
    kind: ItemKind<'a>,
    text: String,
}

#[derive(PartialEq, Eq, Hash)]
enum ItemKey<'a> {
    Text(u32),
    Tool(&'a str),
}

/// Output items in order of first appearance and the item index of each chunk.
fn items<'a>(chunks: &'a [Chunk], context: &CompletionContext<'_>) -> (Vec<Item<'a>>, Vec<usize>) {
    let unique = context.response_id.trim_start_matches("resp_");
    let mut by_key: HashMap<ItemKey<'a>, usize> = HashMap::new();
    let mut items: Vec<Item<'a>> = Vec::new();
    let mut item_of_chunk = Vec::with_capacity(chunks.len());
    for chunk in chunks {
        let (key, kind, fragment) = match chunk {
            Chunk::Text {
                output_index,
                delta,
            } => (
                ItemKey::Text(*output_index),
                ItemKind::Message,
                delta.as_str(),
            ),
            Chunk::ToolCallStart { call_id, name } => (
                ItemKey::Tool(call_id),
                ItemKind::FunctionCall { call_id, name },
                "",
            ),
            Chunk::ToolCallArguments { call_id, delta } => (
                ItemKey::Tool(call_id),
                ItemKind::FunctionCall { call_id, name: "" },
                delta.as_str(),
            ),
        };
        let index = *by_key.entry(key).or_insert_with(|| {
            let prefix = match kind {
                ItemKind::Message => "msg",
                ItemKind::FunctionCall { .. } => "fc",
            };
            items.push(Item {
                id: format!("{prefix}_{unique}_{}", items.len()),
                kind,
                text: String::new(),
            });
            items.len() - 1
        });
        items[index].text.push_str(fragment);
        item_of_chunk.push(index);
    }
    (items, item_of_chunk)
}

fn output_text_part(text: &str) -> Value {
    json!({"type": "output_text", "text": text, "annotations": [], "logprobs": []})
}

/// An item as `output_item.added` (empty, in progress) or as finished.
fn item_json(item: &Item<'_>, finished: Option<&str>) -> Value {
    let status = finished.unwrap_or("in_progress");
    let text = if finished.is_some() {
        item.text.as_str()
    } else {
        ""
    };
    match item.kind {
        ItemKind::Message => json!({
            "id": item.id,
            "type": "message",
            "status": status,
            "role": "assistant",
            "content": if finished.is_some() { json!([output_text_part(text)]) } else { json!([]) },
        }),
        ItemKind::FunctionCall { call_id, name } => json!({
            "id": item.id,
            "type": "function_call",
            "status": status,
            "arguments": text,
            "call_id": call_id,
            "name": name,
        }),
    }
}

/// The `response` object, in progress or finished.
fn response_json(
    context: &CompletionContext<'_>,
    status: &str,
    output: Vec<Value>,
    incomplete_reason: Option<&str>,
    usage: Option<&Usage>,
    error: Option<Value>,
) -> Value {
    json!({
        "id": context.response_id,
        "object": "response",
        "created_at": context.created,
        "status": status,
        "background": false,
        "error": error,
        "incomplete_details": incomplete_reason.map(|reason| json!({"reason": reason})),
        "instructions": null,
        "max_output_tokens": null,
        "model": context.model,
        "output": output,
        "parallel_tool_calls": true,
        "previous_response_id": null,
        "reasoning": {"effort": null, "summary": null},
        "store": true,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}},
        "tool_choice": "auto",
        "tools": [],
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": usage.map(usage_json),
        "user": null,
        "metadata": {},
    })
}

/// One SSE frame: `event: <type>` and the payload with `type` and `sequence_number` set.
pub(crate) fn event_frame(
    event: &str,
    sequence_number: usize,
    mut payload: Value,
    role: FrameRole,
) -> WireFrame {
    payload["type"] = json!(event);
    payload["sequence_number"] = json!(sequence_number);
    WireFrame {
        bytes: Bytes::from(format!("event: {event}\ndata: {payload}\n\n")),
        role,
    }
}

/// Builds frames, numbering them in wire order.
struct Frames(Vec<WireFrame>);

impl Frames {
    fn push(&mut self, event: &str, payload: Value, role: FrameRole) {
        let sequence_number = self.0.len();
        self.0
            .push(event_frame(event, sequence_number, payload, role));
    }
}

/// The frames of a streamed response, in wire order; frame k has `sequence_number` k.
pub(crate) fn stream_frames(
    completion: &Completion,
    context: &CompletionContext<'_>,
) -> Vec<WireFrame> {
    let (items, item_of_chunk) = items(&completion.chunks, context);
    let (status, incomplete_reason) = terminal(completion.finish_reason);
    let item_status = if status == "completed" {
        "completed"
    } else {
        "incomplete"
    };
    let mut frames = Frames(Vec::new());
    let in_progress = response_json(context, "in_progress", Vec::new(), None, None, None);
    frames.push(
        "response.created",
        json!({"response": in_progress}),
        FrameRole::Opening,
    );
    frames.push(
        "response.in_progress",
        json!({"response": in_progress}),
        FrameRole::Opening,
    );
    let mut opened = vec![false; items.len()];
    for (chunk, &index) in completion.chunks.iter().zip(&item_of_chunk) {
        let item = &items[index];
        let just_opened = !opened[index];
        if just_opened {
            opened[index] = true;
            let role = match item.kind {
                ItemKind::Message => FrameRole::Structure,
                // The tool call's start is the item itself.
                ItemKind::FunctionCall { .. } => FrameRole::Content,
            };
            frames.push(
                "response.output_item.added",
                json!({"output_index": index, "item": item_json(item, None)}),
                role,
            );
            if let ItemKind::Message = item.kind {
                frames.push(
                    "response.content_part.added",
                    json!({
                        "item_id": item.id,
                        "output_index": index,
                        "content_index": 0,
                        "part": output_text_part(""),
                    }),
                    FrameRole::Structure,
                );
            }
        }
        match chunk {
            Chunk::Text { delta, .. } => frames.push(
                "response.output_text.delta",
                json!({
                    "item_id": item.id,
                    "output_index": index,
                    "content_index": 0,
                    "delta": delta,
                    "logprobs": [],
                }),
                FrameRole::Content,
            ),
            Chunk::ToolCallArguments { delta, .. } => frames.push(
                "response.function_call_arguments.delta",
                json!({"item_id": item.id, "output_index": index, "delta": delta}),
                FrameRole::Content,
            ),
            Chunk::ToolCallStart { .. } => {}
        }
    }
    for (index, item) in items.iter().enumerate() {
        match item.kind {
            ItemKind::Message => {
                frames.push(
                    "response.output_text.done",
                    json!({
                        "item_id": item.id,
                        "output_index": index,
                        "content_index": 0,
                        "text": item.text,
                        "logprobs": [],
                    }),
                    FrameRole::Closing,
                );
                frames.push(
                    "response.content_part.done",
                    json!({
                        "item_id": item.id,
                        "output_index": index,
                        "content_index": 0,
                        "part": output_text_part(&item.text),
                    }),
                    FrameRole::Closing,
                );
            }
            ItemKind::FunctionCall { name, .. } => frames.push(
                "response.function_call_arguments.done",
                json!({
                    "item_id": item.id,
                    "output_index": index,
                    "name": name,
                    "arguments": item.text,
                }),
                FrameRole::Closing,
            ),
        }
        frames.push(
            "response.output_item.done",
            json!({"output_index": index, "item": item_json(item, Some(item_status))}),
            FrameRole::Closing,
        );
    }
    let output = items
        .iter()
        .map(|item| item_json(item, Some(item_status)))
        .collect();
    let finished = response_json(
        context,
        status,
        output,
        incomplete_reason,
        completion.usage.as_ref(),
        None,
    );
    frames.push(
        &format!("response.{status}"),
        json!({"response": finished}),
        FrameRole::Terminator,
    );
    frames.0
}

/// The in-band failure after `sequence_number` frames: the standalone `error` event, then the
/// terminal `response.failed` whose `response.error` repeats the code and message.
///
/// `error_body` is the provider's HTTP error body (`{"error": {message, type, param, code}}`).
pub(crate) fn failure_frames(
    error_body: &Value,
    sequence_number: usize,
    context: &CompletionContext<'_>,
) -> Bytes {
    let error = &error_body["error"];
    let code = error
        .get("code")
        .filter(|code| !code.is_null())
        .unwrap_or(&error["type"])
        .clone();
    let message = error["message"].clone();
    let standalone = event_frame(
        "error",
        sequence_number,
        json!({"code": code, "message": message, "param": error["param"]}),
        FrameRole::Terminator,
    );
    let failed = response_json(
        context,
        "failed",
        Vec::new(),
        None,
        None,
        Some(json!({"code": code, "message": message})),
    );
    let failed = event_frame(
        "response.failed",
        sequence_number + 1,
        json!({"response": failed}),
        FrameRole::Terminator,
    );
    let mut bytes = standalone.bytes.to_vec();
    bytes.extend_from_slice(&failed.bytes);
    Bytes::from(bytes)
}

/// A frame whose JSON is cut off in the middle.
pub(crate) fn malformed_frame(context: &CompletionContext<'_>) -> Bytes {
    Bytes::from(format!(
        "event: response.output_text.delta\ndata: {{\"type\":\"response.output_text.delta\",\
         \"item_id\":\"msg_{}\",\"delta\":\"\n\n",
        context.response_id.trim_start_matches("resp_")
    ))
}

/// The non-streaming `response` object.
pub(crate) fn json_body(completion: &Completion, context: &CompletionContext<'_>) -> Value {
    let (items, _) = items(&completion.chunks, context);
    let (status, incomplete_reason) = terminal(completion.finish_reason);
    let item_status = if status == "completed" {
        "completed"
    } else {
        "incomplete"
    };
    let output = items
        .iter()
        .map(|item| item_json(item, Some(item_status)))
        .collect();
    response_json(
        context,
        status,
        output,
        incomplete_reason,
        completion.usage.as_ref(),
        None,
    )
}
