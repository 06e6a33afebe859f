//! `POST` and `GET /runs/{runId}/annotations`: the routes of feedback annotations
//! ([`crate::openwop::services::feedback`] holds the rules).

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Uri};
use axum::response::Response;
use serde_json::Value;

use crate::openwop::http::extract::json_body;
use crate::openwop::infra::auth::Caller;
use crate::openwop::infra::error::ApiError;
use crate::openwop::services::feedback::{self, CreateAnnotation};
use crate::openwop::services::state::WState;

/// `POST /runs/{runId}/annotations`.
pub(crate) async fn create(
    State(state): State<Arc<WState>>,
    caller: Caller,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let meta = state.readable_run(&caller, &uri)?;
    let (request, _): (CreateAnnotation, Value) = json_body(&headers, &body, "annotation")?;
    feedback::create(state, caller, meta, request)
}

/// `GET /runs/{runId}/annotations`.
pub(crate) async fn list(
    State(state): State<Arc<WState>>,
    caller: Caller,
    uri: Uri,
) -> Result<Response, ApiError> {
    feedback::list(state, caller, uri)
}
