//! Interval schedules: the `scheduling` capability, and the interval substrate heartbeats share.
//!
//! The events chapter says a host advertising `heartbeat` SHOULD also advertise `scheduling`,
//! and otherwise MUST document its own interval substrate. This host does both: discovery
//! advertises the `scheduling` record (with only the facets upstream's `scheduling` record
//! admits: `cron`, `delayed` and `calendar`, all `false`, see `discovery`), and this module
//! documents the substrate the record stands for:
//!
//! - the substrate its heartbeats tick on ([`interval_timer`], an in-process tokio interval
//!   started with the router) also drives schedules: a schedule fires every `interval_sec` (no
//!   cron expressions, no one-shot delayed or calendar times);
//! - the smallest interval a schedule may use is `scheduling.min_interval_sec`;
//! - a tick that falls while the schedule's previous run is not terminal is skipped (logged),
//!   never queued, the same rule as a heartbeat's overlapping tick;
//! - schedules are the `[[openwop.scheduling.schedules]]` of the runtime's configuration; there
//!   is no endpoint to create, list or delete them.
//!
//! Each tick of a schedule creates a run of its seeded workflow with its configured inputs, in
//! its tenant, owned by the subject `schedule-<id>`. A schedule whose workflow is not seeded or
//! whose inputs the workflow refuses is logged at start and never ticks. The tasks hold the
//! state weakly: they stop once the router is dropped.

use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::time::{Instant, Interval, MissedTickBehavior};

use super::runs::{NewRun, create_run};
use super::state::WState;
use crate::openwop::infra::config::ScheduleConfig;

/// The interval substrate of schedules and heartbeats: an in-process tokio interval whose first
/// tick comes one `period` after now; a tick the task could not take on time moves the ones
/// after it (`MissedTickBehavior::Delay`), so consecutive ticks are always at least `period`
/// apart, even on a loaded machine (never a late tick followed at once by an on-time one, nor a
/// burst).
pub(crate) fn interval_timer(period: Duration) -> Interval {
    let mut ticks = tokio::time::interval_at(Instant::now() + period, period);
    ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
    ticks
}

/// The subject owning a schedule's runs.
fn owner(schedule: &ScheduleConfig) -> spec::openwop::Owner {
    crate::openwop::infra::auth::workload_owner(
        &schedule.tenant,
        format!("schedule-{}", schedule.id),
    )
}

/// Starts every configured schedule whose workflow and inputs are valid, on the current tokio
/// runtime.
pub(crate) fn start(state: &Arc<WState>) {
    let schedules = state.config.scheduling.schedules.clone();
    if schedules.is_empty() {
        return;
    }
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        tracing::warn!("no tokio runtime: schedules are not started");
        return;
    };
    for schedule in schedules {
        let check = NewRun::for_host(
            state,
            &schedule.workflow_id,
            owner(&schedule),
            schedule.inputs.clone(),
        );
        if let Err(error) = check {
            tracing::error!(
                schedule = %schedule.id,
                code = error.code(),
                "the schedule's workflow or inputs are refused; it is not started"
            );
            continue;
        }
        runtime.spawn(ticker(Arc::downgrade(state), schedule));
    }
}

async fn ticker(state: Weak<WState>, schedule: ScheduleConfig) {
    let mut ticks = interval_timer(Duration::from_secs(schedule.interval_sec));
    let mut previous: Option<String> = None;
    loop {
        ticks.tick().await;
        let Some(state) = state.upgrade() else {
            return;
        };
        if let Some(run_id) = &previous
            && !is_terminal(&state, run_id)
        {
            tracing::info!(schedule = %schedule.id, "tick skipped: the previous run is still going");
            continue;
        }
        let created = NewRun::for_host(
            &state,
            &schedule.workflow_id,
            owner(&schedule),
            schedule.inputs.clone(),
        )
        .and_then(|run| create_run(&state, run));
        match created {
            Ok(run_id) => {
                tracing::info!(schedule = %schedule.id, %run_id, "scheduled run created");
                previous = Some(run_id);
            }
            Err(error) => {
                tracing::error!(schedule = %schedule.id, code = error.code(), "the scheduled run was not created");
            }
        }
    }
}

/// Whether a run has its terminal event (a run whose log cannot be read counts as terminal, so
/// a storage fault never stops a schedule for good).
fn is_terminal(state: &WState, run_id: &str) -> bool {
    state
        .hub
        .store()
        .log(run_id)
        .map(|log| log.is_none_or(|log| log.terminal))
        .unwrap_or(true)
}
