//! The resources of surface X: submission, snapshot, result, runtime info, provider manifests.

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::PortableError;
use super::event::{Artifact, ExecutionStatus, Target};
use super::request::Modality;
use super::usage::UsageFact;

/// The answer to `POST /v1/executions`: 202 when new, 200 on an idempotent replay.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(title = "ExecutionSubmission")]
pub struct ExecutionSubmission {
    /// The execution's id (non-empty by the overlay: `crate::overlay`).
    pub execution_id: String,
    /// The execution's current status.
    pub status: ExecutionStatus,
    /// When the execution was created (a `string` at the origin).
    #[schemars(with = "String")]
    pub created_at: DateTime<Utc>,
    /// Whether this answer replays an earlier submission with the same Idempotency-Key.
    pub idempotent_replay: bool,
}

/// `GET /v1/executions/{id}`: the log folded into a snapshot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(title = "ExecutionSnapshot")]
pub struct ExecutionSnapshot {
    /// The execution's id.
    pub execution_id: String,
    /// The status of the last event.
    pub status: ExecutionStatus,
    /// When the execution was created (a `string` at the origin).
    #[schemars(with = "String")]
    pub created_at: DateTime<Utc>,
    /// The time of the last event (a `string` at the origin).
    #[schemars(with = "String")]
    pub updated_at: DateTime<Utc>,
    /// The highest sequence in the log (a `number` at the origin).
    #[schemars(with = "f64")]
    pub last_sequence: u64,
    /// Every usage fact reported, in log order.
    pub usage: Vec<UsageFact>,
    /// The provider and model of the latest attempt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<Target>,
    /// The terminal error, when failed or cancelled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<PortableError>,
    /// The materialised result so far: a [`TextResult`] for streaming text/tool providers, the
    /// provider's own JSON for asynchronous media providers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// Artifacts listed by an asynchronous provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifacts: Option<Vec<Artifact>>,
}

/// The result a streaming text/tool provider materialises to: `output.delta` folded per
/// `output_index` and tool calls folded from their argument fragments, in log order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TextResult {
    /// `output.delta` concatenated per `output_index`, in index order.
    pub outputs: Vec<MaterialisedOutput>,
    /// Tool calls with their arguments concatenated in log order, in order of first appearance.
    pub tool_calls: Vec<MaterialisedToolCall>,
}

/// One text output folded from its deltas.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MaterialisedOutput {
    /// The output index.
    pub index: u32,
    /// Always `text` for streamed deltas.
    #[serde(rename = "type")]
    #[schemars(extend("const" = "text"))]
    pub kind: String,
    /// The concatenated text.
    pub text: String,
}

/// One tool call folded from its start and argument deltas.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MaterialisedToolCall {
    /// The call id.
    pub call_id: String,
    /// The tool name.
    pub name: String,
    /// The concatenated argument fragments: a string the caller parses.
    pub arguments: String,
}

/// `GET /v1/executions/{id}/result`: 200 only once the execution succeeded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "ExecutionResult")]
pub struct ExecutionResult {
    /// The execution's id.
    pub execution_id: String,
    /// The provider and model that produced the result.
    pub target: Target,
    /// The materialised result ([`TextResult`]) or the asynchronous provider's own JSON; absent
    /// when the provider produced no output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// Artifacts (empty when none).
    pub artifacts: Vec<Artifact>,
    /// Every usage fact reported.
    pub usage: Vec<UsageFact>,
}

/// Whether the runtime is serving.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RuntimeState {
    /// Serving.
    Ready,
    /// Shutting down.
    Stopping,
    /// The event store is unavailable.
    Unavailable,
}

/// `GET /v1/runtime`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(title = "RuntimeInfo")]
pub struct RuntimeInfo {
    /// The runtime's name.
    pub name: String,
    /// The execution protocol version it implements.
    pub protocol_version: String,
    /// Whether it is serving (200 only when `ready`); optional at the origin (`state?`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<RuntimeState>,
    /// How many providers are registered (the origin's `provider_count`, a number).
    #[schemars(with = "f64")]
    pub provider_count: u64,
    /// Feature flags.
    pub features: serde_json::Map<String, Value>,
}

/// What one model of a provider can do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ModelCapability {
    /// The provider's model id.
    pub model: String,
    /// Abilities served.
    pub abilities: Vec<String>,
    /// Accepted input modalities.
    pub input_modalities: Vec<Modality>,
    /// Produced output modalities.
    pub output_modalities: Vec<Modality>,
    /// Streams output.
    pub stream: bool,
    /// Supports tool calls.
    pub tools: bool,
    /// Supports structured output.
    pub structured_output: bool,
    /// Is an asynchronous (queued) provider.
    #[serde(rename = "async")]
    pub asynchronous: bool,
    /// Supports cancellation.
    pub cancel: bool,
}

/// Informational limits a manifest may advertise (the origin's `ProviderManifest.limits?`:
/// both members optional numbers; the object is not closed).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProviderLimits {
    /// How many executions the provider runs at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<f64>")]
    pub max_concurrency: Option<u64>,
    /// How many executions may wait for a slot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<f64>")]
    pub max_queue_depth: Option<u64>,
}

/// One provider's manifest. Never carries a credential.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProviderManifest {
    /// The provider id.
    pub provider: String,
    /// The execution protocol version.
    pub protocol_version: String,
    /// The models.
    pub models: Vec<ModelCapability>,
    /// Informational limits, when the runtime knows them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<ProviderLimits>,
}

/// `GET /v1/providers`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "ProviderManifests")]
pub struct ProviderManifests {
    /// The manifests.
    pub data: Vec<ProviderManifest>,
}
