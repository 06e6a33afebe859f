//! The OpenAI Responses instance as a plain HTTP client sees it: its event sequence, terminal
//! states, errors and every fault of the catalogue.

use futures::StreamExt;
use mock_provider::{Chunk, FinishReason};
use serde_json::{Value, json};

use crate::decode;
use crate::sse;
use crate::support::{CANARY, behaviour, register, responses_body, send, start};

const INSTANCE: &str = "openai-responses";
const TIMING: &str = "responses-timing";

fn texts(texts: &[&str]) -> Value {
    texts
        .iter()
        .map(|text| json!({"kind": "text", "delta": text}))
        .collect()
}

fn with_fault(chunks: &[&str], fault: Value) -> mock_provider::CallBehaviour {
    behaviour(json!({
        "kind": "completion",
        "chunks": texts(chunks),
        "usage": {"input_tokens": 5, "output_tokens": 3},
        "stream_fault": fault,
    }))
}

fn texts_of(completion: &mock_provider::Completion) -> Vec<String> {
    completion
        .chunks
        .iter()
        .map(|chunk| match chunk {
            Chunk::Text { delta, .. } => delta.clone(),
            other => panic!("unexpected chunk {other:?}"),
        })
        .collect()
}

async fn stream_of(instance: &str, behaviours: Vec<mock_provider::CallBehaviour>) -> Vec<u8> {
    let providers = start().await;
    let id = register(&providers, instance, behaviours);
    let response = send(&providers, instance, &responses_body(&id, true))
        .await
        .expect("response");
    assert_eq!(response.status(), 200);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    response.bytes().await.expect("body").to_vec()
}

#[tokio::test]
async fn a_text_stream_follows_the_documented_event_order() {
    let body = stream_of(INSTANCE, vec![with_fault(&["Hel", "lo"], Value::Null)]).await;
    let parsed = sse::parse(&body);
    let names: Vec<&str> = parsed
        .events
        .iter()
        .map(|event| event.event.as_deref().unwrap_or(""))
        .collect();
    assert_eq!(
        names,
        [
            "response.created",
            "response.in_progress",
            "response.output_item.added",
            "response.content_part.added",
            "response.output_text.delta",
            "response.output_text.delta",
            "response.output_text.done",
            "response.content_part.done",
            "response.output_item.done",
            "response.completed"
        ]
    );
    assert!(!String::from_utf8_lossy(&body).contains("[DONE]"));
    let decoded = decode::responses_stream(&parsed);
    assert!(decoded.terminated);
    assert_eq!(texts_of(&decoded.completion), ["Hel", "lo"]);
    assert_eq!(decoded.completion.usage.unwrap().input_tokens, 5);
    let done: Value = serde_json::from_str(&parsed.events[6].data).unwrap();
    assert_eq!(done["text"], "Hello");
}

#[tokio::test]
async fn token_budget_and_content_filter_end_as_incomplete() {
    for (finish, reason) in [
        ("length", "max_output_tokens"),
        ("content_filter", "content_filter"),
    ] {
        let body = stream_of(
            INSTANCE,
            vec![behaviour(json!({
                "kind": "completion",
                "chunks": texts(&["cut"]),
                "finish_reason": finish,
                "usage": {"input_tokens": 1, "output_tokens": 16, "reasoning_tokens": 4},
            }))],
        )
        .await;
        let parsed = sse::parse(&body);
        let last = parsed.events.last().unwrap();
        assert_eq!(last.event.as_deref(), Some("response.incomplete"));
        let payload: Value = serde_json::from_str(&last.data).unwrap();
        assert_eq!(payload["response"]["status"], "incomplete");
        assert_eq!(payload["response"]["incomplete_details"]["reason"], reason);
        let decoded = decode::responses_stream(&parsed);
        assert!(decoded.terminated);
        assert_eq!(decoded.completion.usage.unwrap().reasoning_tokens, 4);
        assert_ne!(decoded.completion.finish_reason, FinishReason::Stop);
    }
}

#[tokio::test]
async fn an_in_band_error_sends_error_then_response_failed() {
    for (error, code) in [
        (None, "server_error"),
        (Some("rate_limited"), "rate_limit_exceeded"),
    ] {
        let mut fault = json!({"kind": "in_band_error", "after_chunks": 1});
        if let Some(error) = error {
            fault["error"] = json!(error);
        }
        let body = stream_of(INSTANCE, vec![with_fault(&["a", "b"], fault)]).await;
        let parsed = sse::parse(&body);
        let names: Vec<&str> = parsed
            .events
            .iter()
            .rev()
            .take(2)
            .map(|event| event.event.as_deref().unwrap_or(""))
            .collect();
        assert_eq!(names, ["response.failed", "error"]);
        // The decoder checks that the sequence numbers go on without a gap.
        let decoded = decode::responses_stream(&parsed);
        assert_eq!(texts_of(&decoded.completion), ["a"]);
        assert!(!decoded.terminated);
        let failure = decoded.error.expect("response.failed");
        assert_eq!(failure["code"], code);
        assert!(failure["message"].is_string());
        assert!(!String::from_utf8_lossy(&body).contains(CANARY));
    }
}

#[tokio::test]
async fn an_in_band_error_echoes_the_canary_only_when_asked() {
    let fault = json!({"kind": "in_band_error", "after_chunks": 0, "echo_credential": true});
    let body = stream_of(INSTANCE, vec![with_fault(&["a"], fault)]).await;
    assert!(String::from_utf8_lossy(&body).contains(CANARY));
}

#[tokio::test]
async fn http_errors_have_the_openai_shape() {
    let providers = start().await;
    for (error, status, code) in [
        ("rate_limited", 429, json!("rate_limit_exceeded")),
        ("insufficient_quota", 429, json!("insufficient_quota")),
        ("service_unavailable", 503, Value::Null),
        (
            "context_length_exceeded",
            400,
            json!("context_length_exceeded"),
        ),
        ("unauthorized", 401, json!("invalid_api_key")),
    ] {
        let id = register(
            &providers,
            INSTANCE,
            vec![behaviour(
                json!({"kind": "http_error", "error": error, "retry_after_seconds": 1}),
            )],
        );
        let response = send(&providers, INSTANCE, &responses_body(&id, true))
            .await
            .unwrap();
        assert_eq!(response.status(), status, "{error}");
        assert!(response.headers().contains_key("x-request-id"));
        assert_eq!(response.headers()["retry-after"], "1");
        let body: Value = response.json().await.unwrap();
        let fields: Vec<&String> = body["error"].as_object().unwrap().keys().collect();
        assert_eq!(fields, ["message", "type", "param", "code"]);
        assert_eq!(body["error"]["code"], code, "{error}");
    }
}

#[tokio::test]
async fn a_call_without_the_canary_gets_401() {
    let providers = start().await;
    let id = register(&providers, INSTANCE, vec![with_fault(&["a"], Value::Null)]);
    let base = providers.base_url(INSTANCE).unwrap();
    let response = crate::support::client()
        .post(format!("{base}/v1/responses"))
        .bearer_auth("sk-wrong")
        .json(&responses_body(&id, true))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], "invalid_api_key");
}

#[tokio::test]
async fn content_faults_break_the_stream_as_scripted() {
    let missing = stream_of(
        INSTANCE,
        vec![with_fault(
            &["a", "b"],
            json!({"kind": "missing_terminator"}),
        )],
    )
    .await;
    let parsed = sse::parse(&missing);
    assert_eq!(
        parsed
            .events
            .last()
            .and_then(|event| event.event.as_deref()),
        Some("response.output_item.done")
    );
    let decoded = decode::responses_stream(&parsed);
    assert_eq!(texts_of(&decoded.completion), ["a", "b"]);
    assert!(!decoded.terminated && decoded.error.is_none());

    let malformed = stream_of(
        INSTANCE,
        vec![with_fault(
            &["a", "b"],
            json!({"kind": "malformed_frame", "after_chunks": 1}),
        )],
    )
    .await;
    let decoded = decode::responses_stream(&sse::parse(&malformed));
    assert_eq!(decoded.malformed, 1);
    assert_eq!(texts_of(&decoded.completion), ["a", "b"]);
    assert!(decoded.terminated);

    let incomplete = stream_of(
        INSTANCE,
        vec![with_fault(
            &["a"],
            json!({"kind": "incomplete_final_frame"}),
        )],
    )
    .await;
    assert!(incomplete.ends_with(b"\n") && !incomplete.ends_with(b"\n\n"));
    let parsed = sse::parse(&incomplete);
    assert!(parsed.incomplete_tail);
    assert!(!decode::responses_stream(&parsed).terminated);
}

#[tokio::test]
async fn a_cut_aborts_the_body_in_the_middle_of_a_frame() {
    let providers = start().await;
    let id = register(
        &providers,
        TIMING,
        vec![with_fault(
            &["a", "b", "c"],
            json!({"kind": "cut", "after_chunks": 1, "partial_bytes": 5}),
        )],
    );
    let response = send(&providers, TIMING, &responses_body(&id, true))
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let mut stream = response.bytes_stream();
    let mut bytes = Vec::new();
    let mut failed = false;
    while let Some(chunk) = stream.next().await {
        match chunk {
            Ok(chunk) => bytes.extend_from_slice(&chunk),
            Err(_) => {
                failed = true;
                break;
            }
        }
    }
    assert!(failed, "the body read fails");
    let parsed = sse::parse(&bytes);
    assert!(parsed.incomplete_tail);
    assert_eq!(
        texts_of(&decode::responses_stream(&parsed).completion),
        ["a"]
    );
}

#[tokio::test]
async fn a_stall_and_frame_delays_hold_the_stream_back() {
    let providers = start().await;
    let id = register(
        &providers,
        TIMING,
        vec![with_fault(
            &["a", "b"],
            json!({"kind": "stall", "after_chunks": 1, "resume_after_ms": 150}),
        )],
    );
    let started = std::time::Instant::now();
    let bytes = send(&providers, TIMING, &responses_body(&id, true))
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    assert!(started.elapsed() >= std::time::Duration::from_millis(150));
    let decoded = decode::responses_stream(&sse::parse(&bytes));
    assert_eq!(texts_of(&decoded.completion), ["a", "b"]);
    assert!(decoded.terminated);

    let id = register(
        &providers,
        TIMING,
        vec![behaviour(json!({
            "kind": "completion",
            "chunks": texts(&["a", "b"]),
            "timing": {"delay_before_headers_ms": 20, "delay_between_frames_ms": 10},
        }))],
    );
    let started = std::time::Instant::now();
    let bytes = send(&providers, TIMING, &responses_body(&id, true))
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    let parsed = sse::parse(&bytes);
    // 20 ms before the headers, 10 ms between each pair of frames.
    let floor = 20 + 10 * (parsed.events.len() as u64 - 1);
    assert!(started.elapsed() >= std::time::Duration::from_millis(floor));
    assert!(decode::responses_stream(&parsed).terminated);
}

#[tokio::test]
async fn non_streaming_requests_get_the_response_object() {
    let providers = start().await;
    let id = register(
        &providers,
        INSTANCE,
        vec![behaviour(json!({
            "kind": "completion",
            "chunks": [
                {"kind": "text", "delta": "see "},
                {"kind": "tool_call_start", "call_id": "call_1", "name": "read_file"},
                {"kind": "tool_call_arguments", "call_id": "call_1", "delta": "{\"p\":1}"},
                {"kind": "text", "delta": "file"}
            ],
            "finish_reason": "tool_calls",
            "usage": {"input_tokens": 10, "output_tokens": 4, "cache_read_tokens": 8},
        }))],
    );
    let response = send(&providers, INSTANCE, &responses_body(&id, false))
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["status"], "completed");
    assert_eq!(body["output"][0]["content"][0]["text"], "see file");
    assert_eq!(body["output"][1]["call_id"], "call_1");
    assert_eq!(body["output"][1]["arguments"], "{\"p\":1}");
    assert_eq!(body["usage"]["input_tokens_details"]["cached_tokens"], 8);
    let decoded = decode::responses_json(&body);
    assert_eq!(decoded.finish, FinishReason::ToolCalls);
}
