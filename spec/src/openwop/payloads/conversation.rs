//! The conversation lifecycle payloads: upstream defs `conversationOpened`,
//! `conversationExchanged` and `conversationClosed` of `openwop/openwop-sdks`
//! `schemas/v2/run-event-payloads.schema.json` @ `446c2f2c22ff059d475228b86395ff92d27329a1`:
//! closed with the extension hatch. `conversationExchanged.turn` `$ref`s `ConversationTurn` of
//! `schemas/v2/conversation-event.schema.json` @ `fd8e5544c9fe9b63ac2672d64770173f32d13844`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::super::ids;

/// `conversation.opened` (def `conversationOpened`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConversationOpened {
    /// The conversation (1–256 chars, tenant-unique).
    #[schemars(length(min = 1, max = 256))]
    pub conversation_id: String,
    /// The opening agent (a plain string upstream).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opened_by: Option<String>,
}

/// `conversation.closed` (def `conversationClosed`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConversationClosed {
    /// The conversation (1–256 chars).
    #[schemars(length(min = 1, max = 256))]
    pub conversation_id: String,
    /// The close reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Turns completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_count: Option<u64>,
}

/// `conversation.exchanged` (def `conversationExchanged`): one completed turn. Since RFC 0186
/// the union of two earlier closed shapes, so `turn` and `outcome` are both optional.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConversationExchanged {
    /// The conversation (1–256 chars).
    #[schemars(length(min = 1, max = 256))]
    pub conversation_id: String,
    /// The 0-indexed turn.
    pub turn_index: u64,
    /// The turn content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<ConversationTurn>,
    /// The validated turn outcome (any value).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Value>,
}

/// Who spoke a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TurnRole {
    /// A person.
    User,
    /// An agent (the turn then names its `speakerId`).
    Agent,
    /// The system.
    System,
}

/// How an agent's memory is shared in a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum AgentSharing {
    /// Isolated.
    #[serde(rename = "isolated")]
    Isolated,
    /// Shared.
    #[serde(rename = "shared")]
    Shared,
    /// Shared under the shared placeholder.
    #[serde(rename = "shared:%shared%")]
    SharedPlaceholder,
}

/// The agent behind a turn (closed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TurnAgent {
    /// The agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ids::AgentId>")]
    pub agent_id: Option<String>,
    /// Memory sharing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_sharing: Option<AgentSharing>,
    /// The memory reference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_ref: Option<String>,
}

/// One turn of a conversation (`ConversationTurn`, closed; an agent turn names its speaker).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(extend("allOf" = [{
    "if": {"properties": {"role": {"const": "agent"}}, "required": ["role"]},
    "then": {"required": ["speakerId"]}
}]))]
pub struct ConversationTurn {
    /// The message (1–256 chars).
    #[schemars(length(min = 1, max = 256))]
    pub message_id: String,
    /// The sender (1–256 chars).
    #[schemars(length(min = 1, max = 256))]
    pub from: String,
    /// The addressee (at most 256 chars).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 256))]
    pub to: Option<String>,
    /// The group (at most 256 chars).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 256))]
    pub group_id: Option<String>,
    /// The content (any JSON value).
    pub content: Value,
    /// Milliseconds since the epoch.
    pub ts: u64,
    /// Who spoke.
    pub role: TurnRole,
    /// The agent behind the turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<TurnAgent>,
    /// The turn index.
    pub turn_index: u64,
    /// The speaking roster instance (1–256 chars; required for agent turns).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 256))]
    pub speaker_id: Option<String>,
}
