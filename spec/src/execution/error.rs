//! Portable errors of the execution protocol: `{"error": {code, message, retryable,
//! provider_code?}}`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The portable error codes. Provider-native codes may appear only as `provider_code`.
///
/// Nine are the origin's `RuntimeErrorCode` (capa-cloud/model-runtime-api
/// `packages/protocol/src/index.ts` @ c1221041). `not_found` and `conflict` are tolerated
/// resource codes: the origin's own server answers 404 with `not_found` although its registry
/// lacks it, and CONTRACT.md answers 404/409 with them (`spec/upstream/deviations.json`,
/// `RuntimeErrorCode/enum`, a tolerance).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The request is malformed (bad JSON, content type, schema, Idempotency-Key, cursor).
    InvalidRequest,
    /// No such execution or route.
    NotFound,
    /// No provider satisfies the requested ability and capabilities.
    CapabilityUnavailable,
    /// Admission or storage capacity is exhausted.
    QueueFull,
    /// A provider or the runtime rate-limited the request.
    RateLimited,
    /// The execution's deadline expired.
    DeadlineExceeded,
    /// The execution was cancelled.
    Cancelled,
    /// No provider could serve the request.
    ProviderUnavailable,
    /// A provider violated its own protocol (e.g. a stream ended without its completion signal).
    ProviderProtocolError,
    /// The runtime failed internally.
    InternalError,
    /// The request conflicts with the resource's state.
    Conflict,
}

impl ErrorCode {
    /// Every code.
    pub const ALL: [ErrorCode; 11] = [
        Self::InvalidRequest,
        Self::NotFound,
        Self::CapabilityUnavailable,
        Self::QueueFull,
        Self::RateLimited,
        Self::DeadlineExceeded,
        Self::Cancelled,
        Self::ProviderUnavailable,
        Self::ProviderProtocolError,
        Self::InternalError,
        Self::Conflict,
    ];

    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidRequest => "invalid_request",
            Self::NotFound => "not_found",
            Self::CapabilityUnavailable => "capability_unavailable",
            Self::QueueFull => "queue_full",
            Self::RateLimited => "rate_limited",
            Self::DeadlineExceeded => "deadline_exceeded",
            Self::Cancelled => "cancelled",
            Self::ProviderUnavailable => "provider_unavailable",
            Self::ProviderProtocolError => "provider_protocol_error",
            Self::InternalError => "internal_error",
            Self::Conflict => "conflict",
        }
    }

    /// The code with this wire spelling.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == name)
    }

    /// Whether the origin's own registry (`RuntimeErrorCode`) lists it; `false` for the two
    /// tolerated resource codes.
    pub fn is_origin_code(self) -> bool {
        !matches!(self, Self::NotFound | Self::Conflict)
    }

    /// The HTTP status the reference runtime answers with when this code is the response.
    pub fn http_status(self) -> u16 {
        match self {
            Self::InvalidRequest => 400,
            Self::NotFound => 404,
            Self::Conflict => 409,
            Self::CapabilityUnavailable => 422,
            Self::RateLimited | Self::QueueFull => 429,
            Self::ProviderUnavailable => 503,
            Self::DeadlineExceeded
            | Self::Cancelled
            | Self::ProviderProtocolError
            | Self::InternalError => 500,
        }
    }
}

/// A portable error: what callers branch on (`code`, `retryable`) plus a message that never
/// carries credentials, request content or provider bodies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PortableError {
    /// The portable code.
    pub code: ErrorCode,
    /// A human-readable message (a `string` at the origin).
    pub message: String,
    /// Whether a new request may succeed.
    pub retryable: bool,
    /// The provider's own code, as diagnostic evidence only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_code: Option<String>,
}

impl PortableError {
    /// An error without a provider code.
    pub fn new(code: ErrorCode, message: impl Into<String>, retryable: bool) -> Self {
        PortableError {
            code,
            message: message.into(),
            retryable,
            provider_code: None,
        }
    }
}

/// The body of every 4xx/5xx response of surface X.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "ExecutionErrorEnvelope")]
pub struct ErrorEnvelope {
    /// The error.
    pub error: PortableError,
}
