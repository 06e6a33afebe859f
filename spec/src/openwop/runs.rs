//! The run resources of surface W: create, cancel, resolve an interrupt.
//!
//! The bodies state `api/v2/openapi.yaml` of `openwop/openwop` at commit
//! `01b730108f674de0c568943837ffe8e505a4b46b` (`createRun`, `cancelRun`); [`Configurable`]
//! states `schemas/v2/configurable.schema.json` at commit
//! `96c270a400e82fefd9a73ca451b4b437c6e4f4ec` (transcribed in `spec/upstream/facts/`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The body of `POST /runs` (closed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(title = "CreateRunRequest")]
pub struct CreateRunRequest {
    /// The (fixture) workflow to run.
    #[schemars(length(min = 1))]
    pub workflow_id: String,
    /// The run's inputs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs: Option<Map<String, Value>>,
    /// Per-run options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configurable: Option<Configurable>,
    /// Tags (≤ 100, each ≤ 256 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 100), inner(length(max = 256)))]
    pub tags: Option<Vec<String>>,
    /// Metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

/// `configurable` (closed, nested, versioned; `version` must be 1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Configurable {
    /// Always 1.
    #[schemars(extend("const" = 1))]
    pub version: u32,
    /// Run limits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<RunLimits>,
    /// AI options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ai: Option<AiOptions>,
    /// Distillation options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distillation: Option<Distillation>,
    /// A per-run spend policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<super::budget_policy::BudgetPolicy>,
    /// Extension data: a closed object keyed by org, each value an object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = org_keyed_extensions_schema)]
    pub extensions: Option<Map<String, Value>>,
}

/// The grammar of a `configurable.extensions` key: one org segment.
pub const CONFIGURABLE_EXTENSIONS_KEY_PATTERN: &str = "^[a-z][a-z0-9]*(-[a-z0-9]+)*$";

fn org_keyed_extensions_schema(schema: &mut schemars::Schema) {
    *schema = schemars::Schema::try_from(serde_json::json!({
        "type": "object",
        "additionalProperties": false,
        "patternProperties": {
            CONFIGURABLE_EXTENSIONS_KEY_PATTERN: {"type": "object", "additionalProperties": true}
        }
    }))
    .expect("an object is a schema");
}

/// `configurable.run` (closed).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RunLimits {
    /// Recursion limit (≥ 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub recursion_limit: Option<u64>,
    /// Run timeout in milliseconds (≥ 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub run_timeout_ms: Option<u64>,
    /// Loop iteration ceiling (≥ 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub max_loop_iterations: Option<u64>,
    /// Escalation threshold (≥ 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub escalation_threshold: Option<u64>,
}

/// `configurable.distillation` (closed).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Distillation {
    /// Token budget (≥ 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub token_budget: Option<u64>,
}

/// `configurable.ai.reasoningVerbosity`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ReasoningVerbosity {
    /// No reasoning.
    None,
    /// A summary.
    Summary,
    /// Full reasoning.
    Full,
}

/// `configurable.ai` (closed).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AiOptions {
    /// A configured provider id; the AI node calls it instead of a mock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// The model to use with `provider`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Sampling temperature (0..2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 2.0))]
    pub temperature: Option<f64>,
    /// Output budget (≥ 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub max_tokens: Option<u32>,
    /// A credential reference (never a credential).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credential_ref: Option<String>,
    /// Per-prompt overrides, by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_overrides: Option<std::collections::BTreeMap<String, String>>,
    /// The per-run mock provider program (an open object upstream; this host reads `id` and
    /// `config`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Map<String, Value>")]
    pub mock_provider: Option<MockProvider>,
    /// The ceiling on `envelope.refusal` events the run records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_refusals: Option<u32>,
    /// Reasoning verbosity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_verbosity: Option<ReasoningVerbosity>,
}

/// A per-run mock provider: its program travels with the run, never in global state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MockProvider {
    /// `stream-text`, `tool-calls`, `error`, `usage-only`, or a host-specific id.
    pub id: String,
    /// The mock's configuration.
    #[serde(default)]
    pub config: Map<String, Value>,
}

/// `201` answer of `POST /runs` (open upstream: no `additionalProperties`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(title = "CreateRunResponse")]
pub struct CreateRunResponse {
    /// The tenant-bound run id.
    pub run_id: String,
    /// The run's status: a status a run can have right after creation.
    #[schemars(extend("enum" = ["pending", "running", "waiting-approval", "waiting-input", "waiting-external"]))]
    pub status: super::snapshot::RunStatus,
    /// Absolute URL of the run's event stream.
    #[schemars(extend("format" = "uri"))]
    pub events_url: String,
    /// Absolute URL of the run's snapshot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "uri"))]
    pub status_url: Option<String>,
}

/// `200` answer of `POST /runs/{runId}/cancel` (open upstream, nothing required).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(title = "CancelRunResponse", extend("required" = []))]
pub struct CancelRunResponse {
    /// The run.
    pub run_id: String,
    /// `cancelled` or `cancelling`.
    #[schemars(extend("enum" = ["cancelled", "cancelling"]))]
    pub status: super::snapshot::RunStatus,
}

/// Body of `POST /runs/{runId}/interrupts/{nodeId}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ResolveInterruptRequest {
    /// The value the suspended node resumes with.
    pub resume_value: Value,
}
