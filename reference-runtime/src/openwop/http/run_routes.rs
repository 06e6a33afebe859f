//! `POST /runs`, `GET /runs/{runId}`, `POST /runs/{runId}/cancel`,
//! `POST /runs/{runId}/interrupts/{nodeId}`.

use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};
use spec::openwop::{
    CancelRunResponse, CreateRunRequest, CreateRunResponse, ResolveInterruptRequest, RunStatus,
};

use crate::store::ClaimOutcome;

use super::extract::{ReadableRun, RunBody, json_body};
use super::idempotency::{self, REPLAY_HEADER, RESPONSES_NAMESPACE};
use crate::openwop::infra::auth::Caller;
use crate::openwop::infra::choices::MockProviderSeat;
use crate::openwop::infra::error::ApiError;
use crate::openwop::services::runs;
use crate::openwop::services::state::WState;

fn base_url(state: &WState, headers: &HeaderMap) -> String {
    if let Some(base) = &state.config.public_base_url {
        return base.trim_end_matches('/').to_string();
    }
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .filter(|h| !h.is_empty())
        .unwrap_or("localhost");
    format!("http://{host}")
}

/// `POST /runs`.
pub(crate) async fn create(
    State(state): State<Arc<WState>>,
    caller: Caller,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let key = idempotency::key_from(&headers)?;
    let (mut request, raw): (Value, Value) = json_body(&headers, &body, "CreateRunRequest")?;
    if state.config.choices.mock_provider_seat == MockProviderSeat::Both {
        upstream_suite_mock_provider(&mut request);
    }
    let request: CreateRunRequest = serde_json::from_value(request).map_err(|_| {
        ApiError::validation(
            "the body is not a valid CreateRunRequest (closed object; see the contract)",
        )
    })?;
    let new_run = runs::validate_create(&state, &caller, request)?;
    let base = base_url(&state, &headers);
    let respond = |run_id: &str| {
        let path = format!(
            "{base}/runs/{}",
            state.config.choices.run_id_path_forms.write(run_id)
        );
        CreateRunResponse {
            run_id: run_id.to_string(),
            status: RunStatus::Running,
            events_url: format!("{path}/events"),
            status_url: Some(path),
        }
    };
    let Some(key) = key else {
        let run_id = runs::create_run(&state, new_run)?;
        return Ok((StatusCode::CREATED, Json(respond(&run_id))).into_response());
    };
    let _serialised = state.create_lock.lock().await;
    let store = state.hub.store();
    let scope = idempotency::scope(&caller.tenant);
    let key_hash = idempotency::key_hash(&key);
    let kv_key = format!("{scope}|{key_hash}");
    let run_id = state.config.choices.run_id_form.mint(&caller.tenant);
    free_expired_key(&state, &scope, &key_hash, &kv_key)?;
    let claim = store
        .claim(&scope, &key_hash, &idempotency::fingerprint(&raw), &run_id)
        .map_err(|_| ApiError::internal())?;
    match claim {
        ClaimOutcome::Claimed => {
            if let Err(error) = runs::start_run(&state, &run_id, new_run) {
                let _ = store.release_claim(&scope, &key_hash);
                return Err(error);
            }
            let response = respond(&run_id);
            let recorded = serde_json::to_value(&response).map_err(|_| ApiError::internal())?;
            if let Err(error) = store.kv_put(RESPONSES_NAMESPACE, &kv_key, &recorded) {
                tracing::error!(%error, "recording an idempotent response failed");
            }
            Ok((StatusCode::CREATED, Json(response)).into_response())
        }
        ClaimOutcome::Replay { log_id } => {
            let recorded = store
                .kv_get(RESPONSES_NAMESPACE, &kv_key)
                .ok()
                .flatten()
                .and_then(|v| serde_json::from_value::<CreateRunResponse>(v).ok())
                .unwrap_or_else(|| respond(&log_id));
            let mut response = (StatusCode::CREATED, Json(recorded)).into_response();
            response
                .headers_mut()
                .insert(REPLAY_HEADER, HeaderValue::from_static("true"));
            Ok(response)
        }
        ClaimOutcome::Mismatch => Err(ApiError::new(
            "idempotency_key_mismatch",
            "the Idempotency-Key was used with a different request",
        )),
    }
}

/// Reads the mock provider where upstream's conformance suite puts it: its
/// `conformance-stream-text` scenario starts the fixture with `configurable.mockProvider`
/// (`run-options.schema.json`, an open `configurable` without `version`), where the v2
/// `configurable.schema.json` has `configurable.ai.mockProvider` under `version: 1`. A body
/// of the first form is read as the second; any other body is left as it is.
fn upstream_suite_mock_provider(request: &mut Value) {
    let Some(configurable) = request
        .get_mut("configurable")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    let Some(mock) = configurable.remove("mockProvider") else {
        return;
    };
    configurable.entry("version").or_insert(Value::from(1));
    let ai = configurable
        .entry("ai")
        .or_insert_with(|| Value::Object(Default::default()));
    match ai.as_object_mut() {
        Some(ai) if !ai.contains_key("mockProvider") => {
            ai.insert("mockProvider".into(), mock);
        }
        // Both spellings, or an `ai` that is not an object: put it back, so the closed
        // object refuses the body.
        _ => {
            configurable.insert("mockProvider".into(), mock);
        }
    }
}

/// Frees a key whose binding expired: its run's terminal event is older than the retention
/// (24 h, the execution protocol's rule, applied to runs too), or its run was never created (a
/// crash between the claim and the log).
fn free_expired_key(
    state: &WState,
    scope: &str,
    key_hash: &str,
    kv_key: &str,
) -> Result<(), ApiError> {
    let store = state.hub.store();
    let internal = |error: crate::store::StoreError| {
        tracing::error!(%error, "checking an idempotency key's retention failed");
        ApiError::internal()
    };
    let Some(bound) = store.claim_holder(scope, key_hash).map_err(internal)? else {
        return Ok(());
    };
    if state.hub.key_expired(&bound).map_err(internal)? {
        store.release_claim(scope, key_hash).map_err(internal)?;
        store
            .kv_put(RESPONSES_NAMESPACE, kv_key, &Value::Null)
            .map_err(internal)?;
    }
    Ok(())
}

/// `GET /runs/{runId}`: the snapshot, with an `ETag` derived from the latest sequence.
pub(crate) async fn get(
    State(state): State<Arc<WState>>,
    ReadableRun { meta, .. }: ReadableRun,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let projection = state.project(&meta)?;
    let etag = format!(
        "\"seq-{}\"",
        projection
            .last_sequence()
            .map_or_else(|| "none".to_string(), |s| s.to_string())
    );
    let etag_value = HeaderValue::from_str(&etag).map_err(|_| ApiError::internal())?;
    let matches = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag || t.trim() == "*"));
    if matches {
        return Ok((StatusCode::NOT_MODIFIED, [(header::ETAG, etag_value)]).into_response());
    }
    Ok(([(header::ETAG, etag_value)], Json(projection.snapshot())).into_response())
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct CancelRequest {
    reason: Option<String>,
}

/// `POST /runs/{runId}/cancel` (the body `{reason?}` is optional).
pub(crate) async fn cancel(
    State(state): State<Arc<WState>>,
    request: RunBody,
) -> Result<Response, ApiError> {
    let cancel: CancelRequest = if request.body.is_empty() {
        CancelRequest::default()
    } else {
        request.json("cancel request")?.0
    };
    let ReadableRun { caller, meta } = request.run;
    let status = runs::cancel_run(&state, &caller, &meta, cancel.reason)?;
    Ok(Json(CancelRunResponse {
        run_id: meta.run_id,
        status,
    })
    .into_response())
}

/// `POST /runs/{runId}/interrupts/{nodeId}` with `{resumeValue}`.
pub(crate) async fn resolve_interrupt(
    State(state): State<Arc<WState>>,
    request: RunBody<Path<(String, String)>>,
) -> Result<Response, ApiError> {
    let (resolve, _): (ResolveInterruptRequest, Value) = request.json("ResolveInterruptRequest")?;
    let Path((_, node_id)) = request.head;
    let ReadableRun { caller, meta } = request.run;
    let interrupt_id =
        runs::resolve_interrupt(&state, &caller, &meta, &node_id, resolve.resume_value)?;
    Ok(Json(json!({
        "runId": meta.run_id,
        "nodeId": node_id,
        "interruptId": interrupt_id,
        "status": RunStatus::Running.as_str(),
    }))
    .into_response())
}

#[cfg(test)]
mod upstream_suite_tests {
    use super::*;

    #[test]
    fn upstreams_mock_provider_spelling_is_read_as_the_v2_one() {
        let mock = json!({"id": "stream-text", "config": {"tokens": ["a"]}});
        let mut body = json!({"workflowId": "conformance-stream-text",
                              "configurable": {"mockProvider": mock.clone()}});
        upstream_suite_mock_provider(&mut body);
        assert_eq!(
            body["configurable"],
            json!({"version": 1, "ai": {"mockProvider": mock.clone()}})
        );
        let request: CreateRunRequest = serde_json::from_value(body).unwrap();
        assert_eq!(
            request
                .configurable
                .unwrap()
                .ai
                .unwrap()
                .mock_provider
                .unwrap()
                .id,
            "stream-text"
        );
        // The v2 spelling is left alone; both spellings at once stay refused by the closed object.
        let v2 = json!({"workflowId": "w", "configurable": {"version": 1, "ai": {"mockProvider": mock.clone()}}});
        let mut same = v2.clone();
        upstream_suite_mock_provider(&mut same);
        assert_eq!(same, v2);
        let mut both = json!({"workflowId": "w", "configurable": {"version": 1, "mockProvider": mock.clone(), "ai": {"mockProvider": mock}}});
        upstream_suite_mock_provider(&mut both);
        assert!(serde_json::from_value::<CreateRunRequest>(both).is_err());
    }
}
