//! A host limiting its request rate (upstream's v2 reference host: a per-credential token
//! bucket, `429 rate_limited` with `Retry-After`): the harness's polls wait out a 429 as its
//! `Retry-After` asks instead of polling through it, which would keep the bucket empty and end
//! every wait of the run unjudged (ERROR).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use harness::case::lint_case;
use harness::run::Limits;
use harness::verdict::Verdict;
use serde_json::json;

use super::raw_host::{answering, json_response, judge_on};

/// A host whose bucket refills only after 900 ms without a request: the first request, and
/// every request sooner after the last refused one, is refused with `Retry-After: 1`.
async fn rate_limited_host(requests: Arc<AtomicUsize>) -> String {
    let last_refusal: Mutex<Option<Instant>> = Mutex::new(None);
    let first = AtomicBool::new(true);
    answering(Duration::ZERO, move |_path| {
        requests.fetch_add(1, Ordering::SeqCst);
        let mut last = last_refusal.lock().unwrap();
        let refuse = first.swap(false, Ordering::SeqCst)
            || last.is_some_and(|at| at.elapsed() < Duration::from_millis(900));
        if refuse {
            *last = Some(Instant::now());
            let body = json!({"error": "rate_limited", "message": "too many requests"});
            json_response(
                "429 Too Many Requests",
                "retry-after: 1\r\n",
                &body.to_string(),
            )
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

/// Judges a one-step surface-W case on a fresh rate-limited host: the verdict, the execution and
/// how many requests the host received.
async fn judge_one_step(step: serde_json::Value) -> (Verdict, harness::run::CaseExecution, usize) {
    let case = json!({
        "id": "w.rate-limited.probe", "title": "rate limited", "requirements": ["events.poll.last-sequence-highest"],
        "level": "MUST", "surface": "openwop", "timeout_ms": 4000, "steps": [step]
    });
    let case = lint_case("rate-limited.json", case.to_string().as_bytes())
        .unwrap()
        .case;
    let requests = Arc::new(AtomicUsize::new(0));
    let host = rate_limited_host(Arc::clone(&requests)).await;
    let (verdict, execution) = judge_on(&case, host, Limits::default()).await;
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
}
