//! OpenAI Chat Completions: `data:`-only SSE with `[DONE]`, and the non-streaming JSON body.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use bytes::Bytes;
use serde_json::{Value, json};

use crate::encode::context::CompletionContext;
use crate::plan::{FrameRole, WireFrame};
use crate::script::{Chunk, Completion, FinishReason, Usage};

/// The wire name of a finish reason.
pub(crate) fn finish_reason(reason: FinishReason) -> &'static str {
    match reason {
        FinishReason::Stop => "stop",
        FinishReason::Length => "length",
        FinishReason::ToolCalls => "tool_calls",
        FinishReason::ContentFilter => "content_filter",
    }
}

/// The `usage` object of a response or of the final usage chunk.
pub(crate) fn usage_json(usage: &Usage) -> Value {
    json!({
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens.saturating_add(usage.output_tokens),
        "prompt_tokens_details": {"cached_tokens": usage.cache_read_tokens, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": usage.reasoning_tokens,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    })
}

/// Tool call index (by order of `tool_call_start`) per call id.
fn tool_indexes(chunks: &[Chunk]) -> HashMap<&str, usize> {
    let mut indexes = HashMap::new();
    for chunk in chunks {
        if let Chunk::ToolCallStart { call_id, .. } = chunk {
            let next = indexes.len();
            indexes.entry(call_id.as_str()).or_insert(next);
        }
    }
    indexes
}

/// Choice indexes in use: 0 (tool calls live there) and every text output index.
fn choice_indexes(chunks: &[Chunk]) -> BTreeSet<u32> {
    let mut choices = BTreeSet::from([0]);
    for chunk in chunks {
        if let Chunk::Text { output_index, .. } = chunk {
            choices.insert(*output_index);
        }
    }
    choices
}

fn data_frame(payload: &Value, role: FrameRole) -> WireFrame {
    WireFrame {
        bytes: Bytes::from(format!("data: {payload}\n\n")),
        role,
    }
}

fn chunk_object(context: &CompletionContext<'_>, choices: Value) -> Value {
    let mut chunk = json!({
        "id": context.response_id,
        "object": "chat.completion.chunk",
        "created": context.created,
        "model": context.model,
        "system_fingerprint": "fp_mock",
        "choices": choices,
    });
    if context.include_usage {
        chunk["usage"] = Value::Null;
    }
    chunk
}

fn choice_delta(index: u32, delta: Value, finish: Option<&str>) -> Value {
    json!([{"index": index, "delta": delta, "logprobs": null, "finish_reason": finish}])
}

/// The frames of a streamed completion, in wire order.
pub(crate) fn stream_frames(
    completion: &Completion,
    context: &CompletionContext<'_>,
) -> Vec<WireFrame> {
    let choices = choice_indexes(&completion.chunks);
    let tools = tool_indexes(&completion.chunks);
    let mut frames = Vec::new();
    for &index in &choices {
        let delta = json!({"role": "assistant", "content": "", "refusal": null});
        let chunk = chunk_object(context, choice_delta(index, delta, None));
        frames.push(data_frame(&chunk, FrameRole::Opening));
    }
    for chunk in &completion.chunks {
        let (index, delta) = match chunk {
            Chunk::Text {
                output_index,
                delta,
            } => (*output_index, json!({"content": delta})),
            Chunk::ToolCallStart { call_id, name } => {
                let tool_index = tools.get(call_id.as_str()).copied().unwrap_or(0);
                let call = json!({
                    "index": tool_index,
                    "id": call_id,
                    "type": "function",
                    "function": {"name": name, "arguments": ""},
                });
                (0, json!({"tool_calls": [call]}))
            }
            Chunk::ToolCallArguments { call_id, delta } => {
                let tool_index = tools.get(call_id.as_str()).copied().unwrap_or(0);
                let call = json!({"index": tool_index, "function": {"arguments": delta}});
                (0, json!({"tool_calls": [call]}))
            }
        };
        let object = chunk_object(context, choice_delta(index, delta, None));
        frames.push(data_frame(&object, FrameRole::Content));
    }
    let finish = finish_reason(completion.finish_reason);
    for &index in &choices {
        let chunk = chunk_object(context, choice_delta(index, json!({}), Some(finish)));
        frames.push(data_frame(&chunk, FrameRole::Closing));
    }
    if context.include_usage
        && let Some(usage) = &completion.usage
    {
        let mut chunk = chunk_object(context, json!([]));
        chunk["usage"] = usage_json(usage);
        frames.push(data_frame(&chunk, FrameRole::Closing));
    }
    frames.push(WireFrame {
        bytes: Bytes::from_static(b"data: [DONE]\n\n"),
        role: FrameRole::Terminator,
    });
    frames
}

/// A frame whose JSON is cut off in the middle.
pub(crate) fn malformed_frame(context: &CompletionContext<'_>) -> Bytes {
    Bytes::from(format!(
        "data: {{\"id\":\"{}\",\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\
         \"delta\":{{\"content\":\"\n\n",
        context.response_id
    ))
}

/// The non-streaming `chat.completion` body.
pub(crate) fn json_body(completion: &Completion, context: &CompletionContext<'_>) -> Value {
    let mut texts: BTreeMap<u32, String> = choice_indexes(&completion.chunks)
        .into_iter()
        .map(|index| (index, String::new()))
        .collect();
    let mut calls: Vec<(String, String, String)> = Vec::new();
    for chunk in &completion.chunks {
        match chunk {
            Chunk::Text {
                output_index,
                delta,
            } => texts.entry(*output_index).or_default().push_str(delta),
            Chunk::ToolCallStart { call_id, name } => {
                calls.push((call_id.clone(), name.clone(), String::new()));
            }
            Chunk::ToolCallArguments { call_id, delta } => {
                if let Some(call) = calls.iter_mut().find(|call| &call.0 == call_id) {
                    call.2.push_str(delta);
                }
            }
        }
    }
    let has_text: BTreeSet<u32> = completion
        .chunks
        .iter()
        .filter_map(|chunk| match chunk {
            Chunk::Text { output_index, .. } => Some(*output_index),
            _ => None,
        })
        .collect();
    let finish = finish_reason(completion.finish_reason);
    let choices: Vec<Value> = texts
        .into_iter()
        .map(|(index, text)| {
            let content = if has_text.contains(&index) || (index == 0 && calls.is_empty()) {
                json!(text)
            } else {
                Value::Null
            };
            let mut message = json!({"role": "assistant", "content": content, "refusal": null});
            if index == 0 && !calls.is_empty() {
                message["tool_calls"] = calls
                    .iter()
                    .map(|(id, name, arguments)| {
                        json!({
                            "id": id,
                            "type": "function",
                            "function": {"name": name, "arguments": arguments},
                        })
                    })
                    .collect();
            }
            json!({"index": index, "message": message, "logprobs": null, "finish_reason": finish})
        })
        .collect();
    let mut body = json!({
        "id": context.response_id,
        "object": "chat.completion",
        "created": context.created,
        "model": context.model,
        "system_fingerprint": "fp_mock",
        "choices": choices,
    });
    if let Some(usage) = &completion.usage {
        body["usage"] = usage_json(usage);
    }
    body
}
