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

/// The envelope for an error response the framework produced without one: an unknown method
/// on a route (405, its `Allow` header kept), a path or query the extractors refuse (400), a
/// body over a limit (413), … The status is kept; the code is `not_found` for 404,
/// `internal_error` for 5xx and `invalid_request` otherwise; the message is a fixed text.
pub(crate) fn envelope_for_bare_status(status: StatusCode) -> ApiError {
    let error = match status {
        StatusCode::NOT_FOUND => ApiError::new(ErrorCode::NotFound, "Route not found", false),
        StatusCode::METHOD_NOT_ALLOWED => ApiError::invalid("Method not allowed on this route"),
        StatusCode::PAYLOAD_TOO_LARGE => ApiError::invalid("Request body exceeds the size limit"),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => {
            ApiError::invalid("Content-Type must be application/json")
        }
        StatusCode::REQUEST_TIMEOUT => ApiError::invalid("Request was not received in time"),
        s if s.is_server_error() => ApiError::internal(),
        _ => ApiError::invalid("Request is malformed"),
    };
    error.with_status(status)
}

/// Whether a response carries a JSON body (the envelope, when it is an error).
pub(crate) fn is_json(response: &Response) -> bool {
    response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .is_some_and(|mime| mime.trim().eq_ignore_ascii_case("application/json"))
        })
}

/// Puts the envelope on every 4xx/5xx of surface X that has none (see
/// [`envelope_for_bare_status`]), keeping the status and the other headers.
pub(crate) fn with_envelope(response: Response, wire: impl Fn(ApiError) -> ApiError) -> Response {
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) || is_json(&response) {
        return response;
    }
    let (mut parts, _) = response.into_parts();
    let enveloped = wire(envelope_for_bare_status(status)).into_response();
    let (enveloped_parts, body) = enveloped.into_parts();
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.remove(header::TRANSFER_ENCODING);
    for (name, value) in &enveloped_parts.headers {
        parts.headers.insert(name, value.clone());
    }
    Response::from_parts(parts, body)
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
