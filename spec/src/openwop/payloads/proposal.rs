//! The reviewable-learning and portability payloads: upstream defs `proposalCreated`,
//! `proposalActivated` and `importApplied` of `openwop/openwop-sdks`
//! `schemas/v2/run-event-payloads.schema.json` @ `446c2f2c22ff059d475228b86395ff92d27329a1`:
//! all closed, no hatch, content-free.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::openwop::ids;

/// `proposal.created` (def `proposalCreated`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProposalCreated {
    /// The proposal (non-empty).
    #[schemars(length(min = 1))]
    pub proposal_id: String,
    /// The proposed artifact kind.
    #[schemars(extend("enum" = ["agent-pack", "workflow-chain-pack", "prompt-template", "automation"]))]
    pub kind: String,
    /// Runs whose traces produced the draft.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Vec<ids::RunId>>")]
    pub source_run_ids: Option<Vec<String>>,
    /// An existing artifact the proposal overlaps; may be null.
    #[serde(default)]
    #[schemars(extend("x-nullable" = true))]
    pub duplicate_of: Option<String>,
}

/// `proposal.activated` (def `proposalActivated`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProposalActivated {
    /// The proposal (non-empty).
    #[schemars(length(min = 1))]
    pub proposal_id: String,
    /// The artifact kind.
    #[schemars(extend("enum" = ["agent-pack", "workflow-chain-pack", "prompt-template", "automation"]))]
    pub kind: String,
    /// The approval that gated activation; may be null.
    #[serde(default)]
    #[schemars(extend("x-nullable" = true))]
    pub approval_id: Option<String>,
    /// The installed artifact (non-empty).
    #[schemars(length(min = 1))]
    pub installed_artifact_ref: String,
}

/// `import.applied.counts` (closed, nothing required).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ImportCounts {
    /// Items created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created: Option<u64>,
    /// Items updated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated: Option<u64>,
    /// Items skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<u64>,
    /// Items failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<u64>,
}

/// `import.applied` (def `importApplied`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImportApplied {
    /// The bundle's origin (non-empty).
    #[schemars(length(min = 1))]
    pub bundle_origin: String,
    /// Per-action tallies.
    pub counts: ImportCounts,
    /// Refs whose secrets must be re-bound (never values).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secrets_to_rebind: Option<Vec<String>>,
}
