//! The layer: [`wire`] wraps a router when a wire defect is on; its body rewrites a request on
//! its way in (`request.rs`) and the handler's answer on its way out (`json.rs`, `sse.rs`).
//!
//! The layer sits innermost (next to the handlers, under the error-annotation and header layers),
//! so what those layers do to a rewritten answer is what they did to the handler's own.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::Response;

use super::super::policy::KnownBad;
use super::exchange::Exchange;
use super::json::{self, rewrite_json};
use super::request::{self, Asked};
use super::rewrites::WireRewrites;
use super::{seed, sse};

/// `router` with the known-bad wire layer when `policy` switches a wire defect on; `router`
/// itself otherwise.
pub fn wire<S>(router: Router<S>, policy: &Arc<KnownBad>) -> Router<S>
where
    S: Clone + Send + Sync + 'static,
{
    let Some(rewrites) = WireRewrites::of(policy) else {
        return router;
    };
    router.layer(axum::middleware::from_fn_with_state(
        Arc::new(rewrites),
        rewrite,
    ))
}

/// The layer's body: rewrites the request, runs the handler, then rewrites its answer.
async fn rewrite(
    State(rewrites): State<Arc<WireRewrites>>,
    request: Request,
    next: Next,
) -> Response {
    let exchange = Exchange::of(&request);
    let request = if exchange == Exchange::Era2Seed && rewrites.era2_drops_silently() {
        seed::without_unprojectable(request).await
    } else {
        request
    };
    let (request, asked) = request::rewrite(exchange, request, &rewrites);
    let response = next.run(request).await;
    answer(exchange, asked, response, &rewrites).await
}

/// The handler's answer to an `exchange` as the rewrites say.
async fn answer(
    exchange: Exchange,
    asked: Asked,
    mut response: Response,
    rewrites: &WireRewrites,
) -> Response {
    match (exchange, response.status()) {
        (Exchange::Submission, StatusCode::ACCEPTED) if rewrites.submission_answered_200() => {
            // A new execution answered 200 as if it were a replay.
            *response.status_mut() = StatusCode::OK;
            response
        }
        (Exchange::Poll, StatusCode::OK) if json::rewrites_poll_page(rewrites) => {
            rewrite_json(response, |page| {
                json::poll_page(page, asked.after_sequence, rewrites)
            })
            .await
        }
        (Exchange::Stream, status)
            if asked.malformed_last_event_id
                && status != StatusCode::UNAUTHORIZED
                && rewrites.last_event_id_before_authorization() =>
        {
            // Last-Event-ID validated right after the key, before the run is looked up: a
            // malformed header is refused whatever the handler would have answered next.
            json::w_refusal(
                StatusCode::BAD_REQUEST,
                "validation_error",
                "Last-Event-ID must be a non-negative integer (a sequence)",
            )
        }
        (Exchange::Stream, StatusCode::BAD_REQUEST) if json::rewrites_supported(rewrites) => {
            rewrite_json(response, |envelope| {
                json::supported(envelope, rewrites);
                None
            })
            .await
        }
        (Exchange::Stream, StatusCode::TOO_MANY_REQUESTS) if rewrites.subscriber_limit_silent() => {
            // Past the subscriber limit: 200 and an empty stream instead of the refusal.
            crate::sse::sse_response(futures::stream::empty(), None)
        }
        (Exchange::Stream, StatusCode::OK) => stream(response, asked, rewrites),
        (Exchange::HostChannel, StatusCode::OK) if rewrites.keep_alive_suppressed() => {
            sse::without_comments(response)
        }
        (Exchange::Discovery, StatusCode::OK) if json::rewrites_discovery(rewrites) => {
            rewrite_json(response, |document| {
                json::discovery(document, rewrites);
                None
            })
            .await
        }
        _ => response,
    }
}

/// A run's event stream as the rewrites say: batch ids, keep-alives, closing after the terminal
/// event.
fn stream(mut response: Response, asked: Asked, rewrites: &WireRewrites) -> Response {
    if rewrites.batch_id_lowest() {
        response = sse::batch_ids_lowest(response);
    }
    if rewrites.keep_alive_suppressed() {
        response = sse::without_comments(response);
    }
    if rewrites.stream_held_after_terminal()
        || (asked.messages_only && rewrites.messages_stream_held_after_terminal())
    {
        response = sse::held_open(response);
    }
    response
}
