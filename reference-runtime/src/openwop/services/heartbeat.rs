//! Heartbeats: a predicate evaluated on an interval that acts only on a state change.
//!
//! Each tick: a tick that falls while the prior evaluation still runs is skipped, never queued;
//! the evaluation (observe the host, then the pure predicate, given the prior tick's state) is
//! bounded by `max_runtime_ms` and an overrun ends with `status: timeout`; `heartbeat.evaluated`
//! is emitted every evaluated tick; on a transition only (the first tick is one, from `{}`) the
//! new state is stored, `heartbeat.stateChanged` is emitted and, if the predicate asks, a run is
//! created. The predicate itself performs no side effect.
//!
//! Two kinds of heartbeat share this code:
//!
//! - **host heartbeats** (`heartbeat.heartbeats`) start with the router, send their messages to
//!   every subscriber of the host channel, and persist their state in the store's key-value
//!   space, so with a durable store a restart resumes from it and does not re-notify;
//! - **per-subscription heartbeats** (`heartbeat.subscription_heartbeats`) are started, one
//!   fresh instance each, by a `/host/events` subscription that names them (`host_events`). An
//!   instance has its own id (`<id>.<16 hex>`), so its first tick is a real first tick that a
//!   client can watch; its messages go to that subscription only, its state lives in memory
//!   and it stops when the subscription closes.
//!
//! They tick on the interval substrate of the schedules (`scheduling::interval_timer`). A
//! third kind ticks on request: upstream's heartbeat tick seam ([`tick_on_request`]) evaluates
//! one tick of the heartbeat it names, whose predicate observes the state the request gives,
//! with the same code and rules, and answers the messages the tick emitted.

use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use serde_json::{Map, Value, json};
use spec::openwop::{
    HeartbeatEvaluated, HeartbeatStateChanged, HeartbeatStatus, HostEvent, HostEventDelivery,
};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::MissedTickBehavior;

use crate::sse::SseFrame;
use crate::store::Surface;

use super::host_bus::frame_of;
use super::runs::{NewRun, create_run};
use super::scheduling::interval_timer;
use super::state::WState;
use crate::openwop::infra::config::{HeartbeatConfig, PredicateConfig};

/// The store namespace of persisted heartbeat state.
pub(crate) const STATE_NAMESPACE: &str = "openwop.heartbeat";

/// What a heartbeat observes of the host (aggregates only, never run data).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Observed {
    /// Runs whose engine task is executing.
    pub(crate) active_runs: u64,
    /// Runs on the host owned by this heartbeat (counted only for `created-runs`).
    pub(crate) own_runs: u64,
}

/// A run a predicate asks the host to create.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RunRequest {
    /// The workflow.
    pub(crate) workflow_id: String,
    /// The owning tenant.
    pub(crate) tenant: String,
}

/// A predicate's answer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Decision {
    /// The new state.
    pub(crate) state: Map<String, Value>,
    /// The run the predicate asks for (the host creates it on a transition only).
    pub(crate) create_run: Option<RunRequest>,
}

/// The built-in predicates: pure functions of the observed state and the prior state.
pub(crate) fn predicate(
    config: &PredicateConfig,
    observed: Observed,
    prior: Option<&Map<String, Value>>,
) -> Decision {
    match config {
        PredicateConfig::Constant { value } => Decision {
            state: object(json!({ "value": value })),
            create_run: None,
        },
        PredicateConfig::ActiveRuns {
            threshold,
            create_run,
        } => {
            let active = observed.active_runs >= *threshold;
            Decision {
                state: object(json!({ "active": active })),
                create_run: create_run
                    .as_ref()
                    .filter(|run| run.when_active == active)
                    .map(|run| RunRequest {
                        workflow_id: run.workflow_id.clone(),
                        tenant: run.tenant.clone(),
                    }),
            }
        }
        PredicateConfig::Requested {
            value,
            workflow_id,
            tenant,
        } => Decision {
            state: object(json!({ "value": value })),
            create_run: Some(RunRequest {
                workflow_id: workflow_id.clone(),
                tenant: tenant.clone(),
            }),
        },
        PredicateConfig::Toggle => {
            let was_on = prior
                .and_then(|p| p.get("on"))
                .and_then(Value::as_bool)
                .unwrap_or(false);
            Decision {
                state: object(json!({ "on": !was_on })),
                create_run: None,
            }
        }
        PredicateConfig::CreatedRuns {
            workflow_id,
            tenant,
        } => {
            let state = object(json!({ "runs": observed.own_runs }));
            let asks = prior.is_none_or(|prior| *prior == state);
            Decision {
                state,
                create_run: asks.then(|| RunRequest {
                    workflow_id: workflow_id.clone(),
                    tenant: tenant.clone(),
                }),
            }
        }
    }
}

fn object(value: Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap_or_default()
}

/// Where a heartbeat's messages go.
enum Sink {
    /// The host channel: every subscriber.
    Host,
    /// One subscription (a per-subscription heartbeat's instance).
    Subscription(mpsc::UnboundedSender<SseFrame>),
    /// The host channel, and the answer of the tick seam's request (its messages and the runs
    /// the tick created).
    HostAndAnswer(Arc<Mutex<RequestedTick>>),
}

/// What one tick on request did: the messages it emitted, or that it was skipped because the
/// prior evaluation of the same heartbeat was still running.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct RequestedTick {
    /// The tick fell while the prior evaluation ran: nothing was evaluated.
    pub(crate) skipped: bool,
    /// Its `heartbeat.evaluated` messages.
    pub(crate) evaluated: Vec<Value>,
    /// Its `heartbeat.stateChanged` messages.
    pub(crate) state_changed: Vec<Value>,
    /// The ids of the runs it created (upstream's seam: `enqueuedRuns`).
    pub(crate) enqueued_runs: Vec<String>,
}

impl RequestedTick {
    /// Records a message the tick emitted, by its type.
    fn record(&mut self, event_type: &str, message: Value) {
        match event_type {
            "heartbeat.evaluated" => self.evaluated.push(message),
            "heartbeat.stateChanged" => self.state_changed.push(message),
            _ => {}
        }
    }
}

/// One tick of the heartbeat `heartbeat_id`, on request (upstream's tick seam): its predicate
/// observes `observed` (its state is `{"value": observed}`) and asks for a run in `tenant` (the
/// host creates it on a transition only), observing takes `observe_ms`, the
/// evaluation is bounded by the advertised `heartbeat.maxRuntimeMs`, and its prior state is the
/// store's, as a host heartbeat's. Its messages go to the host channel and into the answer.
pub(crate) async fn tick_on_request(
    state: &Arc<WState>,
    heartbeat_id: &str,
    tenant: &str,
    observed: Map<String, Value>,
    observe_ms: u64,
) -> RequestedTick {
    let queue = state.defects.heartbeat_queues_overlapping_ticks();
    // The defect waits for the prior evaluation and evaluates late instead of skipping.
    while queue && state.requested_ticks.running(heartbeat_id) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    if !state.requested_ticks.start(heartbeat_id) {
        return RequestedTick {
            skipped: true,
            ..RequestedTick::default()
        };
    }
    let answer = Arc::new(Mutex::new(RequestedTick::default()));
    let beat = Arc::new(Heartbeat {
        id: heartbeat_id.to_string(),
        config: HeartbeatConfig {
            id: heartbeat_id.to_string(),
            interval_sec: state.config.heartbeat.min_interval_sec,
            max_runtime_ms: state.config.heartbeat.max_runtime_ms,
            observe_delay_ms: observe_ms,
            predicate: PredicateConfig::Requested {
                value: Value::Object(observed),
                workflow_id: REQUESTED_TICK_WORKFLOW.to_string(),
                tenant: tenant.to_string(),
            },
        },
        sink: Sink::HostAndAnswer(Arc::clone(&answer)),
        prior: PriorState::Store,
    });
    evaluate(Arc::clone(state), Arc::clone(&beat)).await;
    state.requested_ticks.finish(heartbeat_id);
    std::mem::take(&mut *answer.lock().unwrap_or_else(|p| p.into_inner()))
}

/// The workflow of the runs a requested tick's heartbeat asks for (seeded in both catalogues).
const REQUESTED_TICK_WORKFLOW: &str = "conformance-noop";

/// Where a heartbeat's prior state lives.
enum PriorState {
    /// The store's key-value space (survives a restart with a durable store).
    Store,
    /// Memory (a per-subscription instance).
    Memory(Mutex<Option<Map<String, Value>>>),
}

/// One running heartbeat.
struct Heartbeat {
    /// The `heartbeatId` of its messages.
    id: String,
    config: HeartbeatConfig,
    sink: Sink,
    prior: PriorState,
}

/// Starts every host heartbeat on the current tokio runtime. The tasks hold the state weakly
/// and end once the router is gone.
pub(crate) fn start(state: &Arc<WState>) {
    let beats = state.config.heartbeat.heartbeats.clone();
    if beats.is_empty() {
        return;
    }
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        tracing::warn!("no tokio runtime: heartbeats are not started");
        return;
    };
    for config in beats {
        let beat = Heartbeat {
            id: config.id.clone(),
            config,
            sink: Sink::Host,
            prior: PriorState::Store,
        };
        runtime.spawn(ticker(Arc::downgrade(state), Arc::new(beat)));
    }
}

/// Starts a fresh instance of a per-subscription heartbeat whose messages go to `frames`.
/// Returns the ticker task: aborting it (when the subscription closes) stops the instance.
pub(crate) fn start_instance(
    state: &Arc<WState>,
    config: &HeartbeatConfig,
    frames: mpsc::UnboundedSender<SseFrame>,
) -> JoinHandle<()> {
    let suffix = uuid::Uuid::new_v4().simple().to_string();
    let beat = Heartbeat {
        id: format!("{}.{}", config.id, &suffix[..16]),
        config: config.clone(),
        sink: Sink::Subscription(frames),
        prior: PriorState::Memory(Mutex::new(None)),
    };
    tokio::spawn(ticker(Arc::downgrade(state), Arc::new(beat)))
}

async fn ticker(state: Weak<WState>, beat: Arc<Heartbeat>) {
    let Some(defects) = state.upgrade().map(|s| Arc::clone(&s.defects)) else {
        return;
    };
    let mut period = Duration::from_secs(beat.config.interval_sec);
    if defects.heartbeat_ticks_twice_per_interval() {
        period /= 2;
    }
    let mut ticks = interval_timer(period);
    // Overlap: a tick that falls while the prior evaluation runs is skipped (the substrate
    // drops it); the defect evaluates inline and lets missed ticks fire late, one by one.
    let queue = defects.heartbeat_queues_overlapping_ticks();
    if queue {
        ticks.set_missed_tick_behavior(MissedTickBehavior::Burst);
    }
    let mut running: Option<JoinHandle<()>> = None;
    loop {
        ticks.tick().await;
        let Some(state) = state.upgrade() else {
            return;
        };
        if queue {
            evaluate(state, Arc::clone(&beat)).await;
            continue;
        }
        if running.as_ref().is_some_and(|task| !task.is_finished()) {
            tracing::info!(heartbeat = %beat.id, "tick skipped: the prior evaluation still runs");
            continue;
        }
        running = Some(tokio::spawn(evaluate(state, Arc::clone(&beat))));
    }
}

impl Heartbeat {
    fn read_prior(&self, state: &WState) -> Result<Option<Map<String, Value>>, ()> {
        match &self.prior {
            PriorState::Store => match state.hub.store().kv_get(STATE_NAMESPACE, &self.id) {
                Ok(prior) => Ok(prior.and_then(|v| v.as_object().cloned())),
                Err(error) => {
                    tracing::error!(heartbeat = %self.id, %error, "reading heartbeat state failed");
                    Err(())
                }
            },
            PriorState::Memory(prior) => {
                Ok(prior.lock().unwrap_or_else(|p| p.into_inner()).clone())
            }
        }
    }

    fn write_state(&self, state: &WState, new: &Map<String, Value>) -> Result<(), ()> {
        match &self.prior {
            PriorState::Store => state
                .hub
                .store()
                .kv_put(STATE_NAMESPACE, &self.id, &Value::Object(new.clone()))
                .map_err(|error| {
                    tracing::error!(heartbeat = %self.id, %error, "persisting heartbeat state failed");
                }),
            PriorState::Memory(prior) => {
                *prior.lock().unwrap_or_else(|p| p.into_inner()) = Some(new.clone());
                Ok(())
            }
        }
    }
}

async fn evaluate(state: Arc<WState>, beat: Arc<Heartbeat>) {
    let Ok(prior) = beat.read_prior(&state) else {
        publish_evaluated(&state, &beat, HeartbeatStatus::Error, false);
        return;
    };
    let given_prior = if state.defects.heartbeat_prior_state_withheld() {
        None
    } else {
        prior.as_ref()
    };
    let evaluation = async {
        let observed = observe(&state, &beat).await;
        predicate(&beat.config.predicate, observed, given_prior)
    };
    let outcome = if state.defects.heartbeat_max_runtime_ignored() {
        Some(evaluation.await)
    } else {
        let bound = Duration::from_millis(beat.config.max_runtime_ms);
        tokio::time::timeout(bound, evaluation).await.ok()
    };
    let Some(decision) = outcome else {
        tracing::warn!(heartbeat = %beat.id, "evaluation overran max_runtime_ms");
        let status = if state.defects.heartbeat_overrun_as_error() {
            HeartbeatStatus::Error
        } else {
            HeartbeatStatus::Timeout
        };
        publish_evaluated(&state, &beat, status, false);
        return;
    };
    // The first tick is a transition from {}; the defect stores it silently instead.
    let seeds_silently = prior.is_none() && state.defects.heartbeat_first_tick_silent();
    let changed = !seeds_silently && prior.as_ref() != Some(&decision.state);
    if (changed || seeds_silently) && beat.write_state(&state, &decision.state).is_err() {
        publish_evaluated(&state, &beat, HeartbeatStatus::Error, false);
        return;
    }
    if changed || !state.defects.heartbeat_evaluated_only_on_change() {
        publish_evaluated(&state, &beat, HeartbeatStatus::Ok, changed);
    }
    if changed || state.defects.heartbeat_renotifies_unchanged() {
        let message = HeartbeatStateChanged {
            heartbeat_id: beat.id.clone(),
            from: prior.unwrap_or_default(),
            to: decision.state,
        };
        publish(
            &state,
            &beat,
            "heartbeat.stateChanged",
            HostEventDelivery::Durable,
            json!(message),
        );
    }
    // createRun on a transition only, when the predicate asks.
    let creates = if state.defects.heartbeat_create_run_ignored() {
        false
    } else {
        changed || state.defects.heartbeat_creates_run_on_unchanged()
    };
    if let Some(run) = decision.create_run.filter(|_| creates) {
        let owner =
            crate::openwop::infra::auth::workload_owner(&run.tenant, owner_subject(&beat.id));
        let created = NewRun::for_host(&state, &run.workflow_id, owner, Map::new())
            .and_then(|new_run| create_run(&state, new_run));
        match created {
            Ok(run_id) => {
                if let Sink::HostAndAnswer(answer) = &beat.sink {
                    let mut answer = answer.lock().unwrap_or_else(|p| p.into_inner());
                    answer.enqueued_runs.push(run_id);
                }
            }
            Err(error) => {
                tracing::error!(heartbeat = %beat.id, code = error.code(), "the heartbeat's run was not created");
            }
        }
    }
}

/// The subject of the runs a heartbeat creates.
fn owner_subject(heartbeat_id: &str) -> String {
    format!("heartbeat-{heartbeat_id}")
}

async fn observe(state: &WState, beat: &Heartbeat) -> Observed {
    if beat.config.observe_delay_ms > 0 {
        tokio::time::sleep(Duration::from_millis(beat.config.observe_delay_ms)).await;
    }
    let own_runs = match beat.config.predicate {
        PredicateConfig::CreatedRuns { .. } => count_runs_owned_by(state, &owner_subject(&beat.id)),
        _ => 0,
    };
    Observed {
        active_runs: state.live.active_count() as u64,
        own_runs,
    }
}

fn count_runs_owned_by(state: &WState, subject: &str) -> u64 {
    match state.hub.store().logs(Surface::Run) {
        Ok(logs) => logs
            .iter()
            .filter(|log| {
                log.meta
                    .pointer("/owner/subject/subjectId")
                    .and_then(Value::as_str)
                    == Some(subject)
            })
            .count() as u64,
        Err(error) => {
            tracing::error!(%error, "listing runs for a heartbeat failed");
            0
        }
    }
}

fn publish_evaluated(state: &WState, beat: &Heartbeat, status: HeartbeatStatus, changed: bool) {
    let message = HeartbeatEvaluated {
        heartbeat_id: beat.id.clone(),
        status,
        changed,
    };
    publish(
        state,
        beat,
        "heartbeat.evaluated",
        HostEventDelivery::Ephemeral,
        json!(message),
    );
}

fn publish(
    state: &WState,
    beat: &Heartbeat,
    event_type: &str,
    delivery: HostEventDelivery,
    mut payload: Value,
) {
    // The host channel carries no run data; the defect names the newest run.
    if state.defects.host_events_carry_run_id()
        && let Some(newest) = state
            .hub
            .store()
            .logs(Surface::Run)
            .ok()
            .and_then(|logs| logs.last().map(|log| log.id.clone()))
        && let Some(payload) = payload.as_object_mut()
    {
        payload.insert("runId".into(), Value::String(newest));
    }
    let event = HostEvent {
        event_id: state.config.choices.event_id_form.mint(),
        event_type: event_type.to_string(),
        timestamp: state.hub.clock().now(),
        delivery,
        workspace_id: None,
        payload,
    };
    let framing = state.config.choices.host_event_framing;
    match &beat.sink {
        Sink::Host => state.host_events.publish(&beat.id, &event, framing),
        Sink::HostAndAnswer(answer) => {
            answer
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .record(&event.event_type, event.payload.clone());
            state.host_events.publish(&beat.id, &event, framing);
        }
        Sink::Subscription(frames) => {
            if let Some(frame) = frame_of(&event, framing) {
                let _ = frames.send(frame);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::openwop::infra::config::CreateRunOnTransition;

    fn observed(active_runs: u64, own_runs: u64) -> Observed {
        Observed {
            active_runs,
            own_runs,
        }
    }

    #[test]
    fn predicates_are_pure_functions_of_observed_state() {
        let constant = PredicateConfig::Constant { value: json!("ok") };
        let a = predicate(&constant, observed(0, 0), None);
        let b = predicate(&constant, observed(9, 0), Some(&a.state));
        assert_eq!(a, b);
        let runs = PredicateConfig::ActiveRuns {
            threshold: 2,
            create_run: Some(CreateRunOnTransition {
                when_active: false,
                workflow_id: "conformance-noop".into(),
                tenant: "tenant-a".into(),
            }),
        };
        let idle = predicate(&runs, observed(1, 0), None);
        assert_eq!(idle.state["active"], false);
        assert!(idle.create_run.is_some());
        let busy = predicate(&runs, observed(2, 0), Some(&idle.state));
        assert_eq!(busy.state["active"], true);
        assert!(busy.create_run.is_none());
    }

    #[test]
    fn the_toggle_flips_only_when_given_the_prior_state() {
        let first = predicate(&PredicateConfig::Toggle, observed(0, 0), None);
        assert_eq!(first.state, object(json!({"on": true})));
        let second = predicate(&PredicateConfig::Toggle, observed(0, 0), Some(&first.state));
        assert_eq!(second.state, object(json!({"on": false})));
        let third = predicate(
            &PredicateConfig::Toggle,
            observed(0, 0),
            Some(&second.state),
        );
        assert_eq!(third.state, first.state);
    }

    #[test]
    fn created_runs_asks_on_the_first_tick_and_on_unchanged_ticks_only() {
        let config = PredicateConfig::CreatedRuns {
            workflow_id: "conformance-noop".into(),
            tenant: "tenant-a".into(),
        };
        let first = predicate(&config, observed(0, 0), None);
        assert_eq!(first.state, object(json!({"runs": 0})));
        assert!(first.create_run.is_some(), "the first tick asks");
        let second = predicate(&config, observed(0, 1), Some(&first.state));
        assert!(second.create_run.is_none(), "a changed state does not ask");
        let third = predicate(&config, observed(0, 1), Some(&second.state));
        assert_eq!(third.state, second.state);
        assert!(third.create_run.is_some(), "an unchanged state asks");
    }
}
