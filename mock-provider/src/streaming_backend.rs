//! The streaming backend: a small hyper HTTP/1.1 server that writes each body step as it
//! comes, so it can pause between frames, stall with the connection open, abort the transport
//! in the middle of a body, and reset a connection with a real TCP RST.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, Limited, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::{JoinHandle, JoinSet};

use crate::config::Backend;
use crate::dispatch::{IncomingRequest, ProviderState};
use crate::plan::{BodyStep, PlanAction, PlannedResponse};

/// Largest request body accepted.
const MAX_REQUEST_BODY: usize = 16 * 1024 * 1024;

/// Times the body reports "pending" before an abort so that hyper flushes what it buffered.
const FLUSH_YIELDS: usize = 3;

type ResponseBody = UnsyncBoxBody<Bytes, io::Error>;

/// A running streaming backend. Stops when [`StreamingServer::stop`] is awaited or on drop.
pub(crate) struct StreamingServer {
    address: SocketAddr,
    shutdown: watch::Sender<bool>,
    task: Option<JoinHandle<()>>,
}

impl StreamingServer {
    /// Starts serving on `listener`.
    pub fn start(listener: std::net::TcpListener, state: Arc<ProviderState>) -> io::Result<Self> {
        listener.set_nonblocking(true)?;
        let listener = TcpListener::from_std(listener)?;
        let address = listener.local_addr()?;
        let (shutdown, shutdown_seen) = watch::channel(false);
        let task = tokio::spawn(accept_loop(listener, state, shutdown_seen));
        Ok(StreamingServer {
            address,
            shutdown,
            task: Some(task),
        })
    }

    /// The bound address.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Stops accepting, ends every open connection (stalled ones included) and waits for it.
    pub async fn stop(mut self) {
        self.shutdown.send_replace(true);
        if let Some(task) = self.task.take() {
            // A panicking connection task is already reported by tokio; nothing to add here.
            let _ = task.await;
        }
    }
}

impl Drop for StreamingServer {
    fn drop(&mut self) {
        self.shutdown.send_replace(true);
    }
}

async fn accept_loop(
    listener: TcpListener,
    state: Arc<ProviderState>,
    mut shutdown: watch::Receiver<bool>,
) {
    let mut connections = JoinSet::new();
    let connection_shutdown = shutdown.clone();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    connections.spawn(serve_connection(
                        stream,
                        state.clone(),
                        connection_shutdown.clone(),
                    ));
                }
                Err(error) => {
                    tracing::warn!(%error, "streaming backend failed to accept a connection");
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            },
            _ = stopped(&mut shutdown) => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    connections.shutdown().await;
}

async fn serve_connection(
    stream: TcpStream,
    state: Arc<ProviderState>,
    mut shutdown: watch::Receiver<bool>,
) {
    let _ = stream.set_nodelay(true);
    let reset = Arc::new(AtomicBool::new(false));
    let io = TokioIo::new(ResettableStream {
        stream,
        reset: reset.clone(),
    });
    let service_shutdown = shutdown.clone();
    let service = service_fn(move |request| {
        answer(
            request,
            state.clone(),
            reset.clone(),
            service_shutdown.clone(),
        )
    });
    let connection = http1::Builder::new().serve_connection(io, service);
    tokio::pin!(connection);
    tokio::select! {
        _ = connection.as_mut() => {}
        _ = stopped(&mut shutdown) => {}
    }
}

async fn answer(
    request: Request<Incoming>,
    state: Arc<ProviderState>,
    reset: Arc<AtomicBool>,
    mut shutdown: watch::Receiver<bool>,
) -> Result<Response<ResponseBody>, io::Error> {
    let (parts, body) = request.into_parts();
    let body = match Limited::new(body, MAX_REQUEST_BODY).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(_) => return Ok(plain_response(413, "request body too large or unreadable")),
    };
    let incoming = IncomingRequest {
        method: parts.method.as_str().to_owned(),
        path: parts.uri.path().to_owned(),
        query: parts.uri.query().map(str::to_owned),
        headers: parts
            .headers
            .iter()
            .map(|(name, value)| {
                (
                    name.as_str().to_ascii_lowercase(),
                    String::from_utf8_lossy(value.as_bytes()).into_owned(),
                )
            })
            .collect(),
        body,
    };
    let plan = state.handle(&incoming, Backend::Streaming);
    if !plan.delay_before_headers.is_zero() {
        tokio::select! {
            _ = tokio::time::sleep(plan.delay_before_headers) => {}
            _ = stopped(&mut shutdown) => {
                return Err(io::Error::other("mock provider stopped"));
            }
        }
    }
    match plan.action {
        PlanAction::ResetConnection => {
            reset.store(true, Ordering::SeqCst);
            Err(io::Error::from(io::ErrorKind::ConnectionReset))
        }
        PlanAction::Respond(response) => Ok(streamed_response(response, shutdown)),
    }
}

fn plain_response(status: u16, message: &'static str) -> Response<ResponseBody> {
    let mut response = Response::new(
        Full::new(Bytes::from_static(message.as_bytes()))
            .map_err(|never| match never {})
            .boxed_unsync(),
    );
    *response.status_mut() =
        hyper::StatusCode::from_u16(status).unwrap_or(hyper::StatusCode::INTERNAL_SERVER_ERROR);
    response
}

fn streamed_response(
    planned: PlannedResponse,
    shutdown: watch::Receiver<bool>,
) -> Response<ResponseBody> {
    let steps = planned.body.into_iter();
    let frames = futures::stream::unfold(
        (steps, shutdown, false),
        |(mut steps, mut shutdown, failed)| async move {
            if failed {
                return None;
            }
            loop {
                let failure = match steps.next()? {
                    BodyStep::Bytes(bytes) => {
                        return Some((Ok(Frame::data(bytes)), (steps, shutdown, false)));
                    }
                    BodyStep::Pause(duration) => {
                        tokio::select! {
                            _ = tokio::time::sleep(duration) => continue,
                            _ = stopped(&mut shutdown) => "mock provider stopped",
                        }
                    }
                    BodyStep::StallUntilClosed => {
                        stopped(&mut shutdown).await;
                        "mock provider stopped during a stall"
                    }
                    BodyStep::Abort => "scripted cut in the middle of the body",
                };
                // hyper writes what it has buffered only when the body is pending; without
                // this, an error right after a frame would drop that frame (and the headers).
                for _ in 0..FLUSH_YIELDS {
                    tokio::task::yield_now().await;
                }
                return Some((Err(io::Error::other(failure)), (steps, shutdown, true)));
            }
        },
    );
    let mut builder = Response::builder().status(planned.status);
    for (name, value) in &planned.headers {
        builder = builder.header(name.as_str(), value.as_str());
    }
    builder
        .body(StreamBody::new(frames).boxed_unsync())
        .unwrap_or_else(|_| plain_response(500, "mock-provider: invalid planned response"))
}

/// Resolves once the server is stopping (or the stop signal is gone).
async fn stopped(shutdown: &mut watch::Receiver<bool>) {
    let _ = shutdown.wait_for(|stopped| *stopped).await;
}

/// A TCP stream that closes with an RST (zero linger) when asked to reset.
struct ResettableStream {
    stream: TcpStream,
    reset: Arc<AtomicBool>,
}

impl Drop for ResettableStream {
    fn drop(&mut self) {
        if self.reset.load(Ordering::SeqCst) {
            let _ = self.stream.set_zero_linger();
        }
    }
}

impl AsyncRead for ResettableStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for ResettableStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}
