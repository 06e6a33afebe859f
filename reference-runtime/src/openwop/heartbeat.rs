//! Heartbeats: a predicate evaluated on an interval that acts only on a state change.
//!
//! Each tick: a tick that falls while the prior evaluation still runs is skipped, never queued;
//! the evaluation (observe the host, then the pure predicate) is bounded by `max_runtime_ms` and
//! an overrun ends with `status: timeout`; `heartbeat.evaluated` is emitted every evaluated tick;
//! on a transition only (the first tick is one, from `{}`) the new state is persisted in the
//! store's key-value space, `heartbeat.stateChanged` is emitted and, if the predicate asks, a
//! run is created. The predicate itself performs no side effect. With a durable store a restart
//! resumes from the persisted state and does not re-notify.

use std::sync::{Arc, Weak};
use std::time::Duration;

use serde_json::{Map, Value, json};
use spec::openwop::{
    HeartbeatEvaluated, HeartbeatStateChanged, HeartbeatStatus, HostEvent, HostEventDelivery,
};
use tokio::task::JoinHandle;
use tokio::time::{Instant, MissedTickBehavior};

use super::config::{CreateRunOnTransition, HeartbeatConfig, PredicateConfig};
use super::ids::mint_event_id;
use super::runs::{NewRun, create_run};
use super::state::WState;

/// The store namespace of persisted heartbeat state.
pub(crate) const STATE_NAMESPACE: &str = "openwop.heartbeat";

/// What a heartbeat observes of the host (aggregates only, never run data).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Observed {
    /// Runs whose engine task is executing.
    pub(crate) active_runs: u64,
}

/// A predicate's answer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Decision {
    /// The new state.
    pub(crate) state: Map<String, Value>,
    /// The run to create if this is a transition.
    pub(crate) create_run: Option<CreateRunOnTransition>,
}

/// The built-in predicates: pure functions of the observed state and the prior state.
pub(crate) fn predicate(
    config: &PredicateConfig,
    observed: Observed,
    _prior: Option<&Map<String, Value>>,
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
                create_run: create_run.clone().filter(|run| run.when_active == active),
            }
        }
    }
}

fn object(value: Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap_or_default()
}

/// Starts every configured heartbeat on the current tokio runtime. The tasks hold the state
/// weakly and end once the router is gone.
pub(crate) fn start(state: &Arc<WState>) {
    let beats = state.config.heartbeat.heartbeats.clone();
    if beats.is_empty() {
        return;
    }
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        tracing::warn!("no tokio runtime: heartbeats are not started");
        return;
    };
    for beat in beats {
        runtime.spawn(ticker(Arc::downgrade(state), beat));
    }
}

async fn ticker(state: Weak<WState>, beat: HeartbeatConfig) {
    let period = Duration::from_secs(beat.interval_sec);
    let mut ticks = tokio::time::interval_at(Instant::now() + period, period);
    ticks.set_missed_tick_behavior(MissedTickBehavior::Skip);
    let mut running: Option<JoinHandle<()>> = None;
    loop {
        ticks.tick().await;
        let Some(state) = state.upgrade() else {
            return;
        };
        if running.as_ref().is_some_and(|task| !task.is_finished()) {
            tracing::info!(heartbeat = %beat.id, "tick skipped: the prior evaluation still runs");
            continue;
        }
        running = Some(tokio::spawn(evaluate(state, beat.clone())));
    }
}

async fn evaluate(state: Arc<WState>, beat: HeartbeatConfig) {
    let store = state.hub.store();
    let prior = match store.kv_get(STATE_NAMESPACE, &beat.id) {
        Ok(prior) => prior.and_then(|v| v.as_object().cloned()),
        Err(error) => {
            tracing::error!(heartbeat = %beat.id, %error, "reading heartbeat state failed");
            publish_evaluated(&state, &beat.id, HeartbeatStatus::Error, false);
            return;
        }
    };
    let bound = Duration::from_millis(beat.max_runtime_ms);
    let evaluation = async {
        let observed = observe(&state, &beat).await;
        predicate(&beat.predicate, observed, prior.as_ref())
    };
    let Ok(decision) = tokio::time::timeout(bound, evaluation).await else {
        tracing::warn!(heartbeat = %beat.id, "evaluation overran max_runtime_ms");
        publish_evaluated(&state, &beat.id, HeartbeatStatus::Timeout, false);
        return;
    };
    let changed = prior.as_ref() != Some(&decision.state);
    if changed
        && let Err(error) = store.kv_put(
            STATE_NAMESPACE,
            &beat.id,
            &Value::Object(decision.state.clone()),
        )
    {
        tracing::error!(heartbeat = %beat.id, %error, "persisting heartbeat state failed");
        publish_evaluated(&state, &beat.id, HeartbeatStatus::Error, false);
        return;
    }
    publish_evaluated(&state, &beat.id, HeartbeatStatus::Ok, changed);
    if !changed {
        return;
    }
    let message = HeartbeatStateChanged {
        heartbeat_id: beat.id.clone(),
        from: prior.unwrap_or_default(),
        to: decision.state,
    };
    publish(
        &state,
        "heartbeat.stateChanged",
        HostEventDelivery::Durable,
        json!(message),
    );
    if let Some(run) = decision.create_run {
        let owner = spec::openwop::Owner {
            tenant: run.tenant.clone(),
            workspace: None,
            subject: format!("heartbeat-{}", beat.id),
        };
        let created = NewRun::for_heartbeat(&state, &run.workflow_id, owner)
            .and_then(|new_run| create_run(&state, new_run));
        if let Err(error) = created {
            tracing::error!(heartbeat = %beat.id, code = error.code(), "the heartbeat's run was not created");
        }
    }
}

async fn observe(state: &WState, beat: &HeartbeatConfig) -> Observed {
    if beat.observe_delay_ms > 0 {
        tokio::time::sleep(Duration::from_millis(beat.observe_delay_ms)).await;
    }
    Observed {
        active_runs: state.live.active_count() as u64,
    }
}

fn publish_evaluated(state: &WState, id: &str, status: HeartbeatStatus, changed: bool) {
    let message = HeartbeatEvaluated {
        heartbeat_id: id.to_string(),
        status,
        changed,
    };
    publish(
        state,
        "heartbeat.evaluated",
        HostEventDelivery::Ephemeral,
        json!(message),
    );
}

fn publish(state: &WState, event_type: &str, delivery: HostEventDelivery, payload: Value) {
    state.host_events.publish(&HostEvent {
        event_id: mint_event_id(),
        event_type: event_type.to_string(),
        timestamp: state.hub.clock().now(),
        delivery,
        payload,
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::openwop::config::CreateRunOnTransition;

    #[test]
    fn predicates_are_pure_functions_of_observed_state() {
        let constant = PredicateConfig::Constant { value: json!("ok") };
        let a = predicate(&constant, Observed { active_runs: 0 }, None);
        let b = predicate(&constant, Observed { active_runs: 9 }, Some(&a.state));
        assert_eq!(a, b);
        let runs = PredicateConfig::ActiveRuns {
            threshold: 2,
            create_run: Some(CreateRunOnTransition {
                when_active: false,
                workflow_id: "conformance-noop".into(),
                tenant: "tenant-a".into(),
            }),
        };
        let idle = predicate(&runs, Observed { active_runs: 1 }, None);
        assert_eq!(idle.state["active"], false);
        assert!(idle.create_run.is_some());
        let busy = predicate(&runs, Observed { active_runs: 2 }, Some(&idle.state));
        assert_eq!(busy.state["active"], true);
        assert!(busy.create_run.is_none());
    }
}
