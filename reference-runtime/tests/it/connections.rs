//! The connection limits (`[server] header_read_timeout_ms`, `body_read_timeout_ms`,
//! `max_connections`; `reference_runtime::server`) over real sockets, with short figures.
//!
//! Nothing here depends on the machine being fast: every "closed by" bound is the configured
//! timeout plus a generous margin, and every "not before" is a guarantee of the server's logic
//! (it cannot close a connection, or take a permit, before its clock or a close allows).

use std::io::ErrorKind;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use reference_runtime::config::Config;
use reference_runtime::runtime::{RunningRuntime, RuntimeOptions, start};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The margin over a configured timeout within which a close must be seen.
const MARGIN: Duration = Duration::from_secs(15);

async fn runtime(header_ms: u64, body_ms: u64, max_connections: usize) -> RunningRuntime {
    let mut config = Config::default();
    config.server.header_read_timeout_ms = header_ms;
    config.server.body_read_timeout_ms = body_ms;
    config.server.max_connections = max_connections;
    config.server.keep_alive_ms = 100;
    config.openwop.keep_alive_secs = 1;
    start("127.0.0.1:0".parse().unwrap(), RuntimeOptions::new(config))
        .await
        .unwrap()
}

/// Whether the server has closed `stream` (EOF or reset) without waiting: `None` while open.
fn closed_now(stream: &TcpStream) -> Option<Vec<u8>> {
    let mut buffer = [0u8; 8192];
    match stream.try_read(&mut buffer) {
        Ok(0) => Some(Vec::new()),
        Ok(n) => Some(buffer[..n].to_vec()),
        Err(error) if error.kind() == ErrorKind::WouldBlock => None,
        Err(_) => Some(Vec::new()),
    }
}

/// Reads until the server closes `stream` (EOF or reset), within `within`; what it sent.
async fn read_until_closed(stream: &mut TcpStream, within: Duration) -> Vec<u8> {
    let mut answer = Vec::new();
    let read = async {
        let mut buffer = [0u8; 8192];
        loop {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(n) => answer.extend_from_slice(&buffer[..n]),
            }
        }
    };
    tokio::time::timeout(within, read)
        .await
        .unwrap_or_else(|_| panic!("the server did not close the connection within {within:?}"));
    answer
}

/// A normal client's request on its own connection: the status.
async fn served(addr: SocketAddr) -> u16 {
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    client
        .get(format!("http://{addr}/v1/runtime"))
        .timeout(Duration::from_secs(30))
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

/// The slowloris shape: idle connections, half-sent heads and heads trickled a byte at a time
/// are all closed within the header timeout, while a normal client is served meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_open_connections_are_closed_within_the_header_timeout() {
    const N: usize = 48;
    let header = Duration::from_millis(2_000);
    let running = runtime(2_000, 60_000, 1_024).await;
    let addr = running.local_addr();
    let opened = Instant::now();
    let mut held = Vec::new();
    for i in 0..N {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        match i % 3 {
            0 => {}
            1 => stream
                .write_all(b"GET /v1/runtime HTTP/1.1\r\nHost: x\r\nX-Half: ")
                .await
                .unwrap(),
            _ => stream.write_all(b"G").await.unwrap(),
        }
        held.push(stream);
    }
    // A normal client is served while every one of them is held open.
    assert_eq!(served(addr).await, 200);
    let served_at = opened.elapsed();
    if served_at < header {
        for stream in &held {
            assert!(
                closed_now(stream).is_none(),
                "a connection was closed before its header timeout"
            );
        }
    }
    // The trickling ones keep sending a byte every 200 ms past the timeout: that does not
    // restart the clock.
    while opened.elapsed() < header + Duration::from_millis(1_000) {
        tokio::time::sleep(Duration::from_millis(200)).await;
        for (i, stream) in held.iter_mut().enumerate() {
            if i % 3 == 2 {
                let _ = stream.write_all(b"E").await;
            }
        }
    }
    for (i, stream) in held.iter_mut().enumerate() {
        let answer = read_until_closed(stream, MARGIN).await;
        // Closed without an answer (hyper answers nothing to a head that never completed).
        assert!(answer.is_empty(), "connection {i}: {answer:?}");
    }
    let elapsed = opened.elapsed();
    assert!(
        elapsed < header + MARGIN,
        "{N} half-open connections took {elapsed:?} to close"
    );
    // And the server still serves.
    assert_eq!(served(addr).await, 200);
    running.shutdown().await;
}

/// A kept-alive connection that sends no next request is closed by the same clock.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_kept_alive_connection_is_closed() {
    let running = runtime(1_000, 60_000, 1_024).await;
    let mut stream = TcpStream::connect(running.local_addr()).await.unwrap();
    stream
        .write_all(b"GET /v1/runtime HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let answer = read_until_closed(&mut stream, Duration::from_secs(1) + MARGIN).await;
    let text = String::from_utf8_lossy(&answer);
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    running.shutdown().await;
}

/// A body that stalls, or trickles, is refused with the surface's envelope once the body
/// timeout passes, and the connection closed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_half_sent_body_is_refused_with_the_envelope_and_closed() {
    let running = runtime(60_000, 1_000, 1_024).await;
    let addr = running.local_addr();
    for (path, surface) in [("/v1/executions", "X"), ("/runs", "W")] {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer hk_test_openwop_tenant_a\r\n\
             Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{\"a\": "
        );
        stream.write_all(head.as_bytes()).await.unwrap();
        let started = Instant::now();
        let answer = read_until_closed(&mut stream, Duration::from_secs(1) + MARGIN).await;
        assert!(started.elapsed() >= Duration::from_secs(1));
        let text = String::from_utf8_lossy(&answer);
        assert!(text.starts_with("HTTP/1.1 400"), "{surface}: {text}");
        let body = text.split("\r\n\r\n").nth(1).unwrap_or_default();
        let envelope: Value = serde_json::from_str(body).unwrap();
        let published = if surface == "W" {
            spec::schema::Published::OpenWopError
        } else {
            spec::schema::Published::ExecutionError
        };
        assert!(
            spec::schema::validate(published, &envelope).is_ok(),
            "{surface}: {envelope}"
        );
        if surface == "X" {
            assert_eq!(
                envelope["error"]["message"], "Request body was not received in time",
                "{envelope}"
            );
        }
    }
    running.shutdown().await;
}

/// Past `max_connections`, a new connection waits until one closes (here: an idle one timed
/// out), then is served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_past_the_bound_wait_for_a_free_one() {
    const MAX: usize = 8;
    let running = runtime(1_500, 60_000, MAX).await;
    let addr = running.local_addr();
    let opened = Instant::now();
    let mut held = Vec::new();
    for _ in 0..MAX {
        held.push(TcpStream::connect(addr).await.unwrap());
    }
    // The kernel completes the handshake (the backlog), but the server reads nothing of this
    // one until a permit frees: the idle ones hold all of them for their header timeout.
    assert_eq!(served(addr).await, 200);
    let waited = opened.elapsed();
    assert!(
        waited >= Duration::from_millis(1_500),
        "served after {waited:?}, while {MAX} connections held every permit"
    );
    for stream in &mut held {
        read_until_closed(stream, MARGIN).await;
    }
    running.shutdown().await;
}

/// An event stream is not a slow request: it stays open past every timeout while it sends its
/// keep-alive comments.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_stream_outlives_the_timeouts_while_it_sends_keep_alives() {
    let running = runtime(500, 500, 1_024).await;
    let mut stream = TcpStream::connect(running.local_addr()).await.unwrap();
    stream
        .write_all(
            b"GET /host/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer hk_test_openwop_tenant_a\r\n\r\n",
        )
        .await
        .unwrap();
    let mut seen = Vec::new();
    // Six times both timeouts, with a keep-alive comment every second.
    let until = Instant::now() + Duration::from_millis(3_200);
    let mut buffer = [0u8; 4096];
    while Instant::now() < until {
        match tokio::time::timeout(Duration::from_millis(100), stream.read(&mut buffer)).await {
            Ok(Ok(0)) | Ok(Err(_)) => {
                panic!("the stream was closed: {}", String::from_utf8_lossy(&seen))
            }
            Ok(Ok(n)) => seen.extend_from_slice(&buffer[..n]),
            Err(_) => {}
        }
    }
    let text = String::from_utf8_lossy(&seen);
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    assert!(text.contains("text/event-stream"), "{text}");
    assert!(
        text.matches("\n:").count() >= 2,
        "keep-alive comments: {text}"
    );
    running.shutdown().await;
}
