//! What surface-W handlers read from a request besides their path: the authenticated
//! [`Caller`] (an extractor over the shared state) and a JSON body within the size limit.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, header};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::openwop::infra::auth::Caller;
use crate::openwop::infra::config::MAX_BODY_BYTES;
use crate::openwop::infra::error::ApiError;
use crate::openwop::services::state::WState;

impl FromRequestParts<Arc<WState>> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &Arc<WState>,
    ) -> Result<Self, Self::Rejection> {
        let authorization = parts
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok());
        state.keys.resolve(authorization)
    }
}

/// Reads a JSON body: 415 without a JSON content type, 413 over the limit, 400 when it does not
/// parse into `T` (the message never echoes the body).
pub(crate) fn json_body<T: DeserializeOwned>(
    headers: &HeaderMap,
    body: &Bytes,
    what: &str,
) -> Result<(T, Value), ApiError> {
    if body.len() > MAX_BODY_BYTES {
        return Err(ApiError::new(
            "payload_too_large",
            "the request body is larger than 1 MiB",
        ));
    }
    let is_json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|mime| {
            let mime = mime.trim();
            mime.eq_ignore_ascii_case("application/json") || mime.ends_with("+json")
        });
    if !is_json {
        return Err(ApiError::new(
            "unsupported_media_type",
            "the request body must be application/json",
        ));
    }
    let value: Value = serde_json::from_slice(body)
        .map_err(|_| ApiError::validation(format!("the body is not valid JSON ({what})")))?;
    let typed = serde_json::from_value(value.clone()).map_err(|_| {
        ApiError::validation(format!(
            "the body is not a valid {what} (closed object; see the contract)"
        ))
    })?;
    Ok((typed, value))
}
