//! The known-bad wire: a response layer that rewrites what a defect changes on the wire
//! (statuses, JSON members of answers and refusals, the frames of an event stream), applied to a
//! router only when the runtime runs known-bad. The handlers behind it answer the clean way; each rewrite is one defect's one
//! site, asked of the policy by its decision.
//!
//! The layer sits innermost (next to the handlers, under the error-annotation and header layers),
//! so what those layers do to a rewritten answer is what they did to the handler's own.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use serde_json::{Value, json};

use super::policy::KnownBad;

/// The largest answer body the layer reads to rewrite it (a poll page or an error envelope).
const MAX_REWRITTEN_BODY: usize = 16 << 20;

/// `router` with the known-bad wire layer when `policy` is not clean; `router` itself otherwise.
pub fn wire<S>(router: Router<S>, policy: &Arc<KnownBad>) -> Router<S>
where
    S: Clone + Send + Sync + 'static,
{
    if policy.is_clean() {
        return router;
    }
    router.layer(axum::middleware::from_fn_with_state(
        Arc::clone(policy),
        rewrite,
    ))
}

/// What a request is, as far as the rewrites care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Exchange {
    /// `POST /v1/executions` (surface X).
    Submission,
    /// `GET …/runs/{runId}/events/poll` (surface W).
    Poll,
    /// `GET …/runs/{runId}/events` (surface W).
    Stream,
    /// `GET …/host/…`: the host channel (surface W).
    HostChannel,
    /// Anything else: not rewritten.
    Other,
}

impl Exchange {
    fn of(request: &Request) -> Self {
        let path = request.uri().path();
        match *request.method() {
            Method::POST if path == "/v1/executions" => Exchange::Submission,
            Method::GET if path.ends_with("/events/poll") => Exchange::Poll,
            Method::GET if path.ends_with("/events") && path.contains("/runs/") => Exchange::Stream,
            Method::GET if path.contains("/host/") => Exchange::HostChannel,
            _ => Exchange::Other,
        }
    }
}

/// The layer's body: runs the handler, then rewrites its answer as the policy decides.
async fn rewrite(State(policy): State<Arc<KnownBad>>, request: Request, next: Next) -> Response {
    let exchange = Exchange::of(&request);
    let mut response = next.run(request).await;
    match (exchange, response.status()) {
        (Exchange::Submission, StatusCode::ACCEPTED) if policy.submission_answered_200() => {
            // A new execution answered 200 as if it were a replay.
            *response.status_mut() = StatusCode::OK;
            response
        }
        (Exchange::Poll, StatusCode::OK) if policy.poll_last_sequence_off_by_one() => {
            rewrite_json(response, |page| {
                if let Some(last) = page.get("lastSequence").and_then(Value::as_i64) {
                    page["lastSequence"] = json!(last - 1);
                }
            })
            .await
        }
        (Exchange::Stream, StatusCode::BAD_REQUEST)
            if policy.supported_omitted() || policy.supported_lists_combinations() =>
        {
            rewrite_json(response, |envelope| {
                if envelope.get("error").and_then(Value::as_str) != Some("unsupported_stream_mode")
                {
                    return;
                }
                rewrite_supported(envelope, &policy);
            })
            .await
        }
        (Exchange::Stream | Exchange::HostChannel, StatusCode::OK)
            if policy.keep_alive_suppressed() =>
        {
            without_comments(response)
        }
        (Exchange::Stream, StatusCode::TOO_MANY_REQUESTS) if policy.subscriber_limit_silent() => {
            // Past the subscriber limit: 200 and an empty stream instead of the refusal.
            crate::sse::sse_response(futures::stream::empty(), None)
        }
        _ => response,
    }
}

/// `details.supported` of a 400 `unsupported_stream_mode`, as the policy decides: omitted, or
/// listing combinations too.
fn rewrite_supported(envelope: &mut Value, policy: &KnownBad) {
    let Some(details) = envelope.get_mut("details").and_then(Value::as_object_mut) else {
        return;
    };
    if policy.supported_omitted() {
        details.remove("supported");
        if details.is_empty()
            && let Some(envelope) = envelope.as_object_mut()
        {
            envelope.remove("details");
        }
    } else if let Some(supported) = details.get_mut("supported").and_then(Value::as_array_mut) {
        supported.push(json!("updates,messages"));
        supported.push(json!("updates,debug"));
    }
}

/// An event stream without its keep-alive comments: every chunk of the body that holds only
/// comment lines (the keep-alives; an event frame never carries a comment) is dropped.
fn without_comments(response: Response) -> Response {
    use futures::StreamExt;
    let (parts, body) = response.into_parts();
    let frames = body.into_data_stream().filter(|chunk| {
        let keep_alive = chunk.as_ref().is_ok_and(|bytes| is_comment_only(bytes));
        std::future::ready(!keep_alive)
    });
    Response::from_parts(parts, axum::body::Body::from_stream(frames))
}

/// Whether `chunk` holds comment lines (`:`…) and blank lines alone.
fn is_comment_only(chunk: &[u8]) -> bool {
    chunk.first() == Some(&b':')
        && chunk
            .split(|b| *b == b'\n')
            .all(|line| line.is_empty() || line.starts_with(b":"))
}

/// `response` with its JSON body changed by `edit` (its other parts kept; a body that is not a
/// JSON object is passed on unchanged).
async fn rewrite_json(response: Response, edit: impl FnOnce(&mut Value)) -> Response {
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_REWRITTEN_BODY).await else {
        return Response::from_parts(parts, axum::body::Body::empty());
    };
    let mut value: Value = match serde_json::from_slice(&bytes) {
        Ok(value @ Value::Object(_)) => value,
        _ => return Response::from_parts(parts, axum::body::Body::from(bytes)),
    };
    edit(&mut value);
    let body = serde_json::to_vec(&value).unwrap_or_else(|_| bytes.to_vec());
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, axum::body::Body::from(body))
}
