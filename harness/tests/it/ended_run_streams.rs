//! A stream on a run that ended (`run_ended`): the host owes its close within one keep-alive
//! interval of the request. The harness reads it to the close or that window, even past the
//! case's budget: a host closing at once or lazily within the window passes, one holding the
//! stream open fails `closed_by_server`, and neither is cut by the budget (ERROR). A stream
//! whose run ends while it is read is owed the same after its terminal event.

use std::sync::Arc;
use std::time::Duration;

use harness::case::lint_case;
use harness::run::{CaseRunner, ClientOptions, HttpDriver, Limits, STEP_COMPLETED};
use harness::transcript::BodyEnd;
use harness::verdict::Verdict;
use serde_json::json;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use super::raw_host::{external_target, judge_with, serving};

/// How long the lazy host waits before it closes a stream of its finished run.
const LAZY_CLOSE: Duration = Duration::from_millis(1_000);

/// A host answering a run's stream by path: `/runs/prompt/events` closes at once,
/// `/runs/lazy/events` after [`LAZY_CLOSE`], `/runs/open/events` never (a keep-alive comment
/// every 200 ms); `/runs/ending-lazy/events` and `/runs/ending-open/events` first send the
/// run's terminal event (the run ends while the stream is read), then close after
/// [`LAZY_CLOSE`] or never.
async fn finished_run_host() -> String {
    serving(serve).await
}

async fn serve(path: String, mut socket: TcpStream) {
    let head =
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
    if socket.write_all(head).await.is_err() {
        return;
    }
    let terminal = "id: 1\ndata: {\"type\":\"run.completed\",\"sequence\":1,\"runId\":\"r1\",\"payload\":{}}\n\n";
    let terminal = format!("{:x}\r\n{terminal}\r\n", terminal.len());
    if path.starts_with("/runs/ending-") && socket.write_all(terminal.as_bytes()).await.is_err() {
        return;
    }
    match path.as_str() {
        "/runs/prompt/events" => {}
        "/runs/lazy/events" | "/runs/ending-lazy/events" => tokio::time::sleep(LAZY_CLOSE).await,
        _ => loop {
            if socket.write_all(b"3\r\n:\n\n\r\n").await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        },
    }
    let _ = socket.write_all(b"0\r\n\r\n").await;
}

/// One `run_ended` stream of `run` (`streams` of them one after another), a case budget of
/// 500 ms, the host's keep-alive interval `keepalive_interval_ms`.
async fn judge(run: &str, keepalive_interval_ms: u64) -> (Verdict, harness::run::CaseExecution) {
    judge_streams(run, 1, keepalive_interval_ms).await
}

async fn judge_streams(
    run: &str,
    streams: usize,
    keepalive_interval_ms: u64,
) -> (Verdict, harness::run::CaseExecution) {
    // The ending-* runs end while the stream is read: not a stream on a run that ended.
    let run_ended = !run.starts_with("ending-");
    let steps: Vec<_> = (0..streams)
        .map(|i| {
            json!({"id": format!("s{i}"), "stream": {"path": format!("/runs/{run}/events"), "run_ended": run_ended}, "expect": [
                {"status": 200}, {"closed_by_server": true}
            ]})
        })
        .collect();
    let case = json!({
        "id": "w.closing.probe", "title": "closing", "requirements": ["events.sse.close-after-terminal"],
        "level": "MUST", "surface": "openwop", "timeout_ms": 500, "steps": steps
    });
    let case = lint_case("closing.json", case.to_string().as_bytes())
        .unwrap()
        .case;
    let mut target = external_target(finished_run_host().await);
    target
        .facts
        .insert("keepalive_interval_ms".into(), json!(keepalive_interval_ms));
    let runner = CaseRunner {
        driver: HttpDriver::new(&ClientOptions::default(), Limits::default()).unwrap(),
        target: Arc::new(target),
        time_scale: 1.0,
        proptest_seed: 1,
        regressions_dir: None,
    };
    judge_with(&runner, &case).await
}

fn end_of(execution: &harness::run::CaseExecution) -> BodyEnd {
    execution.transcript[0].exchanges[0]
        .response
        .as_ref()
        .unwrap()
        .end
        .clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_closed_at_once_passes() {
    let (verdict, execution) = judge("prompt", 3_000).await;
    assert_eq!(verdict, Verdict::Pass, "{:#?}", execution.checks);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_closed_within_one_keep_alive_interval_passes_past_the_budget() {
    // The host closes after 1 s, within its 3 s interval and past the case's 500 ms budget.
    let (verdict, execution) = judge("lazy", 3_000).await;
    assert_eq!(verdict, Verdict::Pass, "{:#?}", execution.checks);
    assert_eq!(end_of(&execution), BodyEnd::ServerClosed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_held_open_past_one_keep_alive_interval_fails_never_errors() {
    // 500 ms interval: the window (1.5 s) outlasts the case's 500 ms budget, and the stream is
    // still open at its end: the host's FAIL, not the budget's ERROR.
    let (verdict, execution) = judge("open", 500).await;
    assert_eq!(verdict, Verdict::Fail, "{:#?}", execution.checks);
    assert_eq!(end_of(&execution), BodyEnd::ClientStopped);
    let failed: Vec<_> = execution
        .checks
        .iter()
        .filter(|c| c.verdict != Verdict::Pass)
        .map(|c| c.check.as_str())
        .collect();
    assert_eq!(failed, ["closed_by_server"], "{:#?}", execution.checks);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_closed_within_one_keep_alive_interval_of_its_terminal_event_passes() {
    // The run ends at once; the host closes 1 s later, within its 3 s interval and past the
    // case's 500 ms budget.
    let (verdict, execution) = judge("ending-lazy", 3_000).await;
    assert_eq!(verdict, Verdict::Pass, "{:#?}", execution.checks);
    assert_eq!(end_of(&execution), BodyEnd::ServerClosed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_held_open_past_its_terminal_event_and_one_interval_fails() {
    let (verdict, execution) = judge("ending-open", 500).await;
    assert_eq!(verdict, Verdict::Fail, "{:#?}", execution.checks);
    assert_eq!(end_of(&execution), BodyEnd::ClientStopped);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_case_overruns_its_budget_by_one_close_window_at_most() {
    // The first stream, opened within the 500 ms budget, is read to its close at 1 s; the
    // second, opened after the budget ran out, is not read on: not judged (ERROR), and the case
    // ends without waiting for it.
    let (verdict, execution) = judge_streams("lazy", 2, 3_000).await;
    assert_eq!(verdict, Verdict::Error, "{:#?}", execution.checks);
    assert_eq!(end_of(&execution), BodyEnd::ServerClosed);
    let cut: Vec<_> = execution
        .checks
        .iter()
        .filter(|c| c.check == STEP_COMPLETED)
        .map(|c| c.step.as_deref())
        .collect();
    assert_eq!(cut, [Some("s1")], "{:#?}", execution.checks);
    let first_step_ok = execution
        .checks
        .iter()
        .filter(|c| c.step.as_deref() == Some("s0"))
        .all(|c| c.verdict == Verdict::Pass);
    assert!(first_step_ok, "{:#?}", execution.checks);
}

#[test]
fn a_close_window_takes_no_reading_window() {
    let case = json!({
        "id": "w.closing.lint", "title": "closing", "requirements": ["events.sse.close-after-terminal"],
        "level": "MUST", "surface": "openwop", "steps": [
            {"stream": {"path": "/runs/r1/events", "run_ended": true, "until": {"duration_ms": 1000}}}
        ]
    });
    let problems = lint_case("closing.json", case.to_string().as_bytes()).unwrap_err();
    assert!(
        problems
            .iter()
            .any(|p| p.pointer == "/steps/0/stream/run_ended"),
        "{problems:#?}"
    );
}
