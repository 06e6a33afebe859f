//! The tool-session and egress payloads: upstream defs `toolSessionOpened`,
//! `toolSessionClosed` and `egressDecided` of `openwop/openwop-sdks`
//! `schemas/v2/run-event-payloads.schema.json` @ `446c2f2c22ff059d475228b86395ff92d27329a1`:
//! closed with the extension hatch, content-free.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `tool.session-opened` (def `toolSessionOpened`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolSessionOpened {
    /// The session (non-empty).
    #[schemars(length(min = 1))]
    pub session_id: String,
    /// The tool (non-empty).
    #[schemars(length(min = 1))]
    pub tool_id: String,
}

/// `tool.session-closed` (def `toolSessionClosed`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolSessionClosed {
    /// The session (non-empty).
    #[schemars(length(min = 1))]
    pub session_id: String,
    /// The tool (non-empty).
    #[schemars(length(min = 1))]
    pub tool_id: String,
    /// `completed`, `failed` or `cancelled`.
    #[schemars(extend("enum" = ["completed", "failed", "cancelled"]))]
    pub outcome: String,
}

/// `egress.decided` (def `egressDecided`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EgressDecided {
    /// `allowed`, `denied`, `downgraded` or `approval-required`.
    #[schemars(extend("enum" = ["allowed", "denied", "downgraded", "approval-required"]))]
    pub decision: String,
    /// The destination host/authority only (non-empty).
    #[schemars(length(min = 1))]
    pub destination: String,
    /// The credential considered (non-empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub credential_id: Option<String>,
    /// A closed reason code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = [
        "ok",
        "out-of-audience",
        "expired",
        "ssrf-blocked",
        "provenance-unevaluable",
        "scope-denied",
        "policy-denied"
    ]))]
    pub reason: Option<String>,
    /// Audit correlation (non-empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub audit_correlation_id: Option<String>,
}
