//! What every surface-W handler and task shares.

use std::sync::Arc;
use std::time::Duration;

use crate::known_bad::KnownBad;
use crate::log::LogHub;
use crate::openwop::infra::choices::CrossTenantAnswer;
use crate::store::{StoredEvent, Surface};

use super::host_bus::HostEventBus;
use super::subscribers::SubscriberSlots;
use crate::openwop::engine::ai::provider::ConfiguredProviders;
use crate::openwop::engine::live::LiveRuns;
use crate::openwop::engine::node_context::NodeEnv;
use crate::openwop::engine::workflow::Workflows;
use crate::openwop::infra::auth::{Caller, KeyTable};
use crate::openwop::infra::config::OpenWopConfig;
use crate::openwop::infra::era2;
use crate::openwop::infra::error::ApiError;
use crate::openwop::infra::projection::{Projection, RUN_META_KIND, RunMeta, parse_event};

/// Surface W's shared state.
pub(crate) struct WState {
    pub(crate) hub: Arc<LogHub>,
    pub(crate) defects: Arc<KnownBad>,
    /// The surface's one configuration (also reachable by node kinds through `nodes`).
    pub(crate) config: Arc<OpenWopConfig>,
    pub(crate) keys: KeyTable,
    pub(crate) workflows: Workflows,
    pub(crate) live: Arc<LiveRuns>,
    pub(crate) subscribers: SubscriberSlots,
    pub(crate) host_events: HostEventBus,
    pub(crate) providers: Option<ConfiguredProviders>,
    /// Serialises idempotency decisions with run creation.
    pub(crate) create_lock: tokio::sync::Mutex<()>,
    /// What node kinds may reach (the same hub, defects, live runs, catalog and configuration).
    pub(crate) nodes: Arc<NodeEnv>,
    /// Serialises annotation writes (read-modify-write of a run's side-store).
    pub(crate) annotations_lock: std::sync::Mutex<()>,
    /// How era-2 logs are read ([`era2::translate`] unless the composition root says else).
    pub(crate) era2_reader: era2::Era2Reader,
    /// The heartbeats whose tick on request (the tick seam) is being evaluated.
    pub(crate) requested_ticks: super::requested_ticks::RequestedTicks,
}

impl WState {
    /// The creation record of a run, or 404 when no surface-W run has that id.
    pub(crate) fn run_meta(&self, run_id: &str) -> Result<RunMeta, ApiError> {
        let record = self
            .hub
            .store()
            .log(run_id)
            .map_err(|error| {
                tracing::error!(%error, "reading a run record failed");
                ApiError::internal()
            })?
            .filter(|r| r.surface == Surface::Run)
            .ok_or_else(ApiError::not_found)?;
        serde_json::from_value::<RunMeta>(record.meta)
            .ok()
            .filter(|m| m.kind == RUN_META_KIND && m.run_id == run_id)
            .ok_or_else(ApiError::not_found)
    }

    /// The run a request path (`/runs/{runId}/…`) names, if the caller may read it: 400 for a
    /// malformed id, 403 for another tenant's id (404 under [`CrossTenantAnswer::NotFound`]),
    /// 404 for no such run.
    pub(crate) fn readable_run(&self, caller: &Caller, path: &str) -> Result<RunMeta, ApiError> {
        let segment = path.split('/').nth(2).unwrap_or_default();
        if !self.config.choices.run_id_path_forms.reads(segment) {
            return Err(ApiError::not_found());
        }
        let run_id = crate::openwop::infra::ids::run_id_from_path(path, caller).map_err(
            |refusal| match self.config.choices.cross_tenant {
                CrossTenantAnswer::NotFound if refusal.code() == "id_tenant_mismatch" => {
                    ApiError::not_found()
                }
                _ => refusal,
            },
        )?;
        self.run_meta(&run_id)
    }

    /// The run's events with `sequence > after`, as every reader must see them: an era-2 log
    /// is translated (500 `event_type_unmapped` / `payload_unprojectable` when it cannot be).
    pub(crate) fn read_events(
        &self,
        meta: &RunMeta,
        after: Option<u64>,
    ) -> Result<Vec<StoredEvent>, ApiError> {
        let events = self.hub.read_after(&meta.run_id, after).map_err(|error| {
            tracing::error!(%error, "reading a run log failed");
            ApiError::internal()
        })?;
        self.translate(meta, events)
    }

    /// `events` of the run as readers see them (era-2 logs translated).
    pub(crate) fn translate(
        &self,
        meta: &RunMeta,
        events: Vec<StoredEvent>,
    ) -> Result<Vec<StoredEvent>, ApiError> {
        if meta.event_log_schema_version == Some(era2::ERA_2) {
            (self.era2_reader)(events)
        } else {
            Ok(events)
        }
    }

    /// The projection of everything in the run's log so far.
    pub(crate) fn project(&self, meta: &RunMeta) -> Result<Projection, ApiError> {
        let mut projection = Projection::new(meta.clone());
        let events = self.read_events(meta, None)?;
        for event in events {
            if let Some(doc) = parse_event(&event.json) {
                projection.apply(&doc);
            }
        }
        Ok(projection)
    }

    /// The keep-alive interval of event streams.
    pub(crate) fn keep_alive(&self) -> Option<Duration> {
        Some(Duration::from_secs(self.config.keep_alive_secs))
    }
}
