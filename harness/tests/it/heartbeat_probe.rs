//! The probe learns the interval of a host's heartbeats from its host channel when the operator
//! gave none: it reads until one heartbeat has ticked twice, so a heartbeat ticking more slowly
//! than two advertised minimum intervals (upstream allows any interval above the minimum) is
//! still measured, and the verdict never depends on when in its period the first tick came.

use std::time::Duration;

use harness::run::{ClientOptions, HttpDriver, Limits};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;

use super::raw_host::{external_target, json_response, request_path};

/// A host advertising a heartbeat (minimum interval 1 s) whose channel sends the ticks of
/// heartbeat `slow` `gap` apart and holds the stream open (or, with no gap, closes at once
/// without a tick).
async fn heartbeat_host(gap: Option<Duration>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let Some(path) = request_path(&mut socket).await else {
                    return;
                };
                if path.starts_with("/.well-known/openwop") {
                    let doc = json!({"protocolVersions": ["2.0"], "preferredVersion": "2.0",
                        "heartbeat": {"status": "stable", "since": "2.0", "minIntervalSec": 1}});
                    let _ = socket
                        .write_all(json_response("200 OK", "", &doc.to_string()).as_bytes())
                        .await;
                    return;
                }
                if !path.starts_with("/host/events") {
                    let body = json!({"error": "not_found", "message": "no"}).to_string();
                    let _ = socket
                        .write_all(json_response("404 Not Found", "", &body).as_bytes())
                        .await;
                    return;
                }
                let Some(gap) = gap else {
                    let _ = socket
                        .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                        .await;
                    return;
                };
                let tick = format!(
                    "event: heartbeat.evaluated\ndata: {}\n\n",
                    json!({"heartbeatId": "slow", "status": "ok", "changed": false})
                );
                let _ = socket
                    .write_all(
                        format!("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n{tick}")
                            .as_bytes(),
                    )
                    .await;
                tokio::time::sleep(gap).await;
                let _ = socket.write_all(tick.as_bytes()).await;
                tokio::time::sleep(Duration::from_secs(60)).await;
            });
        }
    });
    format!("http://{address}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_heartbeat_slower_than_two_minimum_intervals_is_measured_on_its_second_tick() {
    let driver = HttpDriver::new(&ClientOptions::default(), Limits::default()).unwrap();
    let target = external_target(heartbeat_host(Some(Duration::from_millis(5_500))).await);
    let findings = harness::target::probe(&driver, &target, Duration::from_secs(10)).await;
    let interval = findings
        .facts
        .get("heartbeat_interval_ms")
        .and_then(Value::as_u64);
    // 5.5 s apart, rounded up to a 100 ms step (a window of two minimum intervals and a
    // second, 3 s, saw one tick and measured nothing).
    assert!(
        interval.is_some_and(|ms| (5_500..=6_500).contains(&ms)),
        "{findings:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_channel_showing_no_tick_twice_says_which_fact_to_give() {
    let driver = HttpDriver::new(&ClientOptions::default(), Limits::default()).unwrap();
    let target = external_target(heartbeat_host(None).await);
    let findings = harness::target::probe(&driver, &target, Duration::from_secs(10)).await;
    assert!(!findings.facts.contains_key("heartbeat_interval_ms"));
    let why = findings
        .unjudgeable
        .iter()
        .find_map(|(what, why)| (what.to_string() == "fact:heartbeat_interval_ms").then_some(why))
        .unwrap_or_else(|| panic!("{:#?}", findings.unjudgeable));
    assert!(why.contains("--fact heartbeat_interval_ms="), "{why}");
}
