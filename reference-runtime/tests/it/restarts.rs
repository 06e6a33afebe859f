//! What a restart does to unfinished work, and how long idempotency keys of runs are kept:
//! runs a previous process left unfinished (running or suspended at a gate) end `run.failed`
//! by the rule of ARCHITECTURE.md ("Restarts"), appended after what was served; an execution
//! log left empty still opens with `execution.accepted`; a run's key is kept 24 h after the
//! run's terminal event, by the runtime's clock (never a sleep), and a live run's key never
//! expires.

use std::path::Path;
use std::sync::Arc;

use chrono::TimeZone;
use reference_runtime::clock::{Clock, ManualClock};
use reference_runtime::config::{Config, StoreKind};
use reference_runtime::defects::Defects;
use reference_runtime::runtime::{AppState, RuntimeOptions, app};
use reference_runtime::store::{EventStore, LogRecord, SqliteEventStore, Surface};
use serde_json::{Value, json};

use crate::w_host::{Host, KEY_A, expect_error, run_path, serve, validate_event};
use crate::x_host::{check_log, events, options, start_with};

/// The whole composition (recovery included) on `config`, surface W's helpers over it.
async fn composed(config: Config, clock: Option<Arc<dyn Clock>>) -> Host {
    let mut options = RuntimeOptions::new(config);
    if let Some(clock) = clock {
        options.clock = clock;
    }
    let state = AppState::build(options).expect("the runtime builds");
    let hub = Arc::clone(&state.hub);
    serve(app(state), hub).await
}

fn on_file(db: &Path) -> Config {
    let mut config = Config::default();
    config.store.kind = StoreKind::Sqlite(db.to_path_buf());
    config
}

async fn create_keyed(host: &Host, key: &str, body: &Value) -> (String, bool) {
    let response = host
        .client
        .post(host.url("/runs"))
        .bearer_auth(KEY_A)
        .header("idempotency-key", key)
        .json(body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    let replay = response
        .headers()
        .get("openwop-idempotent-replay")
        .is_some_and(|v| v == "true");
    let body: Value = response.json().await.unwrap();
    (body["runId"].as_str().unwrap().to_string(), replay)
}

#[tokio::test]
async fn unfinished_runs_end_failed_after_a_restart_and_finished_ones_are_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("events.db");
    let first = composed(on_file(&db), None).await;
    let done = first.create_fixture("conformance-noop").await;
    let done_log = first.finished_log(&done).await;
    let approval = json!({"workflowId": "conformance-approval"});
    let (waiting, _) = create_keyed(&first, "gate-key", &approval).await;
    let waiting_before = first.wait_for(&waiting, "interrupt.requested").await;
    let running = first
        .create(json!({"workflowId": "conformance-delay", "inputs": {"delayMs": 60000}}))
        .await;
    let running_before = first.wait_for(&running, "node.started").await;
    // The first process stops serving; its tasks are parked on the gate and the delay and
    // append nothing more (a crash, as far as the file can tell).
    drop(first);

    let second = composed(on_file(&db), None).await;
    assert_eq!(second.finished_log(&done).await, done_log, "untouched");
    for (run_id, before, node) in [
        (&waiting, &waiting_before, "gate"),
        (&running, &running_before, "wait"),
    ] {
        let log = second.finished_log(run_id).await;
        assert_eq!(log[..before.len()], before[..], "nothing renumbered");
        assert_eq!(log.len(), before.len() + 1, "{log:#?}");
        let failed = log.last().unwrap();
        validate_event(failed);
        assert_eq!(failed["type"], "run.failed");
        assert_eq!(failed["sequence"], before.len() as u64);
        let payload = &failed["payload"];
        assert_eq!(payload["error"]["code"], "internal_error");
        assert_eq!(payload["error"]["retryable"], false);
        assert_eq!(payload["error"]["details"]["reason"], "host-restarted");
        assert_eq!(payload["failedNodeId"], node);
        let snapshot: Value = second
            .get(&run_path(run_id), Some(KEY_A), &[])
            .await
            .json()
            .await
            .unwrap();
        assert_eq!(snapshot["status"], "failed");
        assert_eq!(snapshot["error"]["code"], "internal_error");
    }
    // The gate cannot be resolved any more, and the key still names the run.
    let resolve = second
        .post(
            &format!("{}/interrupts/gate", run_path(&waiting)),
            Some(KEY_A),
            &json!({"resumeValue": {"action": "accept"}}),
        )
        .await;
    expect_error(resolve, 409, "run_terminal").await;
    assert_eq!(
        create_keyed(&second, "gate-key", &approval).await,
        (waiting.clone(), true)
    );
    // A third start finds nothing to end: the rule appends once.
    drop(second);
    let third = composed(on_file(&db), None).await;
    assert_eq!(
        third.finished_log(&waiting).await.len(),
        waiting_before.len() + 1
    );
}

#[tokio::test]
async fn an_execution_log_left_empty_opens_with_accepted_before_its_failure() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("events.db");
    {
        // What a process killed between creating the log and appending to it leaves.
        let store = SqliteEventStore::open(&db).unwrap();
        store
            .create_log(&LogRecord {
                id: "exec-left-empty".into(),
                surface: Surface::Execution,
                created_at: chrono::Utc::now(),
                meta: json!({}),
                last_sequence: None,
                terminal: false,
            })
            .unwrap();
    }
    let runtime = start_with(options(on_file(&db), Defects::none())).await;
    let frames = events(&runtime.base_url(), "exec-left-empty").await;
    let kinds = check_log(&frames, "exec-left-empty");
    assert_eq!(kinds, ["execution.accepted", "execution.failed"]);
    assert_eq!(frames[1].data["error"]["code"], "internal_error");
    assert_eq!(frames[1].data["error"]["retryable"], false);
    runtime.shutdown().await;
}

#[tokio::test]
async fn run_keys_are_kept_24_hours_after_the_terminal_event_and_while_the_run_lives() {
    let clock = Arc::new(ManualClock::new(
        chrono::Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap(),
    ));
    let host = composed(Config::default(), Some(clock.clone())).await;
    let noop = json!({"workflowId": "conformance-noop"});
    let (first, replay) = create_keyed(&host, "kept-key", &noop).await;
    assert!(!replay);
    host.finished_log(&first).await;
    clock.advance(chrono::Duration::hours(23));
    assert_eq!(
        create_keyed(&host, "kept-key", &noop).await,
        (first.clone(), true)
    );
    clock.advance(chrono::Duration::hours(1));
    let (fresh, replay) = create_keyed(&host, "kept-key", &noop).await;
    assert!(!replay, "24 h after the terminal event the key is free");
    assert_ne!(fresh, first);
    host.finished_log(&fresh).await;
    // The key now belongs to the fresh run: another body under it is still a mismatch.
    let mismatch = host
        .client
        .post(host.url("/runs"))
        .bearer_auth(KEY_A)
        .header("idempotency-key", "kept-key")
        .json(&json!({"workflowId": "conformance-multi-node"}))
        .send()
        .await
        .unwrap();
    expect_error(mismatch, 409, "idempotency_key_mismatch").await;
    // A run that has not ended keeps its key however long it waits.
    let approval = json!({"workflowId": "conformance-approval"});
    let (waiting, _) = create_keyed(&host, "live-key", &approval).await;
    host.wait_for(&waiting, "interrupt.requested").await;
    clock.advance(chrono::Duration::hours(48));
    assert_eq!(
        create_keyed(&host, "live-key", &approval).await,
        (waiting, true)
    );
}
