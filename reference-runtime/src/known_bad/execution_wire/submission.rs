//! A submission (`POST /v1/executions`) through the layer: its body buffered within the
//! runtime's body limit, rewritten on its way in (unknown members dropped, the key's rewrite),
//! the service's answer seen on its way out (a key bound, the schema refusal's findings, a
//! provider probed before the capability refusal).

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::HeaderMap;
use axum::middleware::Next;
use axum::response::Response;
use serde_json::Value;
use spec::execution::ExecutionRequest;
use spec::schema::{Published, validate};

use super::body::{self, Buffered};
use super::keys::{Bound, KeyedRewrite};
use super::state::ExecutionWire;
use super::{findings, json, members, probe};
use crate::canonical::{fingerprint, key_hash};
use crate::execution::admission::idempotency_key;
use crate::execution::choices::UnsatisfiableRequirements;
use crate::execution::routing;
use crate::execution::service::Executions;

/// The layer's body for a submission.
pub(super) async fn submission(
    layer: &Arc<ExecutionWire>,
    request: Request,
    next: Next,
) -> Response {
    let (mut parts, body) = request.into_parts();
    let limit = layer.service.config.limits.max_body_bytes;
    let mut bytes = match body::buffer(&parts.headers, body, limit).await {
        Buffered::Whole(bytes) => bytes,
        Buffered::Unread(body) => return next.run(Request::from_parts(parts, body)).await,
    };
    let mut submitted: Option<Value> = serde_json::from_slice(&bytes).ok();
    let rewrites = &layer.rewrites;
    if rewrites.unknown_request_members_ignored()
        && let Some(json) = &mut submitted
        && members::drop_unknown(json)
    {
        // The defect: unknown members of the closed object are dropped instead of refused.
        bytes = serde_json::to_vec(json).map(Into::into).unwrap_or(bytes);
    }
    let mut first = None;
    if rewrites.rewrites_keys()
        && let Some(json) = &submitted
        && let Some((key, fingerprint, rewrite)) = keyed(layer, &parts.headers, json)
    {
        match rewrite {
            KeyedRewrite::AsSent(Some(token)) => {
                first = Some(FirstSubmission {
                    layer: Arc::clone(layer),
                    key,
                    token,
                    fingerprint,
                    settled: false,
                });
            }
            KeyedRewrite::AsSent(None) => {}
            KeyedRewrite::Unkeyed => {
                parts.headers.remove("idempotency-key");
            }
            KeyedRewrite::BoundBody(body) => bytes = body,
        }
    }
    body::set_length(&mut parts.headers, bytes.len());
    let sent = bytes.clone();
    let response = next
        .run(Request::from_parts(parts, Body::from(bytes)))
        .await;
    let response = match first {
        Some(first) => first.settle(response, sent).await,
        None => response,
    };
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

/// The key (hashed) and fingerprint of a submission of `submitted` under the Idempotency-Key
/// of `headers`, and its rewrite; `None` without a well-formed key.
fn keyed(
    layer: &ExecutionWire,
    headers: &HeaderMap,
    submitted: &Value,
) -> Option<(String, String, KeyedRewrite)> {
    let key = key_hash(&idempotency_key(headers).ok()??);
    let fingerprint = fingerprint(submitted);
    let service = &layer.service;
    let rewrite = layer
        .keys
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .rewrite(
            &key,
            &fingerprint,
            &layer.rewrites,
            |execution_id| standing(service, execution_id),
            || admissible(service, submitted),
        );
    Some((key, fingerprint, rewrite))
}

/// Where the execution a key is bound to stands, read from the log hub.
fn standing(service: &Executions, execution_id: &str) -> Bound {
    if !matches!(service.hub.key_expired(execution_id), Ok(false)) {
        return Bound::Expired;
    }
    match service.hub.progress(execution_id) {
        Ok(progress) if progress.terminal => Bound::Finished,
        Ok(_) => Bound::Live,
        Err(_) => Bound::Expired,
    }
}

/// Whether the service would admit `submitted` up to its idempotency decision: it matches the
/// published schema and decodes, and some provider serves it (or the host accepts an
/// unsatisfiable request and fails it later).
fn admissible(service: &Executions, submitted: &Value) -> bool {
    if validate(Published::ExecutionRequest, submitted).is_err() {
        return false;
    }
    let Ok(request) = serde_json::from_value::<ExecutionRequest>(submitted.clone()) else {
        return false;
    };
    service.config.choices.unsatisfiable_requirements != UnsatisfiableRequirements::Refuse
        || !routing::candidates(&request, &service.calls.providers).is_empty()
}

/// A key's first submission on its way through the service: its answer binds the key (or
/// forgets it); dropped unanswered, it forgets the key.
struct FirstSubmission {
    layer: Arc<ExecutionWire>,
    key: String,
    token: u64,
    fingerprint: String,
    settled: bool,
}

impl FirstSubmission {
    /// Settles the key with the service's `response` to the submission of `body`.
    async fn settle(mut self, response: Response, body: Bytes) -> Response {
        let (response, execution_id) = if response.status().is_success() {
            let (response, answer) = json::read(response).await;
            let execution_id = answer
                .as_ref()
                .and_then(|a| a.get("execution_id"))
                .and_then(Value::as_str)
                .map(String::from);
            (response, execution_id)
        } else {
            (response, None)
        };
        self.layer
            .keys
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .settle(&self.key, self.token, &self.fingerprint, body, execution_id);
        self.settled = true;
        response
    }
}

impl Drop for FirstSubmission {
    fn drop(&mut self) {
        if !self.settled {
            self.layer
                .keys
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .abandon(&self.key, self.token);
        }
    }
}
