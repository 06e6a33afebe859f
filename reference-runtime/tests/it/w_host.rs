//! Shared helpers of the surface-W integration tests: the surface-W router served on
//! 127.0.0.1:0 over a memory store, HTTP helpers, a strict incremental SSE reader, and schema
//! validation of every event a test sees.

use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;
use futures::{Stream, StreamExt};
use reference_runtime::clock::SystemClock;
use reference_runtime::defects::{Defect, Defects};
use reference_runtime::log::LogHub;
use reference_runtime::openwop::{self, OpenWopConfig};
use reference_runtime::store::{EventStore, MemoryEventStore};
use serde_json::{Value, json};
use spec::schema::{Published, validate, validate_run_event_payload};

/// The default test key of tenant A.
pub const KEY_A: &str = "hk_test_openwop_tenant_a";
/// The default test key of tenant B.
pub const KEY_B: &str = "hk_test_openwop_tenant_b";

/// A surface-W host on a socket.
pub struct Host {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// A client.
    pub client: reqwest::Client,
    /// The hub (to look at logs directly when a test must).
    pub hub: Arc<LogHub>,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for Host {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// A clean host with the default configuration.
pub async fn host() -> Host {
    host_with(OpenWopConfig::default(), &[]).await
}

/// A host with a configuration and defects.
pub async fn host_with(config: OpenWopConfig, defects: &[Defect]) -> Host {
    host_on(Arc::new(MemoryEventStore::new()), config, defects).await
}

/// A host over a given store (two hosts over one store model a restart with a durable store).
pub async fn host_on(
    store: Arc<dyn EventStore>,
    config: OpenWopConfig,
    defects: &[Defect],
) -> Host {
    let hub = Arc::new(LogHub::new(store, Arc::new(SystemClock)));
    let router = openwop::router(openwop::Dependencies {
        hub: Arc::clone(&hub),
        defects: Arc::new(Defects::of(defects.iter().copied()).into()),
        config: Arc::new(config),
        providers: None,
    });
    serve(router, hub).await
}

/// Serves a router.
pub async fn serve(router: axum::Router, hub: Arc<LogHub>) -> Host {
    use axum::serve::ListenerExt;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    // TCP_NODELAY: small SSE frames leave at once (Nagle would hold them for an ACK, during
    // which paused virtual time would race ahead).
    let listener = listener.tap_io(|stream| {
        let _ = stream.set_nodelay(true);
    });
    let server = tokio::spawn(async move {
        axum::serve(listener, router).await.unwrap();
    });
    Host {
        base: format!("http://{addr}"),
        client: reqwest::Client::builder()
            .tcp_nodelay(true)
            .build()
            .unwrap(),
        hub,
        server,
    }
}

/// `/runs/<run id with ~2F>`.
pub fn run_path(run_id: &str) -> String {
    format!("/runs/{}", spec::openwop::encode_run_id_for_path(run_id))
}

impl Host {
    /// An absolute URL.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// A GET with a key and extra headers.
    pub async fn get(
        &self,
        path: &str,
        key: Option<&str>,
        headers: &[(&str, &str)],
    ) -> reqwest::Response {
        let mut request = self.client.get(self.url(path));
        if let Some(key) = key {
            request = request.bearer_auth(key);
        }
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.send().await.unwrap()
    }

    /// A POST of JSON with a key.
    pub async fn post(&self, path: &str, key: Option<&str>, body: &Value) -> reqwest::Response {
        let mut request = self.client.post(self.url(path)).json(body);
        if let Some(key) = key {
            request = request.bearer_auth(key);
        }
        request.send().await.unwrap()
    }

    /// Creates a run as tenant A and returns its id (asserts 201).
    pub async fn create(&self, body: Value) -> String {
        self.create_as(KEY_A, body).await
    }

    /// Creates a run with a key and returns its id (asserts 201).
    pub async fn create_as(&self, key: &str, body: Value) -> String {
        let response = self.post("/runs", Some(key), &body).await;
        let status = response.status();
        let body: Value = response.json().await.unwrap();
        assert_eq!(status, 201, "create failed: {body}");
        validate_doc(Published::CreateRunResponse, &body);
        body["runId"].as_str().unwrap().to_string()
    }

    /// Creates a run of a fixture with no options.
    pub async fn create_fixture(&self, workflow_id: &str) -> String {
        self.create(json!({ "workflowId": workflow_id })).await
    }

    /// One poll (validates the closed response and every event).
    pub async fn poll(&self, run_id: &str, query: &str) -> Value {
        let response = self
            .get(
                &format!("{}/events/poll?{query}", run_path(run_id)),
                Some(KEY_A),
                &[],
            )
            .await;
        assert_eq!(response.status(), 200);
        let body: Value = response.json().await.unwrap();
        validate_doc(Published::PollResponse, &body);
        for event in body["events"].as_array().unwrap() {
            validate_event(event);
        }
        body
    }

    /// Waits (long-polling, no sleeps) until the run is terminal; returns its whole log.
    pub async fn finished_log(&self, run_id: &str) -> Vec<Value> {
        loop {
            let body = self.poll(run_id, "timeout=60").await;
            if body["isTerminal"] == true {
                return body["events"].as_array().unwrap().clone();
            }
            let last = body["lastSequence"].as_i64().unwrap();
            if last >= 0 {
                let _ = self
                    .poll(run_id, &format!("afterSequence={last}&timeout=60"))
                    .await;
            }
        }
    }

    /// Waits until the run's log holds an event of `event_type`; returns the log so far.
    pub async fn wait_for(&self, run_id: &str, event_type: &str) -> Vec<Value> {
        let mut after: Option<i64> = None;
        let mut log: Vec<Value> = Vec::new();
        loop {
            let query = match after {
                Some(a) => format!("afterSequence={a}&timeout=60"),
                None => "timeout=60".to_string(),
            };
            let body = self.poll(run_id, &query).await;
            let events = body["events"].as_array().unwrap().clone();
            if let Some(last) = events.last() {
                after = last["sequence"].as_i64();
            }
            log.extend(events);
            if log.iter().any(|e| e["type"] == event_type) {
                return log;
            }
            assert!(
                body["isTerminal"] != true,
                "run ended without {event_type}: {log:?}"
            );
        }
    }

    /// Opens an event stream.
    pub async fn stream(
        &self,
        run_id: &str,
        query: &str,
        headers: &[(&str, &str)],
    ) -> reqwest::Response {
        self.get(
            &format!("{}/events{query}", run_path(run_id)),
            Some(KEY_A),
            headers,
        )
        .await
    }
}

/// Validates a document against a published schema (panics with the violations).
pub fn validate_doc(published: Published, doc: &Value) {
    if let Err(violations) = validate(published, doc) {
        panic!("{published:?} violation: {violations:?}\n{doc}");
    }
}

/// Validates a RunEventDoc and its payload against the published schemas.
pub fn validate_event(event: &Value) {
    validate_doc(Published::RunEvent, event);
    let event_type = event["type"].as_str().unwrap();
    if let Err(violations) = validate_run_event_payload(event_type, &event["payload"]) {
        panic!("payload of {event_type} invalid: {violations:?}\n{event}");
    }
}

/// The event types of a log, in order.
pub fn types(log: &[Value]) -> Vec<String> {
    log.iter()
        .map(|e| e["type"].as_str().unwrap().to_string())
        .collect()
}

/// One SSE item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    /// A frame.
    Frame(Frame),
    /// A `:` comment line.
    Comment(String),
}

/// One SSE frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// `id:`.
    pub id: Option<String>,
    /// `event:`.
    pub event: Option<String>,
    /// `data:` (lines joined with `\n`).
    pub data: String,
}

impl Frame {
    /// `data:` as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.data).unwrap()
    }

    /// `id:` as a number.
    pub fn seq(&self) -> u64 {
        self.id.as_deref().unwrap().parse().unwrap()
    }
}

/// An incremental SSE reader over a response body.
pub struct SseReader {
    body: Pin<Box<dyn Stream<Item = reqwest::Result<Bytes>> + Send>>,
    buffer: String,
    /// Whether every frame is validated as a run-event-stream frame.
    validate: bool,
}

impl SseReader {
    /// Reads a 200 `text/event-stream` run event stream, validating every frame.
    pub fn new(response: reqwest::Response) -> Self {
        Self::open(response, true)
    }

    /// Reads a stream whose frames are not run events (host events) or may be invalid (a
    /// defective host): no validation.
    pub fn unchecked(response: reqwest::Response) -> Self {
        Self::open(response, false)
    }

    fn open(response: reqwest::Response, validate: bool) -> Self {
        assert_eq!(response.status(), 200);
        let content_type = response.headers()["content-type"]
            .to_str()
            .unwrap()
            .to_string();
        assert!(
            content_type.starts_with("text/event-stream"),
            "{content_type}"
        );
        SseReader {
            body: Box::pin(response.bytes_stream()),
            buffer: String::new(),
            validate,
        }
    }

    /// The next frame or comment; `None` when the server closed the stream.
    pub async fn next_item(&mut self) -> Option<Item> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let mut frame = Frame {
                    id: None,
                    event: None,
                    data: String::new(),
                };
                let mut data_lines = Vec::new();
                let mut comment = None;
                for line in block.lines().filter(|l| !l.is_empty()) {
                    if let Some(text) = line.strip_prefix(':') {
                        comment = Some(text.trim().to_string());
                    } else if let Some(v) = line.strip_prefix("id:") {
                        frame.id = Some(v.trim_start().to_string());
                    } else if let Some(v) = line.strip_prefix("event:") {
                        frame.event = Some(v.trim_start().to_string());
                    } else if let Some(v) = line.strip_prefix("data:") {
                        data_lines.push(v.strip_prefix(' ').unwrap_or(v).to_string());
                    } else {
                        panic!("unexpected SSE line {line:?}");
                    }
                }
                if data_lines.is_empty() && frame.id.is_none() && frame.event.is_none() {
                    if let Some(comment) = comment {
                        return Some(Item::Comment(comment));
                    }
                    continue;
                }
                frame.data = data_lines.join("\n");
                return Some(Item::Frame(frame));
            }
            match self.body.next().await {
                Some(Ok(bytes)) => self.buffer.push_str(std::str::from_utf8(&bytes).unwrap()),
                Some(Err(error)) => panic!("stream error: {error}"),
                None => {
                    assert!(
                        self.buffer.trim().is_empty(),
                        "stream ended mid-frame: {:?}",
                        self.buffer
                    );
                    return None;
                }
            }
        }
    }

    /// The next frame (skipping comments); `None` at the server's close.
    pub async fn next_frame(&mut self) -> Option<Frame> {
        loop {
            match self.next_item().await? {
                Item::Frame(frame) => {
                    if self.validate {
                        validate_frame(&frame);
                    }
                    return Some(frame);
                }
                Item::Comment(_) => continue,
            }
        }
    }

    /// Every frame until the server closes the stream.
    pub async fn frames_until_close(&mut self) -> Vec<Frame> {
        let mut frames = Vec::new();
        while let Some(frame) = self.next_frame().await {
            frames.push(frame);
        }
        frames
    }
}

/// Reads a whole stream (to the server's close) and validates every RunEventDoc in it.
pub async fn read_all(response: reqwest::Response) -> Vec<Frame> {
    let mut reader = SseReader::new(response);
    let frames = reader.frames_until_close().await;
    for frame in &frames {
        validate_frame(frame);
    }
    frames
}

/// Validates whatever a frame carries: a RunEventDoc, a batch of them, a snapshot or a chunk
/// payload.
pub fn validate_frame(frame: &Frame) {
    let data = frame.json();
    match frame.event.as_deref() {
        Some("batch") => {
            for event in data.as_array().unwrap() {
                validate_event(event);
            }
        }
        Some("state.snapshot") => validate_doc(Published::RunSnapshot, &data),
        Some("ai.message.chunk") => {
            if let Err(v) = validate_run_event_payload("output.chunk", &data) {
                panic!("chunk payload invalid: {v:?}");
            }
        }
        _ => validate_event(&data),
    }
}

/// Asserts a flat error envelope with `code` and returns it.
pub async fn expect_error(response: reqwest::Response, status: u16, code: &str) -> Value {
    assert_eq!(response.status(), status, "expected {status} {code}");
    assert_eq!(
        response.headers()["openwop-version"],
        "2.0",
        "OpenWOP-Version on an error"
    );
    let body: Value = response.json().await.unwrap();
    validate_doc(Published::OpenWopError, &body);
    assert_eq!(body["error"], code, "{body}");
    body
}
