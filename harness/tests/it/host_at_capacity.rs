//! A host at capacity (upstream's later v2 reference host with an in-flight cap: `503
//! service_unavailable` with `Retry-After`): on surface W its requests and polls are sent again
//! when it asks, and a step it still refuses leaves the case BLOCKED (say how to give the host
//! room), never FAIL or ERROR. Surface X is not concerned: a 503 there stays the step's answer.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use harness::case::{Case, lint_case};
use harness::run::{CaseExecution, Limits};
use harness::verdict::Verdict;
use serde_json::{Value, json};

use super::raw_host::{
    answering, assert_blocked_by, json_response, judge_on, refusing_until_quiet,
};

/// A `200` event stream closed without a frame.
const EMPTY_STREAM: &str = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: 0\r\nconnection: close\r\n\r\n";

/// `503` with `Retry-After: 1`, upstream's capacity answer.
fn at_capacity() -> String {
    let body = json!({"error": "service_unavailable", "message": "the host is at capacity"});
    json_response(
        "503 Service Unavailable",
        "retry-after: 1\r\n",
        &body.to_string(),
    )
}

/// A host refusing the first `refusals` requests at capacity, and every request sooner than
/// 900 ms after a refusal, then answering with a completed run (an empty event stream for
/// `/events`).
async fn host_at_capacity(refusals: usize, requests: Arc<AtomicUsize>) -> String {
    refusing_until_quiet(refusals, requests, at_capacity, |path| {
        if path.contains("/events") {
            EMPTY_STREAM.to_owned()
        } else {
            json_response(
                "200 OK",
                "",
                &json!({"runId": "r1", "status": "completed"}).to_string(),
            )
        }
    })
    .await
}

/// A case of `steps` on `surface` (budget 4 s).
fn capacity_case(surface: &str, steps: Value) -> Case {
    let (prefix, requirement) = if surface == "openwop" {
        ("w", "events.poll.last-sequence-highest")
    } else {
        ("x", "exec.cursors.accepts-after")
    };
    let case = json!({
        "id": format!("{prefix}.capacity.probe"),
        "title": "at capacity", "requirements": [requirement],
        "level": "MUST", "surface": surface, "timeout_ms": 4000, "steps": steps
    });
    lint_case("capacity.json", case.to_string().as_bytes())
        .unwrap()
        .case
}

/// Judges a case of `steps` on `surface` on a fresh host refusing its first `refusals` requests:
/// the verdict, the execution and how many requests the host received.
async fn judge_steps(
    surface: &str,
    refusals: usize,
    steps: Value,
) -> (Verdict, CaseExecution, usize) {
    let case = capacity_case(surface, steps);
    let requests = Arc::new(AtomicUsize::new(0));
    let host = host_at_capacity(refusals, Arc::clone(&requests)).await;
    let (verdict, execution) = judge_on(&case, host, Limits::default()).await;
    (verdict, execution, requests.load(Ordering::SeqCst))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_refused_at_capacity_is_sent_again_when_retry_after_says() {
    let (verdict, execution, requests) = judge_steps(
        "openwop",
        1,
        json!([{"request": {"path": "/runs/r1"}, "expect": [{"status": 200}]}]),
    )
    .await;
    assert_eq!(verdict, Verdict::Pass, "{execution:#?}");
    assert_eq!(requests, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_poll_waits_out_a_503_at_capacity_as_retry_after_asks() {
    let (verdict, execution, requests) = judge_steps(
        "openwop",
        1,
        json!([{"wait_terminal": {"id": "r1"}, "expect": [{"json": {"pointer": "/status", "equals": "completed"}}]}]),
    )
    .await;
    assert_eq!(verdict, Verdict::Pass, "{execution:#?}");
    // Polling every 25 ms through the refusal would have sent dozens.
    assert_eq!(requests, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_that_stays_at_capacity_blocks_the_case_and_never_fails_it() {
    for step in [
        json!({"request": {"path": "/runs/r1"}, "expect": [{"status": 200}]}),
        json!({"stream": {"path": "/runs/r1/events", "until": {"duration_ms": 300}}, "expect": [{"status": 200}]}),
        json!({"concurrent": {"count": 3, "stream": {"path": "/runs/r1/events", "until": {"duration_ms": 300}}}, "expect": [{"each": [{"status_in": [200, 429]}]}]}),
    ] {
        let (verdict, execution, _) = judge_steps("openwop", usize::MAX, json!([step])).await;
        assert_blocked_by("implicit:host-capacity", verdict, &execution);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_at_capacity_among_parallel_steps_blocks_the_case_not_its_siblings_checks() {
    // The stream is answered (an empty stream: its check would fail), the request beside it is
    // refused at capacity every time: the stream ran without its companion, so only the
    // refusal is reported.
    let steps = json!([{"parallel": [
        {"stream": {"path": "/runs/r1/events", "until": {"duration_ms": 300}}, "expect": [{"frames": {"min": 1}}]},
        {"request": {"method": "POST", "path": "/runs/r1/cancel"}, "expect": [{"status": 200}]}
    ]}]);
    let case = capacity_case("openwop", steps);
    let host = answering(Duration::ZERO, |path| {
        if path.contains("/events") {
            EMPTY_STREAM.to_owned()
        } else {
            at_capacity()
        }
    })
    .await;
    let (verdict, execution) = judge_on(&case, host, Limits::default()).await;
    assert_blocked_by("implicit:host-capacity", verdict, &execution);
    // Both steps are in the transcript: the report shows what the stream received.
    assert_eq!(execution.transcript.len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_surface_x_a_503_stays_the_steps_answer() {
    let (verdict, execution, requests) = judge_steps(
        "execution",
        1,
        json!([{"request": {"path": "/v1/executions/e1"}, "expect": [{"status": 200}]}]),
    )
    .await;
    assert_eq!(verdict, Verdict::Fail, "{execution:#?}");
    assert_eq!(requests, 1);
}

/// A run-events host with one finished run `r1` of four events (its poll and its event stream)
/// whose event stream answers `503` with `Retry-After: 1` to its first `refusals` requests.
async fn capped_log_host(refusals: usize) -> String {
    let events = [
        (1, "run.started"),
        (2, "node.started"),
        (3, "node.completed"),
        (4, "run.completed"),
    ]
    .map(|(sequence, kind)| {
        json!({"eventId": format!("e{sequence:016}"), "runId": "r1", "type": kind,
               "sequence": sequence, "timestamp": "2026-01-01T00:00:00Z", "schemaVersion": 1, "payload": {}})
    });
    let streams = AtomicUsize::new(0);
    answering(Duration::ZERO, move |path| {
        if path == "/runs" {
            json_response("201 Created", "", &json!({"runId": "r1"}).to_string())
        } else if path.starts_with("/runs/r1/events/poll") {
            let after: i64 = path
                .split("afterSequence=")
                .nth(1)
                .and_then(|v| v.split('&').next()?.parse().ok())
                .unwrap_or(0);
            let page: Vec<&Value> = events
                .iter()
                .filter(|e| e["sequence"].as_i64() > Some(after))
                .collect();
            let body = json!({"runId": "r1", "events": page, "lastSequence": 4,
                              "status": "completed", "isTerminal": true});
            json_response("200 OK", "", &body.to_string())
        } else if path.starts_with("/runs/r1/events") {
            if streams.fetch_add(1, Ordering::SeqCst) < refusals {
                return at_capacity();
            }
            let body: String = events
                .iter()
                .map(|e| format!("id: {}\nevent: {}\ndata: {e}\n\n", e["sequence"], e["type"].as_str().unwrap()))
                .collect();
            format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            )
        } else {
            json_response("404 Not Found", "", &json!({"error": "not_found", "message": "no"}).to_string())
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn load_subscribers_wait_out_a_host_at_capacity_and_are_judged() {
    let host = capped_log_host(2).await;
    let mut plan = harness::load::LoadPlan::new(harness::load::LoadSurface::Openwop);
    plan.logs = 1;
    plan.subscribers = 3;
    plan.events = 4;
    plan.disconnect_every = None;
    plan.stream_mode = Some("debug".parse().unwrap());
    let result = harness::load::run_load(
        &super::raw_host::external_target(host),
        &plan,
        &indicatif::ProgressBar::hidden(),
    )
    .await
    .unwrap();
    // Two subscribers were told to come back a second later, came back and got the whole log:
    // judged (PASS), not NOT JUDGED for a subscriber that gave up on a 503.
    assert_eq!(
        result.verdict,
        harness::load::LoadVerdict::Pass,
        "{:#?} {:#?}",
        result.not_judged_reasons,
        result.anomalies
    );
    assert_eq!(result.connections.at_capacity, 2);
    assert_eq!(result.totals.completed_subscribers, 3);
}
