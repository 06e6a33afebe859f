//! The body of `POST /v1/executions`: [`ExecutionRequest`] and its parts.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Largest accepted request body, in bytes (1 MiB).
pub const MAX_REQUEST_BYTES: usize = 1024 * 1024;

/// Longest accepted `Idempotency-Key`, in characters (each a visible ASCII character).
pub const IDEMPOTENCY_KEY_MAX_LEN: usize = 256;

/// An execution request: stable caller intent plus typed input, requirements and routing
/// preferences. The object is closed: an unknown member is a malformed request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "ExecutionRequest")]
pub struct ExecutionRequest {
    /// Stable caller intent, e.g. `text-generation`.
    #[schemars(length(min = 1, max = 256))]
    pub ability: String,
    /// One or more typed input parts.
    #[schemars(length(min = 1, max = 1024))]
    pub input: Vec<InputPart>,
    /// Capabilities that must be present before routing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requirements: Option<Requirements>,
    /// Bounded execution-routing preferences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routing: Option<Routing>,
    /// Total execution deadline in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 86_400_000))]
    pub deadline_ms: Option<u64>,
    /// Low-cardinality caller metadata without sensitive content: scalar values only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("maxProperties" = 64))]
    #[schemars(with = "Option<BTreeMap<String, MetadataScalar>>")]
    pub metadata: Option<BTreeMap<String, Value>>,
    /// Explicitly provider-neutral extension data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("maxProperties" = 64))]
    pub extensions: Option<serde_json::Map<String, Value>>,
}

/// Schema-only stand-in for a metadata value: a string, a number or a boolean.
#[derive(JsonSchema)]
#[schemars(extend("type" = ["string", "number", "boolean"]))]
#[allow(dead_code)]
struct MetadataScalar;

/// One typed input part.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum InputPart {
    /// Plain text.
    Text {
        /// The text; may be empty.
        text: String,
    },
    /// A JSON value (any JSON, including `null`).
    Json {
        /// The value.
        value: Value,
    },
    /// An image by reference.
    Image(MediaRef),
    /// Audio by reference.
    Audio(MediaRef),
    /// Video by reference.
    Video(MediaRef),
    /// A file by reference.
    File(MediaRef),
}

impl InputPart {
    /// The modality this part carries.
    pub fn modality(&self) -> Modality {
        match self {
            InputPart::Text { .. } => Modality::Text,
            InputPart::Json { .. } => Modality::Json,
            InputPart::Image(_) => Modality::Image,
            InputPart::Audio(_) => Modality::Audio,
            InputPart::Video(_) => Modality::Video,
            InputPart::File(_) => Modality::File,
        }
    }
}

/// A media input by URI. The runtime never fetches it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MediaRef {
    /// Where the media lives.
    #[schemars(length(min = 1, max = 8192))]
    pub uri: String,
    /// The media type, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 256))]
    pub media_type: Option<String>,
}

/// An input or output modality.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Modality {
    /// Text.
    Text,
    /// Images.
    Image,
    /// Audio.
    Audio,
    /// Video.
    Video,
    /// Files.
    File,
    /// JSON values.
    Json,
}

/// Capabilities that must be present before routing. `false` or absent means no constraint.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Requirements {
    /// Modalities the chosen model must accept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("uniqueItems" = true))]
    pub input_modalities: Option<Vec<Modality>>,
    /// Modalities the chosen model must produce.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("uniqueItems" = true))]
    pub output_modalities: Option<Vec<Modality>>,
    /// Streaming output is required.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<bool>,
    /// Tool calls are required.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<bool>,
    /// Structured output is required.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_output: Option<bool>,
    /// An asynchronous (queued) provider is required.
    #[serde(default, rename = "async", skip_serializing_if = "Option::is_none")]
    pub asynchronous: Option<bool>,
    /// Cancellation support is required.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel: Option<bool>,
}

/// Bounded execution-routing preferences.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Routing {
    /// How candidates are chosen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<RoutingStrategy>,
    /// Providers to try first, in this order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("uniqueItems" = true), inner(length(min = 1)))]
    pub provider_order: Option<Vec<String>>,
    /// Whether a retryable failure before any output may fall back to the next candidate
    /// (default `false`: exactly one attempt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_fallback: Option<bool>,
    /// Upper bound on attempts when fallback is allowed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 32))]
    pub max_attempts: Option<u32>,
    /// Wall-clock budget for retries and fallback, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 86_400_000))]
    pub retry_budget_ms: Option<u64>,
}

/// How routing chooses among candidates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RoutingStrategy {
    /// The first candidate that qualifies, in registration order (after `provider_order`).
    FirstAvailable,
    /// Candidates strictly in `provider_order`, then the rest.
    Ordered,
}
