//! The saga-compensation payloads (`compensation.*`): upstream defs `compensationRequested`,
//! `compensationStarted`, `compensationCompleted`, `compensationFailed`, `compensationPaused`
//! and `compensationManualInterventionRequired` of `openwop/openwop-sdks`
//! `schemas/v2/run-event-payloads.schema.json` @ `446c2f2c22ff059d475228b86395ff92d27329a1`:
//! all closed, no hatch, nothing required, content-free (opaque ids, an attempt, an ordering
//! model and, on the halting three, a closed reason code).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::openwop::ids;

/// `compensation.requested`, `compensation.started`, `compensation.completed` (defs
/// `compensationRequested`, `compensationStarted`, `compensationCompleted`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CompensationProgress {
    /// The compensation (non-empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub compensation_id: Option<String>,
    /// The node whose effects are compensated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ids::NodeId>")]
    pub node_id: Option<String>,
    /// The effect compensated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ids::EffectId>")]
    pub effect_id: Option<String>,
    /// The attempt (≥ 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<u64>,
    /// `reverse-completion` or `dependency-graph`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["reverse-completion", "dependency-graph"]))]
    pub ordering_model: Option<String>,
}

/// `compensation.failed`, `compensation.paused`, `compensation.manual-intervention-required`
/// (defs `compensationFailed`, `compensationPaused`, `compensationManualInterventionRequired`):
/// the progress members plus a closed reason code.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CompensationHalt {
    /// The compensation (non-empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub compensation_id: Option<String>,
    /// The node whose effects are compensated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ids::NodeId>")]
    pub node_id: Option<String>,
    /// The effect compensated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ids::EffectId>")]
    pub effect_id: Option<String>,
    /// The attempt (≥ 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<u64>,
    /// `reverse-completion` or `dependency-graph`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["reverse-completion", "dependency-graph"]))]
    pub ordering_model: Option<String>,
    /// The closed reason vocabulary (an open string would invite a provider error body).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = [
        "retries-exhausted",
        "approval-denied",
        "authority-denied",
        "dead-lettered",
        "operator-terminated"
    ]))]
    pub reason: Option<String>,
}
