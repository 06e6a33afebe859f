//! `GET /runs/{runId}/events/poll`: the route of the long-poll fallback
//! ([`crate::openwop::services::poll`] holds the rules).

use std::collections::HashMap;
use std::sync::Arc;

use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};

use crate::openwop::http::extract::ReadableRun;
use crate::openwop::infra::error::ApiError;
use crate::openwop::services::poll::{self, PollParams};
use crate::openwop::services::state::WState;

/// `GET /runs/{runId}/events/poll`: the key, the run, then the query string.
pub(crate) async fn poll(
    State(state): State<Arc<WState>>,
    ReadableRun { meta, .. }: ReadableRun,
    query: Result<Query<HashMap<String, String>>, QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(query) = query.map_err(|_| ApiError::validation("the query string is malformed"))?;
    let param = |name: &str| query.get(name).map(String::as_str);
    let params = PollParams {
        after_sequence: param("afterSequence"),
        timeout: param("timeout"),
        names_foreign_parameters: ["lastSequence", "since"]
            .iter()
            .any(|name| query.contains_key(*name)),
    };
    Ok(Json(poll::poll(&state, meta, params).await?).into_response())
}
