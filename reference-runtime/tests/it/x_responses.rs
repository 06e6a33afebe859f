//! Surface X over real HTTP against the fake OpenAI Responses provider (`mock-provider`): text
//! and tool-call streams, usage, fallback on an HTTP error before output, no fallback after
//! output, and an `incomplete` response.

use crate::x_host::*;
use mock_provider::{
    Backend, CallBehaviour, FakeProviders, FakeProvidersConfig, ProviderInstance, ProviderKind,
    Script,
};
use reference_runtime::config::ProviderKind as RuntimeKind;
use serde_json::{Value, json};

const PRIMARY: &str = "responses-a";
const SECONDARY: &str = "responses-b";

async fn fakes() -> FakeProviders {
    let instances = [PRIMARY, SECONDARY]
        .into_iter()
        .map(|name| ProviderInstance::new(name, ProviderKind::OpenaiResponses, Backend::Wiremock))
        .collect();
    FakeProviders::start(FakeProvidersConfig::new(CANARY).with_instances(instances))
        .await
        .expect("fake providers start")
}

fn behaviour(json: Value) -> CallBehaviour {
    serde_json::from_value(json).expect("behaviour parses")
}

/// Registers a script and returns the request whose text carries its marker.
fn scripted(providers: &FakeProviders, id: &str, calls: Vec<(&str, Vec<Value>)>) -> Value {
    providers
        .register(Script {
            id: id.into(),
            calls: calls
                .into_iter()
                .map(|(instance, behaviours)| {
                    (
                        instance.to_owned(),
                        behaviours.into_iter().map(behaviour).collect(),
                    )
                })
                .collect(),
        })
        .expect("script registers");
    text_request(&format!("hello [[script:{id}]]"))
}

async fn runtime_over(providers: &FakeProviders) -> reference_runtime::runtime::RunningRuntime {
    runtime(
        [PRIMARY, SECONDARY]
            .into_iter()
            .map(|name| {
                provider(
                    name,
                    RuntimeKind::OpenaiResponses,
                    &providers.base_url(name).expect("instance is served"),
                )
            })
            .collect(),
    )
    .await
}

async fn run(base: &str, request: &Value) -> (Vec<Frame>, Vec<String>) {
    let (status, submission) = create(base, request, None).await;
    assert_eq!(status, 202, "{submission}");
    let id = submission["execution_id"].as_str().unwrap().to_owned();
    let frames = events(base, &id).await;
    let kinds = check_log(&frames, &id);
    (frames, kinds)
}

#[tokio::test]
async fn text_stream_materialises_and_reports_usage_in_origin_units() {
    let providers = fakes().await;
    let request = scripted(
        &providers,
        "responses-text",
        vec![(
            PRIMARY,
            vec![json!({
                "kind": "completion",
                "chunks": [{"kind": "text", "delta": "hello"}, {"kind": "text", "delta": " world"}],
                "usage": {"input_tokens": 12, "output_tokens": 3, "cache_read_tokens": 4,
                          "reasoning_tokens": 1}
            })],
        )],
    );
    let runtime = runtime_over(&providers).await;
    let base = runtime.base_url();
    let (frames, kinds) = run(&base, &request).await;
    assert_eq!(
        kinds,
        [
            "execution.accepted",
            "route.selected",
            "output.delta",
            "output.delta",
            "usage.reported",
            "execution.completed"
        ]
    );
    assert_eq!(frames[2].data["output_index"], 0);
    assert_eq!(frames[3].data["delta"], " world");
    assert_eq!(
        frames[4].data["facts"],
        json!([
            {"unit": "input_token", "quantity": 12.0, "source": "provider", "complete": true},
            {"unit": "output_token", "quantity": 3.0, "source": "provider", "complete": true},
            {"unit": "cache_read_token", "quantity": 4.0, "source": "provider", "complete": true},
            {"unit": "reasoning_token", "quantity": 1.0, "source": "provider", "complete": true}
        ])
    );
    let id = frames[0].data["execution_id"].as_str().unwrap();
    let (_, snapshot) = get_json(&format!("{base}/v1/executions/{id}")).await;
    assert_eq!(snapshot["status"], "succeeded");
    assert_eq!(snapshot["result"]["outputs"][0]["text"], "hello world");

    let calls = providers.calls("responses-text");
    assert_eq!(calls.len(), 1);
    assert!(calls[0].credential_is_canary);
    assert_eq!(calls[0].path, format!("/{PRIMARY}/v1/responses"));
    let body: Value = serde_json::from_slice(&calls[0].body).unwrap();
    assert_eq!(body["stream"], true);
    assert_eq!(body["model"], "gpt-test");
    assert_eq!(body["input"][0]["content"][0]["type"], "input_text");
    runtime.shutdown().await;
    providers.shutdown().await;
}

#[tokio::test]
async fn tool_call_stream_maps_item_ids_to_call_ids() {
    let providers = fakes().await;
    let request = scripted(
        &providers,
        "responses-tools",
        vec![(
            PRIMARY,
            vec![json!({
                "kind": "completion",
                "finish_reason": "tool_calls",
                "chunks": [
                    {"kind": "tool_call_start", "call_id": "call_a", "name": "read_file"},
                    {"kind": "tool_call_start", "call_id": "call_b", "name": "list_dir"},
                    {"kind": "tool_call_arguments", "call_id": "call_a", "delta": "{\"path\":"},
                    {"kind": "tool_call_arguments", "call_id": "call_b", "delta": "{}"},
                    {"kind": "tool_call_arguments", "call_id": "call_a", "delta": "\"a.txt\"}"}
                ],
                "usage": {"input_tokens": 5, "output_tokens": 7}
            })],
        )],
    );
    let runtime = runtime_over(&providers).await;
    let base = runtime.base_url();
    let (frames, kinds) = run(&base, &request).await;
    assert_eq!(
        kinds,
        [
            "execution.accepted",
            "route.selected",
            "tool.call.started",
            "tool.call.started",
            "tool.call.arguments.delta",
            "tool.call.arguments.delta",
            "tool.call.arguments.delta",
            "usage.reported",
            "execution.completed"
        ]
    );
    assert_eq!(frames[2].data["call_id"], "call_a");
    assert_eq!(frames[3].data["name"], "list_dir");
    assert_eq!(frames[5].data["call_id"], "call_b");
    let id = frames[0].data["execution_id"].as_str().unwrap();
    let (_, snapshot) = get_json(&format!("{base}/v1/executions/{id}")).await;
    assert_eq!(
        snapshot["result"]["tool_calls"],
        json!([
            {"call_id": "call_a", "name": "read_file", "arguments": "{\"path\":\"a.txt\"}"},
            {"call_id": "call_b", "name": "list_dir", "arguments": "{}"}
        ])
    );
    runtime.shutdown().await;
    providers.shutdown().await;
}

#[tokio::test]
async fn http_errors_before_output_fall_back_to_the_next_provider() {
    let providers = fakes().await;
    let runtime = runtime_over(&providers).await;
    let base = runtime.base_url();
    for (error, status, code) in [
        ("rate_limited", "429", "rate_limited"),
        ("service_unavailable", "503", "provider_unavailable"),
    ] {
        let script_id = format!("responses-fallback-{error}");
        let mut request = scripted(
            &providers,
            &script_id,
            vec![
                (
                    PRIMARY,
                    vec![json!({"kind": "http_error", "error": error, "echo_credential": true})],
                ),
                (
                    SECONDARY,
                    vec![
                        json!({"kind": "completion", "chunks": [{"kind": "text", "delta": "ok"}]}),
                    ],
                ),
            ],
        );
        request["routing"] =
            json!({"allow_fallback": true, "provider_order": [PRIMARY, SECONDARY]});
        let (frames, kinds) = run(&base, &request).await;
        assert_eq!(
            kinds,
            [
                "execution.accepted",
                "route.selected",
                "route.attempt_failed",
                "route.selected",
                "output.delta",
                "execution.completed"
            ],
            "{error}"
        );
        let failure = &frames[2].data["error"];
        assert_eq!(failure["code"], code, "{error}");
        assert_eq!(failure["provider_code"], status, "{error}");
        assert_eq!(failure["retryable"], true, "{error}");
        assert_eq!(frames[3].data["target"]["provider"], SECONDARY);
        providers
            .assert_called_exactly(&script_id, PRIMARY, 1)
            .unwrap();
        providers
            .assert_called_exactly(&script_id, SECONDARY, 1)
            .unwrap();
    }
    runtime.shutdown().await;
    providers.shutdown().await;
}

#[tokio::test]
async fn a_failure_after_output_is_final() {
    let providers = fakes().await;
    let mut request = scripted(
        &providers,
        "responses-failed-after-output",
        vec![
            (
                PRIMARY,
                vec![json!({
                    "kind": "completion",
                    "chunks": [{"kind": "text", "delta": "partial"}, {"kind": "text", "delta": " more"}],
                    "stream_fault": {"kind": "in_band_error", "after_chunks": 1,
                                     "echo_credential": true}
                })],
            ),
            (
                SECONDARY,
                vec![json!({"kind": "completion", "chunks": [{"kind": "text", "delta": "ok"}]})],
            ),
        ],
    );
    request["routing"] = json!({"allow_fallback": true, "provider_order": [PRIMARY, SECONDARY]});
    let runtime = runtime_over(&providers).await;
    let base = runtime.base_url();
    let (frames, kinds) = run(&base, &request).await;
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
    providers
        .assert_called_exactly("responses-failed-after-output", SECONDARY, 0)
        .unwrap();
    let id = frames[0].data["execution_id"].as_str().unwrap();
    let (_, snapshot) = get_json(&format!("{base}/v1/executions/{id}")).await;
    assert_eq!(snapshot["status"], "failed");
    assert_eq!(snapshot["result"]["outputs"][0]["text"], "partial");
    runtime.shutdown().await;
    providers.shutdown().await;
}

#[tokio::test]
async fn an_incomplete_response_fails_after_reporting_its_usage() {
    let providers = fakes().await;
    let request = scripted(
        &providers,
        "responses-incomplete",
        vec![(
            PRIMARY,
            vec![json!({
                "kind": "completion",
                "finish_reason": "length",
                "chunks": [{"kind": "text", "delta": "cut sh"}],
                "usage": {"input_tokens": 9, "output_tokens": 16}
            })],
        )],
    );
    let runtime = runtime_over(&providers).await;
    let base = runtime.base_url();
    let (frames, kinds) = run(&base, &request).await;
    assert_eq!(
        kinds,
        [
            "execution.accepted",
            "route.selected",
            "output.delta",
            "usage.reported",
            "execution.failed"
        ]
    );
    assert_eq!(frames[3].data["facts"][1]["quantity"], 16.0);
    let error = &frames[4].data["error"];
    assert_eq!(error["retryable"], false);
    assert_eq!(error["code"], "provider_unavailable");
    runtime.shutdown().await;
    providers.shutdown().await;
}
