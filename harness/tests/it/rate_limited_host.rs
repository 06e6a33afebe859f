//! A host limiting its request rate (upstream's v2 reference host: a per-credential token
//! bucket, `429 rate_limited` with `Retry-After`): the harness's polls wait out a 429 as its
//! `Retry-After` asks instead of polling through it, which would keep the bucket empty and end
//! every wait of the run unjudged (ERROR).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use harness::case::lint_case;
use harness::run::Limits;
use harness::verdict::Verdict;
use serde_json::json;

use super::raw_host::{
    answering, assert_blocked_by, json_response, judge_on, refusing_until_quiet,
};

/// A host whose bucket refills only after 900 ms without a request: the first request, and
/// every request sooner after the last refused one, is refused with `Retry-After: 1`.
async fn rate_limited_host(requests: Arc<AtomicUsize>) -> String {
    refusing_until_quiet(1, requests, rate_limited, |_| {
        json_response(
            "200 OK",
            "",
            &json!({"runId": "r1", "status": "completed"}).to_string(),
        )
    })
    .await
}

/// Judges a one-step surface-W case on a fresh rate-limited host: the verdict, the execution and
/// how many requests the host received.
async fn judge_one_step(step: serde_json::Value) -> (Verdict, harness::run::CaseExecution, usize) {
    let requests = Arc::new(AtomicUsize::new(0));
    let host = rate_limited_host(Arc::clone(&requests)).await;
    let (verdict, execution) = judge_steps_on(host, json!([step])).await;
    (verdict, execution, requests.load(Ordering::SeqCst))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_poll_waits_out_a_429_as_retry_after_asks() {
    let (verdict, execution, requests) = judge_one_step(json!(
        {"wait_terminal": {"id": "r1"}, "expect": [{"json": {"pointer": "/status", "equals": "completed"}}]}
    ))
    .await;
    assert_eq!(verdict, Verdict::Pass, "{execution:#?}");
    // One refused, then, a Retry-After later, the answer: polling every 25 ms through the 429
    // would have sent dozens and never been answered.
    assert_eq!(requests, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_refused_by_the_rate_limit_is_sent_again_when_retry_after_says() {
    let (verdict, execution, requests) =
        judge_one_step(json!({"request": {"path": "/runs/r1"}, "expect": [{"status": 200}]})).await;
    // Judged on the answer, not on the 429 of the host's rate limit.
    assert_eq!(verdict, Verdict::Pass, "{execution:#?}");
    assert_eq!(requests, 2);
    // The refusal is not among the step's exchanges, but the transcript says it was waited out.
    let step = &execution.transcript[0];
    assert_eq!(
        (step.exchanges.len(), step.refusals_waited_out),
        (1, 1),
        "{step:#?}"
    );
}

/// `429 rate_limited` with `Retry-After: 1`.
fn rate_limited() -> String {
    let body = json!({"error": "rate_limited", "message": "too many requests"});
    json_response(
        "429 Too Many Requests",
        "retry-after: 1\r\n",
        &body.to_string(),
    )
}

/// Judges a surface-W case of `steps` (budget 4 s) on the host at `host`.
async fn judge_steps_on(
    host: String,
    steps: serde_json::Value,
) -> (Verdict, harness::run::CaseExecution) {
    let case = json!({
        "id": "w.rate-limited.probe", "title": "rate limited", "requirements": ["events.poll.last-sequence-highest"],
        "level": "MUST", "surface": "openwop", "timeout_ms": 4000, "steps": steps
    });
    let case = lint_case("rate-limited.json", case.to_string().as_bytes())
        .unwrap()
        .case;
    judge_on(&case, host, Limits::default()).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_that_stays_rate_limited_blocks_the_case_and_never_fails_it() {
    for step in [
        json!({"request": {"path": "/runs/r1"}, "expect": [{"status": 200}]}),
        json!({"wait_terminal": {"id": "r1"}}),
    ] {
        let host = answering(Duration::ZERO, |_| rate_limited()).await;
        let (verdict, execution) = judge_steps_on(host, json!([step])).await;
        // The rate limit is the operator's set-up: not a 429 judged where 200 was expected
        // (FAIL), nor a poll's budget run out (ERROR).
        assert_blocked_by("implicit:host-rate-limit", verdict, &execution);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_subscription_among_parallel_steps_leaves_its_siblings_unjudged() {
    // The full stream is refused (429), the resumed one beside it is answered: compared with a
    // full log never read it would "differ"; it ran without its companion, so only the refusal
    // is reported.
    let host = answering(Duration::ZERO, |path| {
        if path.contains("streamMode=debug") {
            rate_limited()
        } else {
            let body = format!(
                "id: 1\nevent: run.completed\ndata: {}\n\n",
                json!({"eventId": "e0000000000000001", "runId": "r1", "type": "run.completed", "sequence": 1, "timestamp": "2026-01-01T00:00:00Z", "payload": {}})
            );
            format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            )
        }
    })
    .await;
    let (verdict, execution) = judge_steps_on(
        host,
        json!([{"parallel": [
            {"id": "full", "stream": {"path": "/runs/r1/events", "query": {"streamMode": "debug"}}},
            {"stream": {"path": "/runs/r1/events", "headers": {"Last-Event-ID": "0"}}, "expect": [{"events_equal": "full"}]}
        ]}]),
    )
    .await;
    assert_skipped_as_refused_subscription(verdict, &execution);
    assert_eq!(execution.transcript.len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_concurrent_step_whose_every_subscription_is_refused_is_not_judged() {
    // No subscriber of the run was served: nothing about several subscribers of one run was
    // exercised (a 429 to each is the host's rate limit or its subscriber limit, both allowed).
    let host = answering(Duration::ZERO, |_| rate_limited()).await;
    let (verdict, execution) = judge_steps_on(
        host,
        json!([{"concurrent": {"count": 4, "stream": {"path": "/runs/r1/events"}},
                "expect": [{"each_with_status": {"status": 200, "expect": [{"closed_by_server": true}]}}]}]),
    )
    .await;
    assert_skipped_as_refused_subscription(verdict, &execution);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_concurrent_request_refused_by_the_rate_limit_blocks_the_case() {
    let host = answering(Duration::ZERO, |_| rate_limited()).await;
    let (verdict, execution) = judge_steps_on(
        host,
        json!([{"concurrent": {"count": 3, "request": {"method": "POST", "path": "/runs/r1/cancel"}},
                "expect": [{"each": [{"status_in": [200, 409]}]}]}]),
    )
    .await;
    // Not "429 where 200 or 409": the copies never met the rule.
    assert_blocked_by("implicit:host-rate-limit", verdict, &execution);
}

/// Asserts the case was SKIP with only the refused subscriptions reported.
fn assert_skipped_as_refused_subscription(
    verdict: Verdict,
    execution: &harness::run::CaseExecution,
) {
    assert_eq!(verdict, Verdict::Skip, "{execution:#?}");
    assert!(
        execution
            .checks
            .iter()
            .all(|c| c.check == "implicit:subscriber-limit"),
        "{execution:#?}"
    );
}
