//! The trigger-bridge, roster and workspace payloads: upstream defs
//! `triggerSubscriptionStateChanged`, `triggerDeliveryAttempted` (closed with the extension
//! hatch), `rosterRunInitiated` and `workspaceUpdated` (closed, no hatch) of
//! `openwop/openwop-sdks` `schemas/v2/run-event-payloads.schema.json` @
//! `446c2f2c22ff059d475228b86395ff92d27329a1`: all content-free.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::openwop::ids;

/// `trigger.subscription-state-changed` (def `triggerSubscriptionStateChanged`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TriggerSubscriptionStateChanged {
    /// The subscription.
    #[schemars(with = "ids::SubscriptionId")]
    pub subscription_id: String,
    /// The subscription source.
    #[schemars(extend("enum" = ["webhook", "schedule", "queue", "email", "form", "stream", "change"]))]
    pub source: String,
    /// The prior state.
    #[schemars(extend("enum" = ["active", "paused", "failed", "dead-lettered"]))]
    pub from_state: String,
    /// The new state.
    #[schemars(extend("enum" = ["active", "paused", "failed", "dead-lettered"]))]
    pub to_state: String,
    /// A closed reason code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = [
        "retry-exhausted",
        "operator-paused",
        "signature-invalid",
        "backpressure",
        "source-removed",
        "provenance-unevaluable"
    ]))]
    pub reason: Option<String>,
}

/// `trigger.delivery-attempted` (def `triggerDeliveryAttempted`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TriggerDeliveryAttempted {
    /// The subscription.
    #[schemars(with = "ids::SubscriptionId")]
    pub subscription_id: String,
    /// The host-opaque de-duplication key (non-empty).
    #[schemars(length(min = 1))]
    pub dedup_key: String,
    /// The attempt (≥ 1).
    #[schemars(range(min = 1))]
    pub attempt: u64,
    /// `delivered`, `retrying` or `dead-lettered`.
    #[schemars(extend("enum" = ["delivered", "retrying", "dead-lettered"]))]
    pub outcome: String,
    /// The run a delivery started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ids::RunId>")]
    pub run_id: Option<String>,
}

/// `roster.run-initiated` (def `rosterRunInitiated`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RosterRunInitiated {
    /// The standing agent instance (non-empty).
    #[schemars(length(min = 1))]
    pub roster_id: String,
    /// The member's display name (non-empty).
    #[schemars(length(min = 1))]
    pub persona: String,
    /// The manifest agent.
    #[schemars(with = "ids::AgentId")]
    pub agent_id: String,
    /// The portfolio workflow.
    #[schemars(with = "ids::WorkflowId")]
    pub workflow_id: String,
    /// What fired the run (non-empty).
    #[schemars(length(min = 1))]
    pub trigger_source: String,
    /// The trigger subscription.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ids::SubscriptionId>")]
    pub trigger_subscription_id: Option<String>,
}

/// `workspace.updated` (def `workspaceUpdated`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceUpdated {
    /// The workspace-relative path (non-empty).
    #[schemars(length(min = 1))]
    pub path: String,
    /// The resulting version (≥ 1).
    #[schemars(range(min = 1))]
    pub version: u64,
}
