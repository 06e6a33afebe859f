//! Surface W: per-subscription heartbeats and the `heartbeatId` filter of `/host/events`, on
//! virtual time. A subscription that names a per-subscription heartbeat gets a fresh instance
//! whose first tick it is sure to see.

use std::time::Duration;

use crate::w_host::*;
use reference_runtime::defects::Defect;
use reference_runtime::openwop::{
    HeartbeatConfig, HeartbeatSettings, OpenWopConfig, PredicateConfig,
};
use reference_runtime::store::Surface;
use serde_json::{Value, json};
use spec::schema::Published;
use tokio::time::Instant;

fn beat(id: &str, predicate: PredicateConfig) -> HeartbeatConfig {
    HeartbeatConfig {
        id: id.into(),
        interval_sec: 1,
        max_runtime_ms: 500,
        observe_delay_ms: 0,
        predicate,
    }
}

fn constant() -> PredicateConfig {
    PredicateConfig::Constant { value: json!(true) }
}

fn config(host: Vec<HeartbeatConfig>, per_subscription: Vec<HeartbeatConfig>) -> OpenWopConfig {
    OpenWopConfig {
        heartbeat: HeartbeatSettings {
            heartbeats: host,
            subscription_heartbeats: per_subscription,
            ..HeartbeatSettings::default()
        },
        ..OpenWopConfig::default()
    }
}

async fn subscribe(host: &Host, query: &str) -> SseReader {
    SseReader::unchecked(
        host.get(&format!("/host/events{query}"), Some(KEY_A), &[])
            .await,
    )
}

/// The host-event documents that arrive before `deadline`, each validated, with the virtual
/// time it arrived at.
async fn read_until(reader: &mut SseReader, deadline: Instant) -> Vec<(Value, Instant)> {
    let mut docs = Vec::new();
    while let Ok(Some(frame)) = tokio::time::timeout_at(deadline, reader.next_frame()).await {
        let doc = frame.json();
        validate_doc(Published::HostEvent, &doc);
        docs.push((doc, Instant::now()));
    }
    docs
}

fn ids(docs: &[(Value, Instant)]) -> Vec<String> {
    docs.iter()
        .map(|(doc, _)| doc["payload"]["heartbeatId"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(start_paused = true)]
async fn a_named_per_subscription_heartbeat_starts_fresh_for_that_subscription_only() {
    let host = host_with(
        config(
            vec![beat("host-constant", constant())],
            vec![beat("fresh", constant())],
        ),
        &[],
    )
    .await;
    let start = Instant::now();
    let mut mine = subscribe(&host, "?heartbeatId=fresh").await;
    let mut everyone = subscribe(&host, "").await;
    let docs = read_until(&mut mine, start + Duration::from_millis(3_500)).await;
    let instance = ids(&docs)[0].clone();
    let suffix = instance.strip_prefix("fresh.").expect("`<id>.<suffix>`");
    assert_eq!(suffix.len(), 16);
    assert!(
        ids(&docs).iter().all(|id| *id == instance),
        "only its own heartbeat"
    );
    let messages: Vec<(String, Value, Duration)> = docs
        .iter()
        .map(|(doc, at)| {
            (
                doc["type"].as_str().unwrap().to_string(),
                doc["payload"].clone(),
                *at - start,
            )
        })
        .collect();
    assert_eq!(
        messages,
        vec![
            (
                "heartbeat.evaluated".to_string(),
                json!({"heartbeatId": instance, "status": "ok", "changed": true}),
                Duration::from_secs(1)
            ),
            (
                "heartbeat.stateChanged".to_string(),
                json!({"heartbeatId": instance, "from": {}, "to": {"value": true}}),
                Duration::from_secs(1)
            ),
            (
                "heartbeat.evaluated".to_string(),
                json!({"heartbeatId": instance, "status": "ok", "changed": false}),
                Duration::from_secs(2)
            ),
            (
                "heartbeat.evaluated".to_string(),
                json!({"heartbeatId": instance, "status": "ok", "changed": false}),
                Duration::from_secs(3)
            ),
        ],
        "the first tick one interval after subscribing is a transition from {{}}"
    );
    let others = read_until(&mut everyone, start + Duration::from_millis(4_500)).await;
    assert!(!others.is_empty());
    assert!(
        ids(&others).iter().all(|id| id == "host-constant"),
        "an unfiltered subscription sees host heartbeats only"
    );
    let mut second = subscribe(&host, "?heartbeatId=fresh").await;
    let docs = read_until(&mut second, Instant::now() + Duration::from_millis(1_500)).await;
    assert_ne!(
        ids(&docs)[0],
        instance,
        "each subscription gets its own instance"
    );
    assert_eq!(docs[0].0["payload"]["changed"], true);
}

#[tokio::test(start_paused = true)]
async fn the_filter_narrows_the_channel_to_the_named_host_heartbeats() {
    let host = host_with(
        config(
            vec![
                beat("one", constant()),
                beat("two", PredicateConfig::Toggle),
            ],
            vec![],
        ),
        &[],
    )
    .await;
    let start = Instant::now();
    let mut two = subscribe(&host, "?heartbeatId=two").await;
    let docs = read_until(&mut two, start + Duration::from_millis(2_500)).await;
    assert_eq!(
        docs.len(),
        4,
        "two ticks of a toggle: evaluated and stateChanged each"
    );
    assert!(ids(&docs).iter().all(|id| id == "two"));
    let mut both = subscribe(&host, "?heartbeatId=one,two").await;
    let docs = read_until(&mut both, start + Duration::from_millis(3_500)).await;
    let seen: std::collections::BTreeSet<String> = ids(&docs).into_iter().collect();
    assert_eq!(seen.len(), 2);
}

#[tokio::test]
async fn naming_an_unknown_heartbeat_is_a_validation_error() {
    let host = host_with(config(vec![beat("one", constant())], vec![]), &[]).await;
    let response = host
        .get("/host/events?heartbeatId=one,nope", Some(KEY_A), &[])
        .await;
    assert_eq!(response.status(), 400);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"], "validation_error");
    assert_eq!(body["details"]["heartbeats"], json!(["one"]));
    assert!(
        !body.to_string().contains("nope"),
        "the request is not echoed"
    );
}

#[tokio::test(start_paused = true)]
async fn an_instance_stops_when_its_subscription_closes() {
    // With this defect the created-runs instance creates a run on every unchanged tick, so
    // its runs show whether it still ticks.
    let created_runs = PredicateConfig::CreatedRuns {
        workflow_id: "conformance-noop".into(),
        tenant: "tenant-a".into(),
    };
    let host = host_with(
        config(vec![], vec![beat("probe", created_runs)]),
        &[Defect::WHeartbeatCreateRunOnUnchanged],
    )
    .await;
    let start = Instant::now();
    let mut reader = subscribe(&host, "?heartbeatId=probe").await;
    let docs = read_until(&mut reader, start + Duration::from_millis(3_500)).await;
    let subject = format!("heartbeat-{}", ids(&docs)[0]);
    let count = || {
        host.hub
            .store()
            .logs(Surface::Run)
            .unwrap()
            .iter()
            .filter(|log| log.meta["owner"]["subject"]["subjectId"] == subject.as_str())
            .count()
    };
    let while_open = count();
    assert!(while_open >= 2, "it ticked while the subscription was open");
    drop(reader);
    tokio::time::sleep_until(start + Duration::from_millis(4_200)).await;
    let after_close = count();
    tokio::time::sleep_until(start + Duration::from_millis(9_500)).await;
    assert_eq!(
        count(),
        after_close,
        "no tick after the subscription closed"
    );
}

#[tokio::test(start_paused = true)]
async fn created_runs_makes_one_run_on_the_first_transition_and_none_on_unchanged_ticks() {
    let created_runs = PredicateConfig::CreatedRuns {
        workflow_id: "conformance-noop".into(),
        tenant: "tenant-a".into(),
    };
    let host = host_with(config(vec![], vec![beat("probe", created_runs)]), &[]).await;
    let start = Instant::now();
    let mut reader = subscribe(&host, "?heartbeatId=probe").await;
    let docs = read_until(&mut reader, start + Duration::from_millis(5_500)).await;
    let changes: Vec<Value> = docs
        .iter()
        .filter(|(doc, _)| doc["type"] == "heartbeat.stateChanged")
        .map(|(doc, _)| json!([doc["payload"]["from"], doc["payload"]["to"]]))
        .collect();
    assert_eq!(
        changes,
        vec![json!([{}, {"runs": 0}]), json!([{"runs": 0}, {"runs": 1}])]
    );
    let subject = format!("heartbeat-{}", ids(&docs)[0]);
    let runs: Vec<_> = host
        .hub
        .store()
        .logs(Surface::Run)
        .unwrap()
        .into_iter()
        .filter(|log| log.meta["owner"]["subject"]["subjectId"] == subject.as_str())
        .collect();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].meta["owner"]["tenant"], "tenant-a");
    assert!(
        docs.iter()
            .all(|(doc, _)| !doc.to_string().contains(&runs[0].id)),
        "the channel never names the run"
    );
}
