//! The era-2 seeding seam's handler (`POST /conformance/seams/sample/event-log/seed`; what it
//! accepts is described in `era2`); routed only when `seams_enabled`.

use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

use crate::store::Surface;

use super::extract::json_body;
use crate::openwop::infra::auth::Caller;
use crate::openwop::infra::era2::{ERA_2, SeedRequest, check_seed, seeded_kind};
use crate::openwop::infra::error::ApiError;
use crate::openwop::infra::ids::mint_event_id;
use crate::openwop::infra::projection::{RUN_META_KIND, RunMeta};
use crate::openwop::services::state::WState;

/// `POST /conformance/seams/sample/event-log/seed`.
pub(crate) async fn seed(
    State(state): State<Arc<WState>>,
    caller: Result<Caller, ApiError>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let caller = caller?;
    let (request, _): (SeedRequest, Value) = json_body(&headers, &body, "era-2 seed")?;
    check_seed(&request)?;
    let run_id = state.config.choices.run_id_form.mint(&caller.tenant);
    let workflow_id = request
        .workflow_id
        .clone()
        .or_else(|| {
            request
                .events
                .first()
                .and_then(|e| e.payload["workflowId"].as_str().map(str::to_string))
        })
        .unwrap_or_else(|| "era2-seeded".to_string());
    let meta = RunMeta {
        kind: RUN_META_KIND.to_string(),
        run_id: run_id.clone(),
        workflow_id,
        owner: caller.owner(),
        inputs: Map::new(),
        tags: None,
        metadata: None,
        event_log_schema_version: Some(ERA_2),
    };
    let meta = serde_json::to_value(&meta).map_err(|_| ApiError::internal())?;
    state
        .hub
        .create(&run_id, Surface::Run, meta)
        .map_err(|error| {
            tracing::error!(%error, "creating an era-2 log failed");
            ApiError::internal()
        })?;
    for event in request.events {
        let kind = seeded_kind(&event.event_type);
        let appended = state
            .hub
            .append(&run_id, &event.event_type, kind, |sequence, time| {
                let mut row = json!({
                    "eventId": mint_event_id(),
                    "runId": run_id,
                    "type": event.event_type,
                    "payload": event.payload,
                    "timestamp": event.timestamp.unwrap_or(time),
                    "sequence": sequence,
                    "schemaVersion": 1,
                });
                if let Some(causation) = &event.causation_id {
                    row["causationId"] = json!(causation);
                }
                row.to_string()
            });
        if let Err(error) = appended {
            tracing::error!(%error, "seeding an era-2 row failed");
            return Err(ApiError::internal());
        }
    }
    Ok((StatusCode::CREATED, Json(json!({ "runId": run_id }))).into_response())
}
