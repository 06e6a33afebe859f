//! Host events on `GET /host/events`: heartbeat messages, no run data.

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
    /// Host-minted id.
    #[schemars(regex(pattern = r"^[A-Za-z0-9._~-]{16,128}$"))]
    pub event_id: String,
    /// `heartbeat.evaluated` or `heartbeat.stateChanged`.
    #[serde(rename = "type")]
    pub event_type: String,
    /// When it happened.
    pub timestamp: DateTime<Utc>,
    /// Durability.
    pub delivery: HostEventDelivery,
    /// The heartbeat message.
    pub payload: Value,
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
    pub heartbeat_id: String,
    /// The prior state (`{}` on the first tick).
    pub from: Map<String, Value>,
    /// The new state.
    pub to: Map<String, Value>,
}
