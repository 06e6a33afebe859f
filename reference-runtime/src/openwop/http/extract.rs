//! What surface-W handlers read from a request: the authenticated [`Caller`], the run a
//! `/runs/{runId}/…` path names if the caller may read it ([`ReadableRun`], and [`RunBody`] for
//! a request with a body), and a JSON body within the size limit. Services receive what these
//! yield, never the request.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::openwop::infra::auth::Caller;
use crate::openwop::infra::config::MAX_BODY_BYTES;
use crate::openwop::infra::error::ApiError;
use crate::openwop::infra::projection::RunMeta;
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

/// The caller and the run a `/runs/{runId}/…` path names, if the caller may read it: 401 without
/// a valid key, then 400/403/404 as [`WState::readable_run`] answers.
pub(crate) struct ReadableRun {
    /// The authenticated caller.
    pub(crate) caller: Caller,
    /// The run.
    pub(crate) meta: RunMeta,
}

impl FromRequestParts<Arc<WState>> for ReadableRun {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &Arc<WState>,
    ) -> Result<Self, Self::Rejection> {
        let caller = Caller::from_request_parts(parts, state).await?;
        let meta = state.readable_run(&caller, parts.uri.path())?;
        Ok(ReadableRun { caller, meta })
    }
}

/// A request with a body to one run's resource, read in this order: the caller (401), the
/// extractor `P` over the request head (`()` for none, a `Path` for more path parameters), the
/// body (the framework's size limit), then the run as [`ReadableRun`] reads it.
pub(crate) struct RunBody<P = ()> {
    /// The caller and the run.
    pub(crate) run: ReadableRun,
    /// What `P` read from the request head.
    pub(crate) head: P,
    /// The request's headers.
    pub(crate) headers: HeaderMap,
    /// The body as received.
    pub(crate) body: Bytes,
}

impl<P> RunBody<P> {
    /// The body as JSON of type `T` (see [`json_body`]), and as received.
    pub(crate) fn json<T: DeserializeOwned>(&self, what: &str) -> Result<(T, Value), ApiError> {
        json_body(&self.headers, &self.body, what)
    }
}

impl<P> FromRequest<Arc<WState>> for RunBody<P>
where
    P: FromRequestParts<Arc<WState>> + Send,
    P::Rejection: IntoResponse,
{
    type Rejection = Response;

    async fn from_request(request: Request, state: &Arc<WState>) -> Result<Self, Self::Rejection> {
        let (mut parts, body) = request.into_parts();
        let caller = Caller::from_request_parts(&mut parts, state)
            .await
            .map_err(IntoResponse::into_response)?;
        let head = P::from_request_parts(&mut parts, state)
            .await
            .map_err(IntoResponse::into_response)?;
        let path = parts.uri.path().to_string();
        let headers = parts.headers.clone();
        let body = Bytes::from_request(Request::from_parts(parts, body), state)
            .await
            .map_err(IntoResponse::into_response)?;
        let meta = state
            .readable_run(&caller, &path)
            .map_err(IntoResponse::into_response)?;
        Ok(RunBody {
            run: ReadableRun { caller, meta },
            head,
            headers,
            body,
        })
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
