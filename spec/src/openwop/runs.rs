//! The run resources of surface W: create, cancel, resolve an interrupt.

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

/// `configurable` (closed; `version` must be 1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Configurable {
    /// Always 1.
    #[schemars(range(min = 1, max = 1))]
    pub version: u32,
    /// Run limits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<Map<String, Value>>,
    /// AI options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ai: Option<AiOptions>,
    /// Extension data keyed by org.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Map<String, Value>>,
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
    /// Output budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// A credential reference (never a credential).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credential_ref: Option<String>,
    /// The per-run mock provider program.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mock_provider: Option<MockProvider>,
    /// The ceiling on `envelope.refusal` events the run records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_refusals: Option<u32>,
    /// Reasoning verbosity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_verbosity: Option<String>,
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

/// `201` answer of `POST /runs`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(title = "CreateRunResponse")]
pub struct CreateRunResponse {
    /// The tenant-bound run id.
    pub run_id: String,
    /// The run's status.
    pub status: super::RunStatus,
    /// Absolute URL of the run's event stream.
    pub events_url: String,
    /// Absolute URL of the run's snapshot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_url: Option<String>,
}

/// `200` answer of `POST /runs/{runId}/cancel`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(title = "CancelRunResponse")]
pub struct CancelRunResponse {
    /// The run.
    pub run_id: String,
    /// `cancelled` or `cancelling`.
    pub status: super::RunStatus,
}

/// Body of `POST /runs/{runId}/interrupts/{nodeId}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ResolveInterruptRequest {
    /// The value the suspended node resumes with.
    pub resume_value: Value,
}
