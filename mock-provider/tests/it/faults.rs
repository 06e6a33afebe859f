//! Every fault of the catalogue as a plain HTTP client sees it.

use futures::StreamExt;
use mock_provider::{ProviderError, RegisterError, Script};
use serde_json::{Value, json};

use crate::decode;
use crate::sse;
use crate::support::{
    CANARY, anthropic_body, behaviour, body_for, client, openai_body, register, send, start,
    unique_id,
};

/// Reads a body until it ends or fails; returns the bytes and whether it failed.
async fn read_to_end(response: reqwest::Response) -> (Vec<u8>, bool) {
    let mut stream = response.bytes_stream();
    let mut bytes = Vec::new();
    while let Some(chunk) = stream.next().await {
        match chunk {
            Ok(chunk) => bytes.extend_from_slice(&chunk),
            Err(_) => return (bytes, true),
        }
    }
    (bytes, false)
}

fn text_chunks(texts: &[&str]) -> Value {
    texts
        .iter()
        .map(|text| json!({"kind": "text", "delta": text}))
        .collect()
}

fn with_fault(texts: &[&str], fault: Value) -> mock_provider::CallBehaviour {
    behaviour(json!({
        "kind": "completion",
        "chunks": text_chunks(texts),
        "usage": {"input_tokens": 5, "output_tokens": 3},
        "stream_fault": fault,
    }))
}

fn texts_of(completion: &mock_provider::Completion) -> Vec<String> {
    completion
        .chunks
        .iter()
        .map(|chunk| match chunk {
            mock_provider::Chunk::Text { delta, .. } => delta.clone(),
            other => panic!("unexpected chunk {other:?}"),
        })
        .collect()
}

struct ExpectedError {
    error: ProviderError,
    openai: (u16, &'static str, Value),
    anthropic: (u16, &'static str),
    fal: u16,
}

fn catalogue() -> Vec<ExpectedError> {
    vec![
        ExpectedError {
            error: ProviderError::RateLimited,
            openai: (429, "requests", json!("rate_limit_exceeded")),
            anthropic: (429, "rate_limit_error"),
            fal: 429,
        },
        ExpectedError {
            error: ProviderError::InsufficientQuota,
            openai: (429, "insufficient_quota", json!("insufficient_quota")),
            anthropic: (402, "billing_error"),
            fal: 403,
        },
        ExpectedError {
            error: ProviderError::ServerError,
            openai: (500, "server_error", Value::Null),
            anthropic: (500, "api_error"),
            fal: 500,
        },
        ExpectedError {
            error: ProviderError::ServiceUnavailable,
            openai: (503, "server_error", Value::Null),
            anthropic: (503, "api_error"),
            fal: 503,
        },
        ExpectedError {
            error: ProviderError::Overloaded,
            openai: (529, "server_error", json!("overloaded")),
            anthropic: (529, "overloaded_error"),
            fal: 529,
        },
        ExpectedError {
            error: ProviderError::ContextLengthExceeded,
            openai: (
                400,
                "invalid_request_error",
                json!("context_length_exceeded"),
            ),
            anthropic: (400, "invalid_request_error"),
            fal: 422,
        },
        ExpectedError {
            error: ProviderError::Unauthorized,
            openai: (401, "invalid_request_error", json!("invalid_api_key")),
            anthropic: (401, "authentication_error"),
            fal: 401,
        },
    ]
}

#[tokio::test]
async fn http_errors_carry_each_providers_status_and_body() {
    let providers = start().await;
    for expected in catalogue() {
        let error = json!({"kind": "http_error", "error": expected.error});

        let id = register(&providers, "openai-primary", vec![behaviour(error.clone())]);
        let response = send(&providers, "openai-primary", &openai_body(&id, true, true))
            .await
            .expect("response");
        assert_eq!(response.status(), expected.openai.0, "{:?}", expected.error);
        assert!(response.headers().contains_key("x-request-id"));
        let body: Value = response.json().await.expect("json body");
        let fields: Vec<&String> = body["error"].as_object().expect("error").keys().collect();
        assert_eq!(fields, ["message", "type", "param", "code"]);
        assert_eq!(body["error"]["type"], expected.openai.1);
        assert_eq!(body["error"]["code"], expected.openai.2);

        let id = register(
            &providers,
            "anthropic-secondary",
            vec![behaviour(error.clone())],
        );
        let response = send(
            &providers,
            "anthropic-secondary",
            &anthropic_body(&id, true),
        )
        .await
        .expect("response");
        assert_eq!(
            response.status(),
            expected.anthropic.0,
            "{:?}",
            expected.error
        );
        let request_id = response.headers()["request-id"]
            .to_str()
            .unwrap()
            .to_owned();
        let body: Value = response.json().await.expect("json body");
        assert_eq!(body["type"], "error");
        assert_eq!(body["error"]["type"], expected.anthropic.1);
        assert!(body["error"]["message"].is_string());
        assert_eq!(body["request_id"], request_id);

        let id = register(&providers, "media", vec![behaviour(error)]);
        let response = send(
            &providers,
            "media",
            &body_for(&providers, "media", &id, false),
        )
        .await
        .expect("response");
        assert_eq!(response.status(), expected.fal, "{:?}", expected.error);
        let body: Value = response.json().await.expect("json body");
        assert!(body.get("detail").is_some());
    }
}

#[tokio::test]
async fn retry_headers_are_sent_as_scripted() {
    let providers = start().await;
    let id = register(
        &providers,
        "openai-primary",
        vec![behaviour(json!({
            "kind": "http_error", "error": "rate_limited",
            "retry_after_seconds": 2, "retry_after_ms": 1500, "should_retry": false
        }))],
    );
    let response = send(
        &providers,
        "openai-primary",
        &openai_body(&id, false, false),
    )
    .await
    .expect("response");
    assert_eq!(response.status(), 429);
    assert_eq!(response.headers()["retry-after"], "2");
    assert_eq!(response.headers()["retry-after-ms"], "1500");
    assert_eq!(response.headers()["x-should-retry"], "false");
}

#[tokio::test]
async fn an_error_body_echoes_the_canary_only_when_asked() {
    let providers = start().await;
    let echo = json!({"kind": "http_error", "error": "server_error", "echo_credential": true});
    let plain = json!({"kind": "http_error", "error": "server_error"});
    for instance in ["openai-primary", "anthropic-secondary", "media"] {
        let id = register(
            &providers,
            instance,
            vec![behaviour(echo.clone()), behaviour(plain.clone())],
        );
        let body = body_for(&providers, instance, &id, false);
        let echoed = send(&providers, instance, &body)
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let plain_text = send(&providers, instance, &body)
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(echoed.contains(CANARY), "{instance}: {echoed}");
        assert!(!plain_text.contains(CANARY), "{instance}: {plain_text}");
    }
    let id = register(
        &providers,
        "openai-primary",
        vec![with_fault(
            &["a"],
            json!({"kind": "in_band_error", "after_chunks": 1, "echo_credential": true}),
        )],
    );
    let streamed = send(&providers, "openai-primary", &openai_body(&id, true, false))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(streamed.contains(CANARY));
}

#[tokio::test]
async fn connection_resets_before_headers_on_both_backends() {
    let providers = start().await;
    for instance in ["openai-primary", "openai-timing"] {
        let id = register(
            &providers,
            instance,
            vec![
                behaviour(json!({"kind": "connection_reset"})),
                behaviour(json!({"kind": "completion", "chunks": text_chunks(&["ok"])})),
            ],
        );
        let reset = send(&providers, instance, &openai_body(&id, true, false)).await;
        assert!(reset.is_err(), "{instance}: a reset gives no response");
        let recovered = send(&providers, instance, &openai_body(&id, false, false))
            .await
            .expect("second call answers");
        assert_eq!(recovered.status(), 200);
        let statuses: Vec<Option<u16>> = providers
            .calls(&id)
            .iter()
            .map(|call| call.response_status)
            .collect();
        assert_eq!(statuses, [None, Some(200)]);
    }
}

#[tokio::test]
async fn in_band_errors_follow_output_and_end_without_terminator() {
    let providers = start().await;
    let fault = json!({"kind": "in_band_error", "after_chunks": 2});
    let id = register(
        &providers,
        "openai-primary",
        vec![with_fault(&["a", "b", "c"], fault.clone())],
    );
    let response = send(&providers, "openai-primary", &openai_body(&id, true, true))
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let decoded = decode::openai_stream(&sse::parse(&response.bytes().await.unwrap()));
    assert_eq!(texts_of(&decoded.completion), ["a", "b"]);
    assert_eq!(
        decoded.error.expect("in-band error")["type"],
        "server_error"
    );
    assert!(!decoded.terminated);

    let id = register(
        &providers,
        "anthropic-secondary",
        vec![with_fault(&["a", "b", "c"], fault)],
    );
    let response = send(
        &providers,
        "anthropic-secondary",
        &anthropic_body(&id, true),
    )
    .await
    .unwrap();
    assert_eq!(response.status(), 200);
    let parsed = sse::parse(&response.bytes().await.unwrap());
    assert_eq!(
        parsed
            .events
            .last()
            .and_then(|event| event.event.as_deref()),
        Some("error")
    );
    let decoded = decode::anthropic_stream(&parsed);
    assert_eq!(texts_of(&decoded.completion), ["a", "b"]);
    assert_eq!(
        decoded.error.expect("in-band error")["type"],
        "overloaded_error"
    );
    assert!(!decoded.terminated);
}

#[tokio::test]
async fn a_missing_terminator_leaves_everything_else() {
    let providers = start().await;
    let fault = json!({"kind": "missing_terminator"});
    let id = register(
        &providers,
        "openai-primary",
        vec![with_fault(&["a", "b"], fault.clone())],
    );
    let body = send(&providers, "openai-primary", &openai_body(&id, true, true))
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    let decoded = decode::openai_stream(&sse::parse(&body));
    assert_eq!(texts_of(&decoded.completion), ["a", "b"]);
    assert!(decoded.completion.usage.is_some());
    assert!(!decoded.terminated && decoded.error.is_none());
    assert!(!String::from_utf8_lossy(&body).contains("[DONE]"));

    let id = register(
        &providers,
        "anthropic-secondary",
        vec![with_fault(&["a", "b"], fault)],
    );
    let body = send(
        &providers,
        "anthropic-secondary",
        &anthropic_body(&id, true),
    )
    .await
    .unwrap()
    .bytes()
    .await
    .unwrap();
    let parsed = sse::parse(&body);
    assert_eq!(
        parsed
            .events
            .last()
            .and_then(|event| event.event.as_deref()),
        Some("message_delta")
    );
    assert!(!decode::anthropic_stream(&parsed).terminated);
}

#[tokio::test]
async fn a_malformed_frame_sits_inside_an_otherwise_complete_stream() {
    let providers = start().await;
    let fault = json!({"kind": "malformed_frame", "after_chunks": 1});
    for (instance, anthropic) in [("openai-primary", false), ("anthropic-secondary", true)] {
        let id = register(
            &providers,
            instance,
            vec![with_fault(&["a", "b"], fault.clone())],
        );
        let body = body_for(&providers, instance, &id, true);
        let bytes = send(&providers, instance, &body)
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        let parsed = sse::parse(&bytes);
        let decoded = if anthropic {
            decode::anthropic_stream(&parsed)
        } else {
            decode::openai_stream(&parsed)
        };
        assert_eq!(decoded.malformed, 1, "{instance}");
        assert_eq!(texts_of(&decoded.completion), ["a", "b"]);
        assert!(decoded.terminated);
    }
}

#[tokio::test]
async fn an_incomplete_final_frame_is_never_dispatched() {
    let providers = start().await;
    let fault = json!({"kind": "incomplete_final_frame"});
    for (instance, anthropic) in [("openai-primary", false), ("anthropic-secondary", true)] {
        let id = register(
            &providers,
            instance,
            vec![with_fault(&["a"], fault.clone())],
        );
        let body = body_for(&providers, instance, &id, true);
        let bytes = send(&providers, instance, &body)
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        assert!(
            bytes.ends_with(b"\n") && !bytes.ends_with(b"\n\n"),
            "{instance}"
        );
        let parsed = sse::parse(&bytes);
        assert!(parsed.incomplete_tail);
        let decoded = if anthropic {
            decode::anthropic_stream(&parsed)
        } else {
            decode::openai_stream(&parsed)
        };
        assert_eq!(texts_of(&decoded.completion), ["a"]);
        assert!(
            !decoded.terminated,
            "{instance}: the terminator frame is incomplete"
        );
    }
}

#[tokio::test]
async fn a_cut_aborts_the_body_in_the_middle_of_a_frame() {
    let providers = start().await;
    let fault = json!({"kind": "cut", "after_chunks": 1, "partial_bytes": 5});
    for instance in ["openai-timing", "anthropic-timing"] {
        let id = register(
            &providers,
            instance,
            vec![with_fault(&["a", "b", "c"], fault.clone())],
        );
        let body = body_for(&providers, instance, &id, true);
        let response = send(&providers, instance, &body).await.unwrap();
        assert_eq!(response.status(), 200);
        let (bytes, failed) = read_to_end(response).await;
        assert!(failed, "{instance}: the body read fails");
        let parsed = sse::parse(&bytes);
        assert!(parsed.incomplete_tail);
        let text = String::from_utf8_lossy(&bytes);
        let tail = &text[text.rfind("\n\n").expect("complete frames") + 2..];
        assert_eq!(tail.len(), 5, "{instance}: 5 bytes of the next frame");
        let decoded = if instance == "anthropic-timing" {
            decode::anthropic_stream(&parsed)
        } else {
            decode::openai_stream(&parsed)
        };
        assert_eq!(texts_of(&decoded.completion), ["a"]);
    }
}

#[tokio::test]
async fn a_stall_holds_the_connection_open_without_sending() {
    let providers = start().await;
    let id = register(
        &providers,
        "openai-timing",
        vec![with_fault(
            &["a", "b"],
            json!({"kind": "stall", "after_chunks": 1}),
        )],
    );
    let response = send(&providers, "openai-timing", &openai_body(&id, true, false))
        .await
        .unwrap();
    let mut stream = response.bytes_stream();
    let mut bytes = Vec::new();
    // The role chunk and chunk "a" arrive; then nothing more ever does.
    while sse::parse(&bytes).events.len() < 2 {
        let chunk = stream.next().await.expect("more frames").expect("no error");
        bytes.extend_from_slice(&chunk);
    }
    assert_eq!(sse::parse(&bytes).events.len(), 2);
    let waited = tokio::time::timeout(std::time::Duration::from_millis(300), stream.next()).await;
    assert!(waited.is_err(), "nothing is sent during the stall");
}

#[tokio::test]
async fn a_stall_with_resume_completes_the_stream() {
    let providers = start().await;
    let id = register(
        &providers,
        "anthropic-timing",
        vec![with_fault(
            &["a", "b"],
            json!({"kind": "stall", "after_chunks": 1, "resume_after_ms": 150}),
        )],
    );
    let started = std::time::Instant::now();
    let bytes = send(&providers, "anthropic-timing", &anthropic_body(&id, true))
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    assert!(started.elapsed() >= std::time::Duration::from_millis(150));
    let decoded = decode::anthropic_stream(&sse::parse(&bytes));
    assert_eq!(texts_of(&decoded.completion), ["a", "b"]);
    assert!(decoded.terminated);
}

#[tokio::test]
async fn stream_faults_on_non_streaming_requests() {
    let providers = start().await;
    let id = register(
        &providers,
        "openai-primary",
        vec![
            with_fault(&["a"], json!({"kind": "in_band_error", "after_chunks": 1})),
            with_fault(
                &["a"],
                json!({"kind": "malformed_frame", "after_chunks": 0}),
            ),
        ],
    );
    let body = openai_body(&id, false, false);
    let error = send(&providers, "openai-primary", &body).await.unwrap();
    assert_eq!(error.status(), 500);
    let error: Value = error.json().await.unwrap();
    assert_eq!(error["error"]["type"], "server_error");
    let malformed = send(&providers, "openai-primary", &body).await.unwrap();
    assert_eq!(malformed.status(), 200);
    let text = malformed.bytes().await.unwrap();
    assert!(serde_json::from_slice::<Value>(&text).is_err());

    let id = register(
        &providers,
        "anthropic-timing",
        vec![with_fault(
            &["a"],
            json!({"kind": "cut", "after_chunks": 0, "partial_bytes": 7}),
        )],
    );
    let response = send(&providers, "anthropic-timing", &anthropic_body(&id, false))
        .await
        .unwrap();
    let (bytes, failed) = read_to_end(response).await;
    assert!(failed);
    assert_eq!(bytes.len(), 7);
}

#[tokio::test]
async fn calls_without_the_canary_get_the_providers_401() {
    let providers = start().await;
    let completion = behaviour(json!({"kind": "completion", "chunks": text_chunks(&["x"])}));
    let id = unique_id("auth");
    providers
        .register(Script {
            id: id.clone(),
            calls: [
                ("openai-primary".to_owned(), vec![completion.clone(); 3]),
                (
                    "anthropic-secondary".to_owned(),
                    vec![completion.clone(); 3],
                ),
                ("media".to_owned(), Vec::new()),
            ]
            .into_iter()
            .collect(),
        })
        .unwrap();
    let openai = format!(
        "{}/v1/chat/completions",
        providers.base_url("openai-primary").unwrap()
    );
    let body = openai_body(&id, false, false);
    let missing = client().post(&openai).json(&body).send().await.unwrap();
    assert_eq!(missing.status(), 401);
    let missing: Value = missing.json().await.unwrap();
    assert!(
        missing["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("You didn't provide")
    );
    let wrong = client()
        .post(&openai)
        .bearer_auth("sk-wrong-key-123")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 401);
    let wrong = wrong.text().await.unwrap();
    assert!(wrong.contains("invalid_api_key") && !wrong.contains("sk-wrong-key-123"));

    let anthropic = format!(
        "{}/v1/messages",
        providers.base_url("anthropic-secondary").unwrap()
    );
    let body = anthropic_body(&id, false);
    let wrong = client()
        .post(&anthropic)
        .header("x-api-key", "sk-ant-wrong")
        .header("anthropic-version", "2023-06-01")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 401);
    let wrong: Value = wrong.json().await.unwrap();
    assert_eq!(wrong["error"]["type"], "authentication_error");
    assert_eq!(wrong["error"]["message"], "invalid x-api-key");
    let bearer = client()
        .post(&anthropic)
        .bearer_auth(CANARY)
        .header("anthropic-version", "2023-06-01")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(
        bearer.status(),
        200,
        "anthropic SDK 2.x sends the key as a bearer token"
    );
    let no_version = client()
        .post(&anthropic)
        .header("x-api-key", CANARY)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(no_version.status(), 400);

    let media = format!("{}/fal-ai/model", providers.base_url("media").unwrap());
    let bearer = client()
        .post(&media)
        .bearer_auth(CANARY)
        .json(&body_for(&providers, "media", &id, false))
        .send()
        .await
        .unwrap();
    assert_eq!(bearer.status(), 401, "fal wants `Key <key>`");

    let calls = providers.calls(&id);
    let presented: Vec<(Option<&str>, bool, Option<u16>)> = calls
        .iter()
        .map(|call| {
            (
                call.credential.as_deref(),
                call.credential_is_canary,
                call.response_status,
            )
        })
        .collect();
    assert_eq!(
        presented,
        [
            (None, false, Some(401)),
            (Some("sk-wrong-key-123"), false, Some(401)),
            (Some("sk-ant-wrong"), false, Some(401)),
            (Some(CANARY), true, Some(200)),
            (Some(CANARY), true, Some(400)),
            (Some(format!("Bearer {CANARY}").as_str()), false, Some(401)),
        ]
    );
    assert_eq!(providers.call_count(&id, "openai-primary"), 2);
}

#[tokio::test]
async fn the_fake_answers_its_own_problems_in_provider_shape() {
    let providers = start().await;
    let id = register(
        &providers,
        "openai-primary",
        vec![behaviour(json!({"kind": "completion"}))],
    );
    let error_code = |body: &Value| body["error"]["code"].as_str().unwrap_or("").to_owned();

    let no_marker = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]});
    let response = send(&providers, "openai-primary", &no_marker)
        .await
        .unwrap();
    assert_eq!(response.status(), 400);
    assert_eq!(
        error_code(&response.json().await.unwrap()),
        "mock_provider_no_script"
    );

    let unknown = openai_body("never-registered", false, false);
    let response = send(&providers, "openai-primary", &unknown).await.unwrap();
    assert_eq!(response.status(), 400);
    assert_eq!(
        error_code(&response.json().await.unwrap()),
        "mock_provider_unknown_script"
    );

    let mut two = openai_body(&id, false, false);
    two["messages"][0]["content"] = json!("[[script:a]] [[script:b]]");
    let response = send(&providers, "openai-primary", &two).await.unwrap();
    assert_eq!(response.status(), 400);
    assert_eq!(
        error_code(&response.json().await.unwrap()),
        "mock_provider_ambiguous_script"
    );

    let body = openai_body(&id, false, false);
    assert_eq!(
        send(&providers, "openai-primary", &body)
            .await
            .unwrap()
            .status(),
        200
    );
    let exhausted = send(&providers, "openai-primary", &body).await.unwrap();
    assert_eq!(exhausted.status(), 500);
    let exhausted: Value = exhausted.json().await.unwrap();
    assert_eq!(error_code(&exhausted), "mock_provider_script_exhausted");
    assert!(
        exhausted["error"]["message"]
            .as_str()
            .unwrap()
            .contains("exhausted")
    );
    assert_eq!(providers.call_count(&id, "openai-primary"), 2);

    let base = providers.base_url("openai-primary").unwrap();
    let wrong_path = client()
        .post(format!("{base}/v1/messages"))
        .bearer_auth(CANARY)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(wrong_path.status(), 404);
    let other_server = format!(
        "http://{}/openai-timing/v1/chat/completions",
        providers.wiremock_address()
    );
    let response = client()
        .post(other_server)
        .bearer_auth(CANARY)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);
    assert!(providers.unmatched_calls().len() >= 5);
}

#[tokio::test]
async fn scripts_that_cannot_be_served_are_refused_at_registration() {
    let providers = start().await;
    let refuse = |instance: &str, call: Value| {
        let script = Script {
            id: unique_id("refused"),
            calls: [(instance.to_owned(), vec![behaviour(call)])]
                .into_iter()
                .collect(),
        };
        match providers.register(script) {
            Err(RegisterError::Invalid(error)) => error.to_string(),
            other => panic!("{instance}: expected a refusal, got {other:?}"),
        }
    };
    let cut = json!({"kind": "completion", "stream_fault": {"kind": "cut", "after_chunks": 0}});
    assert!(refuse("openai-primary", cut).contains("streaming backend"));
    let paced = json!({"kind": "completion", "timing": {"delay_between_frames_ms": 5}});
    assert!(refuse("anthropic-secondary", paced).contains("streaming backend"));
    assert!(refuse("media", json!({"kind": "completion"})).contains("async-media"));
    assert!(refuse("openai-timing", json!({"kind": "async_job"})).contains("async-media"));
    assert!(refuse("nowhere", json!({"kind": "completion"})).contains("unknown provider instance"));
    let orphan = json!({"kind": "completion", "chunks": [
        {"kind": "tool_call_arguments", "call_id": "c1", "delta": "{}"}]});
    assert!(refuse("openai-primary", orphan).contains("before its"));
    let usage = json!({"kind": "completion",
        "usage": {"input_tokens": 1, "output_tokens": 1, "cache_read_tokens": 2}});
    assert!(refuse("openai-primary", usage).contains("cache_read_tokens"));

    let id = register(&providers, "openai-primary", Vec::new());
    let duplicate = providers.register(Script {
        id: id.clone(),
        calls: Default::default(),
    });
    assert_eq!(duplicate, Err(RegisterError::DuplicateId { script_id: id }));
}
