//! The replay divergence payloads (`replay.*`): upstream defs `replayDiverged` (closed with the
//! extension hatch) and `replayDivergedAtRefusal` (closed, no hatch) of `openwop/openwop-sdks`
//! `schemas/v2/run-event-payloads.schema.json` @ `446c2f2c22ff059d475228b86395ff92d27329a1`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::openwop::ids;

/// `replay.diverged` (def `replayDiverged`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReplayDiverged {
    /// The source run of the replay.
    #[schemars(with = "ids::RunId")]
    pub source_run_id: String,
    /// The event-log index of the divergence.
    pub at_sequence: u64,
    /// The original event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ids::EventId>")]
    pub original_event_id: Option<String>,
    /// `output`, `missing`, `extra` or `type-mismatch`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["output", "missing", "extra", "type-mismatch"]))]
    pub divergence_kind: Option<String>,
    /// The event type the replay diverged at (a string).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub divergence_point: Option<String>,
}

/// `replay.diverged-at-refusal` (def `replayDivergedAtRefusal`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReplayDivergedAtRefusal {
    /// The source run of the replay.
    #[schemars(with = "ids::RunId")]
    pub source_run_id: String,
    /// The event-log index of the divergence.
    pub at_sequence: u64,
    /// The original event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ids::EventId>")]
    pub original_event_id: Option<String>,
    /// The node whose call diverged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ids::NodeId>")]
    pub node_id: Option<String>,
    /// `valid` or `refusal`.
    #[schemars(extend("enum" = ["valid", "refusal"]))]
    pub original_envelope_kind: String,
    /// `valid` or `refusal` (prose: differs from the original).
    #[schemars(extend("enum" = ["valid", "refusal"]))]
    pub replay_envelope_kind: String,
    /// Provider-supplied refusal reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal_reason: Option<String>,
}
