//! The agent payloads (`agent.*`): upstream defs `agentReasoned`, `agentReasoningDelta`,
//! `agentToolCalled`, `agentToolReturned`, `agentHandoff`, `agentDecided`, `agentVerified`,
//! `agentInvocationStarted`, `agentInvocationCompleted` and `agentMemoryConsolidated` of
//! `openwop/openwop-sdks` `schemas/v2/run-event-payloads.schema.json` @
//! `446c2f2c22ff059d475228b86395ff92d27329a1`. All closed; all but `agentVerified` admit the
//! extension hatch (see [`super::definitions`]).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error_object::ErrorObject;
use crate::openwop::ids;

/// `agent.reasoned` (def `agentReasoned`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentReasoned {
    /// The reasoning agent.
    #[schemars(with = "ids::AgentId")]
    pub agent_id: String,
    /// The reasoning text.
    pub reasoning: String,
    /// `summary`, `full` or `off`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["summary", "full", "off"]))]
    pub verbosity: Option<String>,
    /// Cross-host causation pointer (non-empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub causation_host_id: Option<String>,
}

/// `agent.reasoning-delta` (def `agentReasoningDelta`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentReasoningDelta {
    /// The reasoning agent.
    #[schemars(with = "ids::AgentId")]
    pub agent_id: String,
    /// New reasoning content since the previous delta.
    pub delta: String,
    /// Index within the reasoning block (≥ 0).
    pub sequence: u64,
    /// `summary`, `full` or `off`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["summary", "full", "off"]))]
    pub verbosity: Option<String>,
}

/// `agent.tool-called` (def `agentToolCalled`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentToolCalled {
    /// The calling agent.
    #[schemars(with = "ids::AgentId")]
    pub agent_id: String,
    /// The tool (non-empty).
    #[schemars(length(min = 1))]
    pub tool_name: String,
    /// Correlates the call with its return (non-empty).
    #[schemars(length(min = 1))]
    pub call_id: String,
    /// Tool inputs (any JSON).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs: Option<Value>,
    /// Content-free hash of the arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args_hash: Option<String>,
    /// The principal the call is attributed to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub principal: Option<String>,
    /// `mcp`, `http` or `native`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["mcp", "http", "native"]))]
    pub transport: Option<String>,
    /// Cross-host causation pointer (non-empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub causation_host_id: Option<String>,
}

/// `agent.tool-returned` (def `agentToolReturned`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentToolReturned {
    /// The calling agent.
    #[schemars(with = "ids::AgentId")]
    pub agent_id: String,
    /// The tool (non-empty).
    #[schemars(length(min = 1))]
    pub tool_name: String,
    /// Correlates the return with its call (non-empty).
    #[schemars(length(min = 1))]
    pub call_id: String,
    /// The tool result (any JSON).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Value>,
    /// Set on tool-execution failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorObject>,
    /// `ok`, `error`, `forbidden` or `rate_limited`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["ok", "error", "forbidden", "rate_limited"]))]
    pub status: Option<String>,
    /// Recorded tool duration (ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// Cross-host causation pointer (non-empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub causation_host_id: Option<String>,
}

/// `agent.handoff` (def `agentHandoff`): both agent ids are the `agentId` grammar and at least
/// three characters long.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentHandoff {
    /// The agent surrendering control.
    #[schemars(with = "ids::AgentId", extend("minLength" = 3))]
    pub from_agent_id: String,
    /// The agent receiving control.
    #[schemars(with = "ids::AgentId", extend("minLength" = 3))]
    pub to_agent_id: String,
    /// Handoff rationale.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Cross-host causation pointer (non-empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub causation_host_id: Option<String>,
}

/// `agent.decided` (def `agentDecided`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentDecided {
    /// The deciding agent.
    #[schemars(with = "ids::AgentId")]
    pub agent_id: String,
    /// The decision (any JSON, required).
    pub decision: Value,
    /// Confidence in [0, 1].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("minimum" = 0, "maximum" = 1))]
    pub confidence: Option<f64>,
    /// Cross-host causation pointer (non-empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub causation_host_id: Option<String>,
}

/// `agent.verified` (def `agentVerified`): closed, no hatch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentVerified {
    /// The verifying (critic) agent.
    #[schemars(with = "ids::AgentId")]
    pub agent_id: String,
    /// What was checked (non-empty).
    #[schemars(length(min = 1))]
    pub target: String,
    /// `pass`, `fail` or `revise`.
    #[schemars(extend("enum" = ["pass", "fail", "revise"]))]
    pub verdict: String,
    /// The criteria keys evaluated (unique, non-empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(inner(length(min = 1)), extend("uniqueItems" = true))]
    pub criteria: Option<Vec<String>>,
    /// Verifier confidence in [0, 1].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("minimum" = 0, "maximum" = 1))]
    pub confidence: Option<f64>,
    /// Cross-host causation pointer (non-empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub causation_host_id: Option<String>,
}

/// `agent.invocation-started` (def `agentInvocationStarted`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentInvocationStarted {
    /// Unique within the run (non-empty).
    #[schemars(length(min = 1))]
    pub invocation_id: String,
    /// The manifest agent invoked.
    #[schemars(with = "ids::AgentId")]
    pub agent_id: String,
    /// `workflow-node`, `run-api` or `chat-mention`.
    #[schemars(extend("enum" = ["workflow-node", "run-api", "chat-mention"]))]
    pub source: String,
    /// The manifest's abstract model class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_class: Option<String>,
    /// The concrete model selected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_model: Option<String>,
    /// The concrete provider routed to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_provider: Option<String>,
    /// The pinned agent version, when a channel was bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_agent_version: Option<String>,
    /// The channel bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_channel: Option<String>,
    /// Tools in the constructed surface.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_surface_count: Option<u64>,
    /// Whether long-term memory was bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_bound: Option<bool>,
}

/// `agent.invocation-completed` (def `agentInvocationCompleted`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentInvocationCompleted {
    /// Correlates with the start event (non-empty).
    #[schemars(length(min = 1))]
    pub invocation_id: String,
    /// The manifest agent.
    #[schemars(with = "ids::AgentId")]
    pub agent_id: String,
    /// The terminal disposition.
    #[schemars(extend("enum" = ["completed", "handed-off", "escalated", "refused", "failed"]))]
    pub outcome: String,
    /// Whether the result was schema-validated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema_validated: Option<bool>,
    /// Terminal confidence in [0, 1].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("minimum" = 0, "maximum" = 1))]
    pub confidence: Option<f64>,
    /// A follow-on run enqueued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ids::RunId>")]
    pub enqueued_run_id: Option<String>,
}

/// `agent.memory-consolidated` (def `agentMemoryConsolidated`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentMemoryConsolidated {
    /// The memory scope (non-empty).
    #[schemars(length(min = 1))]
    pub memory_ref: String,
    /// Entries considered.
    pub input_count: u64,
    /// Entries remaining.
    pub output_count: u64,
    /// Entries collapsed (each non-empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(inner(length(min = 1)))]
    pub merged_ids: Option<Vec<String>>,
    /// `host-managed`, `scheduled` or `on-demand`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["host-managed", "scheduled", "on-demand"]))]
    pub trigger: Option<String>,
}
