//! Isolation: every case has connections of its own, so a host that leaves a connection in a
//! bad state (here: a request body it never read, which it then parses as the head of the next
//! request on that connection) harms only the case that met it, never a later one; and a
//! request without credentials, which hosts often refuse before reading its body, ends its
//! connection, so it does not spoil its own case's next request either.

use harness::case::lint_case;
use harness::run::Limits;
use harness::verdict::Verdict;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::raw_host::{judge_on, judge_with, runner_for};

/// What a keep-alive host does with a request head (lowercased): answer at once, leaving any
/// body unread in its buffer (where it begins the next "request" it parses on that
/// connection), or read the body first.
enum Reply {
    Now(&'static [u8]),
    AfterTheBody(&'static [u8]),
}

/// A keep-alive host parsing requests off each connection as a naive server does, answering
/// each as `reply` says; what it cannot parse as a request (a body it left unread) it answers
/// 501.
async fn keep_alive_host(reply: fn(&str) -> Reply) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut pending: Vec<u8> = Vec::new();
                let mut buffer = [0u8; 8192];
                loop {
                    let head_end = loop {
                        if let Some(at) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
                            break at + 4;
                        }
                        match socket.read(&mut buffer).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => pending.extend_from_slice(&buffer[..n]),
                        }
                    };
                    let head = String::from_utf8_lossy(&pending[..head_end]).to_lowercase();
                    pending.drain(..head_end);
                    let answer = if !head.starts_with("get ") && !head.starts_with("post ") {
                        b"HTTP/1.1 501 Not Implemented\r\ncontent-length: 0\r\n\r\n"
                    } else {
                        match reply(&head) {
                            Reply::Now(answer) => answer,
                            Reply::AfterTheBody(answer) => {
                                let length: usize = head
                                    .lines()
                                    .find_map(|l| l.strip_prefix("content-length:"))
                                    .and_then(|v| v.trim().parse().ok())
                                    .unwrap_or(0);
                                while pending.len() < length {
                                    match socket.read(&mut buffer).await {
                                        Ok(0) | Err(_) => return,
                                        Ok(n) => pending.extend_from_slice(&buffer[..n]),
                                    }
                                }
                                pending.drain(..length);
                                answer
                            }
                        }
                    };
                    if socket.write_all(answer).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    format!("http://{address}")
}

const OK: &[u8] =
    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 4\r\n\r\n\"ok\"";

/// Answers `POST /refuse` 404 without reading its body; reads every other request whole.
async fn undrained_body_host() -> String {
    keep_alive_host(|head| {
        if head.starts_with("post /refuse ") {
            Reply::Now(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
        } else {
            Reply::AfterTheBody(OK)
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_one_case_spoiled_is_never_another_cases() {
    let case = |id: &str, step: serde_json::Value| {
        let case = json!({
            "id": id, "title": id, "requirements": ["events.poll.cursor-past-end-empty"],
            "level": "MUST", "surface": "openwop", "timeout_ms": 3000, "steps": [step]
        });
        lint_case("isolation.json", case.to_string().as_bytes())
            .unwrap()
            .case
    };
    let spoiler = case(
        "w.isolation.spoiler",
        json!({"request": {"method": "POST", "path": "/refuse", "json": {"a": "b"}}, "expect": [{"status": 404}]}),
    );
    let victim = case(
        "w.isolation.victim",
        json!({"request": {"path": "/ok"}, "expect": [{"status": 200}]}),
    );
    // One runner for both cases, as a run shares one: each case still gets its own connections.
    let runner = runner_for(undrained_body_host().await, Limits::default());
    for (case, want) in [(&spoiler, Verdict::Pass), (&victim, Verdict::Pass)] {
        let (verdict, execution) = judge_with(&runner, case).await;
        assert_eq!(verdict, want, "{}: {execution:#?}", case.id);
    }
}

/// Refuses a request without `Authorization` with 401 before reading its body; reads one with
/// credentials whole.
async fn refuses_before_the_body_host() -> String {
    keep_alive_host(|head| {
        if head.contains("\r\nauthorization:") {
            Reply::AfterTheBody(OK)
        } else {
            Reply::Now(b"HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\n\r\n")
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_before_the_body_is_read_does_not_spoil_the_cases_next_request() {
    let case = json!({
        "id": "w.isolation.unauthenticated", "title": "unauthenticated",
        "requirements": ["events.poll.cursor-past-end-empty"],
        "level": "MUST", "surface": "openwop", "timeout_ms": 3000, "steps": [
            {"request": {"method": "POST", "path": "/seed", "auth": "none", "json": {"a": "b"}}, "expect": [{"status": 401}]},
            {"request": {"method": "POST", "path": "/seed", "auth": "invalid", "json": {"a": "b"}}, "expect": [{"status": 200}]},
            {"request": {"path": "/ok", "auth": "invalid"}, "expect": [{"status": 200}]}
        ]
    });
    let case = lint_case("isolation.json", case.to_string().as_bytes())
        .unwrap()
        .case;
    let (verdict, execution) = judge_on(
        &case,
        refuses_before_the_body_host().await,
        Limits::default(),
    )
    .await;
    assert_eq!(verdict, Verdict::Pass, "{execution:#?}");
}
