//! The HTTP side of upstream's heartbeat tick seam (`POST /conformance/seams/sample/heartbeat/tick`;
//! upstream's v1 `/v1/host/sample/heartbeat/tick`, moved by its seams-v2 profile), with which
//! upstream's suite drives its heartbeat scenarios: one tick of the heartbeat the body names, its
//! predicate observing `observedState`, its observation taking `simulateSlowMs`. Routed only when
//! `seams_enabled` (otherwise 404). The tick itself is `services::heartbeat::tick_on_request`.

use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::extract::json_body;
use crate::openwop::infra::auth::Caller;
use crate::openwop::infra::choices::TickSeamRuns;
use crate::openwop::infra::error::ApiError;
use crate::openwop::services::heartbeat::tick_on_request;
use crate::openwop::services::state::WState;

/// The longest observation a request may simulate (upstream's suite asks for 60 s).
const MAX_SIMULATED_MS: u64 = 60_000;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct TickRequest {
    heartbeat_id: String,
    #[serde(default)]
    observed_state: Map<String, Value>,
    #[serde(default)]
    simulate_slow_ms: u64,
}

/// `POST /conformance/seams/sample/heartbeat/tick`: `200 {heartbeatId, skipped, evaluated,
/// stateChanged, enqueuedRuns}`, the messages the tick emitted (also sent on the host channel)
/// and the runs it created (its heartbeat asks for one on every tick, as upstream's seam does).
pub(crate) async fn tick(
    State(state): State<Arc<WState>>,
    caller: Result<Caller, ApiError>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let caller = caller?;
    let (request, _): (TickRequest, Value) = json_body(&headers, &body, "heartbeat tick")?;
    if request.heartbeat_id.is_empty() || request.simulate_slow_ms > MAX_SIMULATED_MS {
        return Err(ApiError::validation(format!(
            "heartbeatId must be non-empty and simulateSlowMs at most {MAX_SIMULATED_MS}"
        )));
    }
    let tick = tick_on_request(
        &state,
        &request.heartbeat_id,
        &caller.tenant,
        request.observed_state,
        request.simulate_slow_ms,
    )
    .await;
    Ok(Json(json!({
        "heartbeatId": request.heartbeat_id,
        "skipped": tick.skipped,
        "evaluated": tick.evaluated,
        "stateChanged": tick.state_changed,
        "enqueuedRuns": match state.config.choices.tick_seam_runs {
            TickSeamRuns::Count => json!(tick.enqueued_runs.len()),
            TickSeamRuns::Ids => json!(tick.enqueued_runs),
        },
    }))
    .into_response())
}
