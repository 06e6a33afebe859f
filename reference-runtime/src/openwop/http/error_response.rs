//! The W error envelope as a response: every [`ApiError`] a handler, an extractor or a
//! middleware of surface W returns is written here as the flat, closed envelope with its
//! registered status (and `Retry-After`, `WWW-Authenticate` where they apply); the annotation
//! a host taking `error_details = "annotated"` adds; the envelope of an error response the
//! framework produced without one.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use spec::openwop::ErrorEnvelope;

use crate::openwop::infra::error::ApiError;

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        let mut envelope = ErrorEnvelope::new(self.code(), self.message());
        envelope.details = self.details().cloned();
        let body = serde_json::to_string(&envelope).unwrap_or_else(|_| {
            r#"{"error":"internal_error","message":"the host failed"}"#.to_string()
        });
        let mut response = (
            status,
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )],
            body,
        )
            .into_response();
        if let Some(secs) = self.retry_after_secs() {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        if status == StatusCode::UNAUTHORIZED {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response
    }
}

/// Adds `details.hostReference` (an opaque reference to the host's operational log) to every
/// error envelope, and words the message as such a host does
/// ([`crate::openwop::infra::choices::ErrorDetails::Annotated`]); other responses pass unchanged.
pub(crate) async fn annotate_error(response: Response) -> Response {
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !(response.status().is_client_error() || response.status().is_server_error()) || !is_json {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, 1 << 20).await else {
        parts.status = StatusCode::INTERNAL_SERVER_ERROR;
        return (parts, ApiError::internal().into_response().into_body()).into_response();
    };
    let mut envelope: Value = match serde_json::from_slice(&bytes) {
        Ok(value @ Value::Object(_)) => value,
        _ => return Response::from_parts(parts, axum::body::Body::from(bytes)),
    };
    if let Some(message) = envelope.get("message").and_then(Value::as_str) {
        envelope["message"] = Value::String(format!("Request refused: {message}."));
    }
    // Upstream closes the `details` of some codes (`payload_unprojectable`): nothing is added
    // there.
    let code = envelope
        .get("error")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let closed = spec::openwop::details_conditionals().iter().any(|c| {
        c.pointer("/if/properties/error/const")
            .and_then(Value::as_str)
            == Some(code)
            && c.pointer("/then/properties/details/additionalProperties")
                == Some(&Value::Bool(false))
    });
    let reference = format!("ref-{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
    match envelope.get_mut("details") {
        _ if closed => {}
        Some(Value::Object(details)) => {
            details.insert("hostReference".into(), Value::String(reference));
        }
        _ => {
            envelope["details"] = serde_json::json!({ "hostReference": reference });
        }
    }
    let body = envelope.to_string();
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, axum::body::Body::from(body))
}

/// The envelope for an error response the framework produced without one (an unknown method,
/// a body over the limit, …), so every 4xx/5xx of surface W carries the flat envelope.
pub(crate) fn envelope_for_bare_status(status: StatusCode) -> ApiError {
    match status {
        StatusCode::UNAUTHORIZED => ApiError::unauthenticated(),
        StatusCode::NOT_FOUND | StatusCode::METHOD_NOT_ALLOWED => ApiError::not_found(),
        StatusCode::PAYLOAD_TOO_LARGE => {
            ApiError::new("payload_too_large", "the request body is too large")
        }
        StatusCode::UNSUPPORTED_MEDIA_TYPE => ApiError::new(
            "unsupported_media_type",
            "the request body must be application/json",
        ),
        s if s.is_server_error() => ApiError::internal(),
        _ => ApiError::validation("the request is malformed"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::openwop::infra::error::details;

    async fn annotated(error: ApiError) -> Value {
        let response = annotate_error(error.into_response()).await;
        let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
            .await
            .unwrap();
        serde_json::from_slice(&bytes).unwrap()
    }

    #[tokio::test]
    async fn annotated_errors_keep_their_code_and_closed_details() {
        let plain = annotated(ApiError::not_found()).await;
        assert_eq!(plain["error"], "not_found");
        assert!(plain["details"]["hostReference"].is_string(), "{plain}");
        let refused = annotated(
            ApiError::new("unsupported_stream_mode", "no")
                .with_details(details([("supported", serde_json::json!(["updates"]))])),
        )
        .await;
        assert_eq!(refused["details"]["supported"][0], "updates");
        assert!(refused["details"]["hostReference"].is_string());
        // Upstream closes `payload_unprojectable`'s details: nothing is added there.
        let closed = annotated(
            ApiError::new("payload_unprojectable", "no").with_details(details([
                ("type", serde_json::json!("run.started")),
                ("keys", serde_json::json!(["x"])),
            ])),
        )
        .await;
        assert!(closed["details"].get("hostReference").is_none(), "{closed}");
        assert!(
            closed["message"]
                .as_str()
                .unwrap()
                .starts_with("Request refused")
        );
    }

    #[tokio::test]
    async fn the_envelope_carries_the_registered_status_and_headers() {
        let response = ApiError::new("rate_limited", "later")
            .with_retry_after(3)
            .into_response();
        assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(response.headers()[header::RETRY_AFTER], "3");
        let response = ApiError::unauthenticated().into_response();
        assert_eq!(response.headers()[header::WWW_AUTHENTICATE], "Bearer");
        let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
            .await
            .unwrap();
        let body: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(body["error"], "unauthenticated");
    }
}
