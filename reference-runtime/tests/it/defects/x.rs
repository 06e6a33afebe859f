//! The scenarios of the surface-X defects, observed over HTTP: the rule holds with the defect off
//! and breaks with it on. Each test runs the same scenario twice; its row is in the defect table.

use std::collections::BTreeSet;
use std::time::Duration;

use crate::x_host::*;
use reference_runtime::config::ProviderKind;
use reference_runtime::defects::{Defect, Defects};
use reference_runtime::runtime::RunningRuntime;
use serde_json::{Value, json};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

/// A runtime over `servers` (OpenAI providers named p0, p1, …), with or without `defect`.
async fn runtime_over(
    servers: &[&MockServer],
    defect: Option<Defect>,
    keep_alive_ms: Option<u64>,
) -> RunningRuntime {
    let providers = servers
        .iter()
        .enumerate()
        .map(|(i, s)| provider(&format!("p{i}"), ProviderKind::OpenaiChat, &s.uri()))
        .collect();
    let mut config = config(providers);
    if let Some(ms) = keep_alive_ms {
        config.server.keep_alive_ms = ms;
    }
    start_with(options(config, Defects::of(defect))).await
}

/// Runs a scenario once clean and once with the defect; returns both observations.
macro_rules! both {
    ($defect:expr, |$on:ident| $body:expr) => {{
        let off = {
            let $on: Option<Defect> = None;
            $body
        };
        let on = {
            let $on = Some($defect);
            $body
        };
        (off, on)
    }};
}

async fn text_server(body: String, delay_ms: u64) -> MockServer {
    let server = MockServer::builder().start().await;
    Mock::given(method("POST"))
        .respond_with(sse_answer(body).set_delay(Duration::from_millis(delay_ms)))
        .mount(&server)
        .await;
    server
}

async fn calls(server: &MockServer) -> usize {
    server.received_requests().await.unwrap().len()
}

#[tokio::test]
pub(super) async fn x_replay_creates_new_execution() {
    let (off, on) = both!(Defect::XReplayCreatesNewExecution, |defect| {
        let server = text_server(openai_text(&["x"]), 0).await;
        let runtime = runtime_over(&[&server], defect, None).await;
        let base = runtime.base_url();
        let (_, first) = create(&base, &text_request("r"), Some("k")).await;
        events(&base, first["execution_id"].as_str().unwrap()).await;
        let (status, again) = create(&base, &text_request("r"), Some("k")).await;
        runtime.shutdown().await;
        (status, again["execution_id"] == first["execution_id"])
    });
    assert_eq!(off, (200, true));
    assert_eq!(on, (202, false));
}

#[tokio::test]
pub(super) async fn x_mismatched_key_accepted() {
    let (off, on) = both!(Defect::XMismatchedKeyAccepted, |defect| {
        let server = text_server(openai_text(&["x"]), 0).await;
        let runtime = runtime_over(&[&server], defect, None).await;
        let base = runtime.base_url();
        create(&base, &text_request("a"), Some("k")).await;
        let (status, _) = create(&base, &text_request("b"), Some("k")).await;
        runtime.shutdown().await;
        status
    });
    assert_eq!((off, on), (400, 200));
}

#[tokio::test]
pub(super) async fn x_concurrent_duplicates_call_twice() {
    let (off, on) = both!(Defect::XConcurrentDuplicatesCallTwice, |defect| {
        let server = text_server(openai_text(&["x"]), 300).await;
        let runtime = runtime_over(&[&server], defect, None).await;
        let base = runtime.base_url();
        let request = text_request("dup");
        let answers =
            futures::future::join_all((0..4).map(|_| create(&base, &request, Some("dup")))).await;
        let ids: BTreeSet<String> = answers
            .iter()
            .map(|(_, b)| b["execution_id"].as_str().unwrap().to_string())
            .collect();
        for id in &ids {
            events(&base, id).await;
        }
        let count = calls(&server).await;
        runtime.shutdown().await;
        (ids.len(), count)
    });
    assert_eq!(off, (1, 1));
    assert!(on.0 > 1 && on.1 > 1, "{on:?}");
}

#[tokio::test]
pub(super) async fn x_provider_called_before_validation() {
    let (off, on) = both!(Defect::XProviderCalledBeforeValidation, |defect| {
        let server = text_server(openai_text(&["x"]), 0).await;
        let runtime = runtime_over(&[&server], defect, None).await;
        let base = runtime.base_url();
        let mut request = text_request("x");
        request["requirements"] = json!({"async": true});
        let (status, _) = create(&base, &request, None).await;
        let count = calls(&server).await;
        runtime.shutdown().await;
        (status, count)
    });
    assert_eq!(off, (422, 0));
    assert_eq!(on, (422, 1));
}

#[tokio::test]
pub(super) async fn x_malformed_request_accepted() {
    let (off, on) = both!(Defect::XMalformedRequestAccepted, |defect| {
        let server = text_server(openai_text(&["x"]), 0).await;
        let runtime = runtime_over(&[&server], defect, None).await;
        let mut request = text_request("x");
        request["unexpected"] = json!(true);
        let (status, _) = create(&runtime.base_url(), &request, None).await;
        runtime.shutdown().await;
        status
    });
    assert_eq!((off, on), (400, 202));
}

#[tokio::test]
pub(super) async fn x_fallback_after_output() {
    let broken = format!(
        "{}data: {}\n\n",
        openai_stream(
            &[openai_chunk(json!({"content": "partial"}), None)],
            None,
            false
        ),
        json!({"error": {"type": "server_error", "message": "boom"}})
    );
    let (off, on) = both!(Defect::XFallbackAfterOutput, |defect| {
        let first = text_server(broken.clone(), 0).await;
        let second = text_server(openai_text(&["whole"]), 0).await;
        let runtime = runtime_over(&[&first, &second], defect, None).await;
        let base = runtime.base_url();
        let mut request = text_request("x");
        request["routing"] = json!({"allow_fallback": true});
        let (_, submission) = create(&base, &request, None).await;
        let frames = events(&base, submission["execution_id"].as_str().unwrap()).await;
        let count = calls(&second).await;
        runtime.shutdown().await;
        (frames.last().unwrap().kind().to_string(), count)
    });
    assert_eq!(off, ("execution.failed".to_string(), 0));
    assert_eq!(on, ("execution.completed".to_string(), 1));
}

#[tokio::test]
pub(super) async fn x_sequence_repeated() {
    let (off, on) = both!(Defect::XSequenceRepeated, |defect| {
        let server = text_server(openai_text(&["x"]), 0).await;
        let runtime = runtime_over(&[&server], defect, None).await;
        let base = runtime.base_url();
        let (_, submission) = create(&base, &text_request("x"), None).await;
        let frames = events(&base, submission["execution_id"].as_str().unwrap()).await;
        runtime.shutdown().await;
        frames[1].data["sequence"].clone()
    });
    assert_eq!((off, on), (json!(2), json!(1)));
}

async fn first_sequence_with_cursor(
    defect: Option<Defect>,
    query: &str,
    last: Option<&str>,
) -> Value {
    let server = text_server(openai_text(&["a", "b"]), 0).await;
    let runtime = runtime_over(&[&server], defect, None).await;
    let base = runtime.base_url();
    let (_, submission) = create(&base, &text_request("x"), None).await;
    let id = submission["execution_id"].as_str().unwrap();
    events(&base, id).await;
    let frames = SseStream::new(SseStream::open(&base, id, query, last).await)
        .rest()
        .await;
    runtime.shutdown().await;
    frames[0].data["sequence"].clone()
}

#[tokio::test]
pub(super) async fn x_after_ignored() {
    let (off, on) = both!(Defect::XAfterIgnored, |defect| {
        first_sequence_with_cursor(defect, "?after=3", None).await
    });
    assert_eq!((off, on), (json!(4), json!(1)));
}

#[tokio::test]
pub(super) async fn x_last_event_id_inclusive() {
    let (off, on) = both!(Defect::XLastEventIdInclusive, |defect| {
        first_sequence_with_cursor(defect, "", Some("3")).await
    });
    assert_eq!((off, on), (json!(4), json!(3)));
}

#[tokio::test]
pub(super) async fn x_no_terminal_on_cancel() {
    let (off, on) = both!(Defect::XNoTerminalOnCancel, |defect| {
        let server = text_server(openai_text(&["late"]), 30_000).await;
        let runtime = runtime_over(&[&server], defect, Some(20)).await;
        let base = runtime.base_url();
        let (_, submission) = create(&base, &text_request("x"), None).await;
        let id = submission["execution_id"].as_str().unwrap();
        let mut stream = SseStream::new(SseStream::open(&base, id, "", None).await);
        stream.until("route.selected").await;
        reqwest::Client::new()
            .post(format!("{base}/v1/executions/{id}/cancel"))
            .send()
            .await
            .unwrap();
        // Clean: the terminal event arrives. Defective: only keep-alives, until we give up.
        let next = tokio::time::timeout(Duration::from_secs(1), stream.next()).await;
        runtime.shutdown().await;
        next.ok().flatten().map(|f| f.data["status"].clone())
    });
    assert_eq!(off, Some(json!("cancelled")));
    assert_eq!(on, None);
}

#[tokio::test]
pub(super) async fn x_second_terminal() {
    let (off, on) = both!(Defect::XSecondTerminal, |defect| {
        let server = text_server(openai_text(&["x"]), 0).await;
        let runtime = runtime_over(&[&server], defect, None).await;
        let base = runtime.base_url();
        let (_, submission) = create(&base, &text_request("x"), None).await;
        let id = submission["execution_id"].as_str().unwrap();
        events(&base, id).await;
        let frames = events(&base, id).await;
        runtime.shutdown().await;
        frames
            .iter()
            .filter(|f| f.kind() == "execution.completed")
            .count()
    });
    assert_eq!((off, on), (1, 2));
}

async fn usage_facts(defect: Option<Defect>) -> Vec<Value> {
    let server = text_server(openai_text(&["x"]), 0).await;
    let runtime = runtime_over(&[&server], defect, None).await;
    let base = runtime.base_url();
    let (_, submission) = create(&base, &text_request("x"), None).await;
    let frames = events(&base, submission["execution_id"].as_str().unwrap()).await;
    runtime.shutdown().await;
    frames
        .iter()
        .filter(|f| f.kind() == "usage.reported")
        .flat_map(|f| f.data["facts"].as_array().unwrap().clone())
        .collect()
}

#[tokio::test]
pub(super) async fn x_negative_usage() {
    let (off, on) = both!(Defect::XNegativeUsage, |defect| usage_facts(defect).await);
    let negative = |facts: &[Value]| facts.iter().any(|f| f["quantity"].as_f64().unwrap() < 0.0);
    assert!(!off.is_empty() && !negative(&off));
    assert!(negative(&on));
}

#[tokio::test]
pub(super) async fn x_later_usage_fact_negative() {
    let (off, on) = both!(Defect::XLaterUsageFactNegative, |defect| usage_facts(
        defect
    )
    .await);
    let negative = |fact: &Value| fact["quantity"].as_f64().unwrap() < 0.0;
    assert!(off.len() > 1 && !off.iter().any(negative), "{off:?}");
    assert!(!negative(&on[0]), "the first fact stays valid: {on:?}");
    assert!(on[1..].iter().any(negative), "{on:?}");
}

#[tokio::test]
pub(super) async fn x_unknown_usage_unit() {
    let (off, on) = both!(Defect::XUnknownUsageUnit, |defect| usage_facts(defect)
        .await);
    let unknown = |facts: &[Value]| {
        facts
            .iter()
            .any(|f| !spec::execution::is_valid_unit(f["unit"].as_str().unwrap()))
    };
    assert!(!off.is_empty() && !unknown(&off));
    assert!(unknown(&on));
}

#[tokio::test]
pub(super) async fn x_tool_arguments_wrong_order() {
    let tool = |id: Option<&str>, args: &str| {
        let mut call = json!({"index": 0, "function": {"arguments": args}});
        if let Some(id) = id {
            call["id"] = json!(id);
            call["function"]["name"] = json!("read_file");
        }
        openai_chunk(json!({"tool_calls": [call]}), None)
    };
    let body = openai_stream(
        &[
            tool(Some("call_a"), ""),
            tool(None, "{\"path\":"),
            tool(None, "\"a.txt\"}"),
        ],
        None,
        true,
    );
    let (off, on) = both!(Defect::XToolArgumentsWrongOrder, |defect| {
        let server = text_server(body.clone(), 0).await;
        let runtime = runtime_over(&[&server], defect, None).await;
        let base = runtime.base_url();
        let (_, submission) = create(&base, &text_request("x"), None).await;
        let id = submission["execution_id"].as_str().unwrap();
        events(&base, id).await;
        let (_, snapshot) = get_json(&format!("{base}/v1/executions/{id}")).await;
        runtime.shutdown().await;
        snapshot["result"]["tool_calls"][0]["arguments"].clone()
    });
    assert_eq!(off, json!("{\"path\":\"a.txt\"}"));
    assert_eq!(on, json!("\"a.txt\"}{\"path\":"));
}

#[tokio::test]
pub(super) async fn x_canary_in_error() {
    let (off, on) = both!(Defect::XCanaryInError, |defect| {
        let server = MockServer::builder().start().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(401).set_body_json(
                json!({"error": {"message": format!("Incorrect API key provided: {CANARY}"), "type": "invalid_request_error"}}),
            ))
            .mount(&server)
            .await;
        let runtime = runtime_over(&[&server], defect, None).await;
        let base = runtime.base_url();
        let (_, submission) = create(&base, &text_request("x"), None).await;
        let id = submission["execution_id"].as_str().unwrap();
        events(&base, id).await;
        let snapshot = reqwest::get(format!("{base}/v1/executions/{id}"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        runtime.shutdown().await;
        snapshot.contains(CANARY)
    });
    assert_eq!((off, on), (false, true));
}

#[tokio::test]
pub(super) async fn x_request_echoed_in_error() {
    let (off, on) = both!(Defect::XRequestEchoedInError, |defect| {
        let server = text_server(openai_text(&["x"]), 0).await;
        let runtime = runtime_over(&[&server], defect, None).await;
        let mut request = text_request("x");
        request["metadata"] = json!({"patient-name": {"secret": "SENSITIVE-VALUE"}});
        let (status, body) = create(&runtime.base_url(), &request, None).await;
        runtime.shutdown().await;
        assert_eq!(status, 400);
        body.to_string().contains("patient-name")
    });
    assert_eq!((off, on), (false, true));
}

#[tokio::test]
pub(super) async fn x_credential_in_manifest() {
    let (off, on) = both!(Defect::XCredentialInManifest, |defect| {
        let server = MockServer::builder().start().await;
        let runtime = runtime_over(&[&server], defect, None).await;
        let manifests = reqwest::get(format!("{}/v1/providers", runtime.base_url()))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        runtime.shutdown().await;
        manifests.contains(CANARY)
    });
    assert_eq!((off, on), (false, true));
}

#[tokio::test]
pub(super) async fn x_credential_from_extension() {
    let (off, on) = both!(Defect::XCredentialFromExtension, |defect| {
        let server = text_server(openai_text(&["x"]), 0).await;
        let runtime = runtime_over(&[&server], defect, None).await;
        let base = runtime.base_url();
        let mut request = text_request("x");
        request["extensions"] = json!({"openai.request": {"api_key": "sk-from-the-request"}});
        let (_, submission) = create(&base, &request, None).await;
        events(&base, submission["execution_id"].as_str().unwrap()).await;
        let received = server.received_requests().await.unwrap();
        runtime.shutdown().await;
        received[0]
            .headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string()
    });
    assert_eq!(off, format!("Bearer {CANARY}"));
    assert_eq!(on, "Bearer sk-from-the-request");
}

#[tokio::test]
pub(super) async fn x_submission_answered_200() {
    let (off, on) = both!(Defect::XSubmissionAnswered200, |defect| {
        let server = text_server(openai_text(&["x"]), 0).await;
        let runtime = runtime_over(&[&server], defect, None).await;
        let (status, submission) = create(&runtime.base_url(), &text_request("x"), None).await;
        events(
            &runtime.base_url(),
            submission["execution_id"].as_str().unwrap(),
        )
        .await;
        runtime.shutdown().await;
        status
    });
    assert_eq!((off, on), (202, 200));
}

#[tokio::test]
pub(super) async fn x_deadline_ignored() {
    let (off, on) = both!(Defect::XDeadlineIgnored, |defect| {
        let server = text_server(openai_text(&["late"]), 1_000).await;
        let runtime = runtime_over(&[&server], defect, None).await;
        let base = runtime.base_url();
        let mut request = text_request("x");
        request["deadline_ms"] = json!(100);
        let (_, submission) = create(&base, &request, None).await;
        let frames = events(&base, submission["execution_id"].as_str().unwrap()).await;
        runtime.shutdown().await;
        frames.last().unwrap().kind().to_string()
    });
    assert_eq!(off, "execution.failed");
    assert_eq!(on, "execution.completed");
}

#[tokio::test]
pub(super) async fn x_max_attempts_ignored() {
    let (off, on) = both!(Defect::XMaxAttemptsIgnored, |defect| {
        let mut servers = Vec::new();
        for _ in 0..3 {
            let server = MockServer::builder().start().await;
            Mock::given(method("POST"))
                .respond_with(ResponseTemplate::new(503))
                .mount(&server)
                .await;
            servers.push(server);
        }
        let refs: Vec<&MockServer> = servers.iter().collect();
        let runtime = runtime_over(&refs, defect, None).await;
        let base = runtime.base_url();
        let mut request = text_request("x");
        request["routing"] = json!({"allow_fallback": true, "max_attempts": 2});
        let (_, submission) = create(&base, &request, None).await;
        events(&base, submission["execution_id"].as_str().unwrap()).await;
        let mut total = 0;
        for server in &servers {
            total += calls(server).await;
        }
        runtime.shutdown().await;
        total
    });
    assert_eq!((off, on), (2, 3));
}

#[tokio::test]
pub(super) async fn x_quota_retried_unrecorded() {
    let (off, on) = both!(Defect::XQuotaRetriedUnrecorded, |defect| {
        let quota = MockServer::builder().start().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(429).set_body_json(json!({"error": {"type": "insufficient_quota", "code": "insufficient_quota", "message": "out of credit"}})))
            .mount(&quota)
            .await;
        let second = text_server(openai_text(&["fallback"]), 0).await;
        let runtime = runtime_over(&[&quota, &second], defect, None).await;
        let base = runtime.base_url();
        let mut request = text_request("x");
        request["routing"] = json!({"allow_fallback": true});
        let (_, submission) = create(&base, &request, None).await;
        let frames = events(&base, submission["execution_id"].as_str().unwrap()).await;
        let count = calls(&second).await;
        runtime.shutdown().await;
        let recorded = frames.iter().any(|f| f.kind() == "route.attempt_failed");
        (frames.last().unwrap().kind().to_string(), count, recorded)
    });
    assert_eq!(off, ("execution.failed".to_string(), 0, false));
    assert_eq!(on, ("execution.completed".to_string(), 1, false));
}

#[tokio::test]
pub(super) async fn x_provider_code_as_portable() {
    let (off, on) = both!(Defect::XProviderCodeAsPortable, |defect| {
        let server = MockServer::builder().start().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(400).set_body_json(json!({"error": {"type": "invalid_request_error", "code": "context_length_exceeded", "message": "too long"}})))
            .mount(&server)
            .await;
        let runtime = runtime_over(&[&server], defect, None).await;
        let base = runtime.base_url();
        let (_, submission) = create(&base, &text_request("x"), None).await;
        let id = submission["execution_id"].as_str().unwrap().to_string();
        let (_, body) = wait_terminal_raw(&base, &id).await;
        runtime.shutdown().await;
        body
    });
    let portable: Vec<&str> = spec::execution::ErrorCode::ALL
        .iter()
        .map(|c| c.as_str())
        .collect();
    assert!(portable.contains(&off.as_str()), "{off}");
    assert!(!portable.contains(&on.as_str()), "{on}");
}

#[tokio::test]
pub(super) async fn x_http_status_as_code() {
    let (off, on) = both!(Defect::XHttpStatusAsCode, |defect| {
        let server = MockServer::builder().start().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(503).set_body_json(json!({"error": {"type": "server_error", "code": "server_error", "message": "unavailable"}})))
            .mount(&server)
            .await;
        let runtime = runtime_over(&[&server], defect, None).await;
        let base = runtime.base_url();
        let (_, submission) = create(&base, &text_request("x"), None).await;
        let id = submission["execution_id"].as_str().unwrap().to_string();
        let (_, code) = wait_terminal_raw(&base, &id).await;
        runtime.shutdown().await;
        code
    });
    assert!(
        spec::execution::ErrorCode::from_name(&off).is_some(),
        "{off}"
    );
    assert_eq!(on, "http_503");
}

/// The terminal event's `error.code` as sent on the stream (raw JSON, not parsed into types).
async fn wait_terminal_raw(base: &str, id: &str) -> (u16, String) {
    let text = reqwest::get(format!("{base}/v1/executions/{id}/events"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let code = text
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter_map(|data| serde_json::from_str::<Value>(data).ok())
        .find(|event| event["type"] == "execution.failed")
        .and_then(|event| event["error"]["code"].as_str().map(String::from))
        .unwrap_or_default();
    (200, code)
}

#[tokio::test]
pub(super) async fn x_text_output_truncated() {
    let (off, on) = both!(Defect::XTextOutputTruncated, |defect| {
        let server = text_server(openai_text(&["Hel", "lo"]), 0).await;
        let runtime = runtime_over(&[&server], defect, None).await;
        let base = runtime.base_url();
        let (_, submission) = create(&base, &text_request("x"), None).await;
        let id = submission["execution_id"].as_str().unwrap();
        events(&base, id).await;
        let (_, result) = get_json(&format!("{base}/v1/executions/{id}/result")).await;
        runtime.shutdown().await;
        result["result"]["outputs"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    });
    assert_eq!((off.as_str(), on.as_str()), ("Hello", "Hel"));
}
