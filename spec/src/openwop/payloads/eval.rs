//! The eval-run payloads (`eval.*`): upstream defs `evalStarted`, `evalScored` and
//! `evalCompleted` of `openwop/openwop-sdks` `schemas/v2/run-event-payloads.schema.json` @
//! `446c2f2c22ff059d475228b86395ff92d27329a1`: all closed with the extension hatch,
//! content-free (provenance, scalars and counts only).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::openwop::ids;

/// `eval.started` (def `evalStarted`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EvalStarted {
    /// The suite (non-empty).
    #[schemars(length(min = 1))]
    pub suite_id: String,
    /// The pinned suite version (non-empty).
    #[schemars(length(min = 1))]
    pub suite_version: String,
    /// Tasks the run will execute.
    pub task_count: u64,
    /// The eval modes exercised (unique).
    #[schemars(extend(
        "uniqueItems" = true,
        "items" = {
            "type": "string",
            "enum": ["golden", "rubric", "adversarial", "regression", "live-shadow"]
        }
    ))]
    pub modes: Vec<String>,
    /// The baseline eval run (regression mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ids::RunId>")]
    pub baseline_run_id: Option<String>,
}

/// `eval.scored` (def `evalScored`): one task's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EvalScored {
    /// The task (non-empty).
    #[schemars(length(min = 1))]
    pub task_id: String,
    /// Score in [0, 1].
    #[schemars(extend("minimum" = 0, "maximum" = 1))]
    pub score: f64,
    /// Whether the task met its bar.
    pub passed: bool,
    /// Task cost (≥ 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("minimum" = 0))]
    pub cost_usd: Option<f64>,
    /// Task latency (ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<u64>,
    /// Whether the output validated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema_valid: Option<bool>,
    /// Safety findings (count).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub safety_finding_count: Option<u64>,
}

/// `eval.completed` (def `evalCompleted`): aggregate scalars.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EvalCompleted {
    /// Suite-level score in [0, 1].
    #[schemars(extend("minimum" = 0, "maximum" = 1))]
    pub aggregate_score: f64,
    /// Whether the suite thresholds were cleared.
    pub passed: bool,
    /// Tasks executed.
    pub task_count: u64,
    /// Tasks passed.
    pub passed_count: u64,
    /// Score minus the baseline's, in [-1, 1].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("minimum" = -1, "maximum" = 1))]
    pub regression_vs_baseline: Option<f64>,
}
