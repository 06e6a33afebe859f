//! The layer: [`execution_wire`] wraps surface X's router when one of the `EXECUTION_WIRE`
//! defects is on. Unlike the wire layer (`known_bad::wire`), it holds the service, whose log
//! hub, providers and configuration its rewrites read.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::Response;
use serde_json::Value;

use super::exchange::Exchange;
use super::keys::RememberedKeys;
use super::rewrites::ExecutionWireRewrites;
use super::state::ExecutionWire;
use super::{json, manifest, result, submission};
use crate::execution::service::Executions;

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
        keys: Mutex::new(RememberedKeys::default()),
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
            submission::submission(&layer, request, next).await
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
