//! Payload definitions of the run event types, one struct per `$defs` entry of the published
//! `run-event-payloads.json`.
//!
//! Field lists follow `../shared/reference/openwop-v2-protocol.md` §2. Definitions whose full
//! field list the reference publishes are closed (`additionalProperties: false`), most with the
//! RFC 0185 extension hatch (keys matching `^(openwop-|x-|vendor\.)`). Where the reference gives
//! only part of a definition, the struct lists what is known, the published schema requires the
//! known required fields and tolerates others, and says so in a `$comment`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::subject::Owner;

/// The extension-key pattern carried opaquely by most payload definitions.
pub const EXTENSION_HATCH_PATTERN: &str = r"^(openwop-|x-|vendor\.)";

/// How a definition treats members it does not list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Closure {
    /// Closed, no hatch.
    Closed,
    /// Closed except for hatch keys.
    ClosedWithHatch,
    /// The reference publishes only part of the definition: unknown members are tolerated.
    Partial,
}

/// `_errorObject` (run.failed, node.failed, …).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ErrorObject {
    /// A registered or vendor code.
    #[schemars(length(min = 1))]
    pub code: String,
    /// A message.
    pub message: String,
    /// Context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Map<String, Value>>,
    /// Whether retrying may help.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retryable: Option<bool>,
}

/// `run.started`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunStarted {
    /// The workflow.
    pub workflow_id: String,
    /// The run's inputs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs: Option<Map<String, Value>>,
    /// How the run was created: `rest`, `mcp`, `a2a` or `ui`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["rest", "mcp", "a2a", "ui"]))]
    pub transport: Option<String>,
    /// The engine version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_version: Option<u64>,
    /// The owner block; echoes `RunSnapshot.owner` exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<Owner>,
    /// Tags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    /// Metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

/// `run.completed`: `outputs` is always an object (`{}` is valid, absent is not).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunCompleted {
    /// The run's outputs.
    pub outputs: Map<String, Value>,
    /// Run duration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
}

/// `run.failed`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunFailed {
    /// Why.
    pub error: ErrorObject,
    /// The node that failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_node_id: Option<String>,
    /// Run duration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
}

/// `run.cancelled`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunCancelled {
    /// Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Who cancelled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancelled_by: Option<String>,
    /// Run duration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// The parent run, for a cascade.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_run_id: Option<String>,
}

/// `run.paused`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunPaused {
    /// Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// `immediate` or `drain-current-node`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drain_policy: Option<String>,
    /// The interrupted node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupted_node_id: Option<String>,
    /// The interrupted attempt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupted_attempt: Option<u32>,
}

/// `node.started`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeStarted {
    /// The node.
    pub node_id: String,
    /// The node's type id.
    #[schemars(
        regex(pattern = r"^[a-z][a-z0-9_-]*(\.[a-z][a-zA-Z0-9_-]*)+$"),
        length(max = 256)
    )]
    pub type_id: String,
    /// Zero-based attempt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<u32>,
}

/// `node.completed`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeCompleted {
    /// The node.
    pub node_id: String,
    /// Port → value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outputs: Option<Map<String, Value>>,
    /// Node duration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
}

/// `node.failed`: emitted only after retries are exhausted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeFailed {
    /// The node.
    pub node_id: String,
    /// Why.
    pub error: ErrorObject,
    /// Attempts made (≥ 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub attempts: Option<u32>,
}

/// `node.suspended`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeSuspended {
    /// The node.
    pub node_id: String,
    /// The interrupt (tenant-bound id).
    pub interrupt_id: String,
    /// The interrupt kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["approval", "clarification", "external-event", "custom",
        "conversation.start", "conversation.exchange", "conversation.close", "low-confidence", "credential"]))]
    pub kind: Option<String>,
    /// A cause, 1..64 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64))]
    pub reason: Option<String>,
    /// A key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

/// `node.resumed`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeResumed {
    /// The node.
    pub node_id: String,
    /// The interrupt that was resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupt_id: Option<String>,
    /// The resume value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume_value: Option<Value>,
}

/// `node.retried`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeRetried {
    /// The node.
    pub node_id: String,
    /// The attempt (≥ 1).
    #[schemars(range(min = 1))]
    pub attempt: u32,
    /// Delay before the retry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_ms: Option<u64>,
    /// The error that caused it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<ErrorObject>,
}

/// `node.skipped` and `node.cancelled`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeReason {
    /// The node.
    pub node_id: String,
    /// Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// `interrupt.requested`, `approval.requested`, `clarification.requested` (the suspend-request
/// schema; partially published).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InterruptRequested {
    /// The suspended node.
    pub node_id: String,
    /// The interrupt.
    pub interrupt_id: String,
    /// The interrupt kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Allowed actions, e.g. `accept`, `reject`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actions: Option<Vec<String>>,
}

/// `interrupt.resolved`, `approval.received|granted|rejected|overridden`,
/// `clarification.resolved`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InterruptResolved {
    /// The node.
    pub node_id: String,
    /// The interrupt.
    pub interrupt_id: String,
    /// The interrupt kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The resume value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume_value: Option<Value>,
    /// Who resolved it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_by: Option<String>,
    /// `granted`, `rejected` or `overridden`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["granted", "rejected", "overridden"]))]
    pub decision: Option<String>,
    /// The action taken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["accept", "reject", "refine", "edit-accept", "timeout"]))]
    pub action: Option<String>,
    /// Refinement feedback.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refine_feedback: Option<String>,
    /// Edited artifact data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edited_artifact_data: Option<Value>,
}

/// Tier 1 usage in a chunk's `meta`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ChunkUsage {
    /// Prompt tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_tokens: Option<u64>,
    /// Completion tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_tokens: Option<u64>,
    /// Total tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_tokens: Option<u64>,
}

/// A tool call in a chunk's `meta`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChunkToolCall {
    /// The call id.
    pub id: String,
    /// The tool name.
    pub name: String,
    /// The arguments' JSON text.
    pub arguments: String,
}

/// `_chunkMeta` (closed): Tier 1 slots consumers may branch on, Tier 2 pass-through.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ChunkMeta {
    /// Tier 1: why generation stopped (on the final chunk).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["stop", "length", "tool_calls", "content_filter"]))]
    pub finish_reason: Option<String>,
    /// Tier 1: log probabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logprobs: Option<Vec<Value>>,
    /// Tier 1: tool calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<ChunkToolCall>>,
    /// Tier 1: the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Tier 1: usage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<ChunkUsage>,
    /// Tier 2: the provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// Tier 2: provider extensions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_extensions: Option<Map<String, Value>>,
}

/// `output.chunk`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OutputChunk {
    /// The AI node.
    pub node_id: String,
    /// The run.
    pub run_id: String,
    /// The chunk text.
    pub chunk: String,
    /// True on the final chunk of an AI call.
    pub is_last: bool,
    /// A sub-stream name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<String>,
    /// Chunk metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ChunkMeta>,
}

/// `provider.usage` (closed, no hatch): never a credential reference, hashed credential id, or
/// prompt/response text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ProviderUsage {
    /// Lowercase provider id.
    #[schemars(regex(pattern = "^[a-z][a-z0-9._-]*$"))]
    pub provider: String,
    /// The model.
    pub model: String,
    /// Input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Total tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_tokens: Option<u64>,
    /// An estimate from the host's own rate table; never a billed amount.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0))]
    pub cost_estimate_usd: Option<f64>,
    /// ISO 4217 currency of `costEstimateUsd` (absent means USD).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = "^[A-Z]{3}$"))]
    pub currency: Option<String>,
    /// Whether the provider served from cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_hit: Option<bool>,
    /// Cached input tokens read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read_tokens: Option<u64>,
    /// Cached input tokens written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_tokens: Option<u64>,
    /// The node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_id: Option<String>,
    /// Trace id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = "^[0-9a-f]{32}$"))]
    pub trace_id: Option<String>,
}

/// Reliability reasons shared by retry events.
#[derive(JsonSchema)]
#[schemars(extend("type" = "string", "anyOf" = [
    {"enum": ["schema-violation", "truncation", "type-drift", "type-mismatch", "refusal", "parse-error", "unknown"]},
    {"type": "string", "pattern": "^x-host-[a-z][a-z0-9-]*-[a-z][a-z0-9-]*$"}
]))]
#[allow(dead_code)]
struct ReliabilityReason;

/// `envelope.refusal` (closed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct EnvelopeRefusal {
    /// The node.
    pub node_id: String,
    /// The provider.
    pub provider: String,
    /// The model.
    pub model: String,
    /// The refusal text, redacted; may be null.
    #[serde(default)]
    #[schemars(extend("x-nullable" = true))]
    pub refusal_text: Option<String>,
    /// The safety category; may be null.
    #[serde(default)]
    #[schemars(extend("x-nullable" = true))]
    pub safety_category: Option<String>,
}

/// `envelope.retry-exhausted` (closed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct EnvelopeRetryExhausted {
    /// The node.
    pub node_id: String,
    /// Attempts made (≥ 1).
    #[schemars(range(min = 1))]
    pub total_attempts: u32,
    /// The final reason.
    #[schemars(with = "ReliabilityReason")]
    pub final_reason: String,
    /// The final error, redacted; may be null.
    #[serde(default)]
    #[schemars(extend("x-nullable" = true))]
    pub final_error: Option<String>,
}

/// `envelope.retry-attempted` (closed): first emitted with attempt 2.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct EnvelopeRetryAttempted {
    /// The node.
    pub node_id: String,
    /// The attempt (1..16).
    #[schemars(range(min = 1, max = 16))]
    pub attempt: u32,
    /// Why the retry happens.
    #[schemars(with = "ReliabilityReason")]
    pub reason: String,
    /// The previous error, redacted; may be null.
    #[serde(default)]
    #[schemars(extend("x-nullable" = true))]
    pub previous_error: Option<String>,
}

/// `envelope.truncated` (closed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct EnvelopeTruncated {
    /// The node.
    pub node_id: String,
    /// The provider.
    pub provider: String,
    /// The model.
    pub model: String,
    /// Why the stream stopped.
    #[schemars(extend("enum" = ["max_tokens", "length", "stop_sequence", "unknown"]))]
    pub stop_reason: String,
    /// Whether a partial payload is available.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial_payload_available: Option<bool>,
    /// Output tokens counted; may be null.
    #[serde(default)]
    #[schemars(extend("x-nullable" = true))]
    pub output_token_count: Option<u64>,
}

/// `envelope.recovery-applied` (closed): path and offset only, never recovered content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct EnvelopeRecoveryApplied {
    /// The node.
    pub node_id: String,
    /// The recovery path.
    #[schemars(extend("enum" = ["direct", "jsonrepair", "markdown-fence", "brace-walker", "custom"]))]
    pub path: String,
    /// Byte offset; may be null.
    #[serde(default)]
    #[schemars(extend("x-nullable" = true))]
    pub byte_offset: Option<u64>,
}

/// `envelope.nl-to-format-engaged` (closed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct EnvelopeNlToFormatEngaged {
    /// The node.
    pub node_id: String,
    /// The envelope type that fell back.
    pub original_envelope_type: String,
    /// Fallback calls (≥ 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub fallback_calls: Option<u32>,
}

/// `cap.breached`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CapBreached {
    /// Which cap (e.g. `schema`).
    pub kind: String,
    /// The limit.
    pub limit: Value,
    /// The observed value.
    pub observed: Value,
    /// The node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_id: Option<String>,
}

/// `log.appended`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LogAppended {
    /// `debug`, `info`, `warn` or `error`.
    #[schemars(extend("enum" = ["debug", "info", "warn", "error"]))]
    pub level: String,
    /// The message.
    pub message: String,
    /// The node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_id: Option<String>,
    /// Structured fields.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fields: Option<Map<String, Value>>,
}

/// `variable.changed`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VariableChanged {
    /// The variable.
    pub name: String,
    /// The previous value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous: Option<Value>,
    /// The new value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<Value>,
    /// The node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_id: Option<String>,
}

/// `artifact.created` (partially published).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactCreated {
    /// The artifact.
    pub artifact_id: String,
    /// Its type.
    pub artifact_type: String,
    /// The node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_id: Option<String>,
}

/// Schema-only: a payload whose field list the reference does not publish.
#[derive(JsonSchema)]
#[schemars(extend("type" = "object"))]
#[allow(dead_code)]
struct OpenPayload;

/// Generates one payload definition's schema.
pub(crate) type DefinitionGenerator = fn(&mut schemars::SchemaGenerator) -> schemars::Schema;

/// Every payload definition: its `$defs` key, its closure, and a schema generator.
pub(crate) fn definitions() -> Vec<(&'static str, Closure, DefinitionGenerator)> {
    use Closure::*;
    fn g<T: JsonSchema>(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        T::json_schema(generator)
    }
    vec![
        ("runStarted", ClosedWithHatch, g::<RunStarted>),
        ("runCompleted", ClosedWithHatch, g::<RunCompleted>),
        ("runFailed", ClosedWithHatch, g::<RunFailed>),
        ("runCancelled", ClosedWithHatch, g::<RunCancelled>),
        ("runPaused", ClosedWithHatch, g::<RunPaused>),
        ("runResumed", Partial, g::<OpenPayload>),
        ("runDeadLettered", Partial, g::<OpenPayload>),
        ("nodeStarted", ClosedWithHatch, g::<NodeStarted>),
        ("nodeCompleted", ClosedWithHatch, g::<NodeCompleted>),
        ("nodeFailed", ClosedWithHatch, g::<NodeFailed>),
        ("nodeSuspended", ClosedWithHatch, g::<NodeSuspended>),
        ("nodeResumed", ClosedWithHatch, g::<NodeResumed>),
        ("nodeRetried", ClosedWithHatch, g::<NodeRetried>),
        ("nodeSkipped", ClosedWithHatch, g::<NodeReason>),
        ("nodeCancelled", ClosedWithHatch, g::<NodeReason>),
        ("interruptRequested", Partial, g::<InterruptRequested>),
        ("interruptResolved", ClosedWithHatch, g::<InterruptResolved>),
        ("leaseLifecycle", Partial, g::<OpenPayload>),
        ("outputChunk", ClosedWithHatch, g::<OutputChunk>),
        ("providerUsage", Closed, g::<ProviderUsage>),
        ("envelopeRefusal", Closed, g::<EnvelopeRefusal>),
        (
            "envelopeRetryExhausted",
            Closed,
            g::<EnvelopeRetryExhausted>,
        ),
        (
            "envelopeRetryAttempted",
            Closed,
            g::<EnvelopeRetryAttempted>,
        ),
        ("envelopeTruncated", Closed, g::<EnvelopeTruncated>),
        (
            "envelopeRecoveryApplied",
            Closed,
            g::<EnvelopeRecoveryApplied>,
        ),
        (
            "envelopeNlToFormatEngaged",
            Closed,
            g::<EnvelopeNlToFormatEngaged>,
        ),
        ("capBreached", ClosedWithHatch, g::<CapBreached>),
        ("logAppended", ClosedWithHatch, g::<LogAppended>),
        ("variableChanged", ClosedWithHatch, g::<VariableChanged>),
        ("artifactCreated", Partial, g::<ArtifactCreated>),
        ("openPayload", Partial, g::<OpenPayload>),
    ]
}
