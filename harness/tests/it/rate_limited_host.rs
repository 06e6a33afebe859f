//! A host limiting its request rate (upstream's v2 reference host: a per-credential token
//! bucket, `429 rate_limited` with `Retry-After`): the harness's polls wait out a 429 as its
//! `Retry-After` asks instead of polling through it, which would keep the bucket empty and end
//! every wait of the run unjudged (ERROR).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use harness::case::lint_case;
use harness::run::Limits;
use harness::verdict::Verdict;
use serde_json::json;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Mutex;

use super::raw_host::{judge_on, request_path};

/// A host whose bucket refills only after 900 ms without a request: every request sooner
/// after the last refused one is refused again with `Retry-After: 1`.
async fn rate_limited_host(requests: Arc<AtomicUsize>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let last_refusal: Arc<Mutex<Option<Instant>>> = Arc::new(Mutex::new(None));
    // The first request empties the bucket.
    let first = Arc::new(Mutex::new(true));
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            requests.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(serve(socket, Arc::clone(&last_refusal), Arc::clone(&first)));
        }
    });
    format!("http://{address}")
}

async fn serve(
    mut socket: TcpStream,
    last_refusal: Arc<Mutex<Option<Instant>>>,
    first: Arc<Mutex<bool>>,
) {
    if request_path(&mut socket).await.is_none() {
        return;
    }
    let refuse = {
        let mut first = first.lock().await;
        let mut last = last_refusal.lock().await;
        let refuse = std::mem::take(&mut *first)
            || last.is_some_and(|at| at.elapsed() < Duration::from_millis(900));
        if refuse {
            *last = Some(Instant::now());
        }
        refuse
    };
    let (status, extra, body) = if refuse {
        (
            "429 Too Many Requests",
            "retry-after: 1\r\n",
            json!({"error": "rate_limited", "message": "too many requests"}),
        )
    } else {
        ("200 OK", "", json!({"runId": "r1", "status": "completed"}))
    };
    let body = body.to_string();
    let response = format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\n{extra}content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = socket.write_all(response.as_bytes()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_poll_waits_out_a_429_as_retry_after_asks() {
    let case = json!({
        "id": "w.rate-limited.probe", "title": "rate limited", "requirements": ["events.poll.last-sequence-highest"],
        "level": "MUST", "surface": "openwop", "timeout_ms": 4000, "steps": [
            {"wait_terminal": {"id": "r1"}, "expect": [{"json": {"pointer": "/status", "equals": "completed"}}]}
        ]
    });
    let case = lint_case("rate-limited.json", case.to_string().as_bytes())
        .unwrap()
        .case;
    let requests = Arc::new(AtomicUsize::new(0));
    let host = rate_limited_host(Arc::clone(&requests)).await;
    let (verdict, execution) = judge_on(&case, host, Limits::default()).await;
    assert_eq!(verdict, Verdict::Pass, "{execution:#?}");
    // One refused, then, a Retry-After later, the answer: polling every 25 ms through the 429
    // would have sent dozens and never been answered.
    assert_eq!(requests.load(Ordering::SeqCst), 2);
}
