//! A stream on a run that ended (`run_ended`): the host owes its close within one keep-alive
//! interval of the request. The harness reads it to the close or that window, even past the
//! case's budget: a host closing at once or lazily within the window passes, one holding the
//! stream open fails `closed_by_server`, and neither is cut by the budget (ERROR); the time a
//! host takes to close, up to one window, is not counted against the case's budget. A stream
//! whose run ends while it is read is owed the same after its terminal event. A `generate` judges
//! as many inputs as its budget allows and says how many.

use std::time::Duration;

use harness::case::lint_case;
use harness::transcript::BodyEnd;
use harness::verdict::Verdict;
use serde_json::json;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use super::raw_host::{judge_with, not_passed, runner_with_keepalive, serving};

/// How long the lazy host waits before it closes a stream of its finished run.
const LAZY_CLOSE: Duration = Duration::from_millis(1_000);

/// A host answering a run's stream by path: `/runs/prompt/events` closes at once,
/// `/runs/lazy/events` after [`LAZY_CLOSE`], `/runs/open/events` never (a keep-alive comment
/// every 200 ms); `/runs/ending-lazy/events` and `/runs/ending-open/events` first send the
/// run's terminal event (the run ends while the stream is read), then close after
/// [`LAZY_CLOSE`] or never. A run whose end only its `updates` stream shows (its `messages`
/// stream does not): `/runs/hiding/events` and `/runs/hiding-lazy/events`, whose `messages`
/// stream is never closed or closed after [`LAZY_CLOSE`].
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
    let shows_the_end = path.starts_with("/runs/ending-") || path.ends_with("?streamMode=updates");
    if shows_the_end && socket.write_all(terminal.as_bytes()).await.is_err() {
        return;
    }
    match path.as_str() {
        "/runs/prompt/events"
        | "/runs/hiding/events?streamMode=updates"
        | "/runs/hiding-lazy/events?streamMode=updates" => {}
        "/runs/lazy/events"
        | "/runs/ending-lazy/events"
        | "/runs/hiding-lazy/events?streamMode=messages" => tokio::time::sleep(LAZY_CLOSE).await,
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
    judge_steps(json!(steps), keepalive_interval_ms).await
}

/// Judges a case of `steps` with a 500 ms budget on the finished-run host.
async fn judge_steps(
    steps: serde_json::Value,
    keepalive_interval_ms: u64,
) -> (Verdict, harness::run::CaseExecution) {
    let case = json!({
        "id": "w.closing.probe", "title": "closing", "requirements": ["events.sse.close-after-terminal"],
        "level": "MUST", "surface": "openwop", "timeout_ms": 500, "steps": steps
    });
    let case = lint_case("closing.json", case.to_string().as_bytes())
        .unwrap()
        .case;
    let runner = runner_with_keepalive(finished_run_host().await, keepalive_interval_ms);
    judge_with(&runner, &case).await
}

/// A `generate` of five resumptions of `run`'s stream (`run_ended` as given).
fn generated_resumptions(run: &str, run_ended: bool) -> serde_json::Value {
    json!([{"id": "resumptions", "generate": {"strategy": "safe_well_formed_cursor", "var": "cursor", "cases": 5, "steps": [
        {"id": "resumed", "stream": {"path": format!("/runs/{run}/events"), "headers": {"Last-Event-ID": "${var.cursor}"}, "run_ended": run_ended},
         "expect": [{"status": 200}, {"closed_by_server": true}]}
    ]}}])
}

/// The message of the case's `generate` check.
fn generate_message(execution: &harness::run::CaseExecution) -> (Verdict, String) {
    let check = (execution.checks.iter())
        .find(|c| c.check == "generate")
        .unwrap_or_else(|| panic!("no generate check: {:#?}", execution.checks));
    (check.verdict, check.message.clone())
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
    assert_eq!(
        not_passed(&execution),
        [(Some("s0"), "closed_by_server")],
        "{:#?}",
        execution.checks
    );
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
async fn the_waits_for_lazy_closes_are_not_the_cases_budget() {
    // Three streams, each closed 1 s after its request, in a case of 500 ms: each close the
    // host owes within its 3 s interval is its time, not the case's, so all three are judged.
    let (verdict, execution) = judge_streams("lazy", 3, 3_000).await;
    assert_eq!(verdict, Verdict::Pass, "{:#?}", execution.checks);
    let ends: Vec<_> = (execution.transcript.iter())
        .map(|step| step.exchanges[0].response.as_ref().map(|r| r.end.clone()))
        .collect();
    assert_eq!(ends, vec![Some(BodyEnd::ServerClosed); 3]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_held_open_are_each_judged_within_one_close_window() {
    // Each stream is held open through its window (500 ms interval plus 1 s): each is the
    // host's FAIL, none the budget's ERROR; a case takes at most one close window more per
    // such stream than its budget.
    let (verdict, execution) = judge_streams("open", 2, 500).await;
    assert_eq!(verdict, Verdict::Fail, "{:#?}", execution.checks);
    assert_eq!(
        not_passed(&execution),
        [
            (Some("s0"), "closed_by_server"),
            (Some("s1"), "closed_by_server")
        ],
        "{:#?}",
        execution.checks
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_generate_judges_as_many_inputs_as_its_budget_and_says_so() {
    // The first input's stream closes at 1 s, past the 500 ms budget (read on: opened within
    // it); the second opens after the budget: not judged, and the rest are not run. The close
    // is not added to the budget in a generate, whose inputs are as many as the budget judges.
    let (verdict, execution) = judge_steps(generated_resumptions("lazy", true), 3_000).await;
    assert_eq!(verdict, Verdict::Pass, "{:#?}", execution.checks);
    let (verdict, message) = generate_message(&execution);
    assert_eq!(verdict, Verdict::Pass);
    assert!(
        message.starts_with("1 generated input(s)") && message.contains("not judged"),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_generate_whose_inputs_the_budget_cut_is_not_judged() {
    // Every input's stream is held open with no terminal event: the budget cuts the first, so
    // no input is judged, and no PASS says the property held.
    let (verdict, execution) = judge_steps(generated_resumptions("open", false), 3_000).await;
    assert_eq!(verdict, Verdict::Error, "{:#?}", execution.checks);
    let (verdict, message) = generate_message(&execution);
    assert_eq!(verdict, Verdict::Error, "{message}");
}

/// A run followed in `updates` (which shows its terminal event, and is closed at once) and
/// `messages` (which does not) at once.
fn followed_in_two_modes(run: &str) -> serde_json::Value {
    let stream = |mode: &str| {
        json!({"id": mode, "stream": {"path": format!("/runs/{run}/events"), "query": {"streamMode": mode}},
               "expect": [{"status": 200}, {"closed_by_server": true}]})
    };
    json!([{"parallel": [stream("updates"), stream("messages")]}])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_whose_mode_hides_the_end_is_owed_its_close_after_a_sibling_shows_it() {
    // The messages stream is held open: one keep-alive interval (500 ms, plus 1 s) after the
    // updates stream showed the run's end, past the case's 500 ms budget, it is the host's FAIL,
    // not the budget's ERROR.
    let (verdict, execution) = judge_steps(followed_in_two_modes("hiding"), 500).await;
    assert_eq!(verdict, Verdict::Fail, "{:#?}", execution.checks);
    assert_eq!(
        not_passed(&execution),
        [(Some("messages"), "closed_by_server")],
        "{:#?}",
        execution.checks
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_whose_mode_hides_the_end_closed_within_the_interval_passes() {
    // The messages stream closes 1 s after the request, within the 3 s interval after the
    // updates stream showed the end, and past the case's 500 ms budget.
    let (verdict, execution) = judge_steps(followed_in_two_modes("hiding-lazy"), 3_000).await;
    assert_eq!(verdict, Verdict::Pass, "{:#?}", execution.checks);
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
