//! The HTTP side of upstream's mock-AI program seam (`POST /conformance/seams/sample/test/mock-ai/program`)
//! and its last-dispatch-budget companion (`GET /conformance/seams/sample/test/mock-ai/last-dispatch-budget`):
//! the caller, its body or query, the answer. The programs themselves, the budgets and what the
//! seams do are `engine::envelopes::seam_program`.

use std::collections::HashMap;
use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
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

/// Refuses a caller that is not a test key (the mock providers are test keys' only).
fn test_key_only(caller: &Caller, seam: &str) -> Result<(), ApiError> {
    if caller.is_test_key {
        Ok(())
    } else {
        Err(ApiError::new(
            "mock_provider_forbidden",
            format!("the mock-AI {seam} seam is available to test keys only"),
        ))
    }
}

/// `POST /conformance/seams/sample/test/mock-ai/program`.
pub(crate) async fn program(
    State(state): State<Arc<WState>>,
    caller: Caller,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    test_key_only(&caller, "program")?;
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

/// `GET /conformance/seams/sample/test/mock-ai/last-dispatch-budget?nodeId=…`: `200 {maxTokens}`,
/// the budget of the node's most recent mock call, `null` when none was made since its program
/// was posted.
pub(crate) async fn last_dispatch_budget(
    State(state): State<Arc<WState>>,
    caller: Caller,
    query: Result<Query<HashMap<String, String>>, QueryRejection>,
) -> Result<Response, ApiError> {
    test_key_only(&caller, "last-dispatch-budget")?;
    let Query(query) = query.map_err(|_| ApiError::validation("the query string is malformed"))?;
    let node_id = query
        .get("nodeId")
        .filter(|id| !id.is_empty())
        .ok_or_else(|| ApiError::validation("nodeId required"))?;
    let max_tokens = state
        .nodes
        .mock_programs
        .last_budget(&caller.tenant, node_id);
    Ok(Json(json!({ "maxTokens": max_tokens })).into_response())
}
