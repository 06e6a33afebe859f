//! The flat, closed error envelope of surface W.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// `{"error": "<code>", "message": "...", "details"?: {...}}` on every 4xx/5xx of surface W.
/// Retry timing goes only in the `Retry-After` header, never in `details`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "OpenWopErrorEnvelope")]
pub struct ErrorEnvelope {
    /// A registered error code (see [`crate::registry::error_codes`]) or a vendor code.
    #[schemars(length(min = 1))]
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
