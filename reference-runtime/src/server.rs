//! The connection loop both surfaces are served by: HTTP/1.1 over hyper, with the connection
//! limits of `[server]` ([`ConnectionLimits`]), so that no client holds the host's connections
//! or descriptors by sending slowly or not at all.
//!
//! | limit | figure (default) | how |
//! |---|---|---|
//! | request head | `header_read_timeout_ms` (40 s) | hyper's `header_read_timeout`: the clock starts when the connection waits for a request (on accept, and again after each response on a kept-alive connection), so it is also the idle keep-alive timeout; trickling bytes does not restart it |
//! | request body | `body_read_timeout_ms` (60 s) | [`DeadlineBody`]: one deadline for the whole body from when the handler is called (tower-http's `RequestBodyTimeout` restarts its clock at every chunk, which a client sending a byte every few seconds defeats) |
//! | connections | `max_connections` (4,096) | a semaphore permit is taken before `accept`: past the bound, new connections wait in the kernel's backlog until one closes |
//! | a stalled reader | `write_stall_timeout_ms` (30 s) | [`WriteStallGuard`]: once the peer's socket takes no byte (its buffer full: a subscriber that stopped reading) for this long, the connection fails and is closed, and its subscription with it |
//!
//! A response being written is otherwise never timed: an SSE stream stays open as long as it
//! sends its frames and keep-alive comments and its reader takes them, and a long poll as long
//! as it waits. Only HTTP/1.1 is
//! served (neither surface needs HTTP/2, and hyper's protocol detection would wait for a
//! silent client before any of these clocks starts).

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use bytes::Bytes;
use hyper::body::{Frame, SizeHint};
use tokio::sync::{Semaphore, oneshot};
use tower::ServiceExt;

/// The default time a connection may take to send a request's head, idle keep-alive wait
/// included (40 s: longer than the 30 s the harness's HTTP client keeps an idle connection, so
/// the server never closes one the client is about to reuse).
pub const DEFAULT_HEADER_READ_TIMEOUT_MS: u64 = 40_000;
/// The default time a request's whole body may take to arrive (60 s: a 1 MiB body at ~17 KiB/s).
pub const DEFAULT_BODY_READ_TIMEOUT_MS: u64 = 60_000;
/// The default bound on open connections (4,096).
pub const DEFAULT_MAX_CONNECTIONS: usize = 4_096;
/// The default time a connection's writes may stay blocked (its reader taking no byte) before
/// the connection is closed (30 s).
pub const DEFAULT_WRITE_STALL_TIMEOUT_MS: u64 = 30_000;

/// How long the loop waits after an accept error that is not the peer's (e.g. out of
/// descriptors) before accepting again, instead of spinning.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);
/// How long stopping waits for open connections to finish.
const DRAIN_ON_STOP: Duration = Duration::from_secs(1);

/// The limits every connection is served under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// From when a connection waits for a request until its head is complete.
    pub header_read_timeout: Duration,
    /// From when the handler is called until the request body is complete.
    pub body_read_timeout: Duration,
    /// Connections open at once.
    pub max_connections: usize,
    /// How long a connection's writes may stay blocked before it is closed (zero: no bound).
    pub write_stall_timeout: Duration,
    /// Response header names in title case (`[server] title_case_headers`).
    pub title_case_headers: bool,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            header_read_timeout: Duration::from_millis(DEFAULT_HEADER_READ_TIMEOUT_MS),
            body_read_timeout: Duration::from_millis(DEFAULT_BODY_READ_TIMEOUT_MS),
            max_connections: DEFAULT_MAX_CONNECTIONS,
            write_stall_timeout: Duration::from_millis(DEFAULT_WRITE_STALL_TIMEOUT_MS),
            title_case_headers: false,
        }
    }
}

/// The request body did not arrive within `body_read_timeout`.
#[derive(Debug, thiserror::Error)]
#[error("the request body did not arrive in time")]
pub struct BodyDeadlineExceeded;

/// Whether a body read failed because of [`BodyDeadlineExceeded`] (anywhere in its source
/// chain), as opposed to a length limit or a broken connection.
pub fn is_body_deadline(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut current = Some(error);
    while let Some(error) = current {
        if error.is::<BodyDeadlineExceeded>() {
            return true;
        }
        current = error.source();
    }
    false
}

/// A request body with one deadline for all of it: past the deadline the next read fails with
/// [`BodyDeadlineExceeded`] (the handler answers its refusal; hyper then closes the connection,
/// whose request was not read to its end).
pub struct DeadlineBody<B> {
    inner: B,
    deadline: Pin<Box<tokio::time::Sleep>>,
}

impl<B> DeadlineBody<B> {
    /// `inner`, which must end within `timeout` from now.
    pub fn new(inner: B, timeout: Duration) -> Self {
        DeadlineBody {
            inner,
            deadline: Box::pin(tokio::time::sleep(timeout)),
        }
    }
}

impl<B> hyper::body::Body for DeadlineBody<B>
where
    B: hyper::body::Body<Data = Bytes> + Unpin,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if let Poll::Ready(frame) = Pin::new(&mut self.inner).poll_frame(cx) {
            return Poll::Ready(frame.map(|frame| frame.map_err(Into::into)));
        }
        match self.deadline.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Some(Err(Box::new(BodyDeadlineExceeded)))),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// A connection whose writes fail once they have stayed blocked for `timeout`: the peer's
/// socket buffer stayed full, its reader taking no byte (a subscriber that stopped reading
/// holds its connection, its subscription and what is queued for it until then). Any write that
/// makes progress restarts the clock; reads are not timed here.
pub struct WriteStallGuard<T> {
    inner: T,
    timeout: Duration,
    stalled: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl<T> WriteStallGuard<T> {
    /// `inner`, whose writes may stay blocked at most `timeout` (zero: without bound).
    pub fn new(inner: T, timeout: Duration) -> Self {
        WriteStallGuard {
            inner,
            timeout,
            stalled: None,
        }
    }

    /// A write made progress (`Ready`) or is still blocked: past the timeout, an error.
    fn judge<R>(
        &mut self,
        cx: &mut Context<'_>,
        poll: Poll<std::io::Result<R>>,
    ) -> Poll<std::io::Result<R>> {
        if poll.is_ready() || self.timeout.is_zero() {
            self.stalled = None;
            return poll;
        }
        let timeout = self.timeout;
        let stall = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
        match stall.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("the peer took no byte for {} ms", timeout.as_millis()),
            ))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<T: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for WriteStallGuard<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

impl<T: tokio::io::AsyncWrite + Unpin> tokio::io::AsyncWrite for WriteStallGuard<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let poll = Pin::new(&mut this.inner).poll_write(cx, buf);
        this.judge(cx, poll)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let poll = Pin::new(&mut this.inner).poll_write_vectored(cx, bufs);
        this.judge(cx, poll)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let poll = Pin::new(&mut this.inner).poll_flush(cx);
        this.judge(cx, poll)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let poll = Pin::new(&mut this.inner).poll_shutdown(cx);
        this.judge(cx, poll)
    }
}

/// Serves `router` on `listener` under `limits` until `stopped` fires; then gives the open
/// connections [`DRAIN_ON_STOP`] to finish (a held-open event stream never does).
pub(crate) async fn serve(
    listener: tokio::net::TcpListener,
    router: axum::Router,
    limits: ConnectionLimits,
    stopped: oneshot::Receiver<()>,
) {
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let permits = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .title_case_headers(limits.title_case_headers);
    let body_timeout = limits.body_read_timeout;
    let service = router.map_request(move |request: axum::http::Request<hyper::body::Incoming>| {
        request.map(|body| Body::new(DeadlineBody::new(body, body_timeout)))
    });
    let mut stopped = std::pin::pin!(stopped);
    loop {
        let permit = tokio::select! {
            permit = Arc::clone(&permits).acquire_owned() => permit,
            _ = &mut stopped => break,
        };
        let Ok(permit) = permit else { break };
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = &mut stopped => break,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(error) => {
                tracing::debug!(%error, "accepting a connection failed");
                if !is_connection_error(&error) {
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                }
                continue;
            }
        };
        // TCP_NODELAY: SSE frames are small; Nagle's algorithm would hold each one back.
        if let Err(error) = stream.set_nodelay(true) {
            tracing::debug!(%error, "failed to set TCP_NODELAY");
        }
        let service = hyper_util::service::TowerToHyperService::new(service.clone());
        let stream = WriteStallGuard::new(stream, limits.write_stall_timeout);
        let connection = builder.serve_connection(hyper_util::rt::TokioIo::new(stream), service);
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(%error, "a connection ended with an error");
            }
            drop(permit);
        });
    }
    let _ = tokio::time::timeout(DRAIN_ON_STOP, graceful.shutdown()).await;
}

/// Errors of one connection (the peer's doing), after which accepting again at once is right.
fn is_connection_error(error: &std::io::Error) -> bool {
    matches!(
        error.kind(),
        std::io::ErrorKind::ConnectionRefused
            | std::io::ErrorKind::ConnectionAborted
            | std::io::ErrorKind::ConnectionReset
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt;

    #[tokio::test(start_paused = true)]
    async fn a_body_past_its_deadline_fails_however_it_trickles() {
        let trickle = async_stream::stream! {
            for _ in 0..100 {
                yield Ok::<_, std::io::Error>(Bytes::from_static(b"x"));
                tokio::time::sleep(Duration::from_secs(2)).await;
            }
        };
        let body = DeadlineBody::new(Body::from_stream(trickle), Duration::from_secs(10));
        let mut chunks = Body::new(body).into_data_stream();
        let mut read = 0;
        let error = loop {
            match chunks.next().await {
                Some(Ok(_)) => read += 1,
                Some(Err(error)) => break error,
                None => panic!("the body ended"),
            }
        };
        assert!(is_body_deadline(&error), "{error}");
        // A byte every 2 s for 10 s: five or six bytes, never the hundred.
        assert!((5..=6).contains(&read), "{read}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_write_blocked_past_the_stall_timeout_fails_and_progress_restarts_the_clock() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        // A 1 KiB pipe: the writer blocks once the reader stops taking bytes.
        let (near, mut far) = tokio::io::duplex(1024);
        let mut guarded = WriteStallGuard::new(near, Duration::from_secs(30));
        let block = vec![b'x'; 1024];
        guarded.write_all(&block).await.unwrap();
        // The reader takes a byte every 20 s: progress each time, so no stall reaches 30 s.
        let reader = tokio::spawn(async move {
            let mut byte = [0u8; 1];
            for _ in 0..3 {
                tokio::time::sleep(Duration::from_secs(20)).await;
                far.read_exact(&mut byte).await.unwrap();
            }
            far
        });
        guarded.write_all(&block[..3]).await.unwrap();
        let _far = reader.await.unwrap();
        // Then it stops reading: the next write fails 30 s later.
        let started = tokio::time::Instant::now();
        let error = guarded.write_all(b"more").await.unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::TimedOut);
        assert_eq!(started.elapsed(), Duration::from_secs(30));
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_within_its_deadline_reads_whole() {
        let body = DeadlineBody::new(Body::from("hello"), Duration::from_secs(1));
        let bytes = axum::body::to_bytes(Body::new(body), 1024).await.unwrap();
        assert_eq!(&bytes[..], b"hello");
        let stalled = futures::stream::pending::<Result<Bytes, std::io::Error>>();
        let body = DeadlineBody::new(Body::from_stream(stalled), Duration::from_secs(1));
        let error = axum::body::to_bytes(Body::new(body), 1024)
            .await
            .unwrap_err();
        assert!(is_body_deadline(&error), "{error}");
        let too_long = axum::body::to_bytes(Body::from("hello"), 2)
            .await
            .unwrap_err();
        assert!(!is_body_deadline(&too_long), "{too_long}");
    }
}
