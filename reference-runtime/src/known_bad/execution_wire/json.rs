//! JSON answers as the layer reads and rewrites them: a body read whole, changed, and put back
//! with the response's other parts; a refusal's envelope read without changing the answer.

use axum::body::{Body, Bytes};
use axum::http::header;
use axum::response::Response;
use serde_json::Value;

/// The largest answer body the layer reads (a snapshot, the manifests, a refusal).
const MAX_READ_BODY: usize = 16 << 20;

/// `response` with its JSON body read: the body's bytes (the response keeps them) and its value
/// when it is JSON.
pub(super) async fn read(response: Response) -> (Response, Option<Value>) {
    let (parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_READ_BODY).await else {
        return (Response::from_parts(parts, Body::empty()), None);
    };
    let value = serde_json::from_slice(&bytes).ok();
    (Response::from_parts(parts, Body::from(bytes)), value)
}

/// `response` with its body replaced by `value`.
pub(super) fn replaced(response: Response, value: &Value) -> Response {
    let (mut parts, _) = response.into_parts();
    let body = serde_json::to_vec(value)
        .map(Bytes::from)
        .unwrap_or_default();
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(body))
}

/// The code of a refusal's envelope (`{"error": {"code": …, …}}`).
pub(super) fn refusal_code(envelope: &Value) -> Option<&str> {
    envelope.get("error")?.get("code")?.as_str()
}
