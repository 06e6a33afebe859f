//! A run stays bounded whatever a host does after discovery: a raw-TCP host serves the built-in
//! runtime's real discovery documents, then answers every other request with 100 MB SSE
//! frames, with an endless stream, or not at all. The `conformance` binary's peak memory
//! (VmHWM of the child, read from /proc while it runs) and its `report.json` stay within the
//! bounds, and the silent host ends the run early with exit 3 and a report naming the cause.
//! `--time-scale 0.2` keeps each run short (the bounds do not depend on it).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use conformance_cli::launch::{BuiltInOptions, start_built_in};

/// Peak memory a run may take, in bytes.
const PEAK_RSS_BOUND: u64 = 512 * 1024 * 1024;
/// The largest `report.json` a run may write, in bytes.
const REPORT_BOUND: u64 = 64 * 1024 * 1024;

#[derive(Clone, Copy, Debug)]
enum Behaviour {
    HugeFrames,
    Endless,
    Silent,
}

/// The built-in runtime's discovery documents, by path, as it serves them.
fn discovery_documents() -> Vec<(String, Vec<u8>)> {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let running = start_built_in(&BuiltInOptions::default()).await.unwrap();
        let client = reqwest::Client::new();
        let mut documents = Vec::new();
        for path in ["/v1/runtime", "/v1/providers", "/.well-known/openwop"] {
            let body = client
                .get(format!("{}{path}", running.base_url()))
                .send()
                .await
                .unwrap()
                .bytes()
                .await
                .unwrap();
            documents.push((path.to_string(), body.to_vec()));
        }
        running.shutdown().await;
        documents
    })
}

/// Reads a request head; its path (`None` when the peer closed first).
fn request_path(socket: &mut TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut buffer = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match socket.read(&mut buffer) {
            Ok(0) | Err(_) => return None,
            Ok(n) => head.extend_from_slice(&buffer[..n]),
        }
        if head.len() > 64 * 1024 {
            return None;
        }
    }
    let text = String::from_utf8_lossy(&head).to_string();
    Some(text.split_whitespace().nth(1).unwrap_or("/").to_string())
}

fn chunk(bytes: &[u8]) -> Vec<u8> {
    let mut out = format!("{:x}\r\n", bytes.len()).into_bytes();
    out.extend_from_slice(bytes);
    out.extend_from_slice(b"\r\n");
    out
}

fn serve(mut socket: TcpStream, documents: &[(String, Vec<u8>)], behaviour: Behaviour) {
    let Some(path) = request_path(&mut socket) else {
        return;
    };
    let path = path.split('?').next().unwrap_or_default().to_string();
    if let Some((_, body)) = documents.iter().find(|(p, _)| *p == path) {
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
            body.len()
        );
        let _ = socket.write_all(head.as_bytes());
        let _ = socket.write_all(body);
        return;
    }
    let sse_head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n";
    match behaviour {
        Behaviour::HugeFrames => {
            // One 100 MB frame after another.
            let _ = socket.write_all(sse_head);
            let block = chunk(&vec![b'a'; 1024 * 1024]);
            loop {
                if socket.write_all(&chunk(b"data: ")).is_err() {
                    return;
                }
                for _ in 0..100 {
                    if socket.write_all(&block).is_err() {
                        return;
                    }
                }
                if socket.write_all(&chunk(b"\n\n")).is_err() {
                    return;
                }
            }
        }
        Behaviour::Endless => {
            let _ = socket.write_all(sse_head);
            let mut sequence: u64 = 1;
            loop {
                let frame = format!(
                    "id: {sequence}\ndata: {{\"sequence\":{sequence},\"type\":\"execution.accepted\",\"execution_id\":\"e\"}}\n\n"
                );
                if socket.write_all(&chunk(frame.as_bytes())).is_err() {
                    return;
                }
                sequence += 1;
            }
        }
        Behaviour::Silent => {
            // Accept, read, never answer: hold the connection until the harness drops it.
            let mut sink = [0u8; 4096];
            while matches!(socket.read(&mut sink), Ok(n) if n > 0) {}
        }
    }
}

fn hostile_host(behaviour: Behaviour) -> String {
    let documents = discovery_documents();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let documents = std::sync::Arc::new(documents);
        for socket in listener.incoming() {
            let Ok(socket) = socket else { continue };
            let documents = documents.clone();
            std::thread::spawn(move || serve(socket, &documents, behaviour));
        }
    });
    format!("http://{address}")
}

/// The child's peak resident memory so far (VmHWM), in bytes.
fn peak_rss(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

struct Outcome {
    code: Option<i32>,
    peak_rss: u64,
    wall: Duration,
    report_bytes: u64,
    report: serde_json::Value,
    stderr: String,
}

fn run_against(behaviour: Behaviour, dir: &Path) -> Outcome {
    let host = hostile_host(behaviour);
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_conformance"))
        .args(["run", "--target", &host, "--quiet", "--time-scale", "0.2"])
        .arg("--report-dir")
        .arg(dir)
        .env_remove("CONFORMANCE_AUTH_A")
        .env_remove("CONFORMANCE_AUTH_B")
        .env_remove("CONFORMANCE_TARGET")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let mut peak = 0;
    let status = loop {
        if let Some(rss) = peak_rss(pid) {
            peak = peak.max(rss);
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        // A liveness guard far above the default deadline (180 s × 0.2): the run must end.
        if started.elapsed() > Duration::from_secs(300) {
            let _ = child.kill();
            panic!("the run against the {behaviour:?} host did not end");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let wall = started.elapsed();
    let stderr = reader.join().unwrap();
    let path = dir.join("report.json");
    let report_bytes = std::fs::metadata(&path)
        .unwrap_or_else(|e| panic!("no report.json ({e}); stderr: {stderr}"))
        .len();
    let report = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    for other in ["junit.xml", "report.html"] {
        assert!(dir.join(other).exists(), "no {other}; stderr: {stderr}");
    }
    eprintln!(
        "{behaviour:?}: exit {:?}, {:.1} s, peak RSS {} MiB, report.json {:.1} MiB",
        status.code(),
        wall.as_secs_f64(),
        peak / (1024 * 1024),
        report_bytes as f64 / (1024.0 * 1024.0)
    );
    Outcome {
        code: status.code(),
        peak_rss: peak,
        wall,
        report_bytes,
        report,
        stderr,
    }
}

fn assert_bounded(outcome: &Outcome) {
    assert!(
        outcome.peak_rss <= PEAK_RSS_BOUND,
        "peak RSS {} MiB; stderr: {}",
        outcome.peak_rss / (1024 * 1024),
        outcome.stderr
    );
    assert!(
        outcome.report_bytes <= REPORT_BOUND,
        "report.json {} bytes",
        outcome.report_bytes
    );
    // What the host sent past discovery was cut, and the report says so.
    let text = outcome.report["cases"].to_string();
    assert!(
        text.contains("\"excerpt\""),
        "no response was cut to an excerpt"
    );
}

#[test]
fn a_host_sending_100_mb_frames_leaves_memory_and_report_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let outcome = run_against(Behaviour::HugeFrames, dir.path());
    assert_bounded(&outcome);
    // Without fake providers or credentials most cases are BLOCKED (exit 4); a FAIL or an
    // ERROR would be 1 or 3. Never a conforming run.
    assert!(
        matches!(outcome.code, Some(1 | 3 | 4)),
        "{}",
        outcome.stderr
    );
}

#[test]
fn a_host_sending_an_endless_stream_leaves_memory_and_report_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let outcome = run_against(Behaviour::Endless, dir.path());
    assert_bounded(&outcome);
    // Without fake providers or credentials most cases are BLOCKED (exit 4); a FAIL or an
    // ERROR would be 1 or 3. Never a conforming run.
    assert!(
        matches!(outcome.code, Some(1 | 3 | 4)),
        "{}",
        outcome.stderr
    );
}

#[test]
fn a_host_that_stops_answering_ends_the_run_early_with_a_report_naming_why() {
    let dir = tempfile::tempdir().unwrap();
    let outcome = run_against(Behaviour::Silent, dir.path());
    assert_eq!(outcome.code, Some(3), "{}", outcome.stderr);
    // Well within the default deadline (180 s × 0.2 = 36 s): the early stop, not the deadline.
    assert!(outcome.wall < Duration::from_secs(36), "{:?}", outcome.wall);
    let errors = outcome.report["run_errors"].to_string();
    assert!(errors.contains("the host stopped answering"), "{errors}");
    assert!(errors.contains("no response headers"), "{errors}");
    let cases = outcome.report["cases"].as_array().unwrap();
    // Never a FAIL without a response to judge.
    assert!(
        cases.iter().all(|c| c["verdict"] != "FAIL"),
        "{}",
        outcome.report["cases"]
    );
    assert!(
        cases.iter().any(|c| c["reason"]
            .as_str()
            .is_some_and(|r| r.contains("not run: the host stopped answering"))),
        "the cases left were not stopped"
    );
}
