//! Shared helpers: a server with the default instances plus timing-capable ones, unique
//! script ids, and requests shaped like a host's.

use std::sync::atomic::{AtomicU64, Ordering};

use mock_provider::{
    Backend, CallBehaviour, FakeProviders, FakeProvidersConfig, ProviderInstance, ProviderKind,
    Script, marker,
};
use serde_json::{Value, json};

/// The canary every test server accepts.
pub const CANARY: &str = "sk-canary-test-7f3a9c";

/// The default instance set plus `anthropic-timing`, `media-timing` and `responses-timing` on
/// the streaming backend.
pub async fn start() -> FakeProviders {
    let mut instances = ProviderInstance::default_set();
    instances.push(ProviderInstance::new(
        "anthropic-timing",
        ProviderKind::AnthropicMessages,
        Backend::Streaming,
    ));
    instances.push(ProviderInstance::new(
        "media-timing",
        ProviderKind::AsyncMedia,
        Backend::Streaming,
    ));
    instances.push(ProviderInstance::new(
        "responses-timing",
        ProviderKind::OpenaiResponses,
        Backend::Streaming,
    ));
    FakeProviders::start(FakeProvidersConfig::new(CANARY).with_instances(instances))
        .await
        .expect("fake providers start")
}

/// A script id unique in this test process.
pub fn unique_id(prefix: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    format!("{prefix}-{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// Registers a one-instance script and returns its id.
pub fn register(
    providers: &FakeProviders,
    instance: &str,
    behaviours: Vec<CallBehaviour>,
) -> String {
    let id = unique_id(instance);
    providers
        .register(Script {
            id: id.clone(),
            calls: [(instance.to_owned(), behaviours)].into_iter().collect(),
        })
        .expect("script registers");
    id
}

/// Parses a behaviour from JSON (the way case files write them).
pub fn behaviour(json: Value) -> CallBehaviour {
    serde_json::from_value(json).expect("behaviour parses")
}

/// A plain HTTP client.
pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("client builds")
}

/// An OpenAI Chat Completions request carrying the script's marker.
pub fn openai_body(script_id: &str, stream: bool, include_usage: bool) -> Value {
    let mut body = json!({
        "model": "gpt-test",
        "messages": [{"role": "user", "content": format!("Say hi. {}", marker(script_id))}],
        "stream": stream,
    });
    if include_usage {
        body["stream_options"] = json!({"include_usage": true});
    }
    body
}

/// An OpenAI Responses request carrying the script's marker.
pub fn responses_body(script_id: &str, stream: bool) -> Value {
    json!({
        "model": "gpt-test",
        "input": [{"role": "user", "content": [
            {"type": "input_text", "text": format!("Say hi. {}", marker(script_id))}
        ]}],
        "stream": stream,
    })
}

/// An Anthropic Messages request carrying the script's marker.
pub fn anthropic_body(script_id: &str, stream: bool) -> Value {
    json!({
        "model": "claude-test",
        "max_tokens": 256,
        "messages": [{"role": "user", "content": format!("Say hi. {}", marker(script_id))}],
        "stream": stream,
    })
}

/// Sends an authenticated request to the instance's endpoint for its kind.
pub async fn send(
    providers: &FakeProviders,
    instance: &str,
    body: &Value,
) -> reqwest::Result<reqwest::Response> {
    let base = providers.base_url(instance).expect("known instance");
    let kind = providers
        .instances()
        .iter()
        .find(|known| known.name == instance)
        .map(|known| known.kind)
        .expect("known instance");
    let request = match kind {
        ProviderKind::OpenaiChat => client()
            .post(format!("{base}/v1/chat/completions"))
            .bearer_auth(CANARY),
        ProviderKind::OpenaiResponses => client()
            .post(format!("{base}/v1/responses"))
            .bearer_auth(CANARY),
        ProviderKind::AnthropicMessages => client()
            .post(format!("{base}/v1/messages"))
            .header("x-api-key", CANARY)
            .header("anthropic-version", "2023-06-01"),
        ProviderKind::AsyncMedia => client()
            .post(format!("{base}/fal-ai/test-model"))
            .header("authorization", format!("Key {CANARY}")),
    };
    request.json(body).send().await
}

/// The request body appropriate for an instance kind.
pub fn body_for(providers: &FakeProviders, instance: &str, script_id: &str, stream: bool) -> Value {
    let kind = providers
        .instances()
        .iter()
        .find(|known| known.name == instance)
        .map(|known| known.kind)
        .expect("known instance");
    match kind {
        ProviderKind::AnthropicMessages => anthropic_body(script_id, stream),
        ProviderKind::OpenaiResponses => responses_body(script_id, stream),
        ProviderKind::AsyncMedia => json!({"prompt": format!("a cat {}", marker(script_id))}),
        _ => openai_body(script_id, stream, true),
    }
}
