//! Payload definitions of the run event types, one struct per `$defs` entry of the published
//! `run-event-payloads.json`.
//!
//! Each struct states the def of the same name in `openwop/openwop-sdks`
//! `schemas/v2/run-event-payloads.schema.json` @ `446c2f2c22ff059d475228b86395ff92d27329a1`
//! (transcribed in `spec/upstream/facts/run-event-payloads.json`): required sets, enums,
//! bounds, closedness and the RFC 0185 extension hatch (keys matching `^(openwop-|x-|vendor\.)`)
//! as upstream has them, ids `$ref`-ing the grammars of [`super::ids`]. Every def reachable from
//! the normative root `_typeIndex` is transcribed; where upstream contradicts itself
//! (`interruptRequested`, the `OrchestratorDecision` two defs embed) the published def takes the
//! reading that fails no host, recorded in `spec/upstream/deviations.json`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::ids;
use super::subject::{Owner, Subject};

mod agent;
mod budget;
mod channel;
mod compensation;
mod conversation;
mod deployment;
mod dispatch;
mod error_object;
mod eval;
mod governance;
mod interrupt;
mod memory;
mod orchestrator;
mod prompt;
mod proposal;
mod replay;
mod tool;
mod trigger;
mod voice;

pub use agent::{
    AgentDecided, AgentHandoff, AgentInvocationCompleted, AgentInvocationStarted,
    AgentMemoryConsolidated, AgentReasoned, AgentReasoningDelta, AgentToolCalled,
    AgentToolReturned, AgentVerified,
};
pub use budget::{
    BudgetConsumed, BudgetExhausted, BudgetReserved, BudgetThresholdCrossed, EffectiveBudget,
};
pub use channel::{ChannelPresence, ChannelWritten, PresenceRef, REDUCER_PATTERN};
pub use compensation::{CompensationHalt, CompensationProgress};
pub use conversation::{
    AgentSharing, ConversationClosed, ConversationExchanged, ConversationOpened, ConversationTurn,
    TurnAgent, TurnRole,
};
pub use deployment::{
    DeploymentCanaryAdjusted, DeploymentPromoted, DeploymentRolledBack, DeploymentStateChanged,
};
pub use dispatch::{
    ContextSummarized, DispatchFanOut, DispatchJoin, NodeDispatched, WorkflowChainAttestation,
    WorkflowChainEvent,
};
pub use error_object::ErrorObject;
pub use eval::{EvalCompleted, EvalScored, EvalStarted};
pub use governance::{
    AuthorizationDecided, ConnectorAuthExpired, ConnectorAuthorized, GoalClosed, GoalEvaluated,
};
pub use interrupt::{
    ApprovalAudience, ApprovalData, ClarificationData, ClarificationQuestion,
    ConversationCloseData, ConversationExchangeData, ConversationStartData, CredentialData,
    CredentialReference, CustomData, ExternalEventData, INTERRUPT_KINDS, InterruptRequested,
    LowConfidenceData,
};
pub use memory::{CommitmentFired, MemoryCompacted, MemoryDistillation, MemoryWritten};
pub use orchestrator::{
    EscalationKind, OrchestratorDecision, RunOrchestratorDecided, SuccessCriterion, WorkerId,
    WorkflowChainConfidenceEscalated,
};
pub use prompt::{
    AgentPromptResolved, ModelCapabilityInsufficient, ModelCapabilitySubstituted, PromptComposed,
    PromptResolutionStep,
};
pub use proposal::{ImportApplied, ImportCounts, ProposalActivated, ProposalCreated};
pub use replay::{ReplayDiverged, ReplayDivergedAtRefusal};
pub use tool::{EgressDecided, ToolSessionClosed, ToolSessionOpened};
pub use trigger::{
    RosterRunInitiated, TriggerDeliveryAttempted, TriggerSubscriptionStateChanged, WorkspaceUpdated,
};
pub use voice::{
    VoiceCancelled, VoiceEndpointCandidate, VoiceMoment, VoiceSynthesisChunk, VoiceTranscript,
    VoiceTurnCommit,
};

/// The extension-key pattern carried opaquely by most payload definitions.
pub const EXTENSION_HATCH_PATTERN: &str = r"^(openwop-|x-|vendor\.)";

/// How a definition treats members it does not list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Closure {
    /// Closed, no hatch.
    Closed,
    /// Closed except for hatch keys.
    ClosedWithHatch,
    /// Open: upstream itself admits any member (`additionalProperties: true`).
    Open,
    /// Upstream contradicts itself about the members (`interruptRequested`: the closed
    /// `suspend-request.schema.json` "plus engine-assigned identity fields"): every member
    /// upstream names is stated, others are tolerated.
    Tolerant,
}

/// `run.started`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunStarted {
    /// The workflow.
    #[schemars(with = "ids::WorkflowId")]
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
    #[schemars(with = "Option<ids::NodeId>")]
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
    #[schemars(with = "Option<ids::RunId>")]
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
    #[schemars(extend("enum" = ["immediate", "drain-current-node"]))]
    pub drain_policy: Option<String>,
    /// The interrupted node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ids::NodeId>")]
    pub interrupted_node_id: Option<String>,
    /// The interrupted attempt (≥ 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub interrupted_attempt: Option<u32>,
}

/// `node.started`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeStarted {
    /// The node.
    #[schemars(with = "ids::NodeId")]
    pub node_id: String,
    /// The node's type id.
    #[schemars(with = "ids::TypeId")]
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
    #[schemars(with = "ids::NodeId")]
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
    #[schemars(with = "ids::NodeId")]
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
    #[schemars(with = "ids::NodeId")]
    pub node_id: String,
    /// The interrupt (tenant-bound id).
    #[schemars(with = "ids::InterruptId")]
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
    /// A key (non-empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub key: Option<String>,
}

/// `node.resumed`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeResumed {
    /// The node.
    #[schemars(with = "ids::NodeId")]
    pub node_id: String,
    /// The interrupt that was resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ids::InterruptId>")]
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
    #[schemars(with = "ids::NodeId")]
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
    #[schemars(with = "ids::NodeId")]
    pub node_id: String,
    /// Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// `interrupt.resolved`, `approval.received|granted|rejected|overridden`,
/// `clarification.resolved`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InterruptResolved {
    /// The node.
    #[schemars(with = "ids::NodeId")]
    pub node_id: String,
    /// The interrupt.
    #[schemars(with = "ids::InterruptId")]
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
    /// The resume value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume_value: Option<Value>,
    /// Who resolved it: the resolving Subject.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_by: Option<Subject>,
    /// `granted`, `rejected` or `overridden`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["granted", "rejected", "overridden"]))]
    pub decision: Option<String>,
    /// The action taken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["accept", "reject", "refine", "edit-accept", "timeout"]))]
    pub action: Option<String>,
    /// Structured feedback for `action: refine`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refine_feedback: Option<RefineFeedback>,
    /// Edited artifact data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edited_artifact_data: Option<Value>,
}

/// What a refine feedback targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RefineScope {
    /// The whole artifact.
    Whole,
    /// One section (`sectionPath`).
    Section,
    /// Some items (`itemIds`).
    Items,
}

/// `interrupt.resolved.refineFeedback` (closed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RefineFeedback {
    /// The target.
    pub scope: RefineScope,
    /// A JSON path into the artifact, for scope `section`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub section_path: Option<String>,
    /// Item ids, for scope `items`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item_ids: Option<Vec<String>>,
    /// Chip selections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    /// Free text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
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
#[schemars(rename = "_chunkMeta")]
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
    #[schemars(with = "Option<Vec<Value>>")]
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
    #[schemars(with = "ids::NodeId")]
    pub node_id: String,
    /// The run.
    #[schemars(with = "ids::RunId")]
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
    #[schemars(length(min = 1))]
    pub provider: String,
    /// The model.
    #[schemars(length(min = 1))]
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
    #[schemars(with = "Option<ids::NodeId>")]
    pub node_id: Option<String>,
    /// Trace id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ids::TraceId>")]
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
    #[schemars(with = "ids::NodeId")]
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
    #[schemars(with = "ids::NodeId")]
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
    #[schemars(with = "ids::NodeId")]
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
    #[schemars(with = "ids::NodeId")]
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
    #[schemars(with = "ids::NodeId")]
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
    #[schemars(with = "ids::NodeId")]
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
    #[schemars(extend("enum" = ["clarification", "schema", "envelopes", "node-executions",
        "wasm-memory", "wasm-fuel", "wasm-execution-time", "run-duration", "loop-iterations",
        "budget-tokens", "budget-cost", "budget-tool-calls", "budget-retries"]))]
    pub kind: String,
    /// The effective ceiling: a number ≥ 0 (kept as the JSON the host sent).
    #[schemars(with = "f64", range(min = 0.0))]
    pub limit: Value,
    /// The observed value at breach: a number ≥ 0.
    #[schemars(with = "f64", range(min = 0.0))]
    pub observed: Value,
    /// The node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ids::NodeId>")]
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
    #[schemars(with = "Option<ids::NodeId>")]
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
    #[schemars(length(min = 1))]
    pub name: String,
    /// The previous value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous: Option<Value>,
    /// The new value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<Value>,
    /// The node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ids::NodeId>")]
    pub node_id: Option<String>,
}

/// `artifact.created` (partially published).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactCreated {
    /// The artifact (non-empty).
    #[schemars(length(min = 1))]
    pub artifact_id: String,
    /// Its type (non-empty).
    #[schemars(length(min = 1))]
    pub artifact_type: String,
    /// The node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ids::NodeId>")]
    pub node_id: Option<String>,
    /// The version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// A summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// Whether the type is registered and the payload was validated against it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registered: Option<bool>,
    /// `pack` or `host`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["pack", "host"]))]
    pub registration_source: Option<String>,
}

/// `run.resume-started` (upstream def `runResuming`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunResuming {
    /// The status the run resumes from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_status: Option<String>,
}

/// `run.restored-from-snapshot`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunRestoredFromSnapshot {
    /// The snapshot's sequence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot_seq: Option<u64>,
    /// The engine version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_version: Option<u64>,
}

/// `run.dead-lettered` (closed, no hatch).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunDeadLettered {
    /// The run.
    #[schemars(with = "ids::RunId")]
    pub run_id: String,
    /// The node whose retry exhaustion dead-lettered the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ids::NodeId>")]
    pub node_id: Option<String>,
    /// Redaction-safe reason (non-empty).
    #[schemars(length(min = 1))]
    pub reason: String,
    /// Attempts made before dead-lettering (≥ 1).
    #[schemars(range(min = 1))]
    pub attempts: u32,
}

/// `node.suspend-failed`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeSuspendFailed {
    /// The node.
    #[schemars(with = "ids::NodeId")]
    pub node_id: String,
    /// Why.
    pub error: ErrorObject,
}

/// Where a lease holder runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum LeaseHost {
    /// A browser.
    Browser,
    /// A cloud host.
    Cloud,
}

/// `lease.acquired`, `lease.renewed`, `lease.lost` (upstream def `leaseLifecycle`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LeaseLifecycle {
    /// The lease (non-empty).
    #[schemars(length(min = 1))]
    pub lease_id: String,
    /// The holder.
    pub host: LeaseHost,
    /// The holder instance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_id: Option<String>,
    /// When the lease expires.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<chrono::DateTime<chrono::Utc>>,
    /// The previous holder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_host: Option<LeaseHost>,
}

/// `lease.handed-off`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LeaseHandedOff {
    /// The lease (non-empty).
    #[schemars(length(min = 1))]
    pub lease_id: String,
    /// The previous holder.
    pub from_host: LeaseHost,
    /// The new holder.
    pub to_host: LeaseHost,
    /// Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// `version.pinned`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VersionPinned {
    /// The change (non-empty).
    #[schemars(length(min = 1))]
    pub change_id: String,
    /// The pinned version.
    pub version: u64,
    /// The node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ids::NodeId>")]
    pub node_id: Option<String>,
}

/// `workflow.restored`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkflowRestored {
    /// The snapshot sequence recovered from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_snapshot_seq: Option<u64>,
    /// The engine version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_version: Option<u64>,
}

/// `workflow.loopback-limit`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkflowLoopbackLimit {
    /// The node.
    #[schemars(with = "ids::NodeId")]
    pub node_id: String,
    /// Iterations made (≥ 1).
    #[schemars(range(min = 1))]
    pub iterations: u32,
    /// The cap (≥ 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub limit: Option<u32>,
}

/// `workflow.stalled`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkflowStalled {
    /// How long the run made no progress.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stalled_for_ms: Option<u64>,
    /// The last node that progressed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ids::NodeId>")]
    pub last_node_id: Option<String>,
}

/// `negotiation.decided` (closed, no hatch): the content-free negotiation audit event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NegotiationDecided {
    /// `a2a` or `mcp`.
    #[schemars(extend("enum" = ["a2a", "mcp"]))]
    pub protocol: String,
    /// `accepted` or `refused`.
    #[schemars(extend("enum" = ["accepted", "refused"]))]
    pub outcome: String,
    /// The version decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The floor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub floor: Option<String>,
    /// SHA-256 of the peer origin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = "^[0-9a-f]{64}$"))]
    pub peer_digest: Option<String>,
    /// Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["below-floor", "unauthenticated", "unsupported", "ok"]))]
    pub reason: Option<String>,
    /// When.
    pub at: chrono::DateTime<chrono::Utc>,
}

/// Schema-only: a payload whose field list the reference does not publish.
#[derive(JsonSchema)]
#[schemars(extend("type" = "object"))]
#[allow(dead_code)]
struct OpenPayload;

/// Upstream defs that are `$ref` compositions of another def (the legacy interrupt payloads):
/// `(def, the def it is)`. Published as a `$ref`.
pub const ALIASES: &[(&str, &str)] = &[
    ("approvalRequested", "interruptRequested"),
    ("clarificationRequested", "interruptRequested"),
    ("approvalReceived", "interruptResolved"),
    ("approvalGranted", "interruptResolved"),
    ("approvalRejected", "interruptResolved"),
    ("approvalOverridden", "interruptResolved"),
    ("clarificationResolved", "interruptResolved"),
];

/// Generates one payload definition's schema.
pub(crate) type DefinitionGenerator = fn(&mut schemars::SchemaGenerator) -> schemars::Schema;

/// Every transcribed payload definition: its upstream `$defs` key, its closure, and a schema
/// generator.
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
        ("runResuming", ClosedWithHatch, g::<RunResuming>),
        ("runPaused", ClosedWithHatch, g::<RunPaused>),
        ("runResumed", Open, g::<OpenPayload>),
        (
            "runRestoredFromSnapshot",
            ClosedWithHatch,
            g::<RunRestoredFromSnapshot>,
        ),
        ("runDeadLettered", Closed, g::<RunDeadLettered>),
        ("nodeStarted", ClosedWithHatch, g::<NodeStarted>),
        ("nodeCompleted", ClosedWithHatch, g::<NodeCompleted>),
        ("nodeFailed", ClosedWithHatch, g::<NodeFailed>),
        ("nodeSuspended", ClosedWithHatch, g::<NodeSuspended>),
        ("nodeSuspendFailed", ClosedWithHatch, g::<NodeSuspendFailed>),
        ("nodeResumed", ClosedWithHatch, g::<NodeResumed>),
        ("nodeRetried", ClosedWithHatch, g::<NodeRetried>),
        ("nodeSkipped", ClosedWithHatch, g::<NodeReason>),
        ("nodeCancelled", ClosedWithHatch, g::<NodeReason>),
        ("interruptRequested", Tolerant, g::<InterruptRequested>),
        ("interruptResolved", ClosedWithHatch, g::<InterruptResolved>),
        ("artifactCreated", ClosedWithHatch, g::<ArtifactCreated>),
        ("outputChunk", ClosedWithHatch, g::<OutputChunk>),
        ("variableChanged", ClosedWithHatch, g::<VariableChanged>),
        ("logAppended", ClosedWithHatch, g::<LogAppended>),
        ("versionPinned", ClosedWithHatch, g::<VersionPinned>),
        ("workflowRestored", ClosedWithHatch, g::<WorkflowRestored>),
        (
            "workflowLoopbackLimit",
            ClosedWithHatch,
            g::<WorkflowLoopbackLimit>,
        ),
        ("workflowStalled", ClosedWithHatch, g::<WorkflowStalled>),
        ("capBreached", ClosedWithHatch, g::<CapBreached>),
        ("leaseLifecycle", ClosedWithHatch, g::<LeaseLifecycle>),
        ("leaseHandedOff", ClosedWithHatch, g::<LeaseHandedOff>),
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
        ("negotiationDecided", Closed, g::<NegotiationDecided>),
        ("voiceSpeechStart", Closed, g::<VoiceMoment>),
        ("voiceBargeIn", Closed, g::<VoiceMoment>),
        ("voiceTranscript", Closed, g::<VoiceTranscript>),
        (
            "voiceEndpointCandidate",
            Closed,
            g::<VoiceEndpointCandidate>,
        ),
        ("voiceTurnCommit", Closed, g::<VoiceTurnCommit>),
        ("voiceSynthesisChunk", Closed, g::<VoiceSynthesisChunk>),
        ("voiceCancelled", Closed, g::<VoiceCancelled>),
        ("goalEvaluated", Closed, g::<GoalEvaluated>),
        ("goalClosed", Closed, g::<GoalClosed>),
        ("authorizationDecided", Closed, g::<AuthorizationDecided>),
        ("connectorAuthorized", Closed, g::<ConnectorAuthorized>),
        ("connectorAuthExpired", Closed, g::<ConnectorAuthExpired>),
        ("agentReasoned", ClosedWithHatch, g::<AgentReasoned>),
        (
            "agentReasoningDelta",
            ClosedWithHatch,
            g::<AgentReasoningDelta>,
        ),
        ("agentToolCalled", ClosedWithHatch, g::<AgentToolCalled>),
        ("agentToolReturned", ClosedWithHatch, g::<AgentToolReturned>),
        ("agentHandoff", ClosedWithHatch, g::<AgentHandoff>),
        ("agentDecided", ClosedWithHatch, g::<AgentDecided>),
        ("agentVerified", Closed, g::<AgentVerified>),
        (
            "agentInvocationStarted",
            ClosedWithHatch,
            g::<AgentInvocationStarted>,
        ),
        (
            "agentInvocationCompleted",
            ClosedWithHatch,
            g::<AgentInvocationCompleted>,
        ),
        (
            "agentMemoryConsolidated",
            ClosedWithHatch,
            g::<AgentMemoryConsolidated>,
        ),
        ("budgetReserved", Closed, g::<BudgetReserved>),
        ("budgetConsumed", Closed, g::<BudgetConsumed>),
        (
            "budgetThresholdCrossed",
            Closed,
            g::<BudgetThresholdCrossed>,
        ),
        ("budgetExhausted", Closed, g::<BudgetExhausted>),
        ("compensationRequested", Closed, g::<CompensationProgress>),
        ("compensationStarted", Closed, g::<CompensationProgress>),
        ("compensationCompleted", Closed, g::<CompensationProgress>),
        ("compensationFailed", Closed, g::<CompensationHalt>),
        ("compensationPaused", Closed, g::<CompensationHalt>),
        (
            "compensationManualInterventionRequired",
            Closed,
            g::<CompensationHalt>,
        ),
        ("channelWritten", Closed, g::<ChannelWritten>),
        ("channelPresence", Closed, g::<ChannelPresence>),
        (
            "conversationExchanged",
            ClosedWithHatch,
            g::<ConversationExchanged>,
        ),
        (
            "runOrchestratorDecided",
            Closed,
            g::<RunOrchestratorDecided>,
        ),
        (
            "coreWorkflowChainConfidenceEscalated",
            Closed,
            g::<WorkflowChainConfidenceEscalated>,
        ),
        ("nodeDispatched", Closed, g::<NodeDispatched>),
        ("dispatchFanOut", Closed, g::<DispatchFanOut>),
        ("dispatchJoin", Closed, g::<DispatchJoin>),
        ("contextSummarized", Closed, g::<ContextSummarized>),
        ("replayDiverged", ClosedWithHatch, g::<ReplayDiverged>),
        (
            "replayDivergedAtRefusal",
            Closed,
            g::<ReplayDivergedAtRefusal>,
        ),
        ("evalStarted", ClosedWithHatch, g::<EvalStarted>),
        ("evalScored", ClosedWithHatch, g::<EvalScored>),
        ("evalCompleted", ClosedWithHatch, g::<EvalCompleted>),
        ("deploymentPromoted", Closed, g::<DeploymentPromoted>),
        ("deploymentRolledBack", Closed, g::<DeploymentRolledBack>),
        (
            "deploymentCanaryAdjusted",
            Closed,
            g::<DeploymentCanaryAdjusted>,
        ),
        (
            "deploymentStateChanged",
            Closed,
            g::<DeploymentStateChanged>,
        ),
        ("memoryCompacted", ClosedWithHatch, g::<MemoryCompacted>),
        ("memoryWritten", ClosedWithHatch, g::<MemoryWritten>),
        ("commitmentFired", ClosedWithHatch, g::<CommitmentFired>),
        (
            "conversationOpened",
            ClosedWithHatch,
            g::<ConversationOpened>,
        ),
        (
            "conversationClosed",
            ClosedWithHatch,
            g::<ConversationClosed>,
        ),
        ("coreWorkflowChainEvent", Closed, g::<WorkflowChainEvent>),
        ("promptComposed", Closed, g::<PromptComposed>),
        (
            "modelCapabilitySubstituted",
            Closed,
            g::<ModelCapabilitySubstituted>,
        ),
        (
            "modelCapabilityInsufficient",
            Closed,
            g::<ModelCapabilityInsufficient>,
        ),
        ("proposalCreated", Closed, g::<ProposalCreated>),
        ("proposalActivated", Closed, g::<ProposalActivated>),
        ("importApplied", Closed, g::<ImportApplied>),
        ("toolSessionOpened", ClosedWithHatch, g::<ToolSessionOpened>),
        ("toolSessionClosed", ClosedWithHatch, g::<ToolSessionClosed>),
        ("egressDecided", ClosedWithHatch, g::<EgressDecided>),
        (
            "triggerSubscriptionStateChanged",
            ClosedWithHatch,
            g::<TriggerSubscriptionStateChanged>,
        ),
        (
            "triggerDeliveryAttempted",
            ClosedWithHatch,
            g::<TriggerDeliveryAttempted>,
        ),
        ("rosterRunInitiated", Closed, g::<RosterRunInitiated>),
        ("workspaceUpdated", Closed, g::<WorkspaceUpdated>),
        ("agentPromptResolved", Closed, g::<AgentPromptResolved>),
    ]
}
