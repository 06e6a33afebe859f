//! What the engine and its node kinds share: a node's result vocabulary and the run's context,
//! which gives node kinds a narrow environment ([`NodeEnv`]) rather than the whole shared state.

use std::sync::Arc;

use serde_json::{Map, Value};
use spec::openwop::payloads::{ErrorObject, ProviderUsage};
use tokio::sync::watch;

use crate::known_bad::KnownBad;
use crate::log::{AppendError, LogHub};

use super::live::LiveRuns;
use super::workflow::Workflow;
use crate::openwop::engine::ai::plan::AiPlan;
use crate::openwop::engine::envelopes::catalog::KindCatalog;
use crate::openwop::infra::config::OpenWopConfig;
use crate::openwop::infra::recorder::Recorder;

/// What node kinds may reach beyond their own run: the log hub, the switched-on defects, the
/// live-run table, the envelope-kind catalog and the surface's configuration. Built once from
/// the shared state; nothing else of it is reachable from a node.
pub(crate) struct NodeEnv {
    pub(crate) hub: Arc<LogHub>,
    pub(crate) defects: Arc<KnownBad>,
    pub(crate) live: Arc<LiveRuns>,
    pub(crate) catalog: Arc<KindCatalog>,
    /// The surface's one configuration (the same `Arc` the shared state holds): node kinds read
    /// `envelopes`, `provider_usage` and `choices` from it.
    pub(crate) config: Arc<OpenWopConfig>,
    /// Programs posted to upstream's mock-AI program seam, not yet taken by a run.
    pub(crate) mock_programs: Arc<super::envelopes::seam_program::MockPrograms>,
}

/// What a node produced.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct NodeSuccess {
    /// Port → value.
    pub(crate) outputs: Map<String, Value>,
    /// One `provider.usage` payload per provider call the node made.
    pub(crate) usage: Vec<ProviderUsage>,
}

/// How a node failed, with the provider usage of its calls.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct NodeFailure {
    pub(crate) error: ErrorObject,
    pub(crate) usage: Vec<ProviderUsage>,
    /// How often the node was dispatched (`node.failed.attempts`).
    pub(crate) attempts: u32,
}

/// Why a node did not complete.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum NodeError {
    /// The node failed (no retries: `node.failed` then `run.failed`).
    Failed(Box<NodeFailure>),
    /// The run was cancelled or its log is terminal: stop without appending.
    Stopped,
}

impl NodeError {
    /// A node failure.
    pub(crate) fn failed(error: ErrorObject, usage: Vec<ProviderUsage>) -> Self {
        Self::failed_after(error, usage, 1)
    }

    /// A node failure after `attempts` dispatches.
    pub(crate) fn failed_after(
        error: ErrorObject,
        usage: Vec<ProviderUsage>,
        attempts: u32,
    ) -> Self {
        NodeError::Failed(Box::new(NodeFailure {
            error,
            usage,
            attempts: attempts.max(1),
        }))
    }
}

/// Everything one run's task needs.
pub(crate) struct RunContext {
    /// What node kinds may reach beyond their run.
    pub(crate) env: Arc<NodeEnv>,
    pub(crate) recorder: Recorder,
    pub(crate) workflow: Workflow,
    pub(crate) variables: Map<String, Value>,
    pub(crate) inputs: Map<String, Value>,
    pub(crate) ai: AiPlan,
    pub(crate) tenant: String,
    pub(crate) cancelled: watch::Receiver<bool>,
}

impl RunContext {
    /// The run.
    pub(crate) fn run_id(&self) -> &str {
        self.recorder.run_id()
    }

    /// The run's creation inputs.
    pub(crate) fn inputs(&self) -> &Map<String, Value> {
        &self.inputs
    }

    /// What AI nodes call.
    pub(crate) fn ai_plan(&self) -> &AiPlan {
        &self.ai
    }

    /// Resolves once the run is cancelled (never, if it is not).
    pub(crate) async fn cancelled(&self) {
        let mut cancelled = self.cancelled.clone();
        if cancelled.wait_for(|c| *c).await.is_err() {
            std::future::pending::<()>().await;
        }
    }

    /// Whether the run is cancelled.
    pub(crate) fn is_cancelled(&self) -> bool {
        *self.cancelled.borrow()
    }

    /// Appends one event whose `causationId` is an AI envelope's `correlationId`.
    pub(crate) fn record_caused(
        &self,
        event_type: &str,
        node_id: Option<&str>,
        payload: Value,
        causation_id: Option<&str>,
    ) -> Result<(), NodeError> {
        self.recorder
            .record_caused(event_type, node_id, payload, causation_id)
            .map(|_| ())
            .map_err(|error| stopped(self.run_id(), error))
    }

    /// Appends one event; a refused append (the log is terminal) stops the node.
    pub(crate) fn record(
        &self,
        event_type: &str,
        node_id: Option<&str>,
        payload: Value,
    ) -> Result<(), NodeError> {
        self.recorder
            .record(event_type, node_id, payload)
            .map(|_| ())
            .map_err(|error| stopped(self.run_id(), error))
    }
}

fn stopped(run_id: &str, error: AppendError) -> NodeError {
    if let AppendError::Store(store) = &error {
        tracing::error!(run_id, error = %store, "run event storage failed; the run stops");
    }
    NodeError::Stopped
}
