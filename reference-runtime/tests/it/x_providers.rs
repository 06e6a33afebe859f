//! Surface X over real HTTP against wiremock providers: the three adapters, routing and
//! fallback, deadline and cancel, redaction.

use std::time::{Duration, Instant};

use crate::x_host::*;
use reference_runtime::config::ProviderKind;
use serde_json::{Value, json};
use wiremock::matchers::{method, path, path_regex};
use wiremock::{Mock, MockServer, ResponseTemplate};

#[tokio::test]
async fn openai_text_stream_materialises_and_reports_usage() {
    let server = MockServer::builder().start().await;
    mount_openai(
        &server,
        sse_answer(openai_text(&["hello", " from", " mock"])),
        1,
    )
    .await;
    let runtime = runtime(vec![provider(
        "openai",
        ProviderKind::OpenaiChat,
        &server.uri(),
    )])
    .await;
    let base = runtime.base_url();

    let (status, submission) = create(&base, &text_request("hi"), None).await;
    assert_eq!(status, 202);
    assert_eq!(submission["status"], "accepted");
    assert_eq!(submission["idempotent_replay"], false);
    let id = submission["execution_id"].as_str().unwrap();
    let frames = events(&base, id).await;
    let kinds = check_log(&frames, id);
    assert_eq!(
        kinds,
        [
            "execution.accepted",
            "route.selected",
            "output.delta",
            "output.delta",
            "output.delta",
            "usage.reported",
            "execution.completed"
        ]
    );
    assert_eq!(
        frames[1].data["target"],
        json!({"provider": "openai", "model": "gpt-test"})
    );
    assert_eq!(frames[1].data["attempt"], 1);
    assert_eq!(
        frames[5].data["facts"],
        json!([
            {"unit": "input_token", "quantity": 12.0, "source": "provider", "complete": true},
            {"unit": "output_token", "quantity": 3.0, "source": "provider", "complete": true},
            {"unit": "cache_read_token", "quantity": 4.0, "source": "provider", "complete": true}
        ])
    );

    let (status, snapshot) = get_json(&format!("{base}/v1/executions/{id}")).await;
    assert_eq!(status, 200);
    assert_eq!(snapshot["status"], "succeeded");
    assert_eq!(snapshot["last_sequence"], 7);
    assert_eq!(
        snapshot["result"],
        json!({"outputs": [{"index": 0, "type": "text", "text": "hello from mock"}], "tool_calls": []})
    );
    spec::schema::validate(spec::schema::Published::ExecutionSnapshot, &snapshot).unwrap();
    let (status, result) = get_json(&format!("{base}/v1/executions/{id}/result")).await;
    assert_eq!(status, 200);
    spec::schema::validate(spec::schema::Published::ExecutionResult, &result).unwrap();
    assert_eq!(result["target"]["provider"], "openai");

    let sent = &server.received_requests().await.unwrap()[0];
    let body: Value = sent.body_json().unwrap();
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"]["include_usage"], true);
    assert_eq!(body["model"], "gpt-test");
    runtime.shutdown().await;
}

#[tokio::test]
async fn openai_tool_call_stream_starts_each_call_before_its_arguments() {
    let server = MockServer::builder().start().await;
    let tool = |index: u64, id: Option<&str>, name: Option<&str>, args: &str| {
        let mut call = json!({"index": index, "function": {"arguments": args}});
        if let (Some(id), Some(name)) = (id, name) {
            call["id"] = json!(id);
            call["type"] = json!("function");
            call["function"]["name"] = json!(name);
        }
        openai_chunk(json!({"tool_calls": [call]}), None)
    };
    let body = openai_stream(
        &[
            openai_chunk(json!({"role": "assistant", "content": null}), None),
            tool(0, Some("call_a"), Some("read_file"), ""),
            tool(1, Some("call_b"), Some("list_dir"), ""),
            tool(0, None, None, "{\"path\":"),
            tool(1, None, None, "{}"),
            tool(0, None, None, "\"a.txt\"}"),
            openai_chunk(json!({}), Some("tool_calls")),
        ],
        Some(json!({"prompt_tokens": 5, "completion_tokens": 7})),
        true,
    );
    mount_openai(&server, sse_answer(body), 1).await;
    let runtime = runtime(vec![provider(
        "openai",
        ProviderKind::OpenaiChat,
        &server.uri(),
    )])
    .await;
    let base = runtime.base_url();
    let (_, submission) = create(&base, &text_request("tools please"), None).await;
    let id = submission["execution_id"].as_str().unwrap();
    let frames = events(&base, id).await;
    let kinds = check_log(&frames, id);
    assert_eq!(
        kinds[2..7],
        [
            "tool.call.started",
            "tool.call.started",
            "tool.call.arguments.delta",
            "tool.call.arguments.delta",
            "tool.call.arguments.delta"
        ]
    );
    let (_, snapshot) = get_json(&format!("{base}/v1/executions/{id}")).await;
    assert_eq!(
        snapshot["result"]["tool_calls"],
        json!([
            {"call_id": "call_a", "name": "read_file", "arguments": "{\"path\":\"a.txt\"}"},
            {"call_id": "call_b", "name": "list_dir", "arguments": "{}"}
        ])
    );
    runtime.shutdown().await;
}

#[tokio::test]
async fn anthropic_stream_merges_usage_and_counts_cached_input() {
    let server = MockServer::builder().start().await;
    let frame = |event: &str, data: Value| format!("event: {event}\ndata: {data}\n\n");
    let body = [
        frame("message_start", json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
            "role": "assistant", "model": "claude-test", "content": [],
            "usage": {"input_tokens": 20, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 3, "output_tokens": 1}}})),
        frame("ping", json!({"type": "ping"})),
        frame("content_block_start", json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})),
        frame("content_block_delta", json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Let me look"}})),
        frame("content_block_stop", json!({"type": "content_block_stop", "index": 0})),
        frame("content_block_start", json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}}})),
        frame("content_block_delta", json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": ""}})),
        frame("content_block_delta", json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"path\":\"a\"}"}})),
        frame("content_block_stop", json!({"type": "content_block_stop", "index": 1})),
        frame("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 30}})),
        frame("message_stop", json!({"type": "message_stop"})),
    ]
    .concat();
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .and(wiremock::matchers::header("x-api-key", CANARY))
        .and(wiremock::matchers::header(
            "anthropic-version",
            "2023-06-01",
        ))
        .respond_with(sse_answer(body))
        .expect(1)
        .mount(&server)
        .await;
    let runtime = runtime(vec![provider(
        "anthropic",
        ProviderKind::AnthropicMessages,
        &server.uri(),
    )])
    .await;
    let base = runtime.base_url();
    let (_, submission) = create(&base, &text_request("hi"), None).await;
    let id = submission["execution_id"].as_str().unwrap();
    let frames = events(&base, id).await;
    let kinds = check_log(&frames, id);
    assert_eq!(
        kinds,
        [
            "execution.accepted",
            "route.selected",
            "output.delta",
            "tool.call.started",
            "tool.call.arguments.delta",
            "usage.reported",
            "execution.completed"
        ]
    );
    let facts: Vec<(String, f64)> = frames[5].data["facts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["unit"].as_str().unwrap().to_string(),
                f["quantity"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        facts,
        [
            ("input_token".to_string(), 123.0),
            ("output_token".to_string(), 30.0),
            ("cache_read_token".to_string(), 100.0),
            ("cache_write_token".to_string(), 3.0)
        ]
    );
    let (_, snapshot) = get_json(&format!("{base}/v1/executions/{id}")).await;
    assert_eq!(snapshot["result"]["outputs"][0]["text"], "Let me look");
    assert_eq!(
        snapshot["result"]["tool_calls"][0]["arguments"],
        "{\"path\":\"a\"}"
    );
    runtime.shutdown().await;
}

#[tokio::test]
async fn a_stream_without_its_completion_signal_is_a_protocol_error() {
    let server = MockServer::builder().start().await;
    let body = openai_stream(
        &[openai_chunk(json!({"content": "partial"}), None)],
        None,
        false,
    );
    mount_openai(&server, sse_answer(body), 1).await;
    let runtime = runtime(vec![provider(
        "openai",
        ProviderKind::OpenaiChat,
        &server.uri(),
    )])
    .await;
    let base = runtime.base_url();
    let (_, submission) = create(&base, &text_request("hi"), None).await;
    let id = submission["execution_id"].as_str().unwrap();
    let frames = events(&base, id).await;
    check_log(&frames, id);
    let last = frames.last().unwrap();
    assert_eq!(last.kind(), "execution.failed");
    assert_eq!(last.data["error"]["code"], "provider_protocol_error");
    assert_eq!(last.data["error"]["retryable"], false);
    let (status, body) = get_json(&format!("{base}/v1/executions/{id}/result")).await;
    assert_eq!(status, 409);
    assert_eq!(body["error"]["code"], "conflict");
    runtime.shutdown().await;
}

fn media_mocks(server_uri: &str) -> Value {
    json!({"status": "IN_QUEUE", "request_id": "req-1",
           "status_url": format!("{server_uri}/requests/req-1/status"),
           "response_url": format!("{server_uri}/requests/req-1"),
           "cancel_url": format!("{server_uri}/requests/req-1/cancel")})
}

async fn mount_media_submit(server: &MockServer) {
    Mock::given(method("POST"))
        .and(path("/fal-ai/flux"))
        .and(wiremock::matchers::header(
            "authorization",
            format!("Key {CANARY}").as_str(),
        ))
        .respond_with(ResponseTemplate::new(200).set_body_json(media_mocks(&server.uri())))
        .expect(1)
        .mount(server)
        .await;
}

fn image_request() -> Value {
    json!({"ability": "image-generation", "input": [{"type": "text", "text": "a cat"}],
           "requirements": {"async": true, "output_modalities": ["image"]}})
}

#[tokio::test]
async fn async_media_reports_phases_and_keeps_the_provider_result() {
    let server = MockServer::builder().start().await;
    mount_media_submit(&server).await;
    let status = |n: u64, priority: u8, code: u16, body: Value| {
        Mock::given(method("GET"))
            .and(path("/requests/req-1/status"))
            .respond_with(ResponseTemplate::new(code).set_body_json(body))
            .up_to_n_times(n)
            .with_priority(priority)
    };
    status(
        2,
        1,
        202,
        json!({"status": "IN_QUEUE", "queue_position": 1}),
    )
    .mount(&server)
    .await;
    status(1, 2, 202, json!({"status": "IN_PROGRESS", "logs": null}))
        .mount(&server)
        .await;
    status(1, 3, 200, json!({"status": "COMPLETED", "metrics": {}}))
        .mount(&server)
        .await;
    let provider_result = json!({"images": [{"url": "https://cdn.example/a.png", "content_type": "image/png"}], "seed": 42});
    Mock::given(method("GET"))
        .and(path("/requests/req-1"))
        .respond_with(ResponseTemplate::new(200).set_body_json(provider_result.clone()))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("PUT"))
        .respond_with(ResponseTemplate::new(202))
        .expect(0)
        .mount(&server)
        .await;
    let runtime = runtime(vec![provider(
        "media",
        ProviderKind::AsyncMedia,
        &server.uri(),
    )])
    .await;
    let base = runtime.base_url();
    let (status, submission) = create(&base, &image_request(), None).await;
    assert_eq!(status, 202);
    let id = submission["execution_id"].as_str().unwrap();
    let frames = events(&base, id).await;
    let kinds = check_log(&frames, id);
    assert_eq!(
        kinds,
        [
            "execution.accepted",
            "route.selected",
            "execution.progress",
            "execution.progress",
            "output.result",
            "execution.completed"
        ]
    );
    assert_eq!(frames[2].data["phase"], "queued");
    assert_eq!(frames[3].data["phase"], "processing");
    assert_eq!(frames[4].data["result"], provider_result);
    assert_eq!(
        frames[4].data["artifacts"],
        json!([{"uri": "https://cdn.example/a.png", "media_type": "image/png"}])
    );
    let (_, result) = get_json(&format!("{base}/v1/executions/{id}/result")).await;
    assert_eq!(result["result"], provider_result);
    assert_eq!(result["artifacts"][0]["uri"], "https://cdn.example/a.png");
    runtime.shutdown().await;
}

#[tokio::test]
async fn fallback_after_a_503_uses_the_next_provider() {
    let failing = MockServer::builder().start().await;
    mount_openai(
        &failing,
        ResponseTemplate::new(503)
            .set_body_json(json!({"error": {"type": "server_error", "message": "down"}})),
        1,
    )
    .await;
    let healthy = MockServer::builder().start().await;
    mount_openai(&healthy, sse_answer(openai_text(&["ok"])), 1).await;
    let runtime = runtime(vec![
        provider("first", ProviderKind::OpenaiChat, &failing.uri()),
        provider("second", ProviderKind::OpenaiChat, &healthy.uri()),
    ])
    .await;
    let base = runtime.base_url();
    let mut request = text_request("hi");
    request["routing"] = json!({"allow_fallback": true});
    let (_, submission) = create(&base, &request, None).await;
    let id = submission["execution_id"].as_str().unwrap();
    let frames = events(&base, id).await;
    let kinds = check_log(&frames, id);
    assert_eq!(
        kinds,
        [
            "execution.accepted",
            "route.selected",
            "route.attempt_failed",
            "route.selected",
            "output.delta",
            "usage.reported",
            "execution.completed"
        ]
    );
    assert_eq!(frames[2].data["error"]["code"], "provider_unavailable");
    assert_eq!(frames[2].data["error"]["provider_code"], "503");
    assert_eq!(frames[2].data["error"]["retryable"], true);
    assert_eq!(frames[3].data["target"]["provider"], "second");
    assert_eq!(frames[3].data["attempt"], 2);
    assert_eq!(frames[6].data["target"]["provider"], "second");
    runtime.shutdown().await;
}

#[tokio::test]
async fn without_allow_fallback_one_attempt_is_made() {
    let failing = MockServer::builder().start().await;
    mount_openai(&failing, ResponseTemplate::new(503), 1).await;
    let healthy = MockServer::builder().start().await;
    mount_openai(&healthy, sse_answer(openai_text(&["ok"])), 0).await;
    let runtime = runtime(vec![
        provider("first", ProviderKind::OpenaiChat, &failing.uri()),
        provider("second", ProviderKind::OpenaiChat, &healthy.uri()),
    ])
    .await;
    let base = runtime.base_url();
    let mut request = text_request("hi");
    request["routing"] = json!({"max_attempts": 3});
    let (_, submission) = create(&base, &request, None).await;
    let id = submission["execution_id"].as_str().unwrap();
    let frames = events(&base, id).await;
    let kinds = check_log(&frames, id);
    assert_eq!(
        kinds,
        ["execution.accepted", "route.selected", "execution.failed"]
    );
    assert_eq!(frames[2].data["error"]["code"], "provider_unavailable");
    runtime.shutdown().await;
}

#[tokio::test]
async fn no_fallback_once_output_was_exposed() {
    let failing = MockServer::builder().start().await;
    let body = format!(
        "{}data: {}\n\n",
        openai_stream(
            &[openai_chunk(json!({"content": "partial"}), None)],
            None,
            false
        ),
        json!({"error": {"message": "boom", "type": "server_error"}})
    );
    mount_openai(&failing, sse_answer(body), 1).await;
    let healthy = MockServer::builder().start().await;
    mount_openai(&healthy, sse_answer(openai_text(&["ok"])), 0).await;
    let runtime = runtime(vec![
        provider("first", ProviderKind::OpenaiChat, &failing.uri()),
        provider("second", ProviderKind::OpenaiChat, &healthy.uri()),
    ])
    .await;
    let base = runtime.base_url();
    let mut request = text_request("hi");
    request["routing"] = json!({"allow_fallback": true});
    let (_, submission) = create(&base, &request, None).await;
    let id = submission["execution_id"].as_str().unwrap();
    let frames = events(&base, id).await;
    let kinds = check_log(&frames, id);
    assert_eq!(
        kinds,
        [
            "execution.accepted",
            "route.selected",
            "output.delta",
            "execution.failed"
        ]
    );
    assert_eq!(frames[3].data["error"]["retryable"], false);
    let (_, snapshot) = get_json(&format!("{base}/v1/executions/{id}")).await;
    assert_eq!(snapshot["status"], "failed");
    assert_eq!(snapshot["result"]["outputs"][0]["text"], "partial");
    runtime.shutdown().await;
}

#[tokio::test]
async fn rate_limits_honour_retry_after_and_insufficient_quota_is_final() {
    let server = MockServer::builder().start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(429).insert_header("retry-after-ms", "150"))
        .up_to_n_times(1)
        .with_priority(1)
        .expect(1)
        .mount(&server)
        .await;
    mount_openai(&server, sse_answer(openai_text(&["ok"])), 1).await;
    let runtime = runtime(vec![provider(
        "openai",
        ProviderKind::OpenaiChat,
        &server.uri(),
    )])
    .await;
    let base = runtime.base_url();
    let mut request = text_request("hi");
    request["routing"] =
        json!({"allow_fallback": true, "max_attempts": 2, "retry_budget_ms": 10000});
    let started = Instant::now();
    let (_, submission) = create(&base, &request, None).await;
    let id = submission["execution_id"].as_str().unwrap();
    let frames = events(&base, id).await;
    assert!(
        started.elapsed() >= Duration::from_millis(150),
        "Retry-After not honoured"
    );
    let kinds = check_log(&frames, id);
    assert_eq!(kinds[2], "route.attempt_failed");
    assert_eq!(frames[2].data["error"]["code"], "rate_limited");
    assert_eq!(kinds.last().unwrap(), "execution.completed");

    // Falling back to another provider does not wait for the first one's Retry-After; a 429
    // `insufficient_quota` is final.
    let slow = MockServer::builder().start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(429).insert_header("retry-after", "30"))
        .expect(1)
        .mount(&slow)
        .await;
    let quota = MockServer::builder().start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(429).set_body_json(
            json!({"error": {"message": "quota", "type": "insufficient_quota", "code": "insufficient_quota"}}),
        ))
        .expect(1)
        .mount(&quota)
        .await;
    let runtime2 = runtime_for_two(&slow, &quota).await;
    let base2 = runtime2.base_url();
    request["routing"] = json!({"allow_fallback": true, "max_attempts": 3, "retry_budget_ms": 1000, "provider_order": ["slow"]});
    let (_, submission) = create(&base2, &request, None).await;
    let id = submission["execution_id"].as_str().unwrap();
    let frames = events(&base2, id).await;
    // `slow` → quota (different provider, no wait) → quota is final.
    let kinds = check_log(&frames, id);
    assert_eq!(
        kinds,
        [
            "execution.accepted",
            "route.selected",
            "route.attempt_failed",
            "route.selected",
            "execution.failed"
        ]
    );
    assert_eq!(frames[4].data["error"]["code"], "rate_limited");
    assert_eq!(frames[4].data["error"]["retryable"], false);
    runtime.shutdown().await;
    runtime2.shutdown().await;
}

async fn runtime_for_two(
    slow: &MockServer,
    quota: &MockServer,
) -> reference_runtime::runtime::RunningRuntime {
    runtime(vec![
        provider("quota", ProviderKind::OpenaiChat, &quota.uri()),
        provider("slow", ProviderKind::OpenaiChat, &slow.uri()),
    ])
    .await
}

#[tokio::test]
async fn the_deadline_covers_the_attempt_and_ends_in_deadline_exceeded() {
    let server = MockServer::builder().start().await;
    mount_openai(
        &server,
        sse_answer(openai_text(&["late"])).set_delay(Duration::from_secs(20)),
        1,
    )
    .await;
    let runtime = runtime(vec![provider(
        "openai",
        ProviderKind::OpenaiChat,
        &server.uri(),
    )])
    .await;
    let base = runtime.base_url();
    let mut request = text_request("hi");
    request["deadline_ms"] = json!(300);
    let started = Instant::now();
    let (_, submission) = create(&base, &request, None).await;
    let id = submission["execution_id"].as_str().unwrap();
    let frames = events(&base, id).await;
    assert!(started.elapsed() >= Duration::from_millis(300));
    let kinds = check_log(&frames, id);
    assert_eq!(
        kinds,
        ["execution.accepted", "route.selected", "execution.failed"]
    );
    assert_eq!(frames[2].data["status"], "failed");
    assert_eq!(frames[2].data["error"]["code"], "deadline_exceeded");
    assert_eq!(frames[2].data["error"]["retryable"], false);
    runtime.shutdown().await;
}

#[tokio::test]
async fn cancel_ends_a_streaming_execution_as_cancelled() {
    let server = MockServer::builder().start().await;
    mount_openai(
        &server,
        sse_answer(openai_text(&["late"])).set_delay(Duration::from_secs(20)),
        1,
    )
    .await;
    let runtime = runtime(vec![provider(
        "openai",
        ProviderKind::OpenaiChat,
        &server.uri(),
    )])
    .await;
    let base = runtime.base_url();
    let (_, submission) = create(&base, &text_request("hi"), None).await;
    let id = submission["execution_id"].as_str().unwrap();
    let mut stream = SseStream::new(SseStream::open(&base, id, "", None).await);
    stream.until("route.selected").await;
    let cancel = reqwest::Client::new()
        .post(format!("{base}/v1/executions/{id}/cancel"))
        .send()
        .await
        .unwrap();
    assert_eq!(cancel.status(), 202);
    let rest = stream.rest().await;
    assert_eq!(rest.len(), 1);
    assert_eq!(rest[0].kind(), "execution.failed");
    assert_eq!(rest[0].data["status"], "cancelled");
    assert_eq!(rest[0].data["error"]["code"], "cancelled");
    assert_eq!(rest[0].data["error"]["retryable"], false);
    let again = reqwest::Client::new()
        .post(format!("{base}/v1/executions/{id}/cancel"))
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 409);
    let unknown = reqwest::Client::new()
        .post(format!("{base}/v1/executions/nope/cancel"))
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), 404);
    runtime.shutdown().await;
}

#[tokio::test]
async fn cancel_of_an_async_job_cancels_it_remotely() {
    let server = MockServer::builder().start().await;
    mount_media_submit(&server).await;
    Mock::given(method("GET"))
        .and(path("/requests/req-1/status"))
        .respond_with(
            ResponseTemplate::new(202)
                .set_body_json(json!({"status": "IN_QUEUE", "queue_position": 3})),
        )
        .mount(&server)
        .await;
    Mock::given(method("PUT"))
        .and(path("/requests/req-1/cancel"))
        .and(wiremock::matchers::header(
            "authorization",
            format!("Key {CANARY}").as_str(),
        ))
        .respond_with(
            ResponseTemplate::new(202).set_body_json(json!({"status": "CANCELLATION_REQUESTED"})),
        )
        .expect(1)
        .mount(&server)
        .await;
    let runtime = runtime(vec![provider(
        "media",
        ProviderKind::AsyncMedia,
        &server.uri(),
    )])
    .await;
    let base = runtime.base_url();
    let (_, submission) = create(&base, &image_request(), None).await;
    let id = submission["execution_id"].as_str().unwrap();
    let mut stream = SseStream::new(SseStream::open(&base, id, "", None).await);
    let seen = stream.until("execution.progress").await;
    assert_eq!(seen.last().unwrap().data["phase"], "queued");
    reqwest::Client::new()
        .post(format!("{base}/v1/executions/{id}/cancel"))
        .send()
        .await
        .unwrap();
    let rest = stream.rest().await;
    let last = rest.last().unwrap();
    assert_eq!(last.data["status"], "cancelled");
    // Progress is reported once per phase, not once per poll.
    assert!(rest.iter().all(|f| f.kind() != "execution.progress"));
    // The remote cancel happened before the terminal event (verified by `expect(1)`).
    server.verify().await;
    runtime.shutdown().await;
}

#[tokio::test]
async fn a_provider_error_echoing_the_credential_never_reaches_the_caller() {
    let server = MockServer::builder().start().await;
    Mock::given(method("POST"))
        .and(path_regex(".*"))
        .respond_with(ResponseTemplate::new(401).set_body_json(
            json!({"error": {"message": format!("Incorrect API key provided: {CANARY}"), "type": "invalid_request_error", "code": "invalid_api_key"}}),
        ))
        .expect(1)
        .mount(&server)
        .await;
    let runtime = runtime(vec![provider(
        "openai",
        ProviderKind::OpenaiChat,
        &server.uri(),
    )])
    .await;
    let base = runtime.base_url();
    let (_, submission) = create(&base, &text_request("secret prompt text"), None).await;
    let id = submission["execution_id"].as_str().unwrap();
    let frames = events(&base, id).await;
    check_log(&frames, id);
    let error = &frames.last().unwrap().data["error"];
    assert_eq!(error["code"], "provider_unavailable");
    assert_eq!(error["retryable"], false);
    let snapshot = reqwest::get(format!("{base}/v1/executions/{id}"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(!snapshot.contains(CANARY));
    assert!(!snapshot.contains("Incorrect API key"));
    assert!(!snapshot.contains("secret prompt text"));
    let manifests = reqwest::get(format!("{base}/v1/providers"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(!manifests.contains(CANARY));
    runtime.shutdown().await;
}

#[tokio::test]
async fn a_connection_reset_before_output_is_retryable() {
    let server = MockServer::builder().start().await;
    Mock::given(method("POST"))
        .respond_with_err(|_: &wiremock::Request| {
            std::io::Error::from(std::io::ErrorKind::ConnectionReset)
        })
        .mount(&server)
        .await;
    let healthy = MockServer::builder().start().await;
    mount_openai(&healthy, sse_answer(openai_text(&["ok"])), 1).await;
    let runtime = runtime(vec![
        provider("reset", ProviderKind::OpenaiChat, &server.uri()),
        provider("healthy", ProviderKind::OpenaiChat, &healthy.uri()),
    ])
    .await;
    let base = runtime.base_url();
    let mut request = text_request("hi");
    request["routing"] = json!({"allow_fallback": true});
    let (_, submission) = create(&base, &request, None).await;
    let id = submission["execution_id"].as_str().unwrap();
    let frames = events(&base, id).await;
    let kinds = check_log(&frames, id);
    assert_eq!(kinds[2], "route.attempt_failed");
    assert_eq!(frames[2].data["error"]["retryable"], true);
    assert_eq!(kinds.last().unwrap(), "execution.completed");
    runtime.shutdown().await;
}
