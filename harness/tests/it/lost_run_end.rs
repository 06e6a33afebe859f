//! A run whose end no stream shows (a host that lost the live tail on every stream of the run):
//! a stream read to its close keeps a lookout on the run's poll, and once the poll says the run
//! is terminal the host owes the close within one keep-alive interval. A stream still open then
//! is the host's FAIL, never cut by the case's budget (ERROR); one the host closes within it
//! passes; a stream on a run that is still live is not judged on it.

use std::time::Duration;

use harness::case::lint_case;
use harness::transcript::{BodyEnd, RunEndWitness};
use harness::verdict::Verdict;
use serde_json::json;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use super::raw_host::{json_response, judge_with, runner_with_keepalive, serving};

/// A host whose runs' streams send `run.started` and then keep-alive comments only:
/// `/runs/lost/…` never closes its stream and its poll says the run is terminal;
/// `/runs/lost-lazy/…` closes its stream 2 s after the request (no terminal event) and its poll
/// says terminal; `/runs/live/…` never closes and its poll says the run is live.
async fn lost_end_host() -> String {
    serving(serve).await
}

async fn serve(path: String, mut socket: TcpStream) {
    let run = path
        .trim_start_matches("/runs/")
        .split('/')
        .next()
        .unwrap_or("")
        .to_string();
    if path.ends_with("/events/poll") {
        let terminal = run != "live";
        let body = json!({
            "runId": run,
            "events": [{"type": "run.started", "sequence": 0}],
            "lastSequence": 0,
            "status": if terminal { "completed" } else { "running" },
            "isTerminal": terminal
        });
        let response = json_response("200 OK", "", &body.to_string());
        let _ = socket.write_all(response.as_bytes()).await;
        return;
    }
    let head =
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
    let started = format!(
        "id: 0\ndata: {{\"type\":\"run.started\",\"sequence\":0,\"runId\":\"{run}\",\"payload\":{{}}}}\n\n"
    );
    let started = format!("{:x}\r\n{started}\r\n", started.len());
    if socket.write_all(head).await.is_err() || socket.write_all(started.as_bytes()).await.is_err()
    {
        return;
    }
    let open_for = match run.as_str() {
        "lost-lazy" => Duration::from_millis(2_000),
        _ => Duration::from_secs(3_600),
    };
    let until = tokio::time::Instant::now() + open_for;
    while tokio::time::Instant::now() < until {
        if socket.write_all(b"3\r\n:\n\n\r\n").await.is_err() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let _ = socket.write_all(b"0\r\n\r\n").await;
}

/// One stream of `run` read to its close, a case budget of 3 s, a keep-alive interval of
/// 500 ms (so the close is owed 1.5 s after the end is seen).
async fn judge(run: &str) -> (Verdict, harness::run::CaseExecution) {
    let case = json!({
        "id": "w.lost-end.probe", "title": "lost end", "requirements": ["events.sse.close-after-terminal"],
        "level": "MUST", "surface": "openwop", "timeout_ms": 3000, "steps": [
            {"id": "live", "stream": {"path": format!("/runs/{run}/events")}, "expect": [
                {"status": 200}, {"closed_by_server": true}
            ]}
        ]
    });
    let case = lint_case("lost.json", case.to_string().as_bytes())
        .unwrap()
        .case;
    let runner = runner_with_keepalive(lost_end_host().await, 500);
    judge_with(&runner, &case).await
}

fn response(execution: &harness::run::CaseExecution) -> &harness::transcript::ResponseRecord {
    execution.transcript[0].exchanges[0]
        .response
        .as_ref()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_left_open_after_the_poll_shows_the_end_fails() {
    let (verdict, execution) = judge("lost").await;
    assert_eq!(verdict, Verdict::Fail, "{:#?}", execution.checks);
    let response = response(&execution);
    assert_eq!(response.end, BodyEnd::ClientStopped);
    let seen = response.run_end.expect("the end was seen");
    assert_eq!(seen.witness, RunEndWitness::RunPoll);
    let check = execution
        .checks
        .iter()
        .find(|c| c.check == "closed_by_server")
        .unwrap();
    assert!(
        check
            .actual
            .as_deref()
            .is_some_and(|a| a.contains("the run's poll answered isTerminal: true")),
        "{check:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_closed_within_the_window_after_the_poll_shows_the_end_passes() {
    let (verdict, execution) = judge("lost-lazy").await;
    assert_eq!(verdict, Verdict::Pass, "{:#?}", execution.checks);
    assert_eq!(response(&execution).end, BodyEnd::ServerClosed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_on_a_live_run_is_cut_by_the_budget_not_failed() {
    let (verdict, execution) = judge("live").await;
    assert_eq!(verdict, Verdict::Error, "{:#?}", execution.checks);
    assert!(response(&execution).run_end.is_none());
}
