//! The orchestrator dispatch and transcript payloads: upstream defs `nodeDispatched`,
//! `dispatchFanOut`, `dispatchJoin` and `contextSummarized` of `openwop/openwop-sdks`
//! `schemas/v2/run-event-payloads.schema.json` @ `446c2f2c22ff059d475228b86395ff92d27329a1`:
//! all closed, no hatch.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::openwop::ids;

/// `node.dispatched` (def `nodeDispatched`): one spawned child run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeDispatched {
    /// The spawned child run.
    #[schemars(with = "ids::RunId")]
    pub child_run_id: String,
    /// The child's workflow.
    #[schemars(with = "ids::WorkflowId")]
    pub child_workflow_id: String,
    /// The child's status when the dispatch step returned (an open string).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub child_status: Option<String>,
}

/// `dispatch.fanned-out` (def `dispatchFanOut`): a parallel wave began.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DispatchFanOut {
    /// Always `parallel`.
    #[schemars(extend("const" = "parallel"))]
    pub fan_out_policy: String,
    /// Children dispatched (≥ 2).
    #[schemars(range(min = 2))]
    pub child_count: u64,
    /// The effective concurrency ceiling (≥ 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub max_concurrency: Option<u64>,
    /// `wait-all`, `quorum`, `first` or `race`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["wait-all", "quorum", "first", "race"]))]
    pub join_mode: Option<String>,
}

/// `dispatch.joined` (def `dispatchJoin`): a parallel join was satisfied or failed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DispatchJoin {
    /// `satisfied`, `failed` or `partial`.
    #[schemars(extend("enum" = ["satisfied", "failed", "partial"]))]
    pub join_outcome: String,
    /// Children that completed.
    pub completed_count: u64,
    /// Children that failed.
    pub failed_count: u64,
    /// Children cancelled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancelled_count: Option<u64>,
    /// Child run ids in observed terminal order (plain strings upstream).
    pub merge_order: Vec<String>,
}

/// `context.summarized` (def `contextSummarized`): content-free, the summary is an artifact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContextSummarized {
    /// The orchestrator-loop iteration.
    pub iteration: u64,
    /// Event ids the summary stands in for (each non-empty).
    #[schemars(inner(length(min = 1)))]
    pub replaced_turns: Vec<String>,
    /// The summary's artifact id (non-empty).
    #[schemars(length(min = 1))]
    pub summary_ref: String,
    /// The token unit.
    #[schemars(extend("enum" = ["o200k_base", "cl100k_base", "chars", "host-defined"]))]
    pub token_counter: String,
    /// Tokens before summarization.
    pub tokens_before: u64,
    /// Tokens after summarization.
    pub tokens_after: u64,
}

/// `workflow-chain.event.attestation` (closed): a checksum over the harvested output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WorkflowChainAttestation {
    /// Lowercase hex digest (non-empty).
    #[schemars(length(min = 1))]
    pub checksum: String,
    /// Always `sha256`.
    #[schemars(extend("enum" = ["sha256"]))]
    pub algorithm: String,
}

/// `workflow-chain.event` (def `coreWorkflowChainEvent`): one planner→worker handoff
/// transition (closed, no hatch).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkflowChainEvent {
    /// The transition.
    #[schemars(extend("enum" = [
        "dispatch.began",
        "dispatch.succeeded",
        "dispatch.failed",
        "child.completed",
        "child.failed",
        "child.cancelled",
        "output.harvested"
    ]))]
    pub phase: String,
    /// The dispatched worker's workflow (non-empty; a plain string upstream).
    #[schemars(length(min = 1))]
    pub worker_id: String,
    /// The parent run.
    #[schemars(with = "ids::RunId")]
    pub parent_run_id: String,
    /// The child run (prose: from `dispatch.succeeded` on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ids::RunId>")]
    pub child_run_id: Option<String>,
    /// Parent-variable keys populated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harvested_keys: Option<Vec<String>>,
    /// Output checksum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attestation: Option<WorkflowChainAttestation>,
    /// On the failing phases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<super::error_object::ErrorObject>,
    /// Cross-host causation pointer (non-empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub causation_host_id: Option<String>,
}
