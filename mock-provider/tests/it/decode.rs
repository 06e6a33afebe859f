//! Decoders from provider wire formats back into the script model, written from the
//! providers' documented formats (not from the crate's encoders).

use std::collections::{BTreeMap, HashMap};

use mock_provider::{
    Artifact, AsyncJob, Chunk, Completion, FinishReason, JobFailure, JobPhase, Usage,
};
use serde_json::Value;

use crate::sse::ParsedStream;

/// What a stream decoded into, plus the protocol facts around it.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodedStream {
    /// Content chunks, finish reason and usage.
    pub completion: Completion,
    /// Whether the terminator (`[DONE]` / `message_stop`) was seen, and last.
    pub terminated: bool,
    /// The in-band error payload, if any.
    pub error: Option<Value>,
    /// `data:` payloads that were not JSON.
    pub malformed: usize,
}

fn completion(chunks: Vec<Chunk>, finish: FinishReason, usage: Option<Usage>) -> Completion {
    Completion {
        chunks,
        finish_reason: finish,
        usage,
        model: None,
        timing: Default::default(),
        stream_fault: None,
    }
}

fn u(value: &Value, pointer: &str) -> u64 {
    value.pointer(pointer).and_then(Value::as_u64).unwrap_or(0)
}

fn openai_finish(reason: &str) -> FinishReason {
    match reason {
        "stop" => FinishReason::Stop,
        "length" => FinishReason::Length,
        "tool_calls" => FinishReason::ToolCalls,
        "content_filter" => FinishReason::ContentFilter,
        other => panic!("unknown OpenAI finish_reason {other}"),
    }
}

fn anthropic_finish(reason: &str) -> FinishReason {
    match reason {
        "end_turn" => FinishReason::Stop,
        "max_tokens" => FinishReason::Length,
        "tool_use" => FinishReason::ToolCalls,
        "refusal" => FinishReason::ContentFilter,
        other => panic!("unknown Anthropic stop_reason {other}"),
    }
}

fn openai_usage(usage: &Value) -> Usage {
    let decoded = Usage {
        input_tokens: u(usage, "/prompt_tokens"),
        output_tokens: u(usage, "/completion_tokens"),
        cache_read_tokens: u(usage, "/prompt_tokens_details/cached_tokens"),
        cache_write_tokens: 0,
        reasoning_tokens: u(usage, "/completion_tokens_details/reasoning_tokens"),
    };
    assert_eq!(
        u(usage, "/total_tokens"),
        decoded.input_tokens + decoded.output_tokens,
        "total_tokens is prompt + completion"
    );
    decoded
}

/// Decodes an OpenAI Chat Completions stream.
pub fn openai_stream(parsed: &ParsedStream) -> DecodedStream {
    let mut chunks = Vec::new();
    let mut finish = None;
    let mut usage = None;
    let mut terminated = false;
    let mut error = None;
    let mut malformed = 0;
    let mut call_ids: HashMap<u64, String> = HashMap::new();
    for (position, event) in parsed.events.iter().enumerate() {
        assert!(event.event.is_none(), "OpenAI streams have no event: lines");
        if event.data == "[DONE]" {
            terminated = position == parsed.events.len() - 1;
            continue;
        }
        let Ok(payload) = serde_json::from_str::<Value>(&event.data) else {
            malformed += 1;
            continue;
        };
        if let Some(in_band) = payload.get("error") {
            error = Some(in_band.clone());
            continue;
        }
        assert_eq!(payload["object"], "chat.completion.chunk");
        if let Some(reported) = payload.get("usage").filter(|usage| !usage.is_null()) {
            assert_eq!(payload["choices"], Value::Array(vec![]), "usage chunk");
            usage = Some(openai_usage(reported));
        }
        for choice in payload["choices"].as_array().into_iter().flatten() {
            let index = choice["index"].as_u64().unwrap_or(0) as u32;
            let delta = &choice["delta"];
            if let Some(reason) = choice["finish_reason"].as_str() {
                finish = Some(openai_finish(reason));
            }
            if delta.get("role").is_some() {
                assert_eq!(delta["content"], "", "the role chunk carries empty content");
                continue;
            }
            if let Some(text) = delta.get("content").and_then(Value::as_str) {
                chunks.push(Chunk::Text {
                    output_index: index,
                    delta: text.to_owned(),
                });
            }
            for call in delta["tool_calls"].as_array().into_iter().flatten() {
                let tool_index = call["index"].as_u64().expect("tool call index");
                let arguments = call["function"]["arguments"].as_str().unwrap_or("");
                if let Some(id) = call.get("id").and_then(Value::as_str) {
                    assert_eq!(call["type"], "function");
                    assert_eq!(arguments, "", "the first fragment carries no arguments");
                    call_ids.insert(tool_index, id.to_owned());
                    chunks.push(Chunk::ToolCallStart {
                        call_id: id.to_owned(),
                        name: call["function"]["name"].as_str().unwrap_or("").to_owned(),
                    });
                } else {
                    chunks.push(Chunk::ToolCallArguments {
                        call_id: call_ids[&tool_index].clone(),
                        delta: arguments.to_owned(),
                    });
                }
            }
        }
    }
    DecodedStream {
        completion: completion(chunks, finish.unwrap_or_default(), usage),
        terminated,
        error,
        malformed,
    }
}

/// Decodes an Anthropic Messages stream.
pub fn anthropic_stream(parsed: &ParsedStream) -> DecodedStream {
    enum Block {
        Text(u32),
        Tool(String),
    }
    let mut chunks = Vec::new();
    let mut finish = None;
    let mut terminated = false;
    let mut error = None;
    let mut malformed = 0;
    let mut blocks: HashMap<u64, Block> = HashMap::new();
    let mut stopped: Vec<u64> = Vec::new();
    let mut text_blocks = 0;
    let mut start_usage = Value::Null;
    let mut output_tokens = 0;
    for (position, event) in parsed.events.iter().enumerate() {
        let name = event
            .event
            .as_deref()
            .expect("Anthropic frames name their event");
        let Ok(payload) = serde_json::from_str::<Value>(&event.data) else {
            malformed += 1;
            continue;
        };
        assert_eq!(payload["type"], name, "data.type repeats the event name");
        match name {
            "message_start" => {
                assert_eq!(position, 0, "message_start comes first");
                assert_eq!(payload["message"]["content"], Value::Array(vec![]));
                start_usage = payload["message"]["usage"].clone();
            }
            "ping" => {}
            "content_block_start" => {
                let index = payload["index"].as_u64().expect("block index");
                let block = &payload["content_block"];
                match block["type"].as_str() {
                    Some("text") => {
                        assert_eq!(block["text"], "");
                        blocks.insert(index, Block::Text(text_blocks));
                        text_blocks += 1;
                    }
                    Some("tool_use") => {
                        assert_eq!(block["input"], serde_json::json!({}));
                        let id = block["id"].as_str().unwrap_or("").to_owned();
                        chunks.push(Chunk::ToolCallStart {
                            call_id: id.clone(),
                            name: block["name"].as_str().unwrap_or("").to_owned(),
                        });
                        blocks.insert(index, Block::Tool(id));
                    }
                    other => panic!("unexpected block type {other:?}"),
                }
            }
            "content_block_delta" => {
                let index = payload["index"].as_u64().expect("block index");
                assert!(!stopped.contains(&index), "delta after content_block_stop");
                let delta = &payload["delta"];
                match (blocks.get(&index), delta["type"].as_str()) {
                    (Some(Block::Text(output_index)), Some("text_delta")) => {
                        chunks.push(Chunk::Text {
                            output_index: *output_index,
                            delta: delta["text"].as_str().unwrap_or("").to_owned(),
                        })
                    }
                    (Some(Block::Tool(id)), Some("input_json_delta")) => {
                        chunks.push(Chunk::ToolCallArguments {
                            call_id: id.clone(),
                            delta: delta["partial_json"].as_str().unwrap_or("").to_owned(),
                        })
                    }
                    other => panic!("delta {:?} does not fit its block", other.1),
                }
            }
            "content_block_stop" => {
                let index = payload["index"].as_u64().expect("block index");
                assert!(blocks.contains_key(&index), "stop of an unknown block");
                stopped.push(index);
            }
            "message_delta" => {
                finish = payload["delta"]["stop_reason"]
                    .as_str()
                    .map(anthropic_finish);
                output_tokens = u(&payload, "/usage/output_tokens");
            }
            "message_stop" => terminated = position == parsed.events.len() - 1,
            "error" => error = Some(payload["error"].clone()),
            other => panic!("unexpected event {other}"),
        }
    }
    let cache_read = u(&start_usage, "/cache_read_input_tokens");
    let cache_write = u(&start_usage, "/cache_creation_input_tokens");
    let usage = Usage {
        input_tokens: u(&start_usage, "/input_tokens") + cache_read + cache_write,
        output_tokens,
        cache_read_tokens: cache_read,
        cache_write_tokens: cache_write,
        reasoning_tokens: 0,
    };
    DecodedStream {
        completion: completion(chunks, finish.unwrap_or_default(), Some(usage)),
        terminated,
        error,
        malformed,
    }
}

/// A completion reduced to what a non-streaming body can express.
#[derive(Debug, Clone, PartialEq)]
pub struct Materialized {
    /// Non-empty text per output index.
    pub texts: BTreeMap<u32, String>,
    /// Tool calls in start order: id, name, arguments.
    pub tool_calls: Vec<(String, String, Value)>,
    /// Finish reason.
    pub finish: FinishReason,
    /// Usage.
    pub usage: Option<Usage>,
}

/// How a script's tool arguments appear once parsed by a provider that sends JSON objects.
pub fn arguments_value(arguments: &str) -> Value {
    if arguments.is_empty() {
        serde_json::json!({})
    } else {
        serde_json::from_str(arguments).unwrap_or_else(|_| Value::String(arguments.to_owned()))
    }
}

/// The materialized form of a script's completion; tool arguments as raw strings or parsed.
pub fn materialize(completion: &Completion, parse_arguments: bool) -> Materialized {
    let mut texts: BTreeMap<u32, String> = BTreeMap::new();
    let mut calls: Vec<(String, String, String)> = Vec::new();
    for chunk in &completion.chunks {
        match chunk {
            Chunk::Text {
                output_index,
                delta,
            } => texts.entry(*output_index).or_default().push_str(delta),
            Chunk::ToolCallStart { call_id, name } => {
                calls.push((call_id.clone(), name.clone(), String::new()))
            }
            Chunk::ToolCallArguments { call_id, delta } => {
                if let Some(call) = calls.iter_mut().find(|call| &call.0 == call_id) {
                    call.2.push_str(delta);
                }
            }
        }
    }
    texts.retain(|_, text| !text.is_empty());
    Materialized {
        texts,
        tool_calls: calls
            .into_iter()
            .map(|(id, name, arguments)| {
                let arguments = if parse_arguments {
                    arguments_value(&arguments)
                } else {
                    Value::String(arguments)
                };
                (id, name, arguments)
            })
            .collect(),
        finish: completion.finish_reason,
        usage: completion.usage,
    }
}

/// Decodes a non-streaming OpenAI `chat.completion`.
pub fn openai_json(body: &Value) -> Materialized {
    assert_eq!(body["object"], "chat.completion");
    let mut texts = BTreeMap::new();
    let mut tool_calls = Vec::new();
    let mut finish = None;
    for choice in body["choices"].as_array().expect("choices") {
        let index = choice["index"].as_u64().expect("choice index") as u32;
        let message = &choice["message"];
        assert_eq!(message["role"], "assistant");
        if let Some(text) = message["content"].as_str().filter(|text| !text.is_empty()) {
            texts.insert(index, text.to_owned());
        }
        for call in message["tool_calls"].as_array().into_iter().flatten() {
            assert_eq!(call["type"], "function");
            tool_calls.push((
                call["id"].as_str().unwrap_or("").to_owned(),
                call["function"]["name"].as_str().unwrap_or("").to_owned(),
                call["function"]["arguments"].clone(),
            ));
        }
        finish = choice["finish_reason"].as_str().map(openai_finish);
    }
    Materialized {
        texts,
        tool_calls,
        finish: finish.unwrap_or_default(),
        usage: body.get("usage").map(openai_usage),
    }
}

/// Decodes a non-streaming Anthropic `message`.
pub fn anthropic_json(body: &Value) -> Materialized {
    assert_eq!(body["type"], "message");
    let mut texts = BTreeMap::new();
    let mut tool_calls = Vec::new();
    let mut text_blocks = 0;
    for block in body["content"].as_array().expect("content") {
        match block["type"].as_str() {
            Some("text") => {
                let text = block["text"].as_str().unwrap_or("");
                if !text.is_empty() {
                    texts.insert(text_blocks, text.to_owned());
                }
                text_blocks += 1;
            }
            Some("tool_use") => tool_calls.push((
                block["id"].as_str().unwrap_or("").to_owned(),
                block["name"].as_str().unwrap_or("").to_owned(),
                block["input"].clone(),
            )),
            other => panic!("unexpected block type {other:?}"),
        }
    }
    let usage = &body["usage"];
    let cache_read = u(usage, "/cache_read_input_tokens");
    let cache_write = u(usage, "/cache_creation_input_tokens");
    Materialized {
        texts,
        tool_calls,
        finish: anthropic_finish(body["stop_reason"].as_str().unwrap_or("")),
        usage: Some(Usage {
            input_tokens: u(usage, "/input_tokens") + cache_read + cache_write,
            output_tokens: u(usage, "/output_tokens"),
            cache_read_tokens: cache_read,
            cache_write_tokens: cache_write,
            reasoning_tokens: 0,
        }),
    }
}

/// Decodes one status answer of the async queue into a phase (`None` = `COMPLETED`) and the
/// failure it reports.
pub fn job_status(status: u16, body: &Value) -> (Option<JobPhase>, Option<JobFailure>) {
    match body["status"].as_str() {
        Some("IN_QUEUE") => {
            assert_eq!(status, 202);
            let position = body["queue_position"].as_u64().expect("queue_position") as u32;
            (
                Some(JobPhase::InQueue {
                    queue_position: position,
                }),
                None,
            )
        }
        Some("IN_PROGRESS") => {
            assert_eq!(status, 202);
            let logs = body["logs"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|entry| entry["message"].as_str().unwrap_or("").to_owned())
                .collect();
            (Some(JobPhase::InProgress { logs }), None)
        }
        Some("COMPLETED") => {
            assert_eq!(status, 200);
            let failure = body.get("error").map(|message| JobFailure {
                message: message.as_str().unwrap_or("").to_owned(),
                error_type: body["error_type"].as_str().unwrap_or("").to_owned(),
            });
            (None, failure)
        }
        other => panic!("unexpected queue status {other:?}"),
    }
}

/// Splits a result body into the script's `result` and `artifacts`.
pub fn job_result(body: &Value) -> (Value, Vec<Artifact>) {
    let mut result = body.clone();
    let images = result
        .as_object_mut()
        .and_then(|fields| fields.remove("images"));
    let artifacts = images
        .and_then(|images| images.as_array().cloned())
        .unwrap_or_default()
        .iter()
        .map(|image| Artifact {
            uri: image["url"].as_str().unwrap_or("").to_owned(),
            media_type: image["content_type"].as_str().map(str::to_owned),
        })
        .collect();
    (result, artifacts)
}

/// An async job as decoded from the wire, to compare with the scripted one.
pub fn job(
    phases: Vec<JobPhase>,
    result: Value,
    artifacts: Vec<Artifact>,
    failure: Option<JobFailure>,
) -> AsyncJob {
    AsyncJob {
        phases,
        result,
        artifacts,
        failure,
        timing: Default::default(),
    }
}

fn responses_usage(usage: &Value) -> Option<Usage> {
    if usage.is_null() {
        return None;
    }
    let decoded = Usage {
        input_tokens: u(usage, "/input_tokens"),
        output_tokens: u(usage, "/output_tokens"),
        cache_read_tokens: u(usage, "/input_tokens_details/cached_tokens"),
        cache_write_tokens: 0,
        reasoning_tokens: u(usage, "/output_tokens_details/reasoning_tokens"),
    };
    assert_eq!(
        u(usage, "/total_tokens"),
        decoded.input_tokens + decoded.output_tokens,
        "total_tokens is input + output"
    );
    Some(decoded)
}

/// The finish reason a terminal Responses `response` object expresses: `completed` is `stop`,
/// or `tool_calls` when the output holds a function call.
fn responses_finish(response: &Value) -> FinishReason {
    let has_call = response["output"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|item| item["type"] == "function_call");
    match (
        response["status"].as_str(),
        response
            .pointer("/incomplete_details/reason")
            .and_then(Value::as_str),
    ) {
        (Some("completed"), _) if has_call => FinishReason::ToolCalls,
        (Some("completed"), _) => FinishReason::Stop,
        (Some("incomplete"), Some("max_output_tokens")) => FinishReason::Length,
        (Some("incomplete"), Some("content_filter")) => FinishReason::ContentFilter,
        other => panic!("unexpected terminal response state {other:?}"),
    }
}

/// Decodes an OpenAI Responses stream: `event:` names equal `data.type`, `sequence_number`
/// counts from 0 without gaps, the stream ends with its one terminal event.
pub fn responses_stream(parsed: &ParsedStream) -> DecodedStream {
    let mut chunks = Vec::new();
    let mut finish = None;
    let mut usage = None;
    let mut terminated = false;
    let mut error = None;
    let mut malformed = 0;
    let mut next_sequence = 0;
    let mut text_outputs: HashMap<String, u32> = HashMap::new();
    let mut calls: HashMap<String, String> = HashMap::new();
    for (position, event) in parsed.events.iter().enumerate() {
        let Ok(payload) = serde_json::from_str::<Value>(&event.data) else {
            malformed += 1;
            continue;
        };
        let kind = payload["type"].as_str().expect("every payload has a type");
        assert_eq!(
            event.event.as_deref(),
            Some(kind),
            "event: repeats data.type"
        );
        assert_eq!(
            payload["sequence_number"].as_u64(),
            Some(next_sequence),
            "sequence numbers count from 0"
        );
        next_sequence += 1;
        let last = position == parsed.events.len() - 1;
        match kind {
            "response.created" | "response.in_progress" => {
                assert_eq!(payload["response"]["status"], "in_progress");
                assert_eq!(payload["response"]["object"], "response");
            }
            "response.output_item.added" => {
                let item = &payload["item"];
                assert_eq!(item["status"], "in_progress");
                let id = item["id"].as_str().expect("item id").to_owned();
                match item["type"].as_str() {
                    Some("message") => {
                        let next = text_outputs.len() as u32;
                        text_outputs.insert(id, next);
                    }
                    Some("function_call") => {
                        assert_eq!(item["arguments"], "");
                        let call_id = item["call_id"].as_str().expect("call_id").to_owned();
                        calls.insert(id, call_id.clone());
                        chunks.push(Chunk::ToolCallStart {
                            call_id,
                            name: item["name"].as_str().unwrap_or("").to_owned(),
                        });
                    }
                    other => panic!("unexpected item type {other:?}"),
                }
            }
            "response.output_text.delta" => {
                let item_id = payload["item_id"].as_str().expect("item_id");
                chunks.push(Chunk::Text {
                    output_index: text_outputs[item_id],
                    delta: payload["delta"].as_str().expect("delta").to_owned(),
                });
            }
            "response.function_call_arguments.delta" => {
                let item_id = payload["item_id"].as_str().expect("item_id");
                chunks.push(Chunk::ToolCallArguments {
                    call_id: calls[item_id].clone(),
                    delta: payload["delta"].as_str().expect("delta").to_owned(),
                });
            }
            "response.content_part.added"
            | "response.content_part.done"
            | "response.output_text.done"
            | "response.function_call_arguments.done"
            | "response.output_item.done" => {}
            "response.completed" | "response.incomplete" => {
                let response = &payload["response"];
                assert_eq!(
                    format!("response.{}", response["status"].as_str().unwrap_or("")),
                    kind
                );
                finish = Some(responses_finish(response));
                usage = responses_usage(&response["usage"]);
                terminated = last;
            }
            "response.failed" => {
                assert_eq!(payload["response"]["status"], "failed");
                error = Some(payload["response"]["error"].clone());
            }
            "error" => {
                assert!(payload["code"].is_string() && payload["message"].is_string());
            }
            other => panic!("unexpected Responses event {other}"),
        }
    }
    DecodedStream {
        completion: completion(chunks, finish.unwrap_or_default(), usage),
        terminated,
        error,
        malformed,
    }
}

/// Decodes a non-streaming OpenAI Responses `response`.
pub fn responses_json(body: &Value) -> Materialized {
    assert_eq!(body["object"], "response");
    let mut texts = BTreeMap::new();
    let mut tool_calls = Vec::new();
    let mut messages = 0;
    for item in body["output"].as_array().expect("output") {
        match item["type"].as_str() {
            Some("message") => {
                assert_eq!(item["role"], "assistant");
                let text: String = item["content"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|part| part["type"] == "output_text")
                    .filter_map(|part| part["text"].as_str())
                    .collect();
                if !text.is_empty() {
                    texts.insert(messages, text);
                }
                messages += 1;
            }
            Some("function_call") => tool_calls.push((
                item["call_id"].as_str().unwrap_or("").to_owned(),
                item["name"].as_str().unwrap_or("").to_owned(),
                item["arguments"].clone(),
            )),
            other => panic!("unexpected item type {other:?}"),
        }
    }
    Materialized {
        texts,
        tool_calls,
        finish: responses_finish(body),
        usage: responses_usage(&body["usage"]),
    }
}
