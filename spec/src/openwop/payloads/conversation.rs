//! The conversation lifecycle payloads: upstream defs `conversationOpened` and
//! `conversationClosed` of `openwop/openwop-sdks` `schemas/v2/run-event-payloads.schema.json` @
//! `446c2f2c22ff059d475228b86395ff92d27329a1`: closed with the extension hatch.
//! (`conversationExchanged` `$ref`s `conversation-event.schema.json`, not yet transcribed.)

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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
