//! Shared helpers of the surface-X integration tests: a runtime on 127.0.0.1:0 configured
//! against wiremock providers, provider wire bodies, and an incremental SSE reader.

use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;
use futures::{Stream, StreamExt};
use reference_runtime::clock::{Clock, SystemClock};
use reference_runtime::config::{Config, ModelConfig, ProviderConfig, ProviderKind};
use reference_runtime::defects::Defects;
use reference_runtime::redact::CredentialSource;
use reference_runtime::runtime::{RunningRuntime, RuntimeOptions, start};
use serde_json::{Value, json};
use spec::execution::Modality;
use wiremock::MockServer;

/// The credential every fake provider is configured with.
pub const CANARY: &str = "sk-canary-5d1f0c9e7a";
/// The name of the variable holding it.
pub const CANARY_ENV: &str = "TEST_PROVIDER_KEY";

/// A model entry.
pub fn model(name: &str, ability: &str) -> ModelConfig {
    ModelConfig {
        model: name.into(),
        abilities: vec![ability.into()],
        input_modalities: vec![Modality::Text, Modality::Json],
        output_modalities: vec![Modality::Text],
        stream: true,
        tools: true,
        structured_output: false,
        asynchronous: false,
        cancel: true,
    }
}

/// A provider entry.
pub fn provider(id: &str, kind: ProviderKind, base_url: &str) -> ProviderConfig {
    let models = match kind {
        ProviderKind::AsyncMedia => vec![ModelConfig {
            output_modalities: vec![Modality::Image],
            stream: false,
            tools: false,
            asynchronous: true,
            ..model("fal-ai/flux", "image-generation")
        }],
        ProviderKind::AnthropicMessages => vec![model("claude-test", "text-generation")],
        ProviderKind::OpenaiChat | ProviderKind::OpenaiResponses => {
            vec![model("gpt-test", "text-generation")]
        }
    };
    ProviderConfig {
        id: id.into(),
        kind,
        base_url: base_url.into(),
        credential_env: CANARY_ENV.into(),
        models,
    }
}

/// A configuration with these providers and a short keep-alive.
pub fn config(providers: Vec<ProviderConfig>) -> Config {
    let mut config = Config {
        providers,
        ..Config::default()
    };
    config.limits.async_poll_interval_ms = 10;
    config
}

/// Options with the canary credential in memory.
pub fn options(config: Config, defects: Defects) -> RuntimeOptions {
    RuntimeOptions {
        config,
        defects,
        clock: Arc::new(SystemClock),
        credentials: CredentialSource::from_pairs([(CANARY_ENV, CANARY)]),
    }
}

/// Starts a runtime on 127.0.0.1:0.
pub async fn start_with(options: RuntimeOptions) -> RunningRuntime {
    start("127.0.0.1:0".parse().unwrap(), options)
        .await
        .expect("runtime starts")
}

/// Starts a clean runtime over these providers.
pub async fn runtime(providers: Vec<ProviderConfig>) -> RunningRuntime {
    start_with(options(config(providers), Defects::none())).await
}

/// Starts a runtime with a clock.
pub async fn runtime_with_clock(
    providers: Vec<ProviderConfig>,
    clock: Arc<dyn Clock>,
) -> RunningRuntime {
    let mut options = options(config(providers), Defects::none());
    options.clock = clock;
    start_with(options).await
}

/// One OpenAI chat.completion.chunk.
pub fn openai_chunk(delta: Value, finish: Option<&str>) -> Value {
    json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-test",
           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], "usage": null})
}

/// An OpenAI stream body from chunks, with the usage chunk and `[DONE]`.
pub fn openai_stream(chunks: &[Value], usage: Option<Value>, done: bool) -> String {
    let mut body = String::new();
    for chunk in chunks {
        body.push_str(&format!("data: {chunk}\n\n"));
    }
    if let Some(usage) = usage {
        let chunk = json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
                           "model": "gpt-test", "choices": [], "usage": usage});
        body.push_str(&format!("data: {chunk}\n\n"));
    }
    if done {
        body.push_str("data: [DONE]\n\n");
    }
    body
}

/// An OpenAI text stream: one delta per text, then stop, usage and `[DONE]`.
pub fn openai_text(texts: &[&str]) -> String {
    let mut chunks = vec![openai_chunk(
        json!({"role": "assistant", "content": ""}),
        None,
    )];
    chunks.extend(
        texts
            .iter()
            .map(|t| openai_chunk(json!({"content": t}), None)),
    );
    chunks.push(openai_chunk(json!({}), Some("stop")));
    openai_stream(
        &chunks,
        Some(
            json!({"prompt_tokens": 12, "completion_tokens": texts.len(), "total_tokens": 12 + texts.len(),
                    "prompt_tokens_details": {"cached_tokens": 4}}),
        ),
        true,
    )
}

/// A 200 `text/event-stream` answer.
pub fn sse_answer(body: String) -> wiremock::ResponseTemplate {
    wiremock::ResponseTemplate::new(200)
        .insert_header("content-type", "text/event-stream")
        .set_body_string(body)
}

/// Mounts an OpenAI chat endpoint answering `template` (expected `times` calls).
pub async fn mount_openai(server: &MockServer, template: wiremock::ResponseTemplate, times: u64) {
    use wiremock::matchers::{header, method, path};
    wiremock::Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(header("authorization", format!("Bearer {CANARY}").as_str()))
        .respond_with(template)
        .expect(times)
        .mount(server)
        .await;
}

/// The minimal text request.
pub fn text_request(text: &str) -> Value {
    json!({"ability": "text-generation", "input": [{"type": "text", "text": text}]})
}

/// POSTs an execution request; returns status and JSON body.
pub async fn create(base: &str, body: &Value, key: Option<&str>) -> (u16, Value) {
    let mut request = reqwest::Client::new()
        .post(format!("{base}/v1/executions"))
        .json(body);
    if let Some(key) = key {
        request = request.header("idempotency-key", key);
    }
    let response = request.send().await.expect("POST answers");
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// GETs JSON.
pub async fn get_json(url: &str) -> (u16, Value) {
    let response = reqwest::get(url).await.expect("GET answers");
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// One SSE frame as a client sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    pub id: Option<String>,
    pub event: Option<String>,
    pub data: Value,
}

impl Frame {
    /// The event's `type`.
    pub fn kind(&self) -> &str {
        self.data["type"].as_str().unwrap_or("")
    }
}

/// An incremental SSE reader over a response.
pub struct SseStream {
    body: Pin<Box<dyn Stream<Item = reqwest::Result<Bytes>> + Send>>,
    buffer: String,
    /// `:` comment blocks seen so far.
    pub comments: usize,
}

impl SseStream {
    /// Opens the events stream of an execution with an optional query and Last-Event-ID.
    pub async fn open(
        base: &str,
        id: &str,
        query: &str,
        last_event_id: Option<&str>,
    ) -> reqwest::Response {
        let mut request =
            reqwest::Client::new().get(format!("{base}/v1/executions/{id}/events{query}"));
        if let Some(last) = last_event_id {
            request = request.header("last-event-id", last);
        }
        request.send().await.expect("events answer")
    }

    /// Wraps a 200 response.
    pub fn new(response: reqwest::Response) -> Self {
        assert_eq!(response.status(), 200);
        assert!(
            response.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with("text/event-stream")
        );
        SseStream {
            body: Box::pin(response.bytes_stream()),
            buffer: String::new(),
            comments: 0,
        }
    }

    /// The next frame; `None` when the server closed the stream.
    pub async fn next(&mut self) -> Option<Frame> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let mut frame = (None, None, String::new());
                let mut only_comments = true;
                for line in block.lines() {
                    if line.is_empty() || line.starts_with(':') {
                        continue;
                    }
                    only_comments = false;
                    if let Some(v) = line.strip_prefix("id: ") {
                        frame.0 = Some(v.to_string());
                    } else if let Some(v) = line.strip_prefix("event: ") {
                        frame.1 = Some(v.to_string());
                    } else if let Some(v) = line.strip_prefix("data: ") {
                        frame.2.push_str(v);
                    }
                }
                if only_comments {
                    self.comments += 1;
                    continue;
                }
                return Some(Frame {
                    id: frame.0,
                    event: frame.1,
                    data: serde_json::from_str(&frame.2)
                        .unwrap_or_else(|e| panic!("data is not JSON ({e}): {block:?}")),
                });
            }
            match self.body.next().await {
                Some(Ok(chunk)) => self.buffer.push_str(std::str::from_utf8(&chunk).unwrap()),
                Some(Err(error)) => panic!("stream broke: {error}"),
                None => {
                    assert!(
                        self.buffer.trim().is_empty(),
                        "partial frame at close: {:?}",
                        self.buffer
                    );
                    return None;
                }
            }
        }
    }

    /// Every remaining frame until the server closes.
    pub async fn rest(&mut self) -> Vec<Frame> {
        let mut frames = Vec::new();
        while let Some(frame) = self.next().await {
            frames.push(frame);
        }
        frames
    }

    /// Reads until a frame of `kind` arrives (panics if the stream closes first).
    pub async fn until(&mut self, kind: &str) -> Vec<Frame> {
        let mut frames = Vec::new();
        loop {
            let frame = self
                .next()
                .await
                .unwrap_or_else(|| panic!("closed before {kind}: {frames:?}"));
            let done = frame.kind() == kind;
            frames.push(frame);
            if done {
                return frames;
            }
        }
    }
}

/// The whole log of an execution (waits for the terminal event).
pub async fn events(base: &str, id: &str) -> Vec<Frame> {
    SseStream::new(SseStream::open(base, id, "", None).await)
        .rest()
        .await
}

/// Checks the protocol's invariants on a complete log and returns the event types.
pub fn check_log(frames: &[Frame], id: &str) -> Vec<String> {
    let validator = spec::schema::validator(spec::schema::Published::ExecutionEvent);
    for (i, frame) in frames.iter().enumerate() {
        let expected = i as u64 + 1;
        assert_eq!(frame.data["sequence"], expected, "sequence of {frame:?}");
        assert_eq!(frame.id.as_deref(), Some(expected.to_string().as_str()));
        assert_eq!(frame.event.as_deref(), Some(frame.kind()));
        assert_eq!(frame.data["execution_id"], id);
        let errors: Vec<String> = validator
            .iter_errors(&frame.data)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{frame:?}: {errors:?}");
        let raw = frame.data.to_string();
        assert!(!raw.contains(CANARY), "credential in event {raw}");
    }
    let kinds: Vec<String> = frames.iter().map(|f| f.kind().to_string()).collect();
    assert_eq!(
        kinds.first().map(String::as_str),
        Some("execution.accepted")
    );
    let terminals = kinds
        .iter()
        .filter(|k| *k == "execution.completed" || *k == "execution.failed")
        .count();
    assert_eq!(terminals, 1, "{kinds:?}");
    assert!(kinds.last().unwrap().starts_with("execution."), "{kinds:?}");
    kinds
}
