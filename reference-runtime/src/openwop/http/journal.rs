//! `GET /conformance/seams/mock-ai/runs/{runId}/calls`: the `envelope-program` mock's call
//! journal ([`crate::openwop::engine::envelopes::journal`]) of one run, read as `GET /runs/{runId}`
//! reads the run (bearer; the run's tenant only).

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::Uri;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::openwop::engine::envelopes::journal::read;
use crate::openwop::infra::auth::Caller;
use crate::openwop::infra::error::ApiError;
use crate::openwop::services::state::WState;

/// `GET /conformance/seams/mock-ai/runs/{runId}/calls`.
pub(crate) async fn calls(
    State(state): State<Arc<WState>>,
    caller: Caller,
    uri: Uri,
) -> Result<Response, ApiError> {
    // The raw segment (`~2F` or `%2F`), read as `GET /runs/{runId}` reads it.
    let segment = uri.path().split('/').nth(5).unwrap_or_default();
    let meta = state.readable_run(&caller, &format!("/runs/{segment}"))?;
    let calls = read(state.hub.store(), &meta.run_id);
    Ok(Json(json!({ "runId": meta.run_id, "calls": calls })).into_response())
}
