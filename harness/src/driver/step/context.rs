//! What every step executor needs: the driver and target, the case's scope and time, and the
//! step's name and location (instead of eight arguments).

use std::time::Duration;

use tokio::time::Instant;

use crate::case::{CaseSurface, Principal};
use crate::driver::http::HttpDriver;
use crate::driver::run_ends::RunEnds;
use crate::host::Target;
use crate::template::Scope;
use crate::transcript::{Exchange, StepRecord};

/// One step's execution context.
pub(crate) struct StepContext<'a> {
    /// The HTTP driver.
    pub driver: &'a HttpDriver,
    /// The target.
    pub target: &'a Target,
    /// Every wait is multiplied by this.
    pub time_scale: f64,
    /// The step's name (its id, or its position).
    pub name: String,
    /// The step's JSON pointer in the case.
    pub location: String,
    /// The surface the case drives.
    pub surface: CaseSurface,
    /// The case's variables and earlier steps.
    pub scope: &'a Scope,
    /// When the case's budget runs out.
    pub deadline: Instant,
    /// When the case started.
    pub started: Instant,
    /// When the runs the case's streams follow ended, as its streams saw them.
    pub run_ends: &'a RunEnds,
}

/// The chapter's bound on a host's keep-alive interval ("a keep-alive comment at least every 30
/// seconds"): the interval assumed for a host whose `keepalive_interval_ms` is not known.
pub(crate) const KEEPALIVE_BOUND_MS: u64 = 30_000;

/// What a stream on a run that ended is given beyond one keep-alive interval to close (the
/// network, the host's scheduling).
pub(crate) const CLOSE_MARGIN_MS: u64 = 1_000;

impl StepContext<'_> {
    /// How long a stream on a run that already ended may stay open before its host has broken
    /// "MUST close the connection after the run's terminal event": one keep-alive interval from
    /// the request (the target's `keepalive_interval_ms`, else [`KEEPALIVE_BOUND_MS`]) plus
    /// [`CLOSE_MARGIN_MS`], times `--time-scale`.
    pub(crate) fn close_window(&self) -> Duration {
        let interval = self
            .target
            .facts
            .get("keepalive_interval_ms")
            .and_then(serde_json::Value::as_u64)
            .unwrap_or(KEEPALIVE_BOUND_MS)
            .min(KEEPALIVE_BOUND_MS);
        Duration::from_millis(interval + CLOSE_MARGIN_MS).mul_f64(self.time_scale.max(0.01))
    }

    /// Who a request authenticates as unless it says: nobody on surface X, principal `a` on
    /// surface W.
    pub(crate) fn default_principal(&self) -> Principal {
        match self.surface {
            CaseSurface::Execution => Principal::None,
            CaseSurface::Openwop => Principal::A,
        }
    }

    /// The step's record of `action`.
    pub(crate) fn record(
        &self,
        action: &str,
        exchanges: Vec<Exchange>,
        completed: bool,
    ) -> StepRecord {
        StepRecord {
            not_taken: None,
            step: self.name.clone(),
            location: self.location.clone(),
            action: action.to_string(),
            exchanges,
            bindings: self
                .scope
                .vars
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            completed,
            provider_calls: Vec::new(),
            exchanges_dropped: 0,
            refusals_waited_out: 0,
        }
    }
}
