//! Surface X's host choices (`[execution]`, `[server] title_case_headers`): each option other
//! than the default takes another reading the seed admits and keeps the rule it borders.

use std::time::Duration;

use crate::x_host::*;

use reference_runtime::choices::{
    AcceptedAppend, ArtifactFields, CancelTerminal, ErrorWording, ExecutionCancel,
    ExecutionChoices, IdempotencyMismatch, MalformedStatus, ManifestFields, ProviderCodeChoice,
    ResultBeforeSuccess, SequenceForm, SubmissionStatus, UsageFacts, ValidationOrder,
};
use reference_runtime::config::ProviderKind;
use reference_runtime::defects::Defects;
use reference_runtime::runtime::RunningRuntime;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use wiremock::MockServer;

/// Every non-default option of the divergent profile at once.
fn divergent() -> ExecutionChoices {
    ExecutionChoices {
        submission_status: SubmissionStatus::Current,
        malformed_status: MalformedStatus::Specific,
        validation_order: ValidationOrder::KeyFirst,
        idempotency_mismatch: IdempotencyMismatch::Conflict,
        sequence_form: SequenceForm::Even,
        cancel: ExecutionCancel::Synchronous,
        cancel_terminal: CancelTerminal::NoOp,
        result_before_success: ResultBeforeSuccess::NotFound,
        provider_code: ProviderCodeChoice::Omitted,
        error_wording: ErrorWording::Terse,
        artifact_fields: ArtifactFields::UriOnly,
        usage_facts: UsageFacts::WithRuntimeFacts,
        manifest_fields: ManifestFields::WithLimits,
        ..ExecutionChoices::default()
    }
}

async fn start_choosing(server: &MockServer, choices: ExecutionChoices) -> RunningRuntime {
    let mut config = config(vec![provider(
        "openai",
        ProviderKind::OpenaiChat,
        &server.uri(),
    )]);
    config.execution = choices;
    config.server.title_case_headers = true;
    start_with(options(config, Defects::none())).await
}

async fn post(base: &str, body: &str, content_type: &str, key: Option<&str>) -> (u16, Value) {
    let mut request = reqwest::Client::new()
        .post(format!("{base}/v1/executions"))
        .header("content-type", content_type)
        .body(body.to_string());
    if let Some(key) = key {
        request = request.header("idempotency-key", key);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn divergent_log_numbers_statuses_and_usage() {
    let server = MockServer::builder().start().await;
    let usage = json!({"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5});
    let chunks = [openai_chunk(json!({"content": "hi"}), Some("stop"))];
    mount_openai(
        &server,
        sse_answer(openai_stream(&chunks, Some(usage), true)),
        1,
    )
    .await;
    let runtime = start_choosing(&server, divergent()).await;
    let base = runtime.base_url();
    let (status, submission) = create(&base, &text_request("hi"), None).await;
    assert_eq!(status, 202);
    // The driver moved on before the answer was written.
    assert_ne!(submission["status"], "accepted", "{submission}");
    let id = submission["execution_id"].as_str().unwrap();
    let frames = events(&base, id).await;
    let sequences: Vec<u64> = frames
        .iter()
        .map(|f| f.data["sequence"].as_u64().unwrap())
        .collect();
    let expected: Vec<u64> = (1..=frames.len() as u64).map(|s| s * 2).collect();
    assert_eq!(sequences, expected);
    for frame in &frames {
        assert_eq!(frame.id, Some(frame.data["sequence"].to_string()));
    }
    // `after` is read in the same numbers: after 2 (the first event), from the second on.
    let resumed = SseStream::new(SseStream::open(&base, id, "?after=2", None).await)
        .rest()
        .await;
    assert_eq!(resumed, frames[1..].to_vec());
    let resumed_odd = SseStream::new(SseStream::open(&base, id, "?after=3", None).await)
        .rest()
        .await;
    assert_eq!(resumed_odd, frames[1..].to_vec());
    let (_, snapshot) = get_json(&format!("{base}/v1/executions/{id}")).await;
    assert_eq!(snapshot["last_sequence"], *sequences.last().unwrap());
    let usage = frames
        .iter()
        .find(|f| f.kind() == "usage.reported")
        .expect("usage.reported");
    let runtime_fact = usage.data["facts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["source"] == "runtime")
        .expect("a runtime-derived fact");
    assert_eq!(runtime_fact["unit"], "reference-runtime.reported_fact");
    assert!(spec::execution::is_valid_unit(
        runtime_fact["unit"].as_str().unwrap()
    ));
    // A cancel of the terminal execution is a no-op answered 200.
    let cancel = reqwest::Client::new()
        .post(format!("{base}/v1/executions/{id}/cancel"))
        .send()
        .await
        .unwrap();
    assert_eq!(cancel.status(), 200);
    assert_eq!(cancel.json::<Value>().await.unwrap()["status"], "succeeded");
    assert_eq!(events(&base, id).await, frames, "nothing appended");
    runtime.shutdown().await;
}

#[tokio::test]
async fn divergent_refusals() {
    let server = MockServer::builder().start().await;
    let runtime = start_choosing(&server, divergent()).await;
    let base = runtime.base_url();
    let body = text_request("hi").to_string();
    let (status, error) = post(&base, &body, "text/plain", None).await;
    assert_eq!(
        (status, &error["error"]["code"]),
        (415, &json!("invalid_request"))
    );
    assert_eq!(error["error"]["message"], "Error: invalid_request.");
    let (status, _) = post(&base, r#"{"ability": 7}"#, "application/json", None).await;
    assert_eq!(status, 422);
    // The key is checked first: a bad key and a bad body get the key's 400.
    let (status, _) = post(&base, r#"{"ability": 7}"#, "application/json", Some("a b")).await;
    assert_eq!(status, 400);
    // A reused key with another request: 409 conflict.
    mount_openai(&server, sse_answer(openai_text(&["ok"])), 1).await;
    let (status, _) = create(&base, &text_request("one"), Some("k-1")).await;
    assert_eq!(status, 202);
    let (status, error) = create(&base, &text_request("two"), Some("k-1")).await;
    assert_eq!((status, &error["error"]["code"]), (409, &json!("conflict")));
    let (_, manifests) = get_json(&format!("{base}/v1/providers")).await;
    assert!(manifests["data"][0]["limits"]["max_concurrency"].is_u64());
    runtime.shutdown().await;
}

#[tokio::test]
async fn body_first_order_refuses_the_body_first() {
    let server = MockServer::builder().start().await;
    let choices = ExecutionChoices {
        malformed_status: MalformedStatus::Specific,
        ..ExecutionChoices::default()
    };
    let runtime = start_choosing(&server, choices).await;
    let (status, _) = post(
        &runtime.base_url(),
        r#"{"ability": 7}"#,
        "application/json",
        Some("a b"),
    )
    .await;
    assert_eq!(status, 422);
    runtime.shutdown().await;
}

#[tokio::test]
async fn synchronous_cancel_answers_after_the_terminal_event() {
    let server = MockServer::builder().start().await;
    let slow = sse_answer(openai_text(&["late"])).set_delay(Duration::from_secs(30));
    mount_openai(&server, slow, 1).await;
    let runtime = start_choosing(&server, divergent()).await;
    let base = runtime.base_url();
    let (_, submission) = create(&base, &text_request("hi"), None).await;
    let id = submission["execution_id"].as_str().unwrap();
    let (status, error) = get_json(&format!("{base}/v1/executions/{id}/result")).await;
    assert_eq!(
        (status, &error["error"]["code"]),
        (404, &json!("not_found"))
    );
    let cancel = reqwest::Client::new()
        .post(format!("{base}/v1/executions/{id}/cancel"))
        .send()
        .await
        .unwrap();
    assert_eq!(cancel.status(), 200);
    assert_eq!(cancel.json::<Value>().await.unwrap()["status"], "cancelled");
    // Already in the log when the answer came.
    let (_, snapshot) = get_json(&format!("{base}/v1/executions/{id}")).await;
    assert_eq!(snapshot["status"], "cancelled");
    assert_eq!(snapshot["error"]["code"], "cancelled");
    assert_eq!(snapshot["error"]["message"], "Error: cancelled.");
    runtime.shutdown().await;
}

#[tokio::test]
async fn accepted_after_the_response_is_still_first() {
    let server = MockServer::builder().start().await;
    mount_openai(&server, sse_answer(openai_text(&["ok"])), 1).await;
    let choices = ExecutionChoices {
        accepted_append: AcceptedAppend::AfterResponse,
        ..ExecutionChoices::default()
    };
    let runtime = start_choosing(&server, choices).await;
    let base = runtime.base_url();
    let (status, submission) = create(&base, &text_request("hi"), None).await;
    assert_eq!((status, &submission["status"]), (202, &json!("accepted")));
    let id = submission["execution_id"].as_str().unwrap();
    let frames = events(&base, id).await;
    let types = check_log(&frames, id);
    assert_eq!(
        types.first().map(String::as_str),
        Some("execution.accepted")
    );
    assert_eq!(
        types.last().map(String::as_str),
        Some("execution.completed")
    );
    runtime.shutdown().await;
}

#[tokio::test]
async fn title_case_header_names_on_the_wire() {
    let server = MockServer::builder().start().await;
    let runtime = start_choosing(&server, ExecutionChoices::default()).await;
    let mut stream = tokio::net::TcpStream::connect(runtime.local_addr())
        .await
        .unwrap();
    stream
        .write_all(b"GET /v1/runtime HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    let answer = String::from_utf8_lossy(&answer);
    let head = answer.split("\r\n\r\n").next().unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(
        head.contains("\r\nContent-Type: application/json"),
        "{head}"
    );
    runtime.shutdown().await;
}
