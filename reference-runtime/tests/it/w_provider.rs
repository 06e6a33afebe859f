//! Surface W through the composition root: the AI node calling a configured (fake) provider
//! with surface X's adapters (`configurable.ai.provider`), and surface W merged with surface X.

use std::sync::Arc;

use crate::w_host::*;
use reference_runtime::clock::SystemClock;
use reference_runtime::config::{Config, ModelConfig, ProviderConfig, ProviderKind};
use reference_runtime::defects::Defects;
use reference_runtime::redact::CredentialSource;
use reference_runtime::runtime::{RunningRuntime, RuntimeOptions, start};
use serde_json::{Value, json};
use spec::execution::Modality;
use wiremock::matchers::{body_string_contains, header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const CANARY: &str = "sk-w-canary-31c0ffee";

async fn runtime(base_url: &str) -> RunningRuntime {
    let config = Config {
        providers: vec![ProviderConfig {
            id: "openai-primary".into(),
            kind: ProviderKind::OpenaiChat,
            base_url: base_url.into(),
            credential_env: "W_TEST_KEY".into(),
            models: vec![ModelConfig {
                model: "gpt-test".into(),
                abilities: vec!["text-generation".into()],
                input_modalities: vec![Modality::Text],
                output_modalities: vec![Modality::Text],
                stream: true,
                tools: true,
                structured_output: false,
                asynchronous: false,
                cancel: true,
            }],
        }],
        ..Config::default()
    };
    let options = RuntimeOptions {
        config,
        defects: Defects::none(),
        clock: Arc::new(SystemClock),
        credentials: CredentialSource::from_pairs([("W_TEST_KEY", CANARY)]),
    };
    start("127.0.0.1:0".parse().unwrap(), options)
        .await
        .unwrap()
}

fn chunk(delta: Value, finish: Option<&str>) -> String {
    let chunk = json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "gpt-test",
                       "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    format!("data: {chunk}\n\n")
}

fn text_stream(texts: &[&str]) -> String {
    let mut body = chunk(json!({"role": "assistant", "content": ""}), None);
    for text in texts {
        body.push_str(&chunk(json!({"content": text}), None));
    }
    body.push_str(&chunk(json!({}), Some("stop")));
    let usage = json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "gpt-test",
                       "choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}});
    body.push_str(&format!("data: {usage}\n\ndata: [DONE]\n\n"));
    body
}

async fn log_of(base: &str, run_id: &str) -> Vec<Value> {
    let client = reqwest::Client::new();
    loop {
        let url = format!("{base}{}/events/poll?timeout=60", run_path(run_id));
        let body: Value = client
            .get(url)
            .bearer_auth(KEY_A)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if body["isTerminal"] == true {
            let events = body["events"].as_array().unwrap().clone();
            for event in &events {
                validate_event(event);
                assert!(!event.to_string().contains(CANARY), "credential in {event}");
            }
            return events;
        }
        let last = body["lastSequence"].as_i64().unwrap();
        let url = format!(
            "{base}{}/events/poll?afterSequence={last}&timeout=60",
            run_path(run_id)
        );
        client.get(url).bearer_auth(KEY_A).send().await.unwrap();
    }
}

async fn create(base: &str, body: Value) -> String {
    let response = reqwest::Client::new()
        .post(format!("{base}/runs"))
        .bearer_auth(KEY_A)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    response.json::<Value>().await.unwrap()["runId"]
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn the_ai_node_streams_through_a_configured_provider() {
    let provider = MockServer::builder().start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(header("authorization", format!("Bearer {CANARY}").as_str()))
        .and(body_string_contains("[[script:w-1]] say hi"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-type", "text/event-stream")
                .set_body_string(text_stream(&["Hi", " there", "!"])),
        )
        .expect(1)
        .mount(&provider)
        .await;
    let runtime = runtime(&provider.uri()).await;
    let base = runtime.base_url();
    let run_id = create(
        &base,
        json!({"workflowId": "conformance-stream-text", "inputs": {"prompt": "[[script:w-1]] say hi"},
               "configurable": {"version": 1, "ai": {"provider": "openai-primary", "model": "gpt-test"}}}),
    )
    .await;
    let log = log_of(&base, &run_id).await;
    let types = types(&log);
    assert_eq!(types.last().unwrap(), "run.completed", "{log:?}");
    let chunks: Vec<&Value> = log.iter().filter(|e| e["type"] == "output.chunk").collect();
    let text: String = chunks
        .iter()
        .map(|c| c["payload"]["chunk"].as_str().unwrap())
        .collect();
    assert_eq!(text, "Hi there!");
    let last = &chunks.last().unwrap()["payload"];
    assert_eq!(last["isLast"], true);
    assert_eq!(last["meta"]["finishReason"], "stop");
    assert_eq!(last["meta"]["model"], "gpt-test");
    assert_eq!(last["meta"]["usage"]["promptTokens"], 12);
    assert_eq!(last["meta"]["usage"]["completionTokens"], 3);
    let usage: Vec<&Value> = log
        .iter()
        .filter(|e| e["type"] == "provider.usage")
        .collect();
    assert_eq!(usage.len(), 1, "exactly one per provider call");
    assert_eq!(usage[0]["payload"]["provider"], "openai-primary");
    assert_eq!(usage[0]["payload"]["inputTokens"], 12);
    assert_eq!(usage[0]["payload"]["outputTokens"], 3);
    let position = |t: &str| types.iter().position(|x| x == t).unwrap();
    assert!(position("provider.usage") < position("node.completed"));
    runtime.shutdown().await;
    provider.verify().await;
}

#[tokio::test]
async fn a_failing_provider_fails_the_node_and_the_run() {
    let provider = MockServer::builder().start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(400).set_body_string(format!("bad key {CANARY}")))
        .mount(&provider)
        .await;
    let runtime = runtime(&provider.uri()).await;
    let base = runtime.base_url();
    let run_id = create(
        &base,
        json!({"workflowId": "conformance-stream-text",
               "configurable": {"version": 1, "ai": {"provider": "openai-primary"}}}),
    )
    .await;
    let log = log_of(&base, &run_id).await;
    assert_eq!(
        types(&log),
        [
            "run.started",
            "node.started",
            "provider.usage",
            "node.failed",
            "run.failed"
        ]
    );
    runtime.shutdown().await;
}

#[tokio::test]
async fn unknown_providers_and_models_are_refused_and_surface_x_still_answers() {
    let provider = MockServer::builder().start().await;
    let runtime = runtime(&provider.uri()).await;
    let base = runtime.base_url();
    let client = reqwest::Client::new();
    for ai in [
        json!({"provider": "nope"}),
        json!({"provider": "openai-primary", "model": "nope"}),
    ] {
        let response = client
            .post(format!("{base}/runs"))
            .bearer_auth(KEY_A)
            .json(&json!({"workflowId": "conformance-stream-text", "configurable": {"version": 1, "ai": ai}}))
            .send()
            .await
            .unwrap();
        let body = expect_error(response, 400, "validation_error").await;
        assert_eq!(body["details"]["providers"], json!(["openai-primary"]));
    }
    let discovery = client
        .get(format!("{base}/.well-known/openwop"))
        .send()
        .await
        .unwrap();
    assert_eq!(discovery.status(), 200);
    let providers = client
        .get(format!("{base}/v1/providers"))
        .send()
        .await
        .unwrap();
    assert_eq!(providers.status(), 200, "surface X is merged alongside");
    runtime.shutdown().await;
}
