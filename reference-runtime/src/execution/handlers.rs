//! The HTTP routes of surface X.
//!
//! | route | handler |
//! |---|---|
//! | `GET /v1/runtime` | [`runtime_show`] |
//! | `GET /v1/providers` | [`providers_index`] |
//! | `POST /v1/executions` | [`executions_create`] |
//! | `GET /v1/executions/{id}` | [`executions_show`] |
//! | `GET /v1/executions/{id}/events` | [`events_stream`] |
//! | `GET /v1/executions/{id}/result` | [`result_show`] |
//! | `POST /v1/executions/{id}/cancel` | [`executions_cancel`] |

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::body::Body;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::json;
use spec::execution::{ErrorCode, ExecutionResult, ExecutionStatus, RuntimeState};

use super::admission::admit;
use super::choices::ResultBeforeSuccess;
use super::cursor;
use super::errors::ApiError;
use super::service::{CancelOutcome, Executions};
use crate::sse::{SseFrame, sse_response};

/// The routes of surface X over the service.
pub fn router(service: Arc<Executions>) -> Router {
    let router = Router::new()
        .route("/v1/runtime", get(runtime_show))
        .route("/v1/providers", get(providers_index))
        .route("/v1/executions", post(executions_create))
        .route("/v1/executions/{id}", get(executions_show))
        .route("/v1/executions/{id}/events", get(events_stream))
        .route("/v1/executions/{id}/result", get(result_show))
        .route("/v1/executions/{id}/cancel", post(executions_cancel));
    // Known-bad builds only: surface X's defects applied at the boundary (innermost).
    let router = crate::known_bad::execution_wire::execution_wire(router, &service).layer(
        axum::middleware::map_response_with_state(Arc::clone(&service), enveloped),
    );
    crate::known_bad::wire::wire(router, &service.defects).with_state(service)
}

/// Every 4xx/5xx of surface X with the envelope, also those the framework answers itself (an
/// unknown method, a path the extractor refuses), worded as the host's choices say.
async fn enveloped(State(service): State<Arc<Executions>>, response: Response) -> Response {
    super::errors::with_envelope(response, |error| service.refusal(error))
}

/// `GET /v1/runtime`: 200 when ready, else 503 with the same body.
pub async fn runtime_show(State(service): State<Arc<Executions>>) -> Response {
    let info = service.runtime_info();
    let status = if info.state == Some(RuntimeState::Ready) {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (status, Json(info)).into_response()
}

/// `GET /v1/providers`.
pub async fn providers_index(State(service): State<Arc<Executions>>) -> Response {
    Json(service.manifests()).into_response()
}

/// `POST /v1/executions`: 202 new, 200 replay.
pub async fn executions_create(
    State(service): State<Arc<Executions>>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let admitted = admit(
        &headers,
        body,
        service.config.limits.max_body_bytes,
        &service.config.choices,
    )
    .await
    .map_err(|e| service.refusal(e))?;
    let (submission, replay) = service
        .create(admitted)
        .await
        .map_err(|e| service.refusal(e))?;
    let replay_status = match service.config.choices.replay_status {
        super::choices::ReplayStatus::Ok => StatusCode::OK,
        super::choices::ReplayStatus::Accepted => StatusCode::ACCEPTED,
    };
    let status = if replay {
        replay_status
    } else {
        StatusCode::ACCEPTED
    };
    Ok((status, Json(submission)).into_response())
}

/// `GET /v1/executions/{id}`.
pub async fn executions_show(
    State(service): State<Arc<Executions>>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    Ok(Json(service.snapshot(&id).map_err(|e| service.refusal(e))?).into_response())
}

/// `GET /v1/executions/{id}/events`: 404 unknown, 400 bad cursor (before any SSE byte), then
/// the backlog after the cursor and the live tail, closing after the terminal event.
pub async fn events_stream(
    State(service): State<Arc<Executions>>,
    Path(id): Path<String>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    if !service.exists(&id).map_err(|e| service.refusal(e))? {
        return Err(service.refusal(ApiError::execution_not_found()));
    }
    let sequence_form = service.config.choices.sequence_form;
    let after = cursor::resolve(
        query.as_deref(),
        &headers,
        service.config.choices.cursor_precedence,
    )
    .map_err(|e| service.refusal(e))?
    .map(|wire| sequence_form.stored_cursor(wire));
    let mut subscription = service
        .hub
        .subscribe(&id, after)
        .map_err(|e| service.refusal(e.into()))?;
    let mut stop = service.stop_signal();
    let frames = async_stream::stream! {
        loop {
            let batch = tokio::select! {
                biased;
                batch = subscription.next_batch() => batch,
                _ = stop.wait_for(|stopping| *stopping) => None,
            };
            match batch {
                Some(Ok(events)) => {
                    for event in events {
                        let id = sequence_form.wire(event.sequence);
                        yield SseFrame::numbered(id, event.event_type, event.json);
                    }
                }
                Some(Err(error)) => {
                    tracing::error!(%error, "event stream read failed");
                    break;
                }
                None => break,
            }
        }
    };
    Ok(sse_response(frames, Some(service.config.keep_alive)))
}

/// `GET /v1/executions/{id}/result`: 200 once succeeded, else 409 (or 404, as the host choice
/// says).
pub async fn result_show(
    State(service): State<Arc<Executions>>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let snapshot = service.snapshot(&id).map_err(|e| service.refusal(e))?;
    match (snapshot.status, snapshot.target) {
        (ExecutionStatus::Succeeded, Some(target)) => Ok(Json(ExecutionResult {
            execution_id: snapshot.execution_id,
            target,
            result: snapshot.result,
            artifacts: snapshot.artifacts.unwrap_or_default(),
            usage: snapshot.usage,
        })
        .into_response()),
        (status, _) => Err(
            service.refusal(match service.config.choices.result_before_success {
                ResultBeforeSuccess::Conflict => ApiError::new(
                    ErrorCode::Conflict,
                    "Execution has not succeeded",
                    !status.is_terminal(),
                ),
                ResultBeforeSuccess::NotFound => ApiError::new(
                    ErrorCode::NotFound,
                    "Execution has no result",
                    !status.is_terminal(),
                ),
            }),
        ),
    }
}

/// `POST /v1/executions/{id}/cancel`: 202, 404 unknown, 409 terminal (with the host choices:
/// 200 once the terminal event is in the log; 200 and nothing appended for a terminal one).
pub async fn executions_cancel(
    State(service): State<Arc<Executions>>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let answer = match service.cancel(&id).await.map_err(|e| service.refusal(e))? {
        CancelOutcome::Requested => (
            StatusCode::ACCEPTED,
            Json(json!({"execution_id": id, "status": "cancellation_requested"})),
        ),
        CancelOutcome::Ended(status) | CancelOutcome::AlreadyTerminal(status) => (
            StatusCode::OK,
            Json(json!({"execution_id": id, "status": status})),
        ),
    };
    Ok(answer.into_response())
}
