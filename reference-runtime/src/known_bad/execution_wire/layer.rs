//! The layer: [`execution_wire`] wraps surface X's router when one of the `EXECUTION_WIRE`
//! defects is on. Unlike the wire layer (`known_bad::wire`), it holds the service, whose log
//! hub, providers and configuration its rewrites read.

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::Response;
use serde_json::Value;

use super::body::{self, Buffered};
use super::exchange::Exchange;
use super::rewrites::ExecutionWireRewrites;
use super::{findings, json, manifest, members, probe, result};
use crate::execution::service::Executions;

/// The layer's state: the rewrites and the service they read.
struct ExecutionWire {
    rewrites: ExecutionWireRewrites,
    service: Arc<Executions>,
}

/// `router` (surface X's routes over `service`) with the known-bad execution layer when
/// `service`'s policy switches one of its defects on; `router` itself otherwise.
pub(crate) fn execution_wire<S>(router: Router<S>, service: &Arc<Executions>) -> Router<S>
where
    S: Clone + Send + Sync + 'static,
{
    let Some(rewrites) = ExecutionWireRewrites::of(&service.defects) else {
        return router;
    };
    let layer = ExecutionWire {
        rewrites,
        service: Arc::clone(service),
    };
    router.layer(axum::middleware::from_fn_with_state(
        Arc::new(layer),
        rewrite,
    ))
}

/// The layer's body: dispatches an exchange to its rewrites.
async fn rewrite(
    State(layer): State<Arc<ExecutionWire>>,
    request: Request,
    next: Next,
) -> Response {
    let rewrites = &layer.rewrites;
    match Exchange::of(&request) {
        Exchange::Providers if rewrites.manifest_shows_credential() => {
            let response = next.run(request).await;
            if response.status() != StatusCode::OK {
                return response;
            }
            let calls = &layer.service.calls;
            edit_json(response, |document| {
                manifest::with_credentials(document, &calls.providers, &calls.credentials)
            })
            .await
        }
        Exchange::Submission if rewrites.reads_submissions() => {
            submission(&layer, request, next).await
        }
        Exchange::Snapshot(id) | Exchange::Result(id) if rewrites.rewrites_results() => {
            let response = next.run(request).await;
            if response.status() != StatusCode::OK {
                return response;
            }
            materialised(&layer, &id, response).await
        }
        _ => next.run(request).await,
    }
}

/// `response` with its JSON body changed by `edit`.
async fn edit_json(response: Response, edit: impl FnOnce(&mut Value)) -> Response {
    let (response, value) = json::read(response).await;
    let Some(mut value) = value else {
        return response;
    };
    edit(&mut value);
    json::replaced(response, &value)
}

/// A submission: its body buffered (within the runtime's limit), rewritten on its way in, the
/// service's answer seen on its way out.
async fn submission(layer: &ExecutionWire, request: Request, next: Next) -> Response {
    let (mut parts, body) = request.into_parts();
    let limit = layer.service.config.limits.max_body_bytes;
    let bytes = match body::buffer(&parts.headers, body, limit).await {
        Buffered::Whole(bytes) => bytes,
        Buffered::Unread(body) => return next.run(Request::from_parts(parts, body)).await,
    };
    let mut bytes = bytes;
    let mut submitted: Option<Value> = serde_json::from_slice(&bytes).ok();
    let rewrites = &layer.rewrites;
    if rewrites.unknown_request_members_ignored()
        && let Some(json) = &mut submitted
        && members::drop_unknown(json)
    {
        // The defect: unknown members of the closed object are dropped instead of refused.
        bytes = serde_json::to_vec(json).map(Into::into).unwrap_or(bytes);
    }
    body::set_length(&mut parts.headers, bytes.len());
    let response = next
        .run(Request::from_parts(parts, Body::from(bytes)))
        .await;
    if !response.status().is_client_error() {
        return response;
    }
    let (response, envelope) = json::read(response).await;
    let (Some(mut envelope), Some(submitted)) = (envelope, submitted) else {
        return response;
    };
    if rewrites.validation_error_echoes_request()
        && findings::append_findings(&mut envelope, &submitted)
    {
        // The defect: the validator's findings (paths and offending values) are echoed.
        return json::replaced(response, &envelope);
    }
    if json::refusal_code(&envelope) == Some(probe::REFUSAL_CODE)
        && rewrites.provider_called_before_validation()
        && let Ok(request) = serde_json::from_value(submitted)
    {
        // The defect: a provider is called before the unsatisfiable request is refused.
        probe::probe_first_provider(&layer.service.calls, &request).await;
    }
    response
}

/// A snapshot's or result's `result` as the defective fold writes it.
async fn materialised(layer: &ExecutionWire, id: &str, response: Response) -> Response {
    let (response, document) = json::read(response).await;
    let Some(mut document) = document else {
        return response;
    };
    let service = &layer.service;
    // The fold's events: those up to the snapshot's last sequence (a result's execution has
    // ended: all of them).
    let up_to = document
        .get("last_sequence")
        .and_then(Value::as_u64)
        .map(|wire| service.config.choices.sequence_form.stored_cursor(wire));
    let Ok(mut events) = service.hub.read_after(id, None) else {
        return response;
    };
    if let Some(up_to) = up_to {
        events.retain(|event| event.sequence <= up_to);
    }
    let streamed = result::Streamed::of(&events);
    if let Some(result) = document.get_mut("result") {
        let rewrites = &layer.rewrites;
        result::rewrite(
            result,
            &streamed,
            rewrites.last_text_delta_dropped(),
            rewrites.tool_fragments_reversed(),
        );
    }
    json::replaced(response, &document)
}
