//! The HTTP side of upstream's mock-AI program seam (`POST /conformance/seams/sample/test/mock-ai/program`):
//! the caller, its body, the answer. The programs themselves and what the seam does are
//! `engine::envelopes::seam_program`.

use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};

use super::extract::json_body;
use crate::openwop::engine::envelopes::program::MAX_ATTEMPTS;
use crate::openwop::engine::envelopes::seam_program::Program;
use crate::openwop::infra::auth::Caller;
use crate::openwop::infra::error::ApiError;
use crate::openwop::services::state::WState;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ProgramRequest {
    node_id: String,
    program: Program,
}

/// `POST /conformance/seams/sample/test/mock-ai/program`.
pub(crate) async fn program(
    State(state): State<Arc<WState>>,
    caller: Caller,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    if !caller.is_test_key {
        return Err(ApiError::new(
            "mock_provider_forbidden",
            "the mock-AI program seam is available to test keys only",
        ));
    }
    let (request, _): (ProgramRequest, Value) = json_body(&headers, &body, "mock-AI program")?;
    if request.node_id.is_empty() || request.program.len() > MAX_ATTEMPTS {
        return Err(ApiError::validation(format!(
            "nodeId must be non-empty and program must hold at most {MAX_ATTEMPTS} entries"
        )));
    }
    let entries = request.program.len();
    state
        .nodes
        .mock_programs
        .set(&caller.tenant, &request.node_id, request.program);
    Ok((
        StatusCode::OK,
        Json(json!({"nodeId": request.node_id, "entries": entries})),
    )
        .into_response())
}
