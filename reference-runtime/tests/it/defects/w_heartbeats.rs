//! The rules of the heartbeat, host-channel and poll-parameter defects of the catalogue, observed
//! over HTTP (the rows are in the defect table, `defects/mod.rs`). Heartbeats run on virtual time.

use std::time::Duration;

use crate::w_host::*;
use reference_runtime::openwop::{
    HeartbeatConfig, HeartbeatSettings, OpenWopConfig, PredicateConfig,
};
use reference_runtime::store::Surface;
use serde_json::{Value, json};
use tokio::time::Instant;

/// One heartbeat on the host channel, ticking every second.
fn one_beat(
    max_runtime_ms: u64,
    observe_delay_ms: u64,
    predicate: PredicateConfig,
) -> OpenWopConfig {
    OpenWopConfig {
        heartbeat: HeartbeatSettings {
            heartbeats: vec![HeartbeatConfig {
                id: "beat".into(),
                interval_sec: 1,
                max_runtime_ms,
                observe_delay_ms,
                predicate,
            }],
            ..HeartbeatSettings::default()
        },
        ..OpenWopConfig::default()
    }
}

pub(super) fn constant() -> OpenWopConfig {
    one_beat(500, 0, PredicateConfig::Constant { value: json!(true) })
}

/// Overruns: observing takes 2 s, the bound is 300 ms.
pub(super) fn overrun() -> OpenWopConfig {
    one_beat(300, 2_000, PredicateConfig::Constant { value: json!(true) })
}

/// Busy: observing takes 1.5 s of a 1 s interval (within the 3 s bound).
pub(super) fn busy() -> OpenWopConfig {
    one_beat(
        3_000,
        1_500,
        PredicateConfig::Constant { value: json!(true) },
    )
}

pub(super) fn toggle() -> OpenWopConfig {
    one_beat(500, 0, PredicateConfig::Toggle)
}

pub(super) fn created_runs() -> OpenWopConfig {
    one_beat(
        500,
        0,
        PredicateConfig::CreatedRuns {
            workflow_id: "conformance-noop".into(),
            tenant: "tenant-a".into(),
        },
    )
}

/// A host message: its type, payload, and when it arrived (virtual time since subscribing).
struct Message {
    kind: String,
    payload: Value,
    raw: String,
    at: Duration,
}

/// Subscribes to `/host/events` now and reads for `window`.
async fn messages(host: &Host, window: Duration) -> Vec<Message> {
    let start = Instant::now();
    let mut reader = SseReader::unchecked(host.get("/host/events", Some(KEY_A), &[]).await);
    let mut out = Vec::new();
    while let Ok(Some(frame)) = tokio::time::timeout_at(start + window, reader.next_frame()).await {
        let doc = frame.json();
        out.push(Message {
            kind: doc["type"].as_str().unwrap_or_default().to_string(),
            payload: doc["payload"].clone(),
            raw: frame.data.clone(),
            at: Instant::now() - start,
        });
    }
    out
}

fn of_kind<'a>(messages: &'a [Message], kind: &str) -> Vec<&'a Message> {
    messages.iter().filter(|m| m.kind == kind).collect()
}

const SECS_3_5: Duration = Duration::from_millis(3_500);

/// Every tick emits heartbeat.evaluated: three ticks in 3.5 s.
pub(super) async fn evaluated_every_tick(host: &Host) -> bool {
    of_kind(&messages(host, SECS_3_5).await, "heartbeat.evaluated").len() == 3
}

/// A constant predicate changes state once, on its first tick.
pub(super) async fn one_state_change(host: &Host) -> bool {
    let seen = messages(host, SECS_3_5).await;
    let changes = of_kind(&seen, "heartbeat.stateChanged");
    changes.len() == 1 && changes[0].payload["from"] != changes[0].payload["to"]
}

/// The discovery document.
async fn discovery(host: &Host) -> Value {
    host.get("/.well-known/openwop", None, &[])
        .await
        .json()
        .await
        .unwrap()
}

/// The channel is at its default address, which discovery declares.
pub(super) async fn channel_at_default_address(host: &Host) -> bool {
    let doc = discovery(host).await;
    let channel = host.get("/host/events", Some(KEY_A), &[]).await;
    doc["heartbeat"]["deliveryChannel"] == "/host/events"
        && channel.status() == 200
        && channel.headers()["content-type"]
            .to_str()
            .is_ok_and(|t| t.starts_with("text/event-stream"))
}

/// Discovery declares the channel's address as its address: a string path.
pub(super) async fn channel_address_is_a_path(host: &Host) -> bool {
    let doc = discovery(host).await;
    doc["heartbeat"]["deliveryChannel"]
        .as_str()
        .is_some_and(|address| address.starts_with('/'))
}

/// Discovery's heartbeat budget is within the run ceiling it advertises.
pub(super) async fn budget_within_run_ceiling(host: &Host) -> bool {
    let doc = discovery(host).await;
    let budget = doc["heartbeat"]["maxRuntimeMs"].as_u64();
    let ceiling = doc["limits"]["maxRunDurationMs"].as_u64();
    budget.zip(ceiling).is_some_and(|(b, c)| b <= c)
}

/// The channel never names a run, even just after one was created.
pub(super) async fn no_run_data(host: &Host) -> bool {
    let run_id = host.create_fixture("conformance-noop").await;
    let seen = messages(host, Duration::from_millis(1_500)).await;
    !seen.is_empty()
        && seen.iter().all(|m| {
            !m.raw.contains(&run_id) && !m.raw.contains("runId") && m.payload.get("runId").is_none()
        })
}

/// `lastSequence` is not a poll parameter: the answer is the whole log.
pub(super) async fn last_sequence_ignored(host: &Host) -> bool {
    let run_id = host.create_fixture("conformance-multi-node").await;
    host.finished_log(&run_id).await;
    let all = host.poll(&run_id, "").await;
    let with = host.poll(&run_id, "lastSequence=1").await;
    all["events"].as_array().is_some_and(|e| e.len() > 2) && with["events"] == all["events"]
}

/// Busy: ticks at 1 s, 2 s, 3 s, …; each evaluation takes 1.5 s, so the ticks at 2 s and 4 s
/// are skipped and evaluations end 2 s apart (queued ticks would end 1.5 s apart).
pub(super) async fn overlapping_ticks_skipped(host: &Host) -> bool {
    let seen = messages(host, Duration::from_millis(4_800)).await;
    let at: Vec<Duration> = of_kind(&seen, "heartbeat.evaluated")
        .iter()
        .map(|m| m.at)
        .collect();
    at == [Duration::from_millis(2_500), Duration::from_millis(4_500)]
}

/// An overrun is reported with status timeout.
pub(super) async fn overrun_status_timeout(host: &Host) -> bool {
    let seen = messages(host, Duration::from_millis(3_500)).await;
    let evaluated = of_kind(&seen, "heartbeat.evaluated");
    !evaluated.is_empty() && evaluated.iter().all(|m| m.payload["status"] == "timeout")
}

/// The evaluation ends at the bound: tick at 1 s, evaluated at 1.3 s, 2.3 s, 3.3 s.
pub(super) async fn bounded_by_max_runtime(host: &Host) -> bool {
    let seen = messages(host, Duration::from_millis(3_500)).await;
    let at: Vec<Duration> = of_kind(&seen, "heartbeat.evaluated")
        .iter()
        .map(|m| m.at)
        .collect();
    at == [1_300, 2_300, 3_300].map(Duration::from_millis)
}

/// Ticks are an interval (1 s, the minimum) apart.
pub(super) async fn interval_at_least_min(host: &Host) -> bool {
    let seen = messages(host, SECS_3_5).await;
    let at: Vec<Duration> = of_kind(&seen, "heartbeat.evaluated")
        .iter()
        .map(|m| m.at)
        .collect();
    at.len() >= 2 && at.windows(2).all(|w| w[1] - w[0] >= Duration::from_secs(1))
}

/// Given the prior state, a toggle changes state on every tick.
pub(super) async fn toggle_flips_every_tick(host: &Host) -> bool {
    let seen = messages(host, SECS_3_5).await;
    let to: Vec<Value> = of_kind(&seen, "heartbeat.stateChanged")
        .iter()
        .map(|m| m.payload["to"].clone())
        .collect();
    to == [
        json!({"on": true}),
        json!({"on": false}),
        json!({"on": true}),
    ]
}

/// The first tick is a transition from {}.
pub(super) async fn first_tick_from_empty(host: &Host) -> bool {
    let seen = messages(host, Duration::from_millis(1_500)).await;
    let changes = of_kind(&seen, "heartbeat.stateChanged");
    let evaluated = of_kind(&seen, "heartbeat.evaluated");
    changes.len() == 1
        && changes[0].payload["from"] == json!({})
        && evaluated.len() == 1
        && evaluated[0].payload["changed"] == true
}

fn heartbeat_runs(host: &Host) -> usize {
    host.hub
        .store()
        .logs(Surface::Run)
        .unwrap()
        .iter()
        .filter(|log| log.meta["owner"]["subject"]["subjectId"] == "heartbeat-beat")
        .count()
}

/// The first tick (a transition) asks for a run: it is created.
pub(super) async fn run_created_on_transition(host: &Host) -> bool {
    let seen = messages(host, Duration::from_millis(2_500)).await;
    let to: Vec<Value> = of_kind(&seen, "heartbeat.stateChanged")
        .iter()
        .map(|m| m.payload["to"].clone())
        .collect();
    heartbeat_runs(host) == 1 && to == [json!({"runs": 0}), json!({"runs": 1})]
}

/// Unchanged ticks (from 3 s on) ask for a run too: none is created.
pub(super) async fn no_run_on_unchanged_ticks(host: &Host) -> bool {
    let seen = messages(host, Duration::from_millis(5_500)).await;
    let unchanged = of_kind(&seen, "heartbeat.evaluated")
        .iter()
        .filter(|m| m.payload["changed"] == false)
        .count();
    unchanged >= 2 && heartbeat_runs(host) == 1
}
