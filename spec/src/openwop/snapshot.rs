//! `RunSnapshot`: the projection `GET /runs/{runId}` and `state.snapshot` frames carry.
//!
//! States `schemas/v2/run-snapshot.schema.json` of `openwop/openwop-sdks` at commit
//! `04b5b6a0bd1855d8a9a25008bfda6719325de64c` (transcribed in
//! `spec/upstream/facts/run-snapshot.json`): every property upstream declares, the same required
//! set, closed root.

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::ids;
use super::subject::Owner;

/// A run's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RunStatus {
    /// Created, not started.
    Pending,
    /// Executing.
    Running,
    /// Paused.
    Paused,
    /// Suspended on an approval interrupt.
    WaitingApproval,
    /// Suspended on a clarification interrupt.
    WaitingInput,
    /// Suspended on an external event.
    WaitingExternal,
    /// Terminal: completed.
    Completed,
    /// Terminal: failed.
    Failed,
    /// A cancel was accepted and is being carried out.
    Cancelling,
    /// Terminal: cancelled.
    Cancelled,
}

impl RunStatus {
    /// The terminal statuses.
    pub const TERMINAL: [RunStatus; 3] = [Self::Completed, Self::Failed, Self::Cancelled];

    /// Whether the status is terminal.
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Cancelled)
    }

    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Running => "running",
            Self::Paused => "paused",
            Self::WaitingApproval => "waiting-approval",
            Self::WaitingInput => "waiting-input",
            Self::WaitingExternal => "waiting-external",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Cancelling => "cancelling",
            Self::Cancelled => "cancelled",
        }
    }
}

/// The error a failed run carries (`RunSnapshot.error`, closed; no extension hatch upstream).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunError {
    /// A registered or vendor error code.
    #[schemars(length(min = 1))]
    pub code: String,
    /// A human-readable message.
    #[schemars(length(min = 1))]
    pub message: String,
    /// Context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Map<String, Value>>,
}

/// The run's compensation (unwind) rollup, kept apart from `status`. Present exactly when the
/// host advertises the `compensation` family (`none` when no compensation was requested).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CompensationStatus {
    /// No `compensation.requested`.
    None,
    /// Requested, not started.
    Pending,
    /// Started, plan active.
    Running,
    /// Every inverse action completed.
    Completed,
    /// Plan inactive; some completed and some did not.
    Partial,
    /// Plan inactive; none completed.
    Failed,
    /// `manual_intervention_required` recorded and unresolved.
    Manual,
}

/// `RunSnapshot.metrics` (closed): aggregate run-level metrics, populated lazily.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RunMetrics {
    /// The spec-canonical cost rollup.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub openwop_cost: Option<OpenwopCost>,
}

/// `RunSnapshot.metrics.openwopCost` (closed).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OpenwopCost {
    /// Total USD cost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0))]
    pub usd: Option<f64>,
    /// Token totals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<CostTokens>,
    /// Model of the most recent cost record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Normalised provider name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// Sum of per-call durations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
}

/// `RunSnapshot.metrics.openwopCost.tokens` (closed).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CostTokens {
    /// Input tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<u64>,
    /// Output tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<u64>,
}

/// The grammar of an `extensions` key, `<org>.<name>` (snapshot, discovery).
pub const EXTENSIONS_KEY_PATTERN: &str =
    r"^[a-z][a-z0-9]*(-[a-z0-9]+)*\.[a-z][a-z0-9]*(-[a-z0-9]+)*$";

/// `extensions`: a closed object whose keys are `<org>.<name>` and whose values are open
/// objects (the org's own shape).
pub(crate) fn extensions_schema(schema: &mut schemars::Schema) {
    let description = schema.get("description").cloned();
    let mut replacement = serde_json::json!({
        "type": "object",
        "additionalProperties": false,
        "patternProperties": {
            EXTENSIONS_KEY_PATTERN: {"type": "object", "additionalProperties": true}
        }
    });
    if let (Some(description), Some(object)) = (description, replacement.as_object_mut()) {
        object.insert("description".into(), description);
    }
    *schema = schemars::Schema::try_from(replacement).expect("an object is a schema");
}

/// The closed run snapshot. A v2 snapshot carries no run outputs: they are observed on
/// `run.completed.outputs`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(title = "RunSnapshot")]
pub struct RunSnapshot {
    /// The tenant-bound run id.
    #[schemars(with = "ids::RunId")]
    pub run_id: String,
    /// The workflow the run executes.
    #[schemars(with = "ids::WorkflowId")]
    pub workflow_id: String,
    /// The status.
    pub status: RunStatus,
    /// The compensation rollup; present exactly when the host advertises `compensation`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compensation_status: Option<CompensationStatus>,
    /// The owner; `run.started` echoes it exactly.
    pub owner: Owner,
    /// 3 for logs a v2 host writes, 2 for v1-written logs.
    #[schemars(range(min = 2))]
    pub event_log_schema_version: u32,
    /// When the run started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<DateTime<Utc>>,
    /// When the run reached its terminal state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<DateTime<Utc>>,
    /// The suspended node, while suspended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ids::NodeId>")]
    pub current_node_id: Option<String>,
    /// The run-level agent identity (the active worker).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<super::agent_ref::AgentRef>,
    /// The run-lifetime orchestrator identity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_orchestrator: Option<super::agent_ref::AgentRef>,
    /// Set when the run failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<RunError>,
    /// Per-node state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_states: Option<Map<String, Value>>,
    /// Run variables.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variables: Option<Map<String, Value>>,
    /// Typed state channels, when the workflow declares them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channels: Option<Map<String, Value>>,
    /// The engine version the run was started under (integer ≥ 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_version: Option<u64>,
    /// The run's creation inputs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs: Option<Map<String, Value>>,
    /// Tags from creation (≤ 100, each ≤ 256 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 100), inner(length(max = 256)))]
    pub tags: Option<Vec<String>>,
    /// Metadata from creation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// The per-run `configurable` overlay from creation (open upstream).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configurable: Option<Map<String, Value>>,
    /// Aggregate run-level metrics.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics: Option<RunMetrics>,
    /// The run this one was forked from; absent on a root run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ids::RunId>")]
    pub parent_run_id: Option<String>,
    /// Host-specific state: a closed object keyed `<org>.<name>`, each value an object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = extensions_schema)]
    pub extensions: Option<Map<String, Value>>,
}
