//! `framed-anchor`: the bare SSE server of `../shared/bench/sse-anchor` (`anchor-server`), with
//! one change: each frame has the shape and size of the reference runtime's frame on one
//! surface, not the anchor's 41-byte `{"sequence","t_ns"}`.
//!
//! The shared anchor answers how fast a bare tokio-broadcast + axum SSE server fans out *its*
//! frame. The runtime's frames are 4 to 6 times larger, and the client (`sse-load`) costs more
//! per byte: it copies each frame and scans it from the start for `"sequence"` and `"t_ns"`.
//! Against the shared anchor, the runtime's ratio therefore mixes two costs: what the runtime
//! adds over a bare fan-out, and what the protocol's larger envelope costs the client. This
//! server fixes the frame, so a ratio against it measures only the first.
//!
//! Everything else is the anchor's design, kept as it is: one `tokio::sync::broadcast` channel
//! (capacity 65,536) of a small `Copy` tick, axum's own `Sse` response without keep-alive,
//! `TCP_NODELAY`, the default tokio runtime, and each subscriber formats its own frame from the
//! tick. It also has the anchor's contract with `sse-load`:
//!
//! - `GET /stream?events=N`: an SSE stream of frames; it closes after sequence N − 1;
//! - `POST /start?events=N&subscribers=S[&rate=R]`: waits (≤ 30 s) until S subscribers are
//!   connected, publishes N events (as fast as the channel allows, or paced at R events/s),
//!   waits (≤ 300 s) for the streams to end and answers `{"published","lagged","publish_ms",
//!   "drained"}`.
//!
//! ```text
//! framed-anchor --frame x|w [--listen 127.0.0.1:0]
//! ```
//!
//! The frames (ids are minted once per server or per event, as the runtime mints them, with the
//! same lengths; the timestamp has the runtime's precision on that surface):
//!
//! - `x`: `event: output.delta`, `data: {"execution_id":"<uuid>","sequence":N,"time":"<RFC 3339,
//!   ms>","type":"output.delta","status":"running","delta":"token N ","output_index":0,"t_ns":T}`;
//! - `w`: `event: node.completed`, `data: {"eventId":"evt-<32 hex>","runId":"tenant-a/run-<32
//!   hex>","type":"node.completed","payload":{"nodeId":"tick","outputs":{"t_ns":T}},"timestamp":
//!   "<RFC 3339, ns>","sequence":N,"schemaVersion":1,"nodeId":"tick"}`.

use std::convert::Infallible;
use std::io::Write;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail};
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::sse::{Event, Sse};
use axum::routing::{get, post};
use axum::serve::ListenerExt;
use axum::{Json, Router};
use chrono::{DateTime, SecondsFormat, Utc};
use futures::Stream;
use futures::stream;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::{broadcast, watch};

const USAGE: &str = "usage: framed-anchor --frame x|w [--listen 127.0.0.1:0]";
/// The anchor's channel capacity.
const CAPACITY: usize = 65_536;
const CONNECT_WAIT: Duration = Duration::from_secs(30);
const DRAIN_WAIT: Duration = Duration::from_secs(300);
/// The longest timestamp a tick carries (RFC 3339 with nanoseconds is 30 bytes).
const TIME_BYTES: usize = 32;

/// Whose frame the server writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Frame {
    /// The runtime's execution event (`output.delta`).
    X,
    /// The runtime's run event (`node.completed`, updates mode).
    W,
}

/// What the publisher broadcasts: small and `Copy`, as the anchor's tick is; the timestamp is
/// formatted once per event, as a host records it once.
#[derive(Clone, Copy)]
struct Tick {
    seq: u64,
    t_ns: u64,
    time: [u8; TIME_BYTES],
    time_len: usize,
}

impl Tick {
    fn new(seq: u64, t_ns: u64, frame: Frame) -> Tick {
        let at = DateTime::<Utc>::from_timestamp_nanos(t_ns as i64);
        let text = match frame {
            Frame::X => at.to_rfc3339_opts(SecondsFormat::Millis, true),
            Frame::W => at.to_rfc3339_opts(SecondsFormat::Nanos, true),
        };
        let mut time = [0u8; TIME_BYTES];
        let time_len = text.len().min(TIME_BYTES);
        time[..time_len].copy_from_slice(&text.as_bytes()[..time_len]);
        Tick {
            seq,
            t_ns,
            time,
            time_len,
        }
    }

    fn time(&self) -> &str {
        std::str::from_utf8(&self.time[..self.time_len]).unwrap_or_default()
    }
}

#[derive(Clone)]
struct AppState {
    frame: Frame,
    /// The execution id (X) or run id (W) every frame names.
    log_id: Arc<str>,
    tx: broadcast::Sender<Tick>,
    connected: Arc<watch::Sender<usize>>,
    lagged: Arc<AtomicU64>,
}

impl AppState {
    /// A server writing `frame`s, with a fresh log id and channel, and no subscriber yet.
    fn new(frame: Frame) -> AppState {
        AppState {
            frame,
            log_id: log_id(frame).into(),
            tx: broadcast::channel(CAPACITY).0,
            connected: Arc::new(watch::Sender::new(0)),
            lagged: Arc::new(AtomicU64::new(0)),
        }
    }

    /// The SSE event of `tick`, formatted by the subscriber as the anchor's is.
    fn event(&self, tick: &Tick) -> Event {
        let (name, data) = self.frame_of(tick);
        Event::default()
            .id(tick.seq.to_string())
            .event(name)
            .data(data)
    }

    /// The `event:` name and `data:` JSON of `tick`'s frame.
    fn frame_of(&self, tick: &Tick) -> (&'static str, String) {
        match self.frame {
            Frame::X => (
                "output.delta",
                format!(
                    r#"{{"execution_id":"{}","sequence":{},"time":"{}","type":"output.delta","status":"running","delta":"token {} ","output_index":0,"t_ns":{}}}"#,
                    self.log_id,
                    tick.seq,
                    tick.time(),
                    tick.seq,
                    tick.t_ns
                ),
            ),
            Frame::W => (
                "node.completed",
                format!(
                    r#"{{"eventId":"evt-{:016x}{:016x}","runId":"{}","type":"node.completed","payload":{{"nodeId":"tick","outputs":{{"t_ns":{}}}}},"timestamp":"{}","sequence":{},"schemaVersion":1,"nodeId":"tick"}}"#,
                    tick.t_ns,
                    tick.seq,
                    self.log_id,
                    tick.t_ns,
                    tick.time(),
                    tick.seq
                ),
            ),
        }
    }
}

struct Subscription {
    rx: broadcast::Receiver<Tick>,
    last_seq: u64,
    lagged: bool,
    state: AppState,
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.state.connected.send_modify(|c| *c -= 1);
    }
}

fn unix_nanos() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

#[derive(Deserialize)]
struct StreamParams {
    events: u64,
}

async fn stream_handler(
    State(state): State<AppState>,
    Query(p): Query<StreamParams>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let rx = state.tx.subscribe();
    state.connected.send_modify(|c| *c += 1);
    let sub = Subscription {
        rx,
        last_seq: p.events.saturating_sub(1),
        lagged: false,
        state,
    };
    let init = (p.events > 0).then_some(sub);
    let events = stream::unfold(init, |sub| async move {
        let mut sub = sub?;
        loop {
            match sub.rx.recv().await {
                Ok(tick) => {
                    let event = sub.state.event(&tick);
                    let next = (tick.seq < sub.last_seq).then_some(sub);
                    return Some((Ok(event), next));
                }
                Err(RecvError::Lagged(_)) => {
                    if !sub.lagged {
                        sub.lagged = true;
                        sub.state.lagged.fetch_add(1, Ordering::Relaxed);
                    }
                }
                Err(RecvError::Closed) => return None,
            }
        }
    });
    Sse::new(events)
}

#[derive(Deserialize)]
struct StartParams {
    events: u64,
    subscribers: usize,
    rate: Option<f64>,
}

async fn start_handler(
    State(state): State<AppState>,
    Query(p): Query<StartParams>,
) -> (StatusCode, Json<Value>) {
    let mut connected = state.connected.subscribe();
    let all_in = matches!(
        tokio::time::timeout(CONNECT_WAIT, connected.wait_for(|&c| c >= p.subscribers)).await,
        Ok(Ok(_))
    );
    if !all_in {
        let now = *connected.borrow();
        return (
            StatusCode::GATEWAY_TIMEOUT,
            Json(json!({
                "error": "timed out waiting for subscribers",
                "wanted": p.subscribers,
                "connected": now,
            })),
        );
    }
    state.lagged.store(0, Ordering::Relaxed);
    let rate = p.rate.filter(|r| *r > 0.0);
    let t0 = Instant::now();
    for seq in 0..p.events {
        if let Some(rate) = rate {
            let due = t0 + Duration::from_secs_f64(seq as f64 / rate);
            tokio::time::sleep_until(due.into()).await;
        }
        // An error means no receiver is left; there is nothing to do then.
        let _ = state.tx.send(Tick::new(seq, unix_nanos(), state.frame));
    }
    let publish_ms = t0.elapsed().as_secs_f64() * 1e3;
    let drained = matches!(
        tokio::time::timeout(DRAIN_WAIT, connected.wait_for(|&c| c == 0)).await,
        Ok(Ok(_))
    );
    (
        StatusCode::OK,
        Json(json!({
            "published": p.events,
            "lagged": state.lagged.load(Ordering::Relaxed),
            "publish_ms": publish_ms,
            "drained": drained,
        })),
    )
}

/// The log id every frame names, minted once per server with the runtime's length: a UUID
/// (X) or `tenant-a/run-` and 32 hex digits (W).
fn log_id(frame: Frame) -> String {
    let seed = unix_nanos();
    match frame {
        Frame::X => {
            let hex = format!("{seed:016x}{:016x}", seed.rotate_left(17));
            format!(
                "{}-{}-{}-{}-{}",
                &hex[..8],
                &hex[8..12],
                &hex[12..16],
                &hex[16..20],
                &hex[20..]
            )
        }
        Frame::W => format!("tenant-a/run-{seed:016x}{:016x}", seed.rotate_left(17)),
    }
}

fn parse_args() -> anyhow::Result<(Frame, SocketAddr)> {
    let mut frame = None;
    let mut listen: SocketAddr = "127.0.0.1:0".parse()?;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args
            .next()
            .with_context(|| format!("{flag} needs a value\n{USAGE}"))?;
        match (flag.as_str(), value.as_str()) {
            ("--frame", "x") => frame = Some(Frame::X),
            ("--frame", "w") => frame = Some(Frame::W),
            ("--listen", addr) => {
                listen = addr
                    .parse()
                    .with_context(|| format!("bad --listen {addr}"))?
            }
            _ => bail!("unknown argument {flag} {value}\n{USAGE}"),
        }
    }
    let frame = frame.with_context(|| format!("--frame is required\n{USAGE}"))?;
    Ok((frame, listen))
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let (frame, listen) = parse_args()?;
    let state = AppState::new(frame);
    let app = Router::new()
        .route("/stream", get(stream_handler))
        .route("/start", post(start_handler))
        .with_state(state);
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .with_context(|| format!("binding {listen}"))?;
    let addr = listener.local_addr()?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "listening on http://{addr}")?;
    out.flush()?;
    drop(out);
    // TCP_NODELAY, as the anchor sets it.
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, app).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each frame is JSON with the runtime's members in the runtime's order, its ids and
    /// timestamp as long as the runtime's, and the tick's `sequence` and `t_ns`.
    #[test]
    fn frames_have_the_runtime_shape() {
        let t_ns = 1_796_152_104_751_987_586;
        let cases = [
            (
                Frame::X,
                "output.delta",
                &[
                    "execution_id",
                    "sequence",
                    "time",
                    "type",
                    "status",
                    "delta",
                    "output_index",
                    "t_ns",
                ][..],
                "2026-12-01T19:08:24.751Z",
            ),
            (
                Frame::W,
                "node.completed",
                &[
                    "eventId",
                    "runId",
                    "type",
                    "payload",
                    "timestamp",
                    "sequence",
                    "schemaVersion",
                    "nodeId",
                ][..],
                "2026-12-01T19:08:24.751987586Z",
            ),
        ];
        for (frame, name, members, time) in cases {
            let tick = Tick::new(7, t_ns, frame);
            let (event, data) = AppState::new(frame).frame_of(&tick);
            assert_eq!(event, name);
            let doc: Value = serde_json::from_str(&data).expect("JSON");
            let keys: Vec<&str> = doc
                .as_object()
                .expect("an object")
                .keys()
                .map(String::as_str)
                .collect();
            assert_eq!(keys, members);
            assert_eq!(doc["sequence"], 7);
            assert_eq!(tick.time(), time);
            let t = match frame {
                Frame::X => &doc["t_ns"],
                Frame::W => &doc["payload"]["outputs"]["t_ns"],
            };
            assert_eq!(t.as_u64(), Some(t_ns));
            if frame == Frame::W {
                assert_eq!(doc["eventId"].as_str().map(str::len), Some(36));
                let run = doc["runId"].as_str().expect("runId");
                assert_eq!(run.len(), "tenant-a/run-".len() + 32, "{run}");
            } else {
                assert_eq!(doc["execution_id"].as_str().map(str::len), Some(36));
            }
        }
    }
}
