//! `GET /runs/{runId}/events`: the route of the run event stream
//! ([`crate::openwop::services::stream`] holds the rules and the order of its checks).

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, Uri, header};
use axum::response::Response;

use crate::sse::sse_response_commenting;

use crate::openwop::infra::auth::Caller;
use crate::openwop::infra::error::ApiError;
use crate::openwop::services::state::WState;
use crate::openwop::services::stream::{self, StreamRequest};

/// `GET /runs/{runId}/events`. A missing key is refused first; the rest is checked by the
/// service in its order.
pub(crate) async fn events(
    State(state): State<Arc<WState>>,
    caller: Result<Caller, ApiError>,
    uri: Uri,
    query: Result<Query<HashMap<String, String>>, QueryRejection>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let caller = caller?;
    let query = query.ok().map(|Query(query)| query);
    // A value that is not text is no cursor: read as such, it is refused as a malformed one.
    let last_event_id = headers
        .get("last-event-id")
        .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned());
    let request = StreamRequest {
        run_path: uri.path(),
        query: query.as_ref(),
        accept: headers
            .get(header::ACCEPT)
            .and_then(|value| value.to_str().ok()),
        last_event_id: last_event_id.as_deref(),
    };
    let stream = stream::open(&state, &caller, request)?;
    Ok(sse_response_commenting(
        stream.frames,
        stream.keep_alive,
        stream.comment,
    ))
}
