//! `RunSnapshot`: the projection `GET /runs/{runId}` and `state.snapshot` frames carry.

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

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

/// The error a failed run carries.
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

/// The closed run snapshot. A v2 snapshot carries no run outputs: they are observed on
/// `run.completed.outputs`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(title = "RunSnapshot")]
pub struct RunSnapshot {
    /// The tenant-bound run id.
    pub run_id: String,
    /// The workflow the run executes.
    pub workflow_id: String,
    /// The status.
    pub status: RunStatus,
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
    pub current_node_id: Option<String>,
    /// Set when the run failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<RunError>,
    /// Per-node state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_states: Option<Map<String, Value>>,
    /// Run variables.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variables: Option<Map<String, Value>>,
    /// The run's creation inputs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs: Option<Map<String, Value>>,
    /// Tags from creation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    /// Metadata from creation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// Host-specific state, keyed `<org>.<name>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Map<String, Value>>,
}
