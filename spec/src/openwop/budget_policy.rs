//! `BudgetPolicy`, the create-run request's `configurable.budget`.
//!
//! States `openwop/openwop-sdks` `schemas/v2/budget-policy.schema.json` @
//! `33f1a23f7a305b6dcbd00979f6296838dcee2994` (transcribed in
//! `spec/upstream/facts/budget-policy.json`): closed, every dimension optional.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What a run does when a budget dimension is exhausted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum OnExhaustion {
    /// Fail the run (`budget_exhausted`).
    Fail,
    /// Raise an approval interrupt.
    Interrupt,
}

/// A per-run spend policy (closed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct BudgetPolicy {
    /// Total tokens (≥ 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub max_tokens: Option<u64>,
    /// Total cost in USD (≥ 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0))]
    pub max_cost_usd: Option<f64>,
    /// Total tool calls (≥ 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub max_tool_calls: Option<u64>,
    /// Cumulative retries (≥ 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_retries: Option<u64>,
    /// Model allowlist (globs, unique).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("uniqueItems" = true))]
    pub model_allow: Option<Vec<String>>,
    /// Model denylist (globs, unique; wins over the allowlist).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("uniqueItems" = true))]
    pub model_deny: Option<Vec<String>>,
    /// The percent of a limit at which `budget.threshold.crossed` fires (0–100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 100.0))]
    pub threshold_percent: Option<f64>,
    /// What exhaustion does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_exhaustion: Option<OnExhaustion>,
}
