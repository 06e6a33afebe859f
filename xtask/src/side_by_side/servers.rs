//! The servers measured side by side: the bare SSE server of `../shared/bench/sse-anchor`, the
//! same bare server writing the runtime's frame of each surface (`framed-anchor`), and the
//! reference runtime on one live execution (surface X) and one live run (surface W), each
//! started fresh for one run, and the `sse-load` client run against it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::{Context, bail};
use serde_json::Value;

/// Which server a run measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The bare tokio-broadcast + axum SSE server.
    Anchor,
    /// The same bare server, writing frames of the size and shape of surface X's.
    FramedX,
    /// The reference runtime, one live execution.
    RuntimeX,
    /// The same bare server, writing frames of the size and shape of surface W's.
    FramedW,
    /// The reference runtime, one live run.
    RuntimeW,
}

impl Side {
    /// Every side, in the order they run.
    pub const ALL: [Side; 5] = [
        Side::Anchor,
        Side::FramedX,
        Side::RuntimeX,
        Side::FramedW,
        Side::RuntimeW,
    ];

    /// The label the table prints.
    pub fn label(self) -> &'static str {
        match self {
            Side::Anchor => "anchor (bare SSE)",
            Side::FramedX => "bare SSE, X's frame",
            Side::FramedW => "bare SSE, W's frame",
            Side::RuntimeX => "runtime, surface X",
            Side::RuntimeW => "runtime, surface W",
        }
    }

    /// Order anomalies `sse-load` reports for a complete, gap-free stream: it expects the first
    /// sequence to be 0, and an execution's log starts at 1, so each X subscriber shows exactly
    /// one (at its first frame).
    pub fn offset_anomalies(self, subscribers: u64) -> u64 {
        match self {
            Side::RuntimeX => subscribers,
            Side::Anchor | Side::FramedX | Side::FramedW | Side::RuntimeW => 0,
        }
    }

    /// Frames without `t_ns` in a complete stream: the runtime's backlog event, written before
    /// anyone subscribed, carries none (one per subscriber).
    pub fn untimed_frames(self, subscribers: u64) -> u64 {
        match self {
            Side::Anchor | Side::FramedX | Side::FramedW => 0,
            Side::RuntimeX | Side::RuntimeW => subscribers,
        }
    }
}

/// Where the binaries are.
#[derive(Debug, Clone)]
pub struct Binaries {
    /// `anchor-server`.
    pub anchor_server: PathBuf,
    /// `framed-anchor` (release, this workspace's xtask).
    pub framed_anchor: PathBuf,
    /// `sse-load`.
    pub sse_load: PathBuf,
    /// `reference-runtime` (release).
    pub runtime: PathBuf,
    /// The runtime's configuration file for the bench.
    pub runtime_config: PathBuf,
}

/// One load run's parameters.
#[derive(Debug, Clone, Copy)]
pub struct Load {
    /// Subscribers.
    pub subscribers: u64,
    /// Events each subscriber reads.
    pub events: u64,
    /// Publish rate (events/s); `None` is a burst.
    pub rate: Option<f64>,
}

/// A server started for one run; killed (by its own PID) when dropped.
struct Server {
    child: Child,
    base_url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn spawn_server(mut command: Command, log: &Path) -> anyhow::Result<Server> {
    let stderr = std::fs::File::create(log).with_context(|| format!("creating {log:?}"))?;
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(stderr)
        .stdin(Stdio::null())
        .spawn()
        .context("starting a server")?;
    let stdout = child.stdout.take().context("server stdout")?;
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .context("reading the server's first line")?;
    let Some(base_url) = line.trim().strip_prefix("listening on ") else {
        let _ = child.kill();
        let _ = child.wait();
        bail!("the server did not say where it listens: {line:?} (see {log:?})");
    };
    Ok(Server {
        base_url: base_url.to_string(),
        child,
    })
}

/// `POST base+path` with an empty body; the status and body.
fn post(base_url: &str, path: &str) -> anyhow::Result<(u16, String)> {
    let addr = base_url
        .strip_prefix("http://")
        .context("an http:// base URL")?;
    let mut stream = TcpStream::connect(addr).with_context(|| format!("connecting to {addr}"))?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    write!(
        stream,
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )?;
    let mut response = String::new();
    stream.read_to_string(&mut response)?;
    let (head, body) = response
        .split_once("\r\n\r\n")
        .context("an HTTP response")?;
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .context("a status line")?;
    Ok((status, body.to_string()))
}

/// The stream and start paths of a fresh bench log on `surface` (`x` or `w`).
fn bench_log(base_url: &str, surface: &str) -> anyhow::Result<(String, String)> {
    let (status, body) = post(base_url, &format!("/bench/logs?surface={surface}"))?;
    if status != 201 {
        bail!("POST /bench/logs answered {status}: {body}");
    }
    let created: Value = serde_json::from_str(&body).context("the bench log's JSON")?;
    let path = |key: &str| {
        created[key]
            .as_str()
            .map(str::to_string)
            .with_context(|| format!("`{key}` in {body}"))
    };
    Ok((path("stream_path")?, path("start_path")?))
}

/// Starts `side`'s server, runs `sse-load` against it once, and returns its JSON line.
pub fn run_once(side: Side, load: Load, bins: &Binaries, log_dir: &Path) -> anyhow::Result<Value> {
    let log = log_dir.join(format!("server-{side:?}.log"));
    let (server, paths) = match side {
        Side::Anchor => {
            let mut command = Command::new(&bins.anchor_server);
            command.args(["--listen", "127.0.0.1:0"]);
            (spawn_server(command, &log)?, None)
        }
        Side::FramedX | Side::FramedW => {
            let frame = if side == Side::FramedX { "x" } else { "w" };
            let mut command = Command::new(&bins.framed_anchor);
            command.args(["--listen", "127.0.0.1:0", "--frame", frame]);
            (spawn_server(command, &log)?, None)
        }
        Side::RuntimeX | Side::RuntimeW => {
            let mut command = Command::new(&bins.runtime);
            command
                .args(["--listen", "127.0.0.1:0", "--bench-publisher", "--config"])
                .arg(&bins.runtime_config)
                .env("RUST_LOG", "warn");
            let server = spawn_server(command, &log)?;
            let surface = if side == Side::RuntimeX { "x" } else { "w" };
            let paths = bench_log(&server.base_url, surface)?;
            (server, Some(paths))
        }
    };
    let mut client = Command::new(&bins.sse_load);
    client
        .arg("--url")
        .arg(&server.base_url)
        .args(["--subscribers", &load.subscribers.to_string()])
        .args(["--events", &load.events.to_string()])
        .args(["--server-pid", &server.child.id().to_string()])
        .args(["--timeout-s", "180"]);
    if let Some((stream_path, start_path)) = &paths {
        client
            .args(["--stream-path", stream_path])
            .args(["--start-path", start_path]);
    }
    if let Some(rate) = load.rate {
        client.args(["--rate", &rate.to_string()]);
    }
    let output = client
        .stderr(Stdio::inherit())
        .output()
        .context("running sse-load")?;
    drop(server);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.starts_with('{'))
        .with_context(|| format!("sse-load printed no JSON line ({})", output.status))?;
    serde_json::from_str(line).with_context(|| format!("sse-load's line: {line}"))
}
