//! The one SSE writer both surfaces use: frames in, a `text/event-stream` response out, with
//! `:` keep-alive comments while the stream is idle. The stream ends (and the response closes)
//! when the frame stream ends; dropping the response (a client disconnect) drops the frame
//! stream, which only ever watches the log and never owns provider work.
//!
//! Every frame the frame stream has ready at one poll goes out in one body chunk (one write):
//! a subscriber that fell behind, or a backlog read from the store, is written in a few large
//! writes rather than one per event, and an idle subscriber holds no buffer. A frame's `data`
//! and `event` are shared (`Arc<str>`) with the log's own copy of the event, so a frame costs
//! one copy, into the chunk, per subscriber.

use std::convert::Infallible;
use std::fmt::Write as _;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderValue, header};
use axum::response::Response;
use bytes::{BufMut, Bytes, BytesMut};
use futures::Stream;
use tokio::time::{Instant, Sleep};

/// The most bytes one body chunk gathers before it is handed to the connection. hyper queues at
/// most 16 chunks of a connection that reads slowly, so this also bounds what a slow reader
/// holds in this process (64 KiB), while a backlog still goes out a dozen frames per write.
const MAX_CHUNK_BYTES: usize = 4 * 1024;

/// The value of a frame's `id:` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameId {
    /// A log position, written in decimal.
    Sequence(u64),
    /// Any other id (a host event's `eventId`).
    Text(String),
}

/// One SSE frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseFrame {
    /// The `id:` line, when any.
    pub id: Option<FrameId>,
    /// The `event:` line, when any.
    pub event: Option<Arc<str>>,
    /// The `data:` payload (JSON; a line break in it starts another `data:` line).
    pub data: Arc<str>,
}

impl SseFrame {
    /// A frame with id, event name and data.
    pub fn new(
        id: impl Into<String>,
        event: impl Into<Arc<str>>,
        data: impl Into<Arc<str>>,
    ) -> Self {
        SseFrame {
            id: Some(FrameId::Text(id.into())),
            event: Some(event.into()),
            data: data.into(),
        }
    }

    /// A frame whose id is the log position `sequence`.
    pub fn numbered(sequence: u64, event: impl Into<Arc<str>>, data: impl Into<Arc<str>>) -> Self {
        SseFrame {
            id: Some(FrameId::Sequence(sequence)),
            event: Some(event.into()),
            data: data.into(),
        }
    }

    /// The bytes [`SseFrame::write_to`] writes, give or take the digits of a numeric id.
    fn wire_len_hint(&self) -> usize {
        let id = match &self.id {
            Some(FrameId::Sequence(_)) => 24,
            Some(FrameId::Text(text)) => text.len() + 5,
            None => 0,
        };
        let event = self.event.as_ref().map_or(0, |e| e.len() + 8);
        self.data.len() + 7 + id + event + 1
    }

    /// Appends the frame's wire form (`data:` lines, `id:`, `event:`, the blank line) to `out`.
    /// A line break or NUL in `id` or `event` (never written by this runtime) is dropped rather
    /// than allowed to split the frame.
    fn write_to(&self, out: &mut BytesMut) {
        out.reserve(self.wire_len_hint());
        for line in self.data.split('\n') {
            let line = line.strip_suffix('\r').unwrap_or(line);
            out.put_slice(b"data: ");
            out.put_slice(line.as_bytes());
            out.put_u8(b'\n');
        }
        match &self.id {
            Some(FrameId::Sequence(sequence)) => {
                out.put_slice(b"id: ");
                // Writing into a BytesMut cannot fail.
                let _ = write!(out, "{sequence}");
                out.put_u8(b'\n');
            }
            Some(FrameId::Text(id)) => put_field(out, b"id: ", id),
            None => {}
        }
        if let Some(event) = &self.event {
            put_field(out, b"event: ", event);
        }
        out.put_u8(b'\n');
    }
}

fn put_field(out: &mut BytesMut, name: &[u8], value: &str) {
    out.put_slice(name);
    if value.bytes().any(|b| matches!(b, b'\n' | b'\r' | b'\0')) {
        out.extend(
            value
                .bytes()
                .filter(|b| !matches!(b, b'\n' | b'\r' | b'\0')),
        );
    } else {
        out.put_slice(value.as_bytes());
    }
    out.put_u8(b'\n');
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
    let body = SseBody {
        frames: Box::pin(frames),
        keep_alive: keep_alive.map(|interval| KeepAliveTimer {
            interval,
            timer: Box::pin(tokio::time::sleep(interval)),
            comment: comment_bytes(comment),
            last_write: Instant::now(),
        }),
        ended: false,
    };
    let mut response = Response::new(Body::from_stream(body));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// Holds an SSE response back until its body has its first byte (a frame, a keep-alive comment,
/// or the end), then answers with the headers and that byte together: a host writing its headers
/// with its first byte (open point `w.sse.header-timing`). Any other response passes unchanged.
pub async fn headers_with_first_byte(response: Response) -> Response {
    use futures::StreamExt;
    let is_sse = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    if !is_sse {
        return response;
    }
    let (parts, body) = response.into_parts();
    let mut data = body.into_data_stream();
    let first = data.next().await;
    let body = Body::from_stream(futures::stream::iter(first).chain(data));
    Response::from_parts(parts, body)
}

fn comment_bytes(comment: &str) -> Bytes {
    if comment.is_empty() {
        Bytes::from_static(b":\n\n")
    } else {
        Bytes::from(format!(": {comment}\n\n"))
    }
}

/// The keep-alive comment and the timer that sends it after `interval` without a frame.
///
/// A frame only notes when it was written; the timer is moved when it fires early (a frame was
/// written since it was set), so a busy stream touches the timer once per interval, not once per
/// write.
struct KeepAliveTimer {
    interval: Duration,
    timer: Pin<Box<Sleep>>,
    comment: Bytes,
    last_write: Instant,
}

impl KeepAliveTimer {
    fn wrote(&mut self) {
        self.last_write = Instant::now();
    }

    /// The comment once `interval` has passed since the last write.
    fn poll_due(&mut self, cx: &mut Context<'_>) -> Poll<Bytes> {
        loop {
            if self.timer.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            let due = self.last_write + self.interval;
            let now = Instant::now();
            if due > now {
                self.timer.as_mut().reset(due);
                continue;
            }
            self.last_write = now;
            self.timer.as_mut().reset(now + self.interval);
            return Poll::Ready(self.comment.clone());
        }
    }
}

/// The response body: the ready frames as one chunk, or a keep-alive comment when the timer
/// fires while no frame is ready.
struct SseBody<S> {
    frames: Pin<Box<S>>,
    keep_alive: Option<KeepAliveTimer>,
    ended: bool,
}

impl<S> Stream for SseBody<S>
where
    S: Stream<Item = SseFrame>,
{
    type Item = Result<Bytes, Infallible>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if this.ended {
            return Poll::Ready(None);
        }
        let mut chunk = BytesMut::new();
        while chunk.len() < MAX_CHUNK_BYTES {
            match this.frames.as_mut().poll_next(cx) {
                Poll::Ready(Some(frame)) => frame.write_to(&mut chunk),
                Poll::Ready(None) => {
                    this.ended = true;
                    break;
                }
                Poll::Pending => break,
            }
        }
        if !chunk.is_empty() {
            if let Some(keep_alive) = &mut this.keep_alive {
                keep_alive.wrote();
            }
            return Poll::Ready(Some(Ok(chunk.freeze())));
        }
        if this.ended {
            return Poll::Ready(None);
        }
        let Some(keep_alive) = &mut this.keep_alive else {
            return Poll::Pending;
        };
        keep_alive.poll_due(cx).map(|comment| Some(Ok(comment)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt;

    async fn body_chunks(response: Response) -> Vec<Bytes> {
        let mut stream = response.into_body().into_data_stream();
        let mut chunks = Vec::new();
        while let Some(chunk) = stream.next().await {
            chunks.push(chunk.expect("an infallible body"));
        }
        chunks
    }

    async fn next_chunk(body: &mut axum::body::BodyDataStream) -> Bytes {
        body.next()
            .await
            .expect("a chunk before the end")
            .expect("an infallible body")
    }

    #[tokio::test]
    async fn ready_frames_share_one_chunk_in_order() {
        let frames = futures::stream::iter([
            SseFrame::numbered(1, "a", "{\"n\":1}"),
            SseFrame::new("2", "b", "line one\nline two"),
        ]);
        let response = sse_response(frames, None);
        assert_eq!(
            response.headers()[header::CONTENT_TYPE],
            "text/event-stream"
        );
        assert_eq!(response.headers()[header::CACHE_CONTROL], "no-store");
        let chunks = body_chunks(response).await;
        assert_eq!(chunks.len(), 1, "{chunks:?}");
        assert_eq!(
            &chunks[0][..],
            b"data: {\"n\":1}\nid: 1\nevent: a\n\ndata: line one\ndata: line two\nid: 2\nevent: b\n\n"
        );
    }

    #[tokio::test]
    async fn a_long_backlog_is_cut_into_bounded_chunks() {
        let data = "x".repeat(1000);
        let frames =
            futures::stream::iter((0..200).map(move |n| SseFrame::new(n.to_string(), "e", &*data)));
        let chunks = body_chunks(sse_response(frames, None)).await;
        assert!(chunks.len() > 1);
        assert!(chunks.iter().all(|c| c.len() < MAX_CHUNK_BYTES + 1100));
        let total: Vec<u8> = chunks.concat();
        assert_eq!(
            total.windows(6).filter(|w| w == b"\n\ndata").count(),
            199,
            "every frame is there once"
        );
    }

    #[test]
    fn a_line_break_in_id_or_event_cannot_split_the_frame() {
        let frame = SseFrame::new("1\n2", "a\r\nb", "{}");
        let mut out = BytesMut::new();
        frame.write_to(&mut out);
        assert_eq!(&out[..], b"data: {}\nid: 12\nevent: ab\n\n");
    }

    #[tokio::test(start_paused = true)]
    async fn an_idle_stream_gets_comments_and_a_frame_resets_the_timer() {
        let (sender, receiver) = tokio::sync::mpsc::unbounded_channel::<SseFrame>();
        let frames = tokio_stream::wrappers::UnboundedReceiverStream::new(receiver);
        let response = sse_response_commenting(frames, Some(Duration::from_secs(10)), "");
        let mut body = response.into_body().into_data_stream();
        let first = next_chunk(&mut body).await;
        assert_eq!(&first[..], b":\n\n");
        sender.send(SseFrame::new("1", "a", "{}")).expect("open");
        let frame = next_chunk(&mut body).await;
        assert_eq!(&frame[..], b"data: {}\nid: 1\nevent: a\n\n");
        let started = Instant::now();
        let comment = next_chunk(&mut body).await;
        assert_eq!(&comment[..], b":\n\n");
        assert_eq!(started.elapsed(), Duration::from_secs(10));
        // A frame half-way through the interval moves the next comment to a full interval
        // after it.
        tokio::time::sleep(Duration::from_secs(5)).await;
        sender.send(SseFrame::numbered(2, "a", "{}")).expect("open");
        let frame = next_chunk(&mut body).await;
        assert_eq!(&frame[..], b"data: {}\nid: 2\nevent: a\n\n");
        let written = Instant::now();
        let comment = next_chunk(&mut body).await;
        assert_eq!(&comment[..], b":\n\n");
        assert_eq!(written.elapsed(), Duration::from_secs(10));
        drop(sender);
        assert!(body.next().await.is_none());
    }
}
