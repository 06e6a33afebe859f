//! The agent-deployment payloads (`deployment.*`): upstream defs `deploymentPromoted`,
//! `deploymentRolledBack`, `deploymentCanaryAdjusted` and `deploymentStateChanged` of
//! `openwop/openwop-sdks` `schemas/v2/run-event-payloads.schema.json` @
//! `446c2f2c22ff059d475228b86395ff92d27329a1`: all closed, no hatch (upstream: the closedness
//! is what keeps manifest bodies and credentials off these events).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::openwop::ids;

/// `deployment.promoted` (def `deploymentPromoted`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeploymentPromoted {
    /// The promoted agent.
    #[schemars(with = "ids::AgentId")]
    pub agent_id: String,
    /// The version previously in place (non-empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub from_version: Option<String>,
    /// The version promoted (non-empty).
    #[schemars(length(min = 1))]
    pub to_version: String,
    /// The lifecycle state entered.
    #[schemars(extend("enum" = ["draft", "test", "staged", "active", "paused", "deprecated", "rolled-back"]))]
    pub to_state: String,
    /// The channel targeted (non-empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub channel: Option<String>,
    /// The canary share, in [0, 100].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 100))]
    pub canary_percent: Option<u64>,
    /// The eval run that gated the promotion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ids::RunId>")]
    pub eval_run_id: Option<String>,
    /// The approval gate that authorized it (non-empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub approval_gate_id: Option<String>,
}

/// `deployment.rolled-back` (def `deploymentRolledBack`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeploymentRolledBack {
    /// The agent.
    #[schemars(with = "ids::AgentId")]
    pub agent_id: String,
    /// The version rolled back (non-empty).
    #[schemars(length(min = 1))]
    pub from_version: String,
    /// The version restored (non-empty).
    #[schemars(length(min = 1))]
    pub to_version: String,
    /// The recovery target (non-empty).
    #[schemars(length(min = 1))]
    pub rollback_pointer: String,
    /// A short reason label (non-empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub reason: Option<String>,
}

/// `deployment.canary-adjusted` (def `deploymentCanaryAdjusted`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeploymentCanaryAdjusted {
    /// The agent.
    #[schemars(with = "ids::AgentId")]
    pub agent_id: String,
    /// The version (non-empty).
    #[schemars(length(min = 1))]
    pub version: String,
    /// The prior canary percent, in [0, 100].
    #[schemars(range(max = 100))]
    pub from_percent: u64,
    /// The new canary percent, in [0, 100].
    #[schemars(range(max = 100))]
    pub to_percent: u64,
}

/// `deployment.state-changed` (def `deploymentStateChanged`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeploymentStateChanged {
    /// The agent.
    #[schemars(with = "ids::AgentId")]
    pub agent_id: String,
    /// The version (non-empty).
    #[schemars(length(min = 1))]
    pub version: String,
    /// The prior state.
    #[schemars(extend("enum" = ["draft", "test", "staged", "active", "paused", "deprecated", "rolled-back"]))]
    pub from_state: String,
    /// The new state.
    #[schemars(extend("enum" = ["draft", "test", "staged", "active", "paused", "deprecated", "rolled-back"]))]
    pub to_state: String,
}
