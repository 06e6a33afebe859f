//! The live-voice payloads (`voice.*`): upstream defs `voiceSpeechStart`, `voiceTranscript`,
//! `voiceEndpointCandidate`, `voiceTurnCommit`, `voiceSynthesisChunk`, `voiceBargeIn` and
//! `voiceCancelled` of `openwop/openwop-sdks` `schemas/v2/run-event-payloads.schema.json` @
//! `446c2f2c22ff059d475228b86395ff92d27329a1`: all closed, no hatch.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `voice.speech-start`, `voice.barge-in` (defs `voiceSpeechStart`, `voiceBargeIn`):
/// content-free, a session-relative timestamp only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VoiceMoment {
    /// Session-relative time (ms).
    pub at_ms: u64,
}

/// `voice.transcript` (def `voiceTranscript`): untrusted recognised speech.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VoiceTranscript {
    /// The current hypothesis.
    pub text: String,
    /// Whether the text is settled.
    pub is_final: bool,
    /// The prefix that will not change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub committed_prefix: Option<String>,
    /// Tail confidence in [0, 1].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub stability: Option<f64>,
    /// Whether punctuation/casing was applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub formatted: Option<bool>,
    /// Session-relative time (ms).
    pub at_ms: u64,
    /// Always `untrusted`.
    #[schemars(extend("const" = "untrusted"))]
    pub content_trust: String,
}

/// `voice.endpoint-candidate` (def `voiceEndpointCandidate`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VoiceEndpointCandidate {
    /// Session-relative time (ms).
    pub at_ms: u64,
    /// End-of-turn confidence in [0, 1].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub confidence: Option<f64>,
}

/// `voice.turn-commit` (def `voiceTurnCommit`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VoiceTurnCommit {
    /// Session-relative time (ms).
    pub at_ms: u64,
    /// The settled transcript (untrusted).
    pub final_text: String,
}

/// `voice.synthesis-chunk` (def `voiceSynthesisChunk`): metadata only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VoiceSynthesisChunk {
    /// Monotonic chunk sequence.
    pub seq: u64,
    /// Audio type (non-empty).
    #[schemars(length(min = 1))]
    pub mime_type: String,
    /// Chunk duration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// Reference to the bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Live-stream handle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_ref: Option<String>,
    /// Inline bytes under the host's cap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base64: Option<String>,
    /// True on the terminal chunk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r#final: Option<bool>,
}

/// `voice.cancelled` (def `voiceCancelled`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VoiceCancelled {
    /// Session-relative time (ms).
    pub at_ms: u64,
    /// `barge-in` or `explicit`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["barge-in", "explicit"]))]
    pub reason: Option<String>,
}
