//! The flat, closed error envelope of surface W.
//!
//! States `schemas/v2/error-envelope.schema.json` of `openwop/openwop` at commit
//! `0ed567fece2f9c5c5ad337fed92f6926ad7547af` (transcribed in
//! `spec/upstream/facts/error-envelope.json`): `error` is one of the registered codes of
//! `spec/registry/error-codes.json` or a vendor code; `details` is any object except where a
//! code registers a details shape ([`details_conditionals`]).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::registry::error_codes;

/// `{"error": "<code>", "message": "...", "details"?: {...}}` on every 4xx/5xx of surface W.
/// Retry timing goes only in the `Retry-After` header, never in `details`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "OpenWopErrorEnvelope", transform = add_details_conditionals)]
pub struct ErrorEnvelope {
    /// A registered error code (see [`crate::registry::error_codes`]) or a vendor code.
    #[schemars(transform = error_code_schema)]
    pub error: String,
    /// A non-empty human-readable message.
    #[schemars(length(min = 1))]
    pub message: String,
    /// Contextual data, e.g. `supported` for `unsupported_stream_mode`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Map<String, Value>>,
}

impl ErrorEnvelope {
    /// An envelope without details.
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        ErrorEnvelope {
            error: code.into(),
            message: message.into(),
            details: None,
        }
    }

    /// Adds details.
    pub fn with_details(mut self, details: Map<String, Value>) -> Self {
        self.details = Some(details);
        self
    }
}

/// `error`: the registered codes, or a vendor code (`<org>.<code>`, never `openwop.`). The two
/// branches are disjoint (no registered code has a dot), so `anyOf` states upstream's `oneOf`.
fn error_code_schema(schema: &mut schemars::Schema) {
    let registry = error_codes();
    let codes: Vec<&str> = registry.openwop.iter().map(|c| c.code.as_str()).collect();
    *schema = schemars::Schema::try_from(json!({
        "description": "A registered error code, or a vendor code.",
        "anyOf": [
            {"title": "registered code", "type": "string", "enum": codes},
            {"title": "vendor code", "type": "string", "pattern": registry.openwop_vendor_code_pattern}
        ]
    }))
    .expect("an object is a schema");
}

/// The `details` shapes upstream registers per code, as `if error = <code> then details …`.
pub fn details_conditionals() -> Vec<Value> {
    let modes = json!({"type": "string", "enum": ["values", "updates", "messages", "debug"]});
    let when = |code: &str, details: Value| {
        json!({
            "if": {"properties": {"error": {"const": code}}, "required": ["error"]},
            "then": {"properties": {"details": details}}
        })
    };
    vec![
        when(
            "unsupported_stream_mode",
            json!({
                "type": "object",
                "required": ["supported"],
                "properties": {"supported": {"type": "array", "minItems": 1, "items": modes}}
            }),
        ),
        when(
            "run_state_conflict",
            json!({
                "type": "object",
                "required": ["runStatus"],
                "properties": {"runStatus": {"type": "string"}}
            }),
        ),
        when(
            "client_version_unsupported",
            json!({
                "type": "object",
                "properties": {"minClientVersion": {
                    "type": "string", "pattern": "^(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)$"
                }}
            }),
        ),
        when(
            "payload_unprojectable",
            json!({
                "type": "object",
                "additionalProperties": false,
                "required": ["keys", "type"],
                "properties": {
                    "type": {"type": "string"},
                    "keys": {"type": "array", "minItems": 1, "items": {"type": "string"}},
                    "eventId": {"type": "string", "pattern": super::run_event::EVENT_ID_PATTERN},
                    "sequence": {"type": "integer", "minimum": 0}
                }
            }),
        ),
    ]
}

fn add_details_conditionals(schema: &mut schemars::Schema) {
    schema.insert("allOf".into(), Value::Array(details_conditionals()));
}
