//! The one SSE writer both surfaces use: frames in, a `text/event-stream` response out, with
//! `:` keep-alive comments while the stream is idle. The stream ends (and the response closes)
//! when the frame stream ends; dropping the response (a client disconnect) drops the frame
//! stream, which only ever watches the log and never owns provider work.

use std::convert::Infallible;
use std::time::Duration;

use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::{Stream, StreamExt};

/// One SSE frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseFrame {
    /// The `id:` line (the sequence), when any.
    pub id: Option<String>,
    /// The `event:` line, when any.
    pub event: Option<String>,
    /// The `data:` payload (single-line JSON).
    pub data: String,
}

impl SseFrame {
    /// A frame with id, event name and data.
    pub fn new(id: impl Into<String>, event: impl Into<String>, data: impl Into<String>) -> Self {
        SseFrame {
            id: Some(id.into()),
            event: Some(event.into()),
            data: data.into(),
        }
    }
}

/// Builds the streaming response. `keep_alive` is the idle interval between `:keep-alive`
/// comments; `None` sends none.
pub fn sse_response<S>(frames: S, keep_alive: Option<Duration>) -> Response
where
    S: Stream<Item = SseFrame> + Send + 'static,
{
    sse_response_commenting(frames, keep_alive, "keep-alive")
}

/// [`sse_response`] with the keep-alive comment's text (`""` writes a bare `:`).
pub fn sse_response_commenting<S>(
    frames: S,
    keep_alive: Option<Duration>,
    comment: &'static str,
) -> Response
where
    S: Stream<Item = SseFrame> + Send + 'static,
{
    let events = frames.map(|frame| {
        let mut event = Event::default().data(frame.data);
        if let Some(id) = frame.id {
            event = event.id(id);
        }
        if let Some(name) = frame.event {
            event = event.event(name);
        }
        Ok::<_, Infallible>(event)
    });
    let sse = Sse::new(events);
    let mut response = match keep_alive {
        Some(interval) => sse
            .keep_alive(KeepAlive::new().interval(interval).text(comment))
            .into_response(),
        None => sse.into_response(),
    };
    response.headers_mut().insert(
        axum::http::header::CACHE_CONTROL,
        axum::http::HeaderValue::from_static("no-store"),
    );
    response
}
