//! Host events on `GET /host/events`: heartbeat messages, no run data.
//!
//! [`HostEvent`] states `schemas/v2/host-event.schema.json` of `openwop/openwop` at commit
//! `a4576570526cb52a099ab089b1c099f82e2e90f0`; the two heartbeat messages state
//! `schemas/v2/heartbeat-evaluated.schema.json` and `heartbeat-state-changed.schema.json` of
//! `openwop/openwop-sdks` at commit `33f1a23f7a305b6dcbd00979f6296838dcee2994` (transcribed in
//! `spec/upstream/facts/`).

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Whether a host event is durable (carries an SSE `id:`) or ephemeral.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HostEventDelivery {
    /// Persisted; the frame carries `id:`.
    Durable,
    /// Not persisted.
    Ephemeral,
}

/// One host event document, the `data:` of a `/host/events` frame.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(title = "HostEvent")]
pub struct HostEvent {
    /// Host-minted id, identical on every delivery attempt.
    #[schemars(with = "super::ids::EventId")]
    pub event_id: String,
    /// A protocol host-event type or a vendor `org.name` type. Upstream's pattern admits only
    /// kebab-case segments, which rejects the `heartbeat.stateChanged` the events chapter names:
    /// both readings are admitted (see [`HOST_EVENT_TYPE_PATTERN`]).
    #[serde(rename = "type")]
    #[schemars(transform = host_event_type_schema)]
    pub event_type: String,
    /// When it happened.
    pub timestamp: DateTime<Utc>,
    /// Durability.
    pub delivery: HostEventDelivery,
    /// The workspace, present exactly when the event belongs to one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<super::ids::WorkspaceId>")]
    pub workspace_id: Option<String>,
    /// The payload: an object (for a protocol type, its registered payload schema).
    #[schemars(with = "Map<String, Value>")]
    pub payload: Value,
}

/// The `type` grammar of `host-event.schema.json`: two kebab-case segments.
pub const HOST_EVENT_TYPE_PATTERN: &str =
    r"^[a-z][a-z0-9]*(-[a-z0-9]+)*\.[a-z][a-z0-9]*(-[a-z0-9]+)*$";

/// The host-event type names the events chapter gives that upstream's pattern rejects.
pub const CHAPTER_HOST_EVENT_TYPES: [&str; 1] = ["heartbeat.stateChanged"];

fn host_event_type_schema(schema: &mut schemars::Schema) {
    *schema = schemars::Schema::try_from(serde_json::json!({
        "description": "A host-event type: upstream's kebab-case pattern, or a name the events chapter gives that the pattern rejects (upstream contradicts itself; both are admitted).",
        "anyOf": [
            {"type": "string", "pattern": HOST_EVENT_TYPE_PATTERN},
            {"type": "string", "enum": CHAPTER_HOST_EVENT_TYPES}
        ]
    }))
    .expect("an object is a schema");
}

/// The status of one heartbeat evaluation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HeartbeatStatus {
    /// The predicate ran to completion.
    Ok,
    /// The evaluation overran `maxRuntimeMs`.
    Timeout,
    /// The predicate failed.
    Error,
}

/// `heartbeat.evaluated` (closed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(title = "HeartbeatEvaluated")]
pub struct HeartbeatEvaluated {
    /// The heartbeat.
    #[schemars(length(min = 1))]
    pub heartbeat_id: String,
    /// How the evaluation ended.
    pub status: HeartbeatStatus,
    /// Whether the state changed on this tick.
    pub changed: bool,
}

/// `heartbeat.stateChanged`, emitted on a transition only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(title = "HeartbeatStateChanged")]
pub struct HeartbeatStateChanged {
    /// The heartbeat.
    #[schemars(length(min = 1))]
    pub heartbeat_id: String,
    /// The prior state (`{}` on the first tick).
    pub from: Map<String, Value>,
    /// The new state.
    pub to: Map<String, Value>,
}
