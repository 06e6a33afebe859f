//! The budget payloads (`budget.*`): upstream defs `budgetReserved`, `budgetConsumed`,
//! `budgetThresholdCrossed` and `budgetExhausted` of `openwop/openwop-sdks`
//! `schemas/v2/run-event-payloads.schema.json` @ `446c2f2c22ff059d475228b86395ff92d27329a1`:
//! all closed, no hatch, content-free (ceilings and amounts, never a pricing breakdown).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The resolved per-dimension ceilings of `budget.reserved` (closed, nothing required).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("additionalProperties" = false))]
pub struct EffectiveBudget {
    /// Token ceiling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    /// Cost ceiling (USD, ≥ 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("minimum" = 0))]
    pub max_cost_usd: Option<f64>,
    /// Tool-call ceiling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tool_calls: Option<u64>,
    /// Retry ceiling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_retries: Option<u64>,
}

/// `budget.reserved` (def `budgetReserved`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BudgetReserved {
    /// The resolved ceilings.
    pub effective_budget: EffectiveBudget,
    /// `run`, `workflow`, `agent` or `project`.
    #[schemars(extend("enum" = ["run", "workflow", "agent", "project"]))]
    pub scope: String,
}

/// `budget.consumed` (def `budgetConsumed`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BudgetConsumed {
    /// `tokens`, `cost`, `toolCalls` or `retries`.
    #[schemars(extend("enum" = ["tokens", "cost", "toolCalls", "retries"]))]
    pub dimension: String,
    /// Consumed so far (≥ 0).
    #[schemars(extend("minimum" = 0))]
    pub consumed: f64,
    /// The ceiling (≥ 0).
    #[schemars(extend("minimum" = 0))]
    pub limit: f64,
    /// `limit - consumed` (unbounded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remaining: Option<f64>,
}

/// `budget.threshold-crossed` (def `budgetThresholdCrossed`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BudgetThresholdCrossed {
    /// `tokens`, `cost`, `toolCalls` or `retries`.
    #[schemars(extend("enum" = ["tokens", "cost", "toolCalls", "retries"]))]
    pub dimension: String,
    /// Consumed so far (≥ 0).
    #[schemars(extend("minimum" = 0))]
    pub consumed: f64,
    /// The ceiling (≥ 0).
    #[schemars(extend("minimum" = 0))]
    pub limit: f64,
    /// The threshold crossed, in [0, 100].
    #[schemars(extend("minimum" = 0, "maximum" = 100))]
    pub percent: f64,
}

/// `budget.exhausted` (def `budgetExhausted`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BudgetExhausted {
    /// `tokens`, `cost`, `toolCalls` or `retries`.
    #[schemars(extend("enum" = ["tokens", "cost", "toolCalls", "retries"]))]
    pub dimension: String,
    /// Consumed (≥ 0).
    #[schemars(extend("minimum" = 0))]
    pub consumed: f64,
    /// The ceiling (≥ 0).
    #[schemars(extend("minimum" = 0))]
    pub limit: f64,
}
