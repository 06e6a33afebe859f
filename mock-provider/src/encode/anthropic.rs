//! Anthropic Messages: `event:` + `data:` SSE from `message_start` to `message_stop`, and the
//! non-streaming `message` body.

use std::collections::HashMap;

use bytes::Bytes;
use serde_json::{Value, json};

use crate::encode::context::CompletionContext;
use crate::plan::{FrameRole, WireFrame};
use crate::script::{Chunk, Completion, FinishReason, Usage};

/// The wire name of a stop reason.
pub(crate) fn stop_reason(reason: FinishReason) -> &'static str {
    match reason {
        FinishReason::Stop => "end_turn",
        FinishReason::Length => "max_tokens",
        FinishReason::ToolCalls => "tool_use",
        FinishReason::ContentFilter => "refusal",
    }
}

/// A content block and the position of its last chunk.
enum BlockKind<'a> {
    Text,
    ToolUse { call_id: &'a str, name: &'a str },
}

struct Block<'a> {
    kind: BlockKind<'a>,
    last_chunk: usize,
}

#[derive(PartialEq, Eq, Hash)]
enum BlockKey<'a> {
    Text(u32),
    Tool(&'a str),
}

/// Blocks in order of first appearance and the block of each chunk.
fn blocks(chunks: &[Chunk]) -> (Vec<Block<'_>>, Vec<usize>) {
    let mut by_key: HashMap<BlockKey<'_>, usize> = HashMap::new();
    let mut blocks: Vec<Block<'_>> = Vec::new();
    let mut block_of_chunk = Vec::with_capacity(chunks.len());
    for (position, chunk) in chunks.iter().enumerate() {
        let (key, kind) = match chunk {
            Chunk::Text { output_index, .. } => (BlockKey::Text(*output_index), BlockKind::Text),
            Chunk::ToolCallStart { call_id, name } => (
                BlockKey::Tool(call_id),
                BlockKind::ToolUse { call_id, name },
            ),
            Chunk::ToolCallArguments { call_id, .. } => (
                BlockKey::Tool(call_id),
                BlockKind::ToolUse { call_id, name: "" },
            ),
        };
        let index = *by_key.entry(key).or_insert_with(|| {
            blocks.push(Block {
                kind,
                last_chunk: position,
            });
            blocks.len() - 1
        });
        blocks[index].last_chunk = position;
        block_of_chunk.push(index);
    }
    (blocks, block_of_chunk)
}

fn event_frame(event: &str, payload: &Value, role: FrameRole) -> WireFrame {
    WireFrame {
        bytes: Bytes::from(format!("event: {event}\ndata: {payload}\n\n")),
        role,
    }
}

/// Input tokens as Anthropic counts them: cache reads and writes excluded.
fn uncached_input(usage: &Usage) -> u64 {
    usage
        .input_tokens
        .saturating_sub(usage.cache_read_tokens)
        .saturating_sub(usage.cache_write_tokens)
}

fn usage_json(usage: &Usage, output_tokens: u64) -> Value {
    json!({
        "input_tokens": uncached_input(usage),
        "cache_creation_input_tokens": usage.cache_write_tokens,
        "cache_read_input_tokens": usage.cache_read_tokens,
        "output_tokens": output_tokens,
        "service_tier": "standard",
    })
}

/// The frames of a streamed message, in wire order.
pub(crate) fn stream_frames(
    completion: &Completion,
    context: &CompletionContext<'_>,
) -> Vec<WireFrame> {
    let usage = completion.usage.unwrap_or_default();
    let (blocks, block_of_chunk) = blocks(&completion.chunks);
    let mut frames = Vec::new();
    let start = json!({
        "type": "message_start",
        "message": {
            "id": context.response_id,
            "type": "message",
            "role": "assistant",
            "model": context.model,
            "content": [],
            "stop_reason": null,
            "stop_sequence": null,
            // Like the real API: a small running output count here, the total at the end.
            "usage": usage_json(&usage, usage.output_tokens.min(1)),
        },
    });
    frames.push(event_frame("message_start", &start, FrameRole::Opening));
    frames.push(event_frame(
        "ping",
        &json!({"type": "ping"}),
        FrameRole::Opening,
    ));
    let mut opened = vec![false; blocks.len()];
    for (position, chunk) in completion.chunks.iter().enumerate() {
        let index = block_of_chunk[position];
        let first = !opened[index];
        opened[index] = true;
        match chunk {
            Chunk::Text { delta, .. } => {
                if first {
                    let block_start = json!({
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {"type": "text", "text": ""},
                    });
                    frames.push(event_frame(
                        "content_block_start",
                        &block_start,
                        FrameRole::Structure,
                    ));
                }
                let payload = json!({
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "text_delta", "text": delta},
                });
                frames.push(event_frame(
                    "content_block_delta",
                    &payload,
                    FrameRole::Content,
                ));
            }
            Chunk::ToolCallStart { call_id, name } => {
                let payload = json!({
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "tool_use", "id": call_id, "name": name, "input": {}},
                });
                frames.push(event_frame(
                    "content_block_start",
                    &payload,
                    FrameRole::Content,
                ));
            }
            Chunk::ToolCallArguments { delta, .. } => {
                let payload = json!({
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": delta},
                });
                frames.push(event_frame(
                    "content_block_delta",
                    &payload,
                    FrameRole::Content,
                ));
            }
        }
        if blocks[index].last_chunk == position {
            let stop = json!({"type": "content_block_stop", "index": index});
            frames.push(event_frame(
                "content_block_stop",
                &stop,
                FrameRole::Structure,
            ));
        }
    }
    let delta = json!({
        "type": "message_delta",
        "delta": {"stop_reason": stop_reason(completion.finish_reason), "stop_sequence": null},
        "usage": {"output_tokens": usage.output_tokens},
    });
    frames.push(event_frame("message_delta", &delta, FrameRole::Closing));
    frames.push(event_frame(
        "message_stop",
        &json!({"type": "message_stop"}),
        FrameRole::Terminator,
    ));
    frames
}

/// A frame whose JSON is cut off in the middle.
pub(crate) fn malformed_frame() -> Bytes {
    Bytes::from_static(
        b"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\
          \"delta\":{\"type\":\"text_delta\",\"text\":\"\n\n",
    )
}

/// The non-streaming `message` body.
pub(crate) fn json_body(completion: &Completion, context: &CompletionContext<'_>) -> Value {
    let usage = completion.usage.unwrap_or_default();
    let (blocks, block_of_chunk) = blocks(&completion.chunks);
    let mut texts = vec![String::new(); blocks.len()];
    for (position, chunk) in completion.chunks.iter().enumerate() {
        match chunk {
            Chunk::Text { delta, .. } | Chunk::ToolCallArguments { delta, .. } => {
                texts[block_of_chunk[position]].push_str(delta);
            }
            Chunk::ToolCallStart { .. } => {}
        }
    }
    let content: Vec<Value> = blocks
        .iter()
        .zip(texts)
        .map(|(block, text)| match block.kind {
            BlockKind::Text => json!({"type": "text", "text": text}),
            BlockKind::ToolUse { call_id, name } => {
                let input = if text.is_empty() {
                    json!({})
                } else {
                    serde_json::from_str(&text).unwrap_or(Value::String(text))
                };
                json!({"type": "tool_use", "id": call_id, "name": name, "input": input})
            }
        })
        .collect();
    json!({
        "id": context.response_id,
        "type": "message",
        "role": "assistant",
        "model": context.model,
        "content": content,
        "stop_reason": stop_reason(completion.finish_reason),
        "stop_sequence": null,
        "usage": usage_json(&usage, usage.output_tokens),
    })
}
