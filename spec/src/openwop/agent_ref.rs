//! `AgentRef`, the slim runtime projection of an agent's identity (`RunSnapshot.agent`,
//! `RunSnapshot.runOrchestrator`).
//!
//! States `openwop/openwop-sdks` `schemas/v2/agent-ref.schema.json` @
//! `33f1a23f7a305b6dcbd00979f6296838dcee2994` (transcribed in
//! `spec/upstream/facts/agent-ref.json`): closed, `agentId` required, `version` and `channel`
//! mutually exclusive.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::ids;

/// The model-class envelope of an agent (a closed enum upstream).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ModelClass {
    /// Reasoning models.
    Reasoning,
    /// Tool-using models.
    ToolUsing,
    /// Chat models.
    Chat,
    /// Code models.
    Code,
    /// Vision models.
    Vision,
    /// Multimodal models.
    Multimodal,
    /// Embedding models.
    Embedding,
    /// Classification models.
    Classification,
    /// Retrieval models.
    Retrieval,
}

/// An agent's identity as a run carries it (closed; `version` and `channel` exclusive).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(extend("not" = {"required": ["version", "channel"]}))]
pub struct AgentRef {
    /// The agent.
    #[schemars(with = "ids::AgentId")]
    pub agent_id: String,
    /// A display name (at most 256 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 256))]
    pub name: Option<String>,
    /// The model-class envelope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_class: Option<ModelClass>,
    /// A host-defined reference to the agent's long-term memory (1–256 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 256))]
    pub memory_ref: Option<String>,
    /// An exact version pin (at most 64 characters; exclusive with `channel`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 64))]
    pub version: Option<String>,
    /// A named deployment channel (1–64 characters; exclusive with `version`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64))]
    pub channel: Option<String>,
    /// The manifest this ref was projected from (at most 256 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 256))]
    pub source_manifest_id: Option<String>,
}
