//! `wait_terminal` with `settled`: after the run is terminal the harness reads its log until two
//! readings end at the same sequence (events may follow the terminal event at any time); a log
//! that never settles is not judged (ERROR), never passed; a poll that does not say where the log
//! ends ends the wait, and the case's own checks judge it.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use harness::case::lint_case;
use harness::run::Limits;
use harness::verdict::Verdict;
use serde_json::json;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use super::raw_host::{assert_cut_not_judged, json_response, judge_on, serving};

/// How the fake host's finished log grows.
#[derive(Clone, Copy)]
enum Growth {
    /// One event more at each of the first `n` polls, then none.
    Settles(i64),
    /// One event more at every poll.
    Forever,
    /// A poll answer without `lastSequence`.
    Unsaid,
}

/// A finished run `r1` whose poll answers a growing `lastSequence`.
async fn finished_run_host(growth: Growth) -> String {
    let polls = Arc::new(AtomicI64::new(0));
    serving(move |path, socket| serve(path, socket, growth, Arc::clone(&polls))).await
}

async fn serve(path: String, mut socket: TcpStream, growth: Growth, polls: Arc<AtomicI64>) {
    let body = if path.starts_with("/runs/r1/events/poll") {
        let poll = polls.fetch_add(1, Ordering::SeqCst);
        match growth {
            Growth::Settles(n) => json!({"lastSequence": 4 + poll.min(n), "events": []}),
            Growth::Forever => json!({"lastSequence": 4 + poll, "events": []}),
            Growth::Unsaid => json!({"events": []}),
        }
    } else {
        json!({"runId": "r1", "status": "completed"})
    };
    let response = json_response("200 OK", "", &body.to_string());
    let _ = socket.write_all(response.as_bytes()).await;
}

async fn run(growth: Growth) -> (Verdict, harness::run::CaseExecution) {
    let case = json!({
        "id": "w.settled.probe", "title": "settled", "requirements": ["events.poll.last-sequence-highest"],
        "level": "MUST", "surface": "openwop", "timeout_ms": 1500, "steps": [
            {"wait_terminal": {"id": "r1", "settled": true}, "expect": [{"json": {"pointer": "/status", "equals": "completed"}}]},
            {"id": "log", "request": {"path": "/runs/r1/events/poll"}, "expect": [
                {"json": {"pointer": "/lastSequence", "equals": 6}}
            ]}
        ]
    });
    let case = lint_case("settled.json", case.to_string().as_bytes())
        .unwrap()
        .case;
    judge_on(&case, finished_run_host(growth).await, Limits::default()).await
}

/// The request paths of the first step (the wait), in order.
fn waited_on(execution: &harness::run::CaseExecution) -> Vec<String> {
    execution.transcript[0]
        .exchanges
        .iter()
        .map(|e| {
            let after_host = e.request.url.splitn(4, '/').nth(3).unwrap_or_default();
            format!("/{after_host}")
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wait_reads_the_log_until_two_readings_agree_then_the_snapshot_again() {
    // lastSequence 4, 5, 6, 6: the log settled at the fourth reading.
    let (verdict, execution) = run(Growth::Settles(2)).await;
    assert_eq!(verdict, Verdict::Pass, "{execution:#?}");
    let poll = "/runs/r1/events/poll".to_string();
    let snapshot = "/runs/r1".to_string();
    assert_eq!(
        waited_on(&execution),
        [
            snapshot.clone(),
            poll.clone(),
            poll.clone(),
            poll.clone(),
            poll,
            snapshot
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_that_never_settles_is_not_judged() {
    let (verdict, execution) = run(Growth::Forever).await;
    assert_cut_not_judged(verdict, &execution);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_poll_without_last_sequence_ends_the_wait_and_is_judged_by_the_case() {
    let (verdict, execution) = run(Growth::Unsaid).await;
    assert_eq!(verdict, Verdict::Fail, "{execution:#?}");
    assert_eq!(
        waited_on(&execution),
        ["/runs/r1", "/runs/r1/events/poll", "/runs/r1"]
    );
}
