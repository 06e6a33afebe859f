//! The closed run event envelope, `RunEventDoc`.

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The per-event schema version this crate writes.
pub const SCHEMA_VERSION: u32 = 1;

/// The grammar of `eventId` (and of host-minted opaque tokens).
pub const EVENT_ID_PATTERN: &str = "^[A-Za-z0-9._~-]{16,128}$";

/// The grammar of a tenant-bound `runId`: `<tenant>/<opaque>`.
pub const RUN_ID_PATTERN: &str = "^(anon:)?[A-Za-z0-9._~-]{1,128}/[A-Za-z0-9._~-]{16,128}$";

/// The vendor branch of `type`, exactly as the chapter gives it.
pub const VENDOR_TYPE_PATTERN: &str = r"^(?!openwop\.)[a-z][a-z0-9]*(-[a-z0-9]+)*\.[a-z][a-z0-9]*(-[a-z0-9]+)*(\.[a-z][a-z0-9]*(-[a-z0-9]+)*)?$";

/// One event of a run's append-only log. Closed: no member beyond these.
///
/// `type` is a registered protocol type (see [`crate::registry::event_types`]) or a vendor type
/// whose org is registered; the published schema `run-event.json` states both branches.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(title = "RunEventDoc")]
pub struct RunEventDoc {
    /// Host-minted, opaque; consumers treat it as a string.
    #[schemars(regex(pattern = r"^[A-Za-z0-9._~-]{16,128}$"))]
    pub event_id: String,
    /// The tenant-bound run id.
    #[schemars(regex(pattern = r"^(anon:)?[A-Za-z0-9._~-]{1,128}/[A-Za-z0-9._~-]{16,128}$"))]
    pub run_id: String,
    /// The event type.
    #[serde(rename = "type")]
    pub event_type: String,
    /// The payload; validates against the payload definition `_typeIndex` names for the type.
    pub payload: Value,
    /// When the host recorded the event (RFC 3339).
    pub timestamp: DateTime<Utc>,
    /// The one ordering field: 0 for the first event, strictly increasing, never renumbered.
    pub sequence: u64,
    /// The per-event schema version (≥ 1).
    #[schemars(range(min = 1))]
    pub schema_version: u32,
    /// The node the event concerns, for node-scoped events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^[A-Za-z0-9._~:-]{1,128}$"))]
    pub node_id: Option<String>,
    /// The engine version that wrote the event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_version: Option<u64>,
    /// The eventId (or AI-envelope correlationId) that caused this event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^[A-Za-z0-9._~-]{16,128}$"))]
    pub causation_id: Option<String>,
}

/// Encodes a tenant-bound id for a URL path segment: bytes in `[A-Za-z0-9._-]` pass through,
/// every other byte becomes `~` and two uppercase hex digits (`/` → `~2F`).
pub fn encode_run_id_for_path(run_id: &str) -> String {
    let mut out = String::with_capacity(run_id.len() + 4);
    for byte in run_id.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'_' | b'-') {
            out.push(byte as char);
        } else {
            out.push_str(&format!("~{byte:02X}"));
        }
    }
    out
}

/// Decodes a run id path segment written in the `~XX` form or the `%XX` form (both accepted).
/// Returns `None` for a `~` or `%` not followed by two hex digits, or for invalid UTF-8.
pub fn decode_run_id_path_segment(segment: &str) -> Option<String> {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'~' | b'%' => {
                let hex = bytes.get(i + 1..i + 3)?;
                let hex = std::str::from_utf8(hex).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            other => {
                out.push(other);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_id_path_encoding_round_trips() {
        let id = "tenant-a/AbCdEfGhIjKlMnOp.q_r-s~t";
        let encoded = encode_run_id_for_path(id);
        assert_eq!(encoded, "tenant-a~2FAbCdEfGhIjKlMnOp.q_r-s~7Et");
        assert_eq!(decode_run_id_path_segment(&encoded).as_deref(), Some(id));
        assert_eq!(decode_run_id_path_segment("a%2Fb").as_deref(), Some("a/b"));
        assert_eq!(decode_run_id_path_segment("a~2fb").as_deref(), Some("a/b"));
        assert_eq!(decode_run_id_path_segment("a~2"), None);
        assert_eq!(decode_run_id_path_segment("a~zz"), None);
    }
}
