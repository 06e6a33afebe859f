//! The one mapping from a refused HTTP request of surface X to its response: the error envelope
//! `{"error": {code, message, retryable, provider_code?}}` with the status the contract assigns
//! to the code (and `Retry-After` on 429). Messages are fixed texts: they never echo request
//! content, provider bodies or credentials.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use spec::execution::{ErrorCode, ErrorEnvelope, PortableError};

/// A refused request.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    /// The portable error sent in the envelope.
    pub error: PortableError,
    /// Seconds for `Retry-After` (429 only).
    pub retry_after_secs: Option<u64>,
    /// The HTTP status, when a host choice sets another one than the code's (e.g. 415 for an
    /// `invalid_request` naming a wrong content type).
    pub status: Option<StatusCode>,
}

impl ApiError {
    /// An error with a fixed message.
    pub fn new(code: ErrorCode, message: impl Into<String>, retryable: bool) -> Self {
        ApiError {
            error: PortableError::new(code, message, retryable),
            retry_after_secs: None,
            status: None,
        }
    }

    /// 400 `invalid_request`.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidRequest, message, false)
    }

    /// 404 `not_found` for an execution.
    pub fn execution_not_found() -> Self {
        Self::new(ErrorCode::NotFound, "Execution not found", false)
    }

    /// 500 `internal_error` (store failures and other internal faults; details are logged).
    pub fn internal() -> Self {
        Self::new(
            ErrorCode::InternalError,
            "Runtime request could not be completed",
            true,
        )
    }

    /// Answers with `status` rather than the code's status.
    pub fn with_status(mut self, status: StatusCode) -> Self {
        self.status = Some(status);
        self
    }

    /// Sets `Retry-After`.
    pub fn with_retry_after(mut self, seconds: u64) -> Self {
        self.retry_after_secs = Some(seconds);
        self
    }
}

impl From<crate::store::StoreError> for ApiError {
    fn from(error: crate::store::StoreError) -> Self {
        match error {
            crate::store::StoreError::UnknownLog(_) => ApiError::execution_not_found(),
            other => {
                tracing::error!(error = %other, "event store failed");
                ApiError::internal()
            }
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status.unwrap_or_else(|| {
            StatusCode::from_u16(self.error.code.http_status())
                .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
        });
        let mut response =
            (status, axum::Json(ErrorEnvelope { error: self.error })).into_response();
        if let Some(seconds) = self.retry_after_secs
            && let Ok(value) = HeaderValue::from_str(&seconds.to_string())
        {
            response.headers_mut().insert(header::RETRY_AFTER, value);
        }
        response
    }
}
