//! `GET /workflows/{workflowId}` (upstream's `getWorkflow`): the definition of a seeded
//! workflow as the host seeded it, so a client can read the fixture's node ids (the key of
//! upstream's mock-AI program seam) from the host rather than from a catalogue.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};

use crate::openwop::infra::auth::Caller;
use crate::openwop::infra::error::ApiError;
use crate::openwop::services::state::WState;

/// `GET /workflows/{workflowId}`: `200` with the definition, `404 not_found` for an id the host
/// does not seed.
pub(crate) async fn get(
    State(state): State<Arc<WState>>,
    _caller: Caller,
    Path(workflow_id): Path<String>,
) -> Result<Response, ApiError> {
    let workflow = state
        .workflows
        .get(&workflow_id)
        .ok_or_else(ApiError::not_found)?;
    Ok(Json(workflow.definition.clone()).into_response())
}
