//! The probe learns the interval of a host's heartbeats from its host channel when the operator
//! gave none: it reads until one heartbeat has ticked twice, so a heartbeat ticking more slowly
//! than two advertised minimum intervals (upstream allows any interval above the minimum) is
//! still measured, and the verdict never depends on when in its period the first tick came.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use harness::run::{ClientOptions, HttpDriver, Limits};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;

use super::raw_host::{external_target, json_response, serving};

/// How the host channel of [`heartbeat_host`] answers.
#[derive(Debug, Clone, Copy)]
enum Channel {
    /// Two ticks of heartbeat `slow` this far apart, then held open.
    Ticking(Duration),
    /// 200 with no tick, closed at once.
    Empty,
    /// No answer at all: the connection held open without headers.
    Silent,
}

/// A host advertising a heartbeat (minimum interval 1 s) whose host channel answers as `channel`
/// says.
async fn heartbeat_host(channel: Channel) -> String {
    heartbeat_host_counting(channel, Arc::default()).await
}

/// [`heartbeat_host`], counting the requests its host channel was sent in `asked`.
async fn heartbeat_host_counting(channel: Channel, asked: Arc<AtomicUsize>) -> String {
    serving(move |path, mut socket| {
        let asked = asked.clone();
        async move {
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
        asked.fetch_add(1, Ordering::SeqCst);
        let gap = match channel {
            Channel::Ticking(gap) => gap,
            Channel::Empty => {
                let _ = socket
                    .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                    .await;
                return;
            }
            Channel::Silent => {
                tokio::time::sleep(Duration::from_secs(60)).await;
                return;
            }
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
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_heartbeat_slower_than_two_minimum_intervals_is_measured_on_its_second_tick() {
    let driver = HttpDriver::new(&ClientOptions::default(), Limits::default()).unwrap();
    let target =
        external_target(heartbeat_host(Channel::Ticking(Duration::from_millis(5_500))).await);
    // A 2 s request time sees one tick; the read that follows waits for the second.
    let findings = harness::target::probe(&driver, &target, Duration::from_secs(2)).await;
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
    let target = external_target(heartbeat_host(Channel::Empty).await);
    let findings = harness::target::probe(&driver, &target, Duration::from_secs(10)).await;
    let why = unknown_interval(&findings);
    assert!(why.contains("no heartbeat ticked twice"), "{why}");
    assert!(why.contains("--fact heartbeat_interval_ms="), "{why}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_channel_sending_no_headers_costs_the_probe_its_request_time_not_the_window() {
    let driver = HttpDriver::new(&ClientOptions::default(), Limits::default()).unwrap();
    let target = external_target(heartbeat_host(Channel::Silent).await);
    let started = std::time::Instant::now();
    let findings = harness::target::probe(&driver, &target, Duration::from_secs(1)).await;
    let why = unknown_interval(&findings);
    assert!(why.contains("no response headers"), "{why}");
    // Not the 30 s window of a channel that answered: a host that stopped answering after
    // discovery ends a run early (see the CLI's bounded runs), not after the probe's window.
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}

/// Why the probe could not establish the heartbeat interval (it must not have).
fn unknown_interval(findings: &harness::target::ProbeFindings) -> String {
    assert!(!findings.facts.contains_key("heartbeat_interval_ms"));
    findings
        .unjudgeable
        .iter()
        .find_map(|(what, why)| {
            (what.to_string() == "fact:heartbeat_interval_ms").then(|| why.clone())
        })
        .unwrap_or_else(|| panic!("{:#?}", findings.unjudgeable))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_operators_word_on_the_interval_wins_and_is_not_probed_for() {
    use harness::run::{RunOptions, Session};
    use harness::target::NeedStatus;
    let need = |name: &str| harness::case::needs::CaseNeed::parse(name).unwrap();
    for (given, expected_met) in [(Value::Null, false), (json!(30_000), true)] {
        let asked = Arc::new(AtomicUsize::new(0));
        let target = external_target(heartbeat_host_counting(Channel::Silent, asked.clone()).await);
        let mut options = RunOptions {
            probe_timeout: Duration::from_secs(1),
            ..RunOptions::default()
        };
        options
            .overrides
            .facts
            .insert("heartbeat_interval_ms".into(), given.clone());
        let driver = HttpDriver::new(&ClientOptions::default(), Limits::default()).unwrap();
        let session = Session::open(driver, target, options).await;
        let target = &session.runner().target;
        // `null` says the host runs no heartbeat on a schedule: SKIP, not BLOCKED; a value
        // is used as given.
        let status = target.need_status(&need("fact:heartbeat_interval_ms"));
        if expected_met {
            assert_eq!(status, NeedStatus::Met, "{given}");
        } else {
            assert!(
                matches!(status, NeedStatus::Lacking(_)),
                "{given}: {status:?}"
            );
        }
        assert!(
            !target
                .unjudgeable
                .keys()
                .any(|k| k.to_string() == "fact:heartbeat_interval_ms"),
            "{given}"
        );
        assert_eq!(
            asked.load(Ordering::SeqCst),
            0,
            "{given}: the probe read the host channel for a fact the operator gave"
        );
    }
}
