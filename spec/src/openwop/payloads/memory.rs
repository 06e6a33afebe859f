//! The memory payloads: upstream defs `memoryCompacted`, `memoryWritten` and `commitmentFired`
//! of `openwop/openwop-sdks` `schemas/v2/run-event-payloads.schema.json` @
//! `446c2f2c22ff059d475228b86395ff92d27329a1`: closed with the extension hatch, content-free
//! (handles, ids and counts; entry content is served by the read side).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::openwop::ids;

/// `memory.compacted.distillation` (closed): the token accounting of a budgeted distillation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MemoryDistillation {
    /// The per-run budget honoured (≥ 1).
    #[schemars(range(min = 1))]
    pub token_budget: u64,
    /// Tokens consumed.
    pub tokens_used: u64,
    /// Whether the memory index was refreshed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_updated: Option<bool>,
}

/// `memory.compacted` (def `memoryCompacted`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MemoryCompacted {
    /// The memory scope (non-empty).
    #[schemars(length(min = 1))]
    pub memory_ref: String,
    /// The new entry (non-empty).
    #[schemars(length(min = 1))]
    pub output_id: String,
    /// The entries collapsed (each non-empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(inner(length(min = 1)))]
    pub source_ids: Option<Vec<String>>,
    /// Entries collapsed in total (≥ 1).
    #[schemars(range(min = 1))]
    pub source_count: u64,
    /// `host-managed`, `client-requested` or `both`.
    #[schemars(extend("enum" = ["host-managed", "client-requested", "both"]))]
    pub trigger: String,
    /// Size of the resulting entry (bytes).
    pub byte_size: u64,
    /// Present for a budgeted distillation run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distillation: Option<MemoryDistillation>,
}

/// `memory.written` (def `memoryWritten`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MemoryWritten {
    /// The memory scope (non-empty).
    #[schemars(length(min = 1))]
    pub memory_ref: String,
    /// The entry (non-empty).
    #[schemars(length(min = 1))]
    pub memory_id: String,
    /// The node that caused the write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ids::NodeId>")]
    pub node_id: Option<String>,
    /// The agent behind the write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ids::AgentId>")]
    pub agent_id: Option<String>,
    /// Non-secret labels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
}

/// `commitment.fired` (def `commitmentFired`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommitmentFired {
    /// The commitment (non-empty).
    #[schemars(length(min = 1))]
    pub commitment_id: String,
    /// The memory scope it was inferred from (non-empty).
    #[schemars(length(min = 1))]
    pub memory_ref: String,
    /// The source entry (non-empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub memory_id: Option<String>,
    /// `time` or `predicate`.
    #[schemars(extend("enum" = ["time", "predicate"]))]
    pub condition: String,
    /// The run the commitment enqueued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ids::RunId>")]
    pub enqueued_run_id: Option<String>,
}
