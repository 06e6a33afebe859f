//! Goal, authorization and connector payloads: upstream defs `goalEvaluated`, `goalClosed`,
//! `authorizationDecided`, `connectorAuthorized` and `connectorAuthExpired` of
//! `openwop/openwop-sdks` `schemas/v2/run-event-payloads.schema.json` @
//! `446c2f2c22ff059d475228b86395ff92d27329a1`: all closed, no hatch, content-free.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::openwop::ids;

/// `goal.evaluated` (def `goalEvaluated`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GoalEvaluated {
    /// The goal (non-empty).
    #[schemars(length(min = 1))]
    pub goal_id: String,
    /// The judge's verdict.
    pub satisfied: bool,
    /// Judge confidence in [0, 1].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub confidence: Option<f64>,
    /// The run evaluated.
    #[schemars(with = "ids::RunId")]
    pub run_id: String,
    /// Contributing iterations.
    pub iterations: u64,
}

/// `goal.closed` (def `goalClosed`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GoalClosed {
    /// The goal (non-empty).
    #[schemars(length(min = 1))]
    pub goal_id: String,
    /// The terminal state.
    #[schemars(extend("enum" = ["satisfied", "escalated", "abandoned", "bound-exceeded"]))]
    pub final_state: String,
}

/// `authorization.decided` (def `authorizationDecided`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuthorizationDecided {
    /// Opaque principal id (non-empty).
    #[schemars(length(min = 1))]
    pub principal: String,
    /// The attempted action (non-empty).
    #[schemars(length(min = 1))]
    pub action: String,
    /// The target (non-empty).
    #[schemars(length(min = 1))]
    pub resource: String,
    /// The decision.
    pub allowed: bool,
    /// Redaction-safe reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// `connector.authorized` (def `connectorAuthorized`): a credential reference, never a token.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConnectorAuthorized {
    /// Provider id (non-empty).
    #[schemars(length(min = 1))]
    pub provider: String,
    /// Credential reference (non-empty).
    #[schemars(length(min = 1))]
    pub credential_ref: String,
    /// Granted scopes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes: Option<Vec<String>>,
}

/// `connector.auth-expired` (def `connectorAuthExpired`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConnectorAuthExpired {
    /// Provider id (non-empty).
    #[schemars(length(min = 1))]
    pub provider: String,
    /// Credential reference (non-empty).
    #[schemars(length(min = 1))]
    pub credential_ref: String,
    /// Redaction-safe reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}
