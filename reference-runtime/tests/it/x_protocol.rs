//! Surface X over real HTTP: discovery, validation order, idempotency, every cursor rule, and
//! the SQLite store across a restart.

use std::sync::Arc;
use std::time::Duration;

use crate::x_host::*;
use chrono::TimeZone;
use reference_runtime::clock::ManualClock;
use reference_runtime::config::{ProviderKind, StoreKind};
use reference_runtime::defects::Defects;
use serde_json::{Value, json};
use wiremock::MockServer;

async fn finished_execution(base: &str) -> (String, Vec<Frame>) {
    let (_, submission) = create(base, &text_request("hi"), None).await;
    let id = submission["execution_id"].as_str().unwrap().to_string();
    let frames = events(base, &id).await;
    (id, frames)
}

#[tokio::test]
async fn runtime_and_providers_are_described_without_credentials() {
    let server = MockServer::builder().start().await;
    let runtime = runtime(vec![provider(
        "openai",
        ProviderKind::OpenaiChat,
        &server.uri(),
    )])
    .await;
    let base = runtime.base_url();
    let (status, info) = get_json(&format!("{base}/v1/runtime")).await;
    assert_eq!(status, 200);
    assert_eq!(info["state"], "ready");
    spec::schema::validate(spec::schema::Published::RuntimeInfo, &info).unwrap();
    let (status, manifests) = get_json(&format!("{base}/v1/providers")).await;
    assert_eq!(status, 200);
    spec::schema::validate(spec::schema::Published::ProviderManifests, &manifests).unwrap();
    assert_eq!(manifests["data"][0]["provider"], "openai");
    assert_eq!(manifests["data"][0]["models"][0]["tools"], true);
    assert!(!manifests.to_string().contains(CANARY));
    let (status, body) = get_json(&format!("{base}/v1/nothing-here")).await;
    assert_eq!(status, 404);
    assert_eq!(body["error"]["code"], "not_found");
    runtime.shutdown().await;
}

/// A body declared larger than the limit is refused without being parsed, and a client that is
/// still writing it reads the 400 (not a connection reset): repeated, since a host that closed
/// early would lose that race only some of the time.
#[tokio::test]
async fn an_oversized_body_is_refused_with_a_response_the_client_can_read() {
    let server = MockServer::builder().start().await;
    mount_openai(&server, sse_answer(openai_text(&["never"])), 0).await;
    let runtime = runtime(vec![provider(
        "openai",
        ProviderKind::OpenaiChat,
        &server.uri(),
    )])
    .await;
    let client = reqwest::Client::new();
    let url = format!("{}/v1/executions", runtime.base_url());
    let body = format!(
        "{{\"ability\": \"text-generation\", \"input\": [{{\"type\": \"text\", \"text\": \"{}\"}}]}}",
        "x".repeat(4 * 1024 * 1024)
    );
    for attempt in 0..8 {
        let response = client
            .post(&url)
            .header("content-type", "application/json")
            .body(body.clone())
            .send()
            .await
            .unwrap_or_else(|e| panic!("attempt {attempt}: no response: {e}"));
        assert_eq!(response.status(), 400, "attempt {attempt}");
        let error: Value = response.json().await.unwrap();
        assert_eq!(error["error"]["code"], "invalid_request");
    }
}

#[tokio::test]
async fn malformed_and_unsatisfiable_requests_are_refused_before_any_provider_call() {
    let server = MockServer::builder().start().await;
    mount_openai(&server, sse_answer(openai_text(&["never"])), 0).await;
    let runtime = runtime(vec![provider(
        "openai",
        ProviderKind::OpenaiChat,
        &server.uri(),
    )])
    .await;
    let base = runtime.base_url();
    let client = reqwest::Client::new();
    let url = format!("{base}/v1/executions");
    let post = |content_type: &'static str, body: String| {
        client
            .post(&url)
            .header("content-type", content_type)
            .body(body)
            .send()
    };
    let check = |response: reqwest::Response, status: u16| async move {
        assert_eq!(response.status(), status);
        let body: Value = response.json().await.unwrap();
        spec::schema::validate(spec::schema::Published::ExecutionError, &body).unwrap();
        body
    };
    let valid = text_request("SENSITIVE-PROMPT").to_string();
    check(post("text/plain", valid.clone()).await.unwrap(), 400).await;
    check(
        post("application/json", "{not json".into()).await.unwrap(),
        400,
    )
    .await;
    let oversized = json!({"ability": "text-generation", "input": [{"type": "text", "text": "x".repeat(1024 * 1024)}]});
    check(
        post("application/json", oversized.to_string())
            .await
            .unwrap(),
        400,
    )
    .await;
    for bad in [
        json!({"ability": "text-generation", "input": [{"type": "text", "text": "SENSITIVE-PROMPT"}], "surprise": 1}),
        json!({"ability": "text-generation", "input": []}),
        json!({"ability": "text-generation", "input": [{"type": "text", "text": "x"}], "deadline_ms": 0}),
        json!({"ability": "text-generation", "input": [{"type": "text", "text": "x"}], "routing": {"max_attempts": 33}}),
        json!({"ability": "text-generation", "input": [{"type": "text", "text": "x"}], "metadata": {"SENSITIVE-KEY": {"nested": true}}}),
    ] {
        let body = check(
            post("application/json", bad.to_string()).await.unwrap(),
            400,
        )
        .await;
        assert_eq!(body["error"]["code"], "invalid_request");
        let text = body.to_string();
        assert!(
            !text.contains("SENSITIVE") && !text.contains("surprise"),
            "{text}"
        );
    }
    let keyed = client
        .post(&url)
        .header("content-type", "application/json")
        .header("idempotency-key", "k".repeat(257))
        .body(valid.clone())
        .send()
        .await
        .unwrap();
    check(keyed, 400).await;
    let unsatisfiable = json!({"ability": "text-generation", "input": [{"type": "text", "text": "x"}],
                               "requirements": {"async": true}});
    let body = check(
        post("application/json", unsatisfiable.to_string())
            .await
            .unwrap(),
        422,
    )
    .await;
    assert_eq!(body["error"]["code"], "capability_unavailable");
    let unknown_ability =
        json!({"ability": "SENSITIVE-ABILITY", "input": [{"type": "text", "text": "x"}]});
    let body = check(
        post("application/json", unknown_ability.to_string())
            .await
            .unwrap(),
        422,
    )
    .await;
    assert!(!body.to_string().contains("SENSITIVE"));
    server.verify().await;
    runtime.shutdown().await;
}

#[tokio::test]
async fn idempotent_replay_mismatch_and_refusals() {
    let server = MockServer::builder().start().await;
    mount_openai(&server, sse_answer(openai_text(&["once"])), 1).await;
    let runtime = runtime(vec![provider(
        "openai",
        ProviderKind::OpenaiChat,
        &server.uri(),
    )])
    .await;
    let base = runtime.base_url();

    // A request refused at validation does not use up its key.
    let (status, _) = create(
        &base,
        &json!({"ability": "text-generation", "input": []}),
        Some("key-1"),
    )
    .await;
    assert_eq!(status, 400);
    let request = json!({"input": [{"type": "text", "text": "hi"}], "ability": "text-generation", "metadata": {"a": 1, "b": "x"}});
    let (status, first) = create(&base, &request, Some("key-1")).await;
    assert_eq!(status, 202);
    let id = first["execution_id"].as_str().unwrap();
    events(&base, id).await;

    // Same request with its keys in another order: a replay, the provider is not called again.
    let reordered = json!({"metadata": {"b": "x", "a": 1}, "ability": "text-generation", "input": [{"text": "hi", "type": "text"}]});
    let (status, replay) = create(&base, &reordered, Some("key-1")).await;
    assert_eq!(status, 200);
    assert_eq!(replay["execution_id"], id);
    assert_eq!(replay["idempotent_replay"], true);
    assert_eq!(replay["status"], "succeeded");
    assert_eq!(replay["created_at"], first["created_at"]);
    spec::schema::validate(spec::schema::Published::ExecutionSubmission, &replay).unwrap();

    // Same key, different request: 400 and nothing created.
    let (status, body) = create(&base, &text_request("ZEBRA-PROMPT"), Some("key-1")).await;
    assert_eq!(status, 400);
    assert_eq!(body["error"]["code"], "invalid_request");
    assert!(!body.to_string().contains("ZEBRA"));
    let (status, replay) = create(&base, &request, Some("key-1")).await;
    assert_eq!((status, replay["execution_id"].as_str()), (200, Some(id)));
    server.verify().await;
    runtime.shutdown().await;
}

#[tokio::test]
async fn sixteen_concurrent_duplicates_make_one_execution_and_one_provider_call() {
    let server = MockServer::builder().start().await;
    mount_openai(
        &server,
        sse_answer(openai_text(&["one"])).set_delay(Duration::from_millis(300)),
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
    let request = text_request("dup");
    let answers =
        futures::future::join_all((0..16).map(|_| create(&base, &request, Some("dup-key")))).await;
    let created = answers.iter().filter(|(s, _)| *s == 202).count();
    let replayed = answers
        .iter()
        .filter(|(s, b)| *s == 200 && b["idempotent_replay"] == true)
        .count();
    assert_eq!((created, replayed), (1, 15));
    let id = answers[0].1["execution_id"].as_str().unwrap();
    assert!(answers.iter().all(|(_, b)| b["execution_id"] == id));
    let frames = events(&base, id).await;
    check_log(&frames, id);
    server.verify().await;
    runtime.shutdown().await;
}

#[tokio::test]
async fn keys_are_kept_24_hours_after_the_terminal_event() {
    let server = MockServer::builder().start().await;
    mount_openai(&server, sse_answer(openai_text(&["x"])), 2).await;
    let clock = Arc::new(ManualClock::new(
        chrono::Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap(),
    ));
    let runtime = runtime_with_clock(
        vec![provider("openai", ProviderKind::OpenaiChat, &server.uri())],
        clock.clone(),
    )
    .await;
    let base = runtime.base_url();
    let request = text_request("retained");
    let (_, first) = create(&base, &request, Some("retained-key")).await;
    let id = first["execution_id"].as_str().unwrap();
    events(&base, id).await;
    clock.advance(chrono::Duration::hours(23));
    let (status, replay) = create(&base, &request, Some("retained-key")).await;
    assert_eq!((status, replay["execution_id"].as_str()), (200, Some(id)));
    clock.advance(chrono::Duration::hours(1));
    let (status, fresh) = create(&base, &request, Some("retained-key")).await;
    assert_eq!(status, 202);
    assert_ne!(fresh["execution_id"], id);
    events(&base, fresh["execution_id"].as_str().unwrap()).await;
    server.verify().await;
    runtime.shutdown().await;
}

#[tokio::test]
async fn cursors_after_and_last_event_id() {
    let server = MockServer::builder().start().await;
    mount_openai(&server, sse_answer(openai_text(&["a", "b", "c"])), 1).await;
    let runtime = runtime(vec![provider(
        "openai",
        ProviderKind::OpenaiChat,
        &server.uri(),
    )])
    .await;
    let base = runtime.base_url();
    let (id, all) = finished_execution(&base).await;
    assert_eq!(all.len(), 7);
    let sequences = |frames: Vec<Frame>| -> Vec<u64> {
        frames
            .iter()
            .map(|f| f.data["sequence"].as_u64().unwrap())
            .collect()
    };
    let read = |query: &'static str, last: Option<&'static str>| {
        let base = base.clone();
        let id = id.clone();
        async move {
            SseStream::new(SseStream::open(&base, &id, query, last).await)
                .rest()
                .await
        }
    };
    assert_eq!(sequences(read("?after=3", None).await), [4, 5, 6, 7]);
    assert_eq!(sequences(read("", Some("3")).await), [4, 5, 6, 7]);
    assert_eq!(
        sequences(read("?after=5", Some("2")).await),
        [6, 7],
        "after wins"
    );
    assert_eq!(
        sequences(read("?after=0", None).await),
        [1, 2, 3, 4, 5, 6, 7]
    );
    assert_eq!(sequences(read("?unknown=1", Some("6")).await), [7]);
    // At or past the end of a terminal execution: 200, an empty stream that closes.
    assert!(read("?after=7", None).await.is_empty());
    assert!(read("", Some("100")).await.is_empty());
    // A bad cursor is a JSON 400 before any SSE byte.
    for (query, last) in [
        ("?after=abc", None),
        ("?after=-1", None),
        ("?after=", None),
        ("", Some("1.5")),
        ("?after=x", Some("1")),
    ] {
        let response = SseStream::open(&base, &id, query, last).await;
        assert_eq!(response.status(), 400, "{query} {last:?}");
        assert!(
            response.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with("application/json")
        );
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["error"]["code"], "invalid_request");
    }
    let response = SseStream::open(&base, "no-such-execution", "", None).await;
    assert_eq!(response.status(), 404);
    runtime.shutdown().await;
}

#[tokio::test]
async fn a_cursor_at_the_end_of_a_live_execution_holds_the_stream_open_with_keep_alives() {
    let server = MockServer::builder().start().await;
    mount_openai(
        &server,
        sse_answer(openai_text(&["late"])).set_delay(Duration::from_secs(30)),
        1,
    )
    .await;
    let mut config = config(vec![provider(
        "openai",
        ProviderKind::OpenaiChat,
        &server.uri(),
    )]);
    config.server.keep_alive_ms = 50;
    let runtime = start_with(options(config, Defects::none())).await;
    let base = runtime.base_url();
    let (_, submission) = create(&base, &text_request("hi"), None).await;
    let id = submission["execution_id"].as_str().unwrap();
    let mut head = SseStream::new(SseStream::open(&base, id, "", None).await);
    head.until("route.selected").await;
    // Open at the end of the live log: nothing to send yet, so the stream must stay open.
    let mut tail = SseStream::new(SseStream::open(&base, id, "?after=2", None).await);
    let watcher = tokio::spawn(async move {
        let frame = tail.next().await;
        (frame, tail.comments)
    });
    // Keep-alive comments arrive on the idle head stream while the execution is live.
    let mut raw = reqwest::Client::new()
        .get(format!("{base}/v1/executions/{id}/events?after=2"))
        .send()
        .await
        .unwrap();
    let chunk = raw.chunk().await.unwrap().unwrap();
    assert!(
        String::from_utf8_lossy(&chunk).starts_with(':'),
        "{chunk:?}"
    );
    drop(raw);
    reqwest::Client::new()
        .post(format!("{base}/v1/executions/{id}/cancel"))
        .send()
        .await
        .unwrap();
    let (frame, _) = watcher.await.unwrap();
    let frame = frame.expect("the held stream delivers the terminal event");
    assert_eq!(frame.data["sequence"], 3);
    assert_eq!(frame.data["status"], "cancelled");
    // The head stream, open all along, sees the same terminal event, then the close.
    let rest = head.rest().await;
    assert_eq!(rest.len(), 1);
    runtime.shutdown().await;
}

#[tokio::test]
async fn closing_a_stream_does_not_cancel_the_execution() {
    let server = MockServer::builder().start().await;
    mount_openai(
        &server,
        sse_answer(openai_text(&["done"])).set_delay(Duration::from_millis(300)),
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
    let mut first = SseStream::new(SseStream::open(&base, id, "", None).await);
    first.until("execution.accepted").await;
    drop(first);
    let frames = events(&base, id).await;
    assert_eq!(frames.last().unwrap().kind(), "execution.completed");
    runtime.shutdown().await;
}

#[tokio::test]
async fn sqlite_restart_keeps_logs_and_ends_in_flight_executions() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("events.db");
    let quick = MockServer::builder().start().await;
    mount_openai(&quick, sse_answer(openai_text(&["kept"])), 1).await;
    let slow = MockServer::builder().start().await;
    mount_openai(
        &slow,
        sse_answer(openai_text(&["never"])).set_delay(Duration::from_secs(30)),
        1,
    )
    .await;
    let providers = vec![
        provider("quick", ProviderKind::OpenaiChat, &quick.uri()),
        provider("slow", ProviderKind::OpenaiChat, &slow.uri()),
    ];
    let mut config = config(providers);
    config.store.kind = StoreKind::Sqlite(db.clone());

    let first = start_with(options(config.clone(), Defects::none())).await;
    let base = first.base_url();
    let (done_id, done_frames) = finished_execution(&base).await;
    let mut request = text_request("in flight");
    request["routing"] = json!({"provider_order": ["slow"]});
    let (_, submission) = create(&base, &request, Some("restart-key")).await;
    let live_id = submission["execution_id"].as_str().unwrap().to_string();
    let mut stream = SseStream::new(SseStream::open(&base, &live_id, "", None).await);
    let before = stream.until("route.selected").await;
    drop(stream);
    first.shutdown().await;

    let second = start_with(options(config, Defects::none())).await;
    let base = second.base_url();
    // The finished log is served unchanged.
    let again = events(&base, &done_id).await;
    assert_eq!(again, done_frames);
    // The in-flight execution is ended with an appended failure, never renumbered.
    let frames = events(&base, &live_id).await;
    let kinds = check_log(&frames, &live_id);
    assert_eq!(
        kinds,
        ["execution.accepted", "route.selected", "execution.failed"]
    );
    assert_eq!(frames[..2], before[..]);
    assert_eq!(frames[2].data["status"], "failed");
    assert_eq!(frames[2].data["error"]["code"], "internal_error");
    assert_eq!(frames[2].data["error"]["retryable"], false);
    let (_, snapshot) = get_json(&format!("{base}/v1/executions/{live_id}")).await;
    assert_eq!(snapshot["last_sequence"], 3);
    // The key survives the restart: a replay, no new provider call.
    let (status, replay) = create(&base, &request, Some("restart-key")).await;
    assert_eq!(
        (status, replay["execution_id"].as_str()),
        (200, Some(live_id.as_str()))
    );
    second.shutdown().await;
}

#[tokio::test]
async fn admission_beyond_the_limit_is_429_queue_full_with_retry_after() {
    let server = MockServer::builder().start().await;
    mount_openai(
        &server,
        sse_answer(openai_text(&["slow"])).set_delay(Duration::from_secs(30)),
        1,
    )
    .await;
    let mut config = config(vec![provider(
        "openai",
        ProviderKind::OpenaiChat,
        &server.uri(),
    )]);
    config.limits.max_active_executions = 1;
    let runtime = start_with(options(config, Defects::none())).await;
    let base = runtime.base_url();
    let (status, first) = create(&base, &text_request("one"), Some("first")).await;
    assert_eq!(status, 202);
    let response = reqwest::Client::new()
        .post(format!("{base}/v1/executions"))
        .json(&text_request("two"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 429);
    assert_eq!(response.headers()["retry-after"], "1");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], "queue_full");
    assert_eq!(body["error"]["retryable"], true);
    // A replay is not a new execution: it is answered while the limit is reached.
    let (status, replay) = create(&base, &text_request("one"), Some("first")).await;
    assert_eq!(
        (status, &replay["execution_id"]),
        (200, &first["execution_id"])
    );
    runtime.shutdown().await;
}
