//! Surface W: interval schedules (the `scheduling` capability), on virtual time. Each test runs
//! the router in-process with `start_paused`, so every tick and every delay node is exact; time
//! moves only when the test sleeps until a virtual instant.

use std::sync::Arc;
use std::time::Duration;

use crate::w_host::*;
use reference_runtime::openwop::{OpenWopConfig, ScheduleConfig, SchedulingSettings};
use reference_runtime::store::{EventStore, LogRecord, MemoryEventStore, StoreView, Surface};
use serde_json::{Map, Value, json};
use tokio::time::Instant;

fn schedule(id: &str, workflow_id: &str, interval_sec: u64, inputs: Value) -> ScheduleConfig {
    ScheduleConfig {
        id: id.into(),
        workflow_id: workflow_id.into(),
        tenant: "tenant-a".into(),
        interval_sec,
        inputs: inputs.as_object().cloned().unwrap_or_else(Map::new),
    }
}

fn config(schedules: Vec<ScheduleConfig>) -> OpenWopConfig {
    OpenWopConfig {
        scheduling: SchedulingSettings {
            schedules,
            ..SchedulingSettings::default()
        },
        ..OpenWopConfig::default()
    }
}

/// The runs a schedule created, oldest first.
fn runs_of(store: StoreView<'_>, schedule_id: &str) -> Vec<LogRecord> {
    let subject = format!("schedule-{schedule_id}");
    store
        .logs(Surface::Run)
        .unwrap()
        .into_iter()
        .filter(|log| log.meta["owner"]["subject"]["subjectId"] == subject.as_str())
        .collect()
}

async fn at(start: Instant, millis: u64) {
    tokio::time::sleep_until(start + Duration::from_millis(millis)).await;
}

#[tokio::test(start_paused = true)]
async fn a_schedule_creates_a_run_of_its_workflow_every_interval_with_its_inputs() {
    let start = Instant::now();
    let host = host_with(
        config(vec![schedule(
            "every-2s",
            "conformance-delay",
            2,
            json!({"delayMs": 100}),
        )]),
        &[],
    )
    .await;
    let store = host.hub.store();
    at(start, 1_900).await;
    assert!(
        runs_of(store, "every-2s").is_empty(),
        "the first tick is one interval after start"
    );
    at(start, 2_050).await;
    assert_eq!(runs_of(store, "every-2s").len(), 1);
    at(start, 6_050).await;
    let runs = runs_of(store, "every-2s");
    assert_eq!(runs.len(), 3, "one run per interval");
    for run in &runs {
        assert_eq!(run.meta["owner"]["tenant"], "tenant-a");
        assert_eq!(run.meta["workflowId"], "conformance-delay");
        assert_eq!(run.meta["inputs"], json!({"delayMs": 100}));
    }
    let log = host.finished_log(&runs[0].id).await;
    assert_eq!(log.last().unwrap()["type"], "run.completed");
}

#[tokio::test(start_paused = true)]
async fn a_tick_that_falls_while_the_previous_run_is_going_is_skipped_not_queued() {
    let start = Instant::now();
    let host = host_with(
        config(vec![schedule(
            "slow",
            "conformance-delay",
            1,
            json!({"delayMs": 2500}),
        )]),
        &[],
    )
    .await;
    let store = host.hub.store();
    // Run 1 starts at 1 s and ends at 3.5 s: the ticks at 2 s and 3 s are skipped, and nothing
    // is created when it ends (a queued tick would fire at 3.5 s); the tick at 4 s starts run 2.
    at(start, 1_500).await;
    assert_eq!(runs_of(store, "slow").len(), 1);
    at(start, 3_900).await;
    assert_eq!(runs_of(store, "slow").len(), 1, "skipped, not queued");
    at(start, 4_100).await;
    assert_eq!(runs_of(store, "slow").len(), 2);
    // Run 2 ends at 6.5 s: the ticks at 5 s and 6 s are skipped, the tick at 7 s starts run 3.
    at(start, 6_900).await;
    assert_eq!(runs_of(store, "slow").len(), 2);
    at(start, 7_100).await;
    assert_eq!(runs_of(store, "slow").len(), 3);
}

#[tokio::test(start_paused = true)]
async fn schedules_stop_when_the_router_is_dropped() {
    let start = Instant::now();
    let store: Arc<dyn EventStore> = Arc::new(MemoryEventStore::new());
    let host = host_on(
        Arc::clone(&store),
        config(vec![schedule("stops", "conformance-noop", 1, json!({}))]),
        &[],
    )
    .await;
    at(start, 2_500).await;
    assert_eq!(runs_of(StoreView::new(store.as_ref()), "stops").len(), 2);
    drop(host);
    at(start, 10_000).await;
    assert_eq!(
        runs_of(StoreView::new(store.as_ref()), "stops").len(),
        2,
        "no tick after the router is gone"
    );
}

#[tokio::test(start_paused = true)]
async fn a_schedule_whose_workflow_or_inputs_are_refused_never_ticks() {
    let start = Instant::now();
    let host = host_with(
        config(vec![
            schedule("unseeded", "no-such-workflow", 1, json!({})),
            schedule(
                "bad-inputs",
                "conformance-delay",
                1,
                json!({"delayMs": "soon"}),
            ),
            schedule("fine", "conformance-noop", 1, json!({})),
        ]),
        &[],
    )
    .await;
    at(start, 3_500).await;
    let store = host.hub.store();
    assert!(runs_of(store, "unseeded").is_empty());
    assert!(runs_of(store, "bad-inputs").is_empty());
    assert_eq!(runs_of(store, "fine").len(), 3, "the other schedules run");
}

#[tokio::test]
async fn discovery_advertises_exactly_the_scheduling_that_is_implemented() {
    // Only facets upstream's closed `scheduling` record admits: the interval substrate is
    // documented (the `scheduling` module), not advertised.
    let mut config = config(vec![]);
    config.scheduling.min_interval_sec = 7;
    let host = host_with(config, &[]).await;
    let doc: Value = host
        .get("/.well-known/openwop", None, &[])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        doc["scheduling"],
        json!({
            "status": "stable",
            "since": "2.0",
            "witness": "claims-check",
            "cron": false,
            "delayed": false,
            "calendar": false,
        })
    );
    assert!(doc["heartbeat"].is_object(), "advertised beside heartbeat");
}

#[test]
fn a_schedule_below_the_minimum_interval_is_refused_when_read() {
    let text = r#"
        [scheduling]
        min_interval_sec = 10
        [[scheduling.schedules]]
        id = "fast"
        workflow_id = "conformance-noop"
        tenant = "tenant-a"
        interval_sec = 9
    "#;
    assert!(toml::from_str::<OpenWopConfig>(text).is_err());
    let ok = text.replace("interval_sec = 9", "interval_sec = 10");
    let config: OpenWopConfig = toml::from_str(&ok).unwrap();
    assert_eq!(config.scheduling.schedules[0].interval_sec, 10);
    assert!(config.scheduling.schedules[0].inputs.is_empty());
}
