//! The channel payloads: upstream defs `channelWritten` and `channelPresence` of
//! `schemas/v2/run-event-payloads.schema.json` @ `446c2f2c`, which `$ref`
//! `openwop/openwop-sdks` `schemas/v2/channel-written-payload.schema.json` @
//! `fd8e5544c9fe9b63ac2672d64770173f32d13844` and `schemas/v2/channel-presence-payload.schema.json`
//! @ `33f1a23f7a305b6dcbd00979f6296838dcee2994` (transcribed in `spec/upstream/facts/`): both
//! closed, no hatch.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::super::ids;

/// The reducer grammar: a canonical reducer or `vendor.<org>.<name>`.
pub const REDUCER_PATTERN: &str =
    r"^(replace|append|merge|counter|votes|feedback|vendor\.[a-z][a-z0-9_-]*\.[a-z][a-z0-9_-]*)$";

/// `channel.written`: the write input, before reduction (closed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ChannelWritten {
    /// The channel (1–256 characters, a key of `WorkflowDefinition.channels`).
    #[schemars(length(min = 1, max = 256))]
    pub channel: String,
    /// The written value (any JSON value).
    pub value: Value,
    /// The reducer in effect at write time.
    #[schemars(regex(pattern = REDUCER_PATTERN))]
    pub reducer: String,
    /// The writing node, for node writes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ids::NodeId>")]
    pub node_id: Option<String>,
    /// When it was written (RFC 3339).
    #[schemars(extend("format" = "date-time"))]
    pub written_at: String,
    /// The channel schema version live at write time (≥ 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub schema_version: Option<u64>,
    /// The writing engine, when not the run's own (1–256 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 256))]
    pub source_engine_id: Option<String>,
    /// The cross-engine writer's run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ids::RunId>")]
    pub source_run_id: Option<String>,
}

/// A subject ref in a presence list (1–256 characters, opaque, non-PII).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct PresenceRef(#[schemars(length(min = 1, max = 256))] pub String);

/// `channel.presence`: ephemeral live presence in a channel conversation (closed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ChannelPresence {
    /// The channel conversation (1–256 characters).
    #[schemars(length(min = 1, max = 256))]
    pub conversation_id: String,
    /// The members present.
    pub present: Vec<PresenceRef>,
    /// The members typing (a subset of `present`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub typing: Option<Vec<PresenceRef>>,
}
