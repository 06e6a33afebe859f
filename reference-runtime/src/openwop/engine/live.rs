//! The control side of runs that are executing: how to cancel them and the interrupt a suspended
//! run waits on. The log is the state; this is only what a live engine task needs to be told.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use serde_json::Value;
use tokio::sync::{oneshot, watch};

use crate::openwop::infra::error::ApiError;

/// An open interrupt of a suspended node.
#[derive(Debug)]
pub(crate) struct PendingInterrupt {
    pub(crate) node_id: String,
    pub(crate) interrupt_id: String,
    pub(crate) kind: String,
    pub(crate) actions: Vec<String>,
    pub(crate) resume: oneshot::Sender<Value>,
}

struct LiveRun {
    cancel: watch::Sender<bool>,
    pending: Option<PendingInterrupt>,
    resolved: HashSet<String>,
}

/// The runs whose engine task is running.
#[derive(Default)]
pub(crate) struct LiveRuns {
    runs: Mutex<HashMap<String, LiveRun>>,
}

impl LiveRuns {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, LiveRun>> {
        self.runs.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers a run; the receiver turns `true` when the run is cancelled.
    pub(crate) fn register(&self, run_id: &str) -> watch::Receiver<bool> {
        let (cancel, cancelled) = watch::channel(false);
        self.lock().insert(
            run_id.to_string(),
            LiveRun {
                cancel,
                pending: None,
                resolved: HashSet::new(),
            },
        );
        cancelled
    }

    /// The engine task ended.
    pub(crate) fn finish(&self, run_id: &str) {
        self.lock().remove(run_id);
    }

    /// Tells the engine task to stop. Returns whether the run was live.
    pub(crate) fn cancel(&self, run_id: &str) -> bool {
        self.lock()
            .get(run_id)
            .map(|run| run.cancel.send_replace(true))
            .is_some()
    }

    /// How many runs are executing (the heartbeat's observed state).
    pub(crate) fn active_count(&self) -> usize {
        self.lock().len()
    }

    /// Suspends a node: `announce` appends the suspension events and, when it succeeds, the
    /// interrupt opens. Both happen under the lock resolutions take, so a resolution can never be
    /// recorded between the suspension events or before them.
    pub(crate) fn suspend<E>(
        &self,
        run_id: &str,
        pending: PendingInterrupt,
        announce: impl FnOnce() -> Result<(), E>,
    ) -> Result<(), E> {
        let mut runs = self.lock();
        announce()?;
        if let Some(run) = runs.get_mut(run_id) {
            run.pending = Some(pending);
        }
        Ok(())
    }

    /// Resolves the open interrupt of `node_id`: `decide` runs under the lock with the open
    /// interrupt and either refuses or returns the resume value (after recording the resolution);
    /// the value is then handed to the waiting node. Two concurrent resolutions cannot both win.
    pub(crate) fn resolve(
        &self,
        run_id: &str,
        node_id: &str,
        decide: impl FnOnce(&PendingInterrupt) -> Result<Value, ApiError>,
    ) -> Result<(), ApiError> {
        let mut runs = self.lock();
        let run = runs.get_mut(run_id).ok_or_else(interrupt_not_found)?;
        let open = run.pending.as_ref().is_some_and(|p| p.node_id == node_id);
        if !open {
            return Err(if run.resolved.contains(node_id) {
                tracing::info!(run_id, node_id, "refused a duplicate interrupt resolution");
                ApiError::new(
                    "interrupt_already_resolved",
                    "the node's interrupt is already resolved",
                )
            } else {
                interrupt_not_found()
            });
        }
        let pending = run.pending.as_ref().ok_or_else(interrupt_not_found)?;
        let value = decide(pending)?;
        if let Some(pending) = run.pending.take() {
            run.resolved.insert(pending.node_id);
            if pending.resume.send(value).is_err() {
                tracing::warn!(run_id, node_id, "the suspended node stopped waiting");
            }
        }
        Ok(())
    }
}

fn interrupt_not_found() -> ApiError {
    ApiError::new(
        "interrupt_not_found",
        "the node has no open interrupt in this run",
    )
}
