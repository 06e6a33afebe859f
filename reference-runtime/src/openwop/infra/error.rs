//! The error every layer of surface W refuses with: a registered code, its registered status,
//! a message, details. Rendering it as the surface's flat, closed envelope is the HTTP layer's
//! (`openwop::http::error_response`).

use axum::http::StatusCode;
use serde_json::{Map, Value};

/// A refused request: a registered code, a message that never echoes request content, optional
/// details and an optional `Retry-After`.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError(Box<Refusal>);

#[derive(Debug, Clone, PartialEq)]
struct Refusal {
    code: &'static str,
    message: String,
    details: Option<Map<String, Value>>,
    retry_after_secs: Option<u64>,
    status_override: Option<StatusCode>,
}

impl ApiError {
    /// An error with a registered surface-W code.
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        ApiError(Box::new(Refusal {
            code,
            message: message.into(),
            details: None,
            retry_after_secs: None,
            status_override: None,
        }))
    }

    /// 400 `validation_error`.
    pub fn validation(message: impl Into<String>) -> Self {
        Self::new("validation_error", message)
    }

    /// 404 `not_found`.
    pub fn not_found() -> Self {
        Self::new("not_found", "no such resource")
    }

    /// 401 `unauthenticated`.
    pub fn unauthenticated() -> Self {
        Self::new(
            "unauthenticated",
            "a valid bearer API key is required (Authorization: Bearer <key>)",
        )
    }

    /// 500 `internal_error`.
    pub fn internal() -> Self {
        Self::new("internal_error", "the host failed; see its operational log")
    }

    /// Adds `details`.
    pub fn with_details(mut self, details: Map<String, Value>) -> Self {
        self.0.details = Some(details);
        self
    }

    /// Adds a `Retry-After` header (seconds).
    pub fn with_retry_after(mut self, secs: u64) -> Self {
        self.0.retry_after_secs = Some(secs);
        self
    }

    /// Answers with a status other than the registered one. Only a defect uses this.
    pub fn with_status(mut self, status: StatusCode) -> Self {
        self.0.status_override = Some(status);
        self
    }

    /// The code.
    pub fn code(&self) -> &'static str {
        self.0.code
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// The details, if any.
    pub fn details(&self) -> Option<&Map<String, Value>> {
        self.0.details.as_ref()
    }

    /// The `Retry-After` seconds, if any.
    pub fn retry_after_secs(&self) -> Option<u64> {
        self.0.retry_after_secs
    }

    /// The registered HTTP status of the code (500 for a code the registry does not know).
    pub fn status(&self) -> StatusCode {
        self.0.status_override.unwrap_or_else(|| {
            spec::registry::error_codes()
                .openwop_code(self.0.code)
                .and_then(|c| StatusCode::from_u16(c.status).ok())
                .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
        })
    }
}

/// A `details` object from pairs.
pub(crate) fn details<const N: usize>(pairs: [(&str, Value); N]) -> Map<String, Value> {
    pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_come_from_the_registry() {
        assert_eq!(ApiError::validation("x").status(), StatusCode::BAD_REQUEST);
        assert_eq!(ApiError::not_found().status(), StatusCode::NOT_FOUND);
        assert_eq!(
            ApiError::new("run_terminal", "x").status(),
            StatusCode::CONFLICT
        );
        assert_eq!(
            ApiError::new("rate_limited", "x").status(),
            StatusCode::TOO_MANY_REQUESTS
        );
        assert_eq!(
            ApiError::new("id_tenant_mismatch", "x").status(),
            StatusCode::FORBIDDEN
        );
        assert_eq!(
            ApiError::new("unsupported_stream_mode", "x").status(),
            StatusCode::BAD_REQUEST
        );
    }
}
