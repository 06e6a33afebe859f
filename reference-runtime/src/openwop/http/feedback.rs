//! `POST` and `GET /runs/{runId}/annotations`: the routes of feedback annotations
//! ([`crate::openwop::services::feedback`] holds the rules).

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::openwop::http::extract::RunBody;
use crate::openwop::infra::auth::Caller;
use crate::openwop::infra::error::ApiError;
use crate::openwop::services::feedback::{self, CreateAnnotation};
use crate::openwop::services::state::WState;

/// `POST /runs/{runId}/annotations`: 201 with the recorded annotation.
pub(crate) async fn create(
    State(state): State<Arc<WState>>,
    request: RunBody,
) -> Result<Response, ApiError> {
    let (annotation, _): (CreateAnnotation, Value) = request.json("annotation")?;
    let run = request.run;
    let recorded = feedback::create(&state, &run.caller, run.meta, annotation)?;
    Ok((StatusCode::CREATED, Json(recorded)).into_response())
}

/// `GET /runs/{runId}/annotations`: 200 `{runId, annotations}`.
pub(crate) async fn list(
    State(state): State<Arc<WState>>,
    caller: Caller,
    uri: Uri,
) -> Result<Response, ApiError> {
    let (meta, annotations) = feedback::list(&state, caller, uri.path())?;
    Ok(Json(json!({ "runId": meta.run_id, "annotations": annotations })).into_response())
}
