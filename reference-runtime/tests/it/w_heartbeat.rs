//! Surface W: `GET /host/events` and heartbeats, on virtual time (the runtime
//! runs in-process; `start_paused` makes every interval and overrun exact).

use std::sync::Arc;
use std::time::Duration;

use crate::w_host::*;
use reference_runtime::openwop::{
    CreateRunOnTransition, HeartbeatConfig, HeartbeatSettings, OpenWopConfig, PredicateConfig,
};
use reference_runtime::store::{EventStore, MemoryEventStore, Surface};
use serde_json::{Value, json};
use spec::schema::Published;
use tokio::time::Instant;

fn beat(
    id: &str,
    interval_sec: u64,
    max_runtime_ms: u64,
    observe_delay_ms: u64,
    predicate: PredicateConfig,
) -> HeartbeatConfig {
    HeartbeatConfig {
        id: id.into(),
        interval_sec,
        max_runtime_ms,
        observe_delay_ms,
        predicate,
    }
}

fn config(beats: Vec<HeartbeatConfig>) -> OpenWopConfig {
    OpenWopConfig {
        heartbeat: HeartbeatSettings {
            heartbeats: beats,
            ..HeartbeatSettings::default()
        },
        ..OpenWopConfig::default()
    }
}

fn constant() -> PredicateConfig {
    PredicateConfig::Constant { value: json!(true) }
}

/// One host-event frame, validated: (type, payload, virtual time received).
async fn next(reader: &mut SseReader) -> (String, Value, Instant) {
    let frame = reader.next_frame().await.unwrap();
    let at = Instant::now();
    let doc = frame.json();
    validate_doc(Published::HostEvent, &doc);
    let event_type = doc["type"].as_str().unwrap().to_string();
    assert_eq!(frame.event.as_deref(), Some(event_type.as_str()));
    match event_type.as_str() {
        "heartbeat.evaluated" => {
            validate_doc(Published::HeartbeatEvaluated, &doc["payload"]);
            assert_eq!(doc["delivery"], "ephemeral");
            assert!(frame.id.is_none(), "ephemeral frames carry no id");
        }
        "heartbeat.stateChanged" => {
            validate_doc(Published::HeartbeatStateChanged, &doc["payload"]);
            assert_eq!(doc["delivery"], "durable");
            assert_eq!(
                frame.id.as_deref(),
                doc["eventId"].as_str(),
                "durable frames carry id"
            );
        }
        other => panic!("not a heartbeat message: {other}"),
    }
    assert!(
        !frame.data.contains("/run-"),
        "the host channel carries no run data"
    );
    (event_type, doc["payload"].clone(), at)
}

async fn subscribe(host: &Host) -> SseReader {
    SseReader::unchecked(host.get("/host/events", Some(KEY_A), &[]).await)
}

#[tokio::test(start_paused = true)]
async fn the_first_tick_is_a_transition_from_empty_and_unchanged_ticks_only_evaluate() {
    let host = host_with(config(vec![beat("constant", 5, 1000, 0, constant())]), &[]).await;
    let start = Instant::now();
    let mut events = subscribe(&host).await;
    let (t, first, at) = next(&mut events).await;
    assert_eq!(t, "heartbeat.evaluated");
    assert_eq!(
        first,
        json!({"heartbeatId": "constant", "status": "ok", "changed": true})
    );
    assert_eq!(
        at - start,
        Duration::from_secs(5),
        "one interval after start"
    );
    let (t, changed, _) = next(&mut events).await;
    assert_eq!(t, "heartbeat.stateChanged");
    assert_eq!(
        changed,
        json!({"heartbeatId": "constant", "from": {}, "to": {"value": true}})
    );
    for tick in 2..5u64 {
        let (t, evaluated, at) = next(&mut events).await;
        assert_eq!(
            t, "heartbeat.evaluated",
            "no stateChanged on an unchanged tick"
        );
        assert_eq!(
            evaluated,
            json!({"heartbeatId": "constant", "status": "ok", "changed": false})
        );
        assert_eq!(at - start, Duration::from_secs(5 * tick));
    }
}

#[tokio::test(start_paused = true)]
async fn an_overrun_is_bounded_by_max_runtime_and_reported_as_timeout() {
    let host = host_with(config(vec![beat("slow", 5, 1000, 3000, constant())]), &[]).await;
    let start = Instant::now();
    let mut events = subscribe(&host).await;
    for tick in 1..4u64 {
        let (t, evaluated, at) = next(&mut events).await;
        assert_eq!(t, "heartbeat.evaluated");
        assert_eq!(
            evaluated,
            json!({"heartbeatId": "slow", "status": "timeout", "changed": false})
        );
        assert_eq!(
            at - start,
            Duration::from_secs(5 * tick) + Duration::from_secs(1),
            "terminated at maxRuntimeMs"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn ticks_that_fall_while_an_evaluation_runs_are_skipped_not_queued() {
    let host = host_with(config(vec![beat("busy", 1, 10_000, 1500, constant())]), &[]).await;
    let start = Instant::now();
    let mut events = subscribe(&host).await;
    let mut evaluated_at = Vec::new();
    while evaluated_at.len() < 4 {
        let (t, _, at) = next(&mut events).await;
        if t == "heartbeat.evaluated" {
            evaluated_at.push(at - start);
        }
    }
    // Ticks at 1 s, 2 s, 3 s, …; each evaluation takes 1.5 s, so the ticks at 2 s, 4 s, 6 s are
    // skipped: evaluations end at 2.5 s, 4.5 s, 6.5 s, 8.5 s (queued ticks would end 1.5 s apart).
    let ms: Vec<u128> = evaluated_at.iter().map(Duration::as_millis).collect();
    assert_eq!(ms, [2500, 4500, 6500, 8500]);
}

#[tokio::test(start_paused = true)]
async fn persisted_state_means_a_restart_does_not_re_notify() {
    let store: Arc<dyn EventStore> = Arc::new(MemoryEventStore::new());
    let beats = vec![beat("persisted", 5, 1000, 0, constant())];
    let first = host_on(Arc::clone(&store), config(beats.clone()), &[]).await;
    let mut events = subscribe(&first).await;
    assert_eq!(next(&mut events).await.1["changed"], true);
    assert_eq!(next(&mut events).await.0, "heartbeat.stateChanged");
    drop(events);
    drop(first);
    let second = host_on(store, config(beats), &[]).await;
    let mut events = subscribe(&second).await;
    for _ in 0..3 {
        let (t, evaluated, _) = next(&mut events).await;
        assert_eq!(t, "heartbeat.evaluated");
        assert_eq!(
            evaluated["changed"], false,
            "the prior state survived the restart"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_restart_over_the_sqlite_store_does_not_re_notify() {
    use reference_runtime::store::SqliteEventStore;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("events.db");
    let beats = vec![beat("durable", 5, 1000, 0, constant())];
    {
        let store = SqliteEventStore::open_shared(&file).unwrap();
        let first = host_on(store, config(beats.clone()), &[]).await;
        let mut events = subscribe(&first).await;
        assert_eq!(next(&mut events).await.1["changed"], true);
        assert_eq!(next(&mut events).await.0, "heartbeat.stateChanged");
    }
    let store = SqliteEventStore::open_shared(&file).unwrap();
    let second = host_on(store, config(beats), &[]).await;
    let mut events = subscribe(&second).await;
    let (t, evaluated, _) = next(&mut events).await;
    assert_eq!(t, "heartbeat.evaluated");
    assert_eq!(
        evaluated["changed"], false,
        "state read back from the database file"
    );
}

#[tokio::test(start_paused = true)]
async fn a_transition_creates_the_run_the_predicate_asks_for_and_an_unchanged_tick_does_not() {
    let predicate = PredicateConfig::ActiveRuns {
        threshold: 1,
        create_run: Some(CreateRunOnTransition {
            when_active: false,
            workflow_id: "conformance-noop".into(),
            tenant: "tenant-a".into(),
        }),
    };
    let host = host_with(config(vec![beat("idle-runs", 5, 1000, 0, predicate)]), &[]).await;
    let mut events = subscribe(&host).await;
    assert_eq!(next(&mut events).await.1["changed"], true);
    let (_, changed, _) = next(&mut events).await;
    assert_eq!(changed["to"], json!({"active": false}));
    let runs = host.hub.store().logs(Surface::Run).unwrap();
    assert_eq!(runs.len(), 1, "one run on the transition");
    let run_id = runs[0].id.clone();
    assert_eq!(
        runs[0].meta["owner"]["subject"]["subjectId"],
        "heartbeat-idle-runs"
    );
    let log = host.finished_log(&run_id).await;
    assert_eq!(log.last().unwrap()["type"], "run.completed");
    for _ in 0..2 {
        let (t, evaluated, _) = next(&mut events).await;
        assert_eq!(t, "heartbeat.evaluated");
        assert_eq!(evaluated["changed"], false);
    }
    assert_eq!(
        host.hub.store().logs(Surface::Run).unwrap().len(),
        1,
        "never on an unchanged tick"
    );
}

#[tokio::test]
async fn discovery_advertises_the_heartbeat_facets() {
    let mut config = config(vec![]);
    config.heartbeat.min_interval_sec = 3;
    config.heartbeat.max_runtime_ms = 2000;
    let host = host_with(config, &[]).await;
    let doc: Value = host
        .get("/.well-known/openwop", None, &[])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(doc["heartbeat"]["minIntervalSec"], 3);
    assert_eq!(doc["heartbeat"]["maxRuntimeMs"], 2000);
    assert_eq!(doc["heartbeat"]["deliveryChannel"], "/host/events");
    let below_min = r#"
        [heartbeat]
        min_interval_sec = 3
        [[heartbeat.heartbeats]]
        id = "h"
        interval_sec = 2
        max_runtime_ms = 100
        predicate = { kind = "constant" }
    "#;
    assert!(
        toml::from_str::<OpenWopConfig>(below_min).is_err(),
        "interval >= minIntervalSec"
    );
}

/// One tick through upstream's tick seam (asserts 200): the answer.
async fn tick(host: &Host, body: Value) -> Value {
    let response = host
        .post(
            "/conformance/seams/sample/heartbeat/tick",
            Some(KEY_A),
            &body,
        )
        .await;
    assert_eq!(response.status(), 200);
    response.json().await.unwrap()
}

#[tokio::test(start_paused = true)]
async fn the_tick_seam_evaluates_one_tick_of_the_named_heartbeat_by_the_same_rules() {
    let mut config = config(vec![]);
    config.heartbeat.max_runtime_ms = 500;
    let off = host_with(config.clone(), &[]).await;
    let refused = off
        .post(
            "/conformance/seams/sample/heartbeat/tick",
            Some(KEY_A),
            &json!({"heartbeatId": "h"}),
        )
        .await;
    assert_eq!(refused.status(), 404, "off unless seams_enabled");
    config.seams_enabled = true;
    let host = Arc::new(host_with(config, &[]).await);
    let body = |state: Value| json!({"heartbeatId": "hb-seam", "observedState": state});
    let first = tick(&host, body(json!({"n": 0}))).await;
    assert_eq!(
        first["evaluated"],
        json!([{"heartbeatId": "hb-seam", "status": "ok", "changed": true}])
    );
    assert_eq!(first["stateChanged"][0]["from"], json!({}));
    // Its heartbeat asks for a run on every tick: created on a transition only.
    assert_eq!(first["enqueuedRuns"], 1);
    let unchanged = tick(&host, body(json!({"n": 0}))).await;
    assert_eq!(unchanged["evaluated"][0]["changed"], false);
    assert_eq!(unchanged["stateChanged"], json!([]));
    assert_eq!(unchanged["enqueuedRuns"], 0);
    let changed = tick(&host, body(json!({"n": 1}))).await;
    assert_eq!(
        changed["stateChanged"][0]["from"],
        first["stateChanged"][0]["to"]
    );
    // An overrun ends with timeout at maxRuntimeMs; a tick falling meanwhile is skipped.
    let slow = json!({"heartbeatId": "hb-slow", "observedState": {}, "simulateSlowMs": 5000});
    let started = Instant::now();
    let overrun = {
        let host = Arc::clone(&host);
        let slow = slow.clone();
        tokio::spawn(async move { tick(&host, slow).await })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    let overlapping = tick(&host, slow).await;
    assert_eq!(overlapping["skipped"], true);
    assert_eq!(overlapping["evaluated"], json!([]));
    let overrun = overrun.await.unwrap();
    assert_eq!(overrun["evaluated"][0]["status"], "timeout");
    assert_eq!(overrun["stateChanged"], json!([]));
    assert_eq!(started.elapsed(), Duration::from_millis(500));
}
