//! A run-events poll answered in pages: the harness reads on from each page's last event to
//! the answer's `lastSequence` and judges the pages joined (a `request` step, and each attempt
//! of a `poll_until`); when the case's budget runs out before the last page, the step is not
//! judged (ERROR), never failed on the pages it read.

use harness::case::lint_case;
use harness::run::Limits;
use harness::verdict::Verdict;
use serde_json::json;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use super::raw_host::{assert_cut_not_judged, json_response, judge_on, serving};

/// The finished log's highest sequence.
const LAST: i64 = 3;

/// A finished run `r1` whose poll answers one event per page. With `stalled_after`, the page
/// read from that cursor sends its headers and half its body, then nothing more.
async fn paging_host(stalled_after: Option<i64>) -> String {
    serving(move |path, socket| serve(path, socket, stalled_after)).await
}

async fn serve(path: String, mut socket: TcpStream, stalled_after: Option<i64>) {
    let after = path
        .split("afterSequence=")
        .nth(1)
        .and_then(|v| v.parse::<i64>().ok());
    if after.is_some() && after == stalled_after {
        let _ = socket
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 200\r\n\r\n{\"events\": [")
            .await;
        tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
        return;
    }
    let next = after.map_or(0, |a| a + 1);
    let events: Vec<_> = (next..=LAST.min(next))
        .map(|s| json!({"sequence": s, "type": "node.started"}))
        .collect();
    let body = json!({"runId": "r1", "events": events, "lastSequence": LAST, "status": "completed", "isTerminal": true});
    let response = json_response("200 OK", "", &body.to_string());
    let _ = socket.write_all(response.as_bytes()).await;
}

async fn judge(stalled_after: Option<i64>) -> (Verdict, harness::run::CaseExecution) {
    judge_step(
        stalled_after,
        json!({"id": "log", "request": {"path": "/runs/r1/events/poll"}, "expect": [
            {"status": 200},
            {"json": {"pointer": "/events/3/sequence", "equals": LAST}}
        ]}),
    )
    .await
}

async fn judge_step(
    stalled_after: Option<i64>,
    step: serde_json::Value,
) -> (Verdict, harness::run::CaseExecution) {
    let case = json!({
        "id": "w.paged.probe", "title": "paged", "requirements": ["events.poll.last-sequence-highest"],
        "level": "MUST", "surface": "openwop", "timeout_ms": 1500, "steps": [step]
    });
    let case = lint_case("paged.json", case.to_string().as_bytes())
        .unwrap()
        .case;
    judge_on(&case, paging_host(stalled_after).await, Limits::default()).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_are_read_to_the_last_sequence_and_judged_joined() {
    let (verdict, execution) = judge(None).await;
    assert_eq!(verdict, Verdict::Pass, "{:#?}", execution.checks);
    // Four pages and their join.
    assert_eq!(execution.transcript[0].exchanges.len(), 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_the_budget_cut_leaves_the_poll_unjudged_never_failed() {
    // Pages 0 and 1 came whole; the page after 1 never ends. What was read is a prefix of the
    // log: ERROR (the step did not complete), not a FAIL of the check that wants every event.
    let (verdict, execution) = judge(Some(1)).await;
    assert_cut_not_judged(verdict, &execution);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn poll_until_reads_every_page_before_its_condition() {
    // The event it waits for is on the last page: read page by page, the condition holds on
    // the pages joined (before, the first page alone was judged and the wait ran out).
    let (verdict, execution) = judge_step(
        None,
        json!({"id": "wait", "poll_until": {
            "request": {"path": "/runs/r1/events/poll"},
            "until": {"pointer": "/events/3/sequence", "equals": LAST}
        }, "expect": [{"json": {"pointer": "/events/2/sequence", "equals": 2}}]}),
    )
    .await;
    assert_eq!(verdict, Verdict::Pass, "{:#?}", execution.transcript);
    assert!(execution.transcript[0].completed);
    assert_eq!(execution.transcript[0].exchanges.len(), 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn poll_until_does_not_judge_a_prefix_the_budget_cut() {
    // The page after 1 never ends: the prefix read holds no event 3, and the step does not
    // complete (ERROR), never a verdict on the pages read.
    let (verdict, execution) = judge_step(
        Some(1),
        json!({"id": "wait", "poll_until": {
            "request": {"path": "/runs/r1/events/poll"},
            "until": {"pointer": "/events/3/sequence", "equals": LAST}
        }, "expect": [{"json": {"pointer": "/events/2/sequence", "equals": 2}}]}),
    )
    .await;
    assert_eq!(verdict, Verdict::Error, "{:#?}", execution.transcript);
    assert!(!execution.transcript[0].completed);
}
