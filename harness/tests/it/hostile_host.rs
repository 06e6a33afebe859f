//! A deliberately hostile host: garbage bytes, a hang, a body that stops half way, an endless
//! stream, a 100 MB frame, invalid UTF-8, a slow drip. Whatever it sends, the harness returns a verdict (FAIL, or ERROR
//! when the case's own budget ran out; never PASS) within the case's time bound, never hangs, panics, or buffers without
//! bound.

use std::sync::Arc;
use std::time::Duration;

use harness::case::lint_case;
use harness::run::{CaseRunner, ClientOptions, HttpDriver, Limits, STEP_COMPLETED};
use harness::transcript::BodyEnd;
use harness::verdict::Verdict;
use serde_json::json;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};

use super::raw_host::{assert_cut_not_judged, external_target, judge_on, request_path};

/// Serves one behaviour per path, on raw TCP so nothing tidies the bytes up.
async fn hostile_host() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((socket, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(serve(socket));
        }
    });
    format!("http://{address}")
}

async fn serve(mut socket: TcpStream) {
    let Some(path) = request_path(&mut socket).await else {
        return;
    };
    let sse_head =
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
    let chunk = |bytes: &[u8]| {
        let mut out = format!("{:x}\r\n", bytes.len()).into_bytes();
        out.extend_from_slice(bytes);
        out.extend_from_slice(b"\r\n");
        out
    };
    match path.as_str() {
        "/garbage" => {
            let _ = socket
                .write_all(b"\x00\xffNOT HTTP AT ALL\r\n\r\n\x13\x37")
                .await;
        }
        "/hang" => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
        }
        "/endless" => {
            let _ = socket.write_all(sse_head).await;
            let frame = chunk(b"data: {\"sequence\":1,\"type\":\"x\"}\n\n");
            let mut sent: u64 = 0;
            while socket.write_all(&frame).await.is_ok() {
                sent += 1;
                if sent.is_multiple_of(256) {
                    tokio::task::yield_now().await;
                }
            }
        }
        "/huge-frame" => {
            let _ = socket.write_all(sse_head).await;
            let _ = socket.write_all(&chunk(b"data: ")).await;
            let block = chunk(&vec![b'a'; 1024 * 1024]);
            for _ in 0..100 {
                if socket.write_all(&block).await.is_err() {
                    return;
                }
            }
        }
        "/invalid-utf8" => {
            let _ = socket.write_all(sse_head).await;
            let _ = socket
                .write_all(&chunk(b"id: 1\ndata: {\"a\":\"\xff\xfe\"}\n\n"))
                .await;
            let _ = socket.write_all(b"0\r\n\r\n").await;
        }
        "/drip" => {
            let _ = socket.write_all(sse_head).await;
            for byte in b"data: {\"sequence\":1}\n\n".iter().cycle() {
                if socket.write_all(&chunk(&[*byte])).await.is_err() {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(40)).await;
            }
        }
        // 30,000 frames, past the harness's kept bound (5,000 frames in these tests), then the
        // stream closes. `/long-violating` repeats sequence 15,000: a violation in the middle,
        // which the harness reads but does not keep.
        "/long-conforming" | "/long-violating" => {
            let _ = socket.write_all(sse_head).await;
            let mut batch = Vec::new();
            for n in 1..=LONG_STREAM_FRAMES {
                let sequence = if path == "/long-violating" && n == 15_001 {
                    15_000
                } else {
                    n
                };
                let kind = if n == LONG_STREAM_FRAMES {
                    "execution.completed"
                } else {
                    "execution.accepted"
                };
                batch.extend_from_slice(
                    format!(
                        "id: {sequence}\ndata: {{\"sequence\":{sequence},\"type\":\"{kind}\",\"execution_id\":\"e\"}}\n\n"
                    )
                    .as_bytes(),
                );
                if batch.len() > 64 * 1024 || n == LONG_STREAM_FRAMES {
                    if socket.write_all(&chunk(&batch)).await.is_err() {
                        return;
                    }
                    batch.clear();
                }
            }
            let _ = socket.write_all(b"0\r\n\r\n").await;
        }
        // A whole-body answer whose body stops half way and never ends.
        "/half-body" => {
            let _ = socket
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 64\r\n\r\n{\"name\": \"half")
                .await;
            tokio::time::sleep(Duration::from_secs(3600)).await;
        }
        "/huge-body" => {
            let _ = socket.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n").await;
            let block = chunk(&vec![b' '; 1024 * 1024]);
            for _ in 0..100 {
                if socket.write_all(&block).await.is_err() {
                    return;
                }
            }
        }
        _ => {
            let _ = socket
                .write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
                .await;
        }
    }
}

/// The frames of `/long-*`: more than [`judge`]'s kept bound.
const LONG_STREAM_FRAMES: u64 = 30_000;

fn case(path: &str, stream: bool) -> harness::case::Case {
    let step = if stream {
        json!({"id": "s", "stream": {"path": path}, "expect": [
            {"status": 200}, {"events_valid": true}, {"closed_by_server": true}, {"frames": {"min": 1, "no_truncated_frame": true}}
        ]})
    } else {
        json!({"id": "r", "request": {"path": path}, "expect": [{"status": 200}, {"schema": "runtime-info"}]})
    };
    let case = json!({
        "id": "x.hostile.probe", "title": "hostile", "requirements": ["exec.access.event-stream-by-execution-id"],
        "level": "MUST", "surface": "execution", "timeout_ms": 1500, "steps": [step]
    });
    lint_case("hostile.json", case.to_string().as_bytes())
        .unwrap()
        .case
}

async fn judge(path: &str, stream: bool) -> (Verdict, harness::run::CaseExecution) {
    judge_case(case(path, stream)).await
}

async fn judge_case(case: harness::case::Case) -> (Verdict, harness::run::CaseExecution) {
    let base = hostile_host().await;
    // Kept for the checks: 5,000 frames or 2 MiB; read (and folded past the kept ones): 8 MiB.
    let limits = Limits {
        max_body_bytes: 4 * 1024 * 1024,
        max_stream_bytes: 2 * 1024 * 1024,
        max_stream_frames: 5_000,
        max_stream_read_bytes: 8 * 1024 * 1024,
        ..Limits::default()
    };
    // A liveness guard, far above the case's 1.5 s budget: the harness must never hang.
    judge_on(&case, base, limits).await
}

fn end_of(execution: &harness::run::CaseExecution) -> Option<BodyEnd> {
    execution
        .transcript
        .first()?
        .exchanges
        .first()?
        .response
        .as_ref()
        .map(|r| r.end.clone())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_bytes_are_a_failure() {
    let (verdict, execution) = judge("/garbage", false).await;
    assert_eq!(verdict, Verdict::Fail, "{execution:#?}");
    let exchange = &execution.transcript[0].exchanges[0];
    assert!(exchange.response.is_none());
    assert!(
        !exchange.transport_error.as_ref().unwrap().unreachable,
        "the host answered garbage: a host failure, not an environment error"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hang_is_an_error_within_the_case_time_never_a_failure() {
    // The case's own budget ran out: the harness could not judge, and no bound the seed states
    // was broken, so the verdict is ERROR, not FAIL.
    let (verdict, execution) = judge("/hang", false).await;
    assert_eq!(verdict, Verdict::Error);
    assert!(
        execution
            .checks
            .iter()
            .any(|c| c.check == STEP_COMPLETED || c.message.contains("no response")),
        "{:#?}",
        execution.checks
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_stream_is_cut_at_the_bound() {
    let (verdict, execution) = judge("/endless", true).await;
    // Cut at the byte bound, the stream is judged (FAIL); cut first by the case's budget, before
    // any terminal event, it was not seen to its end (ERROR). Never PASS.
    match end_of(&execution) {
        Some(BodyEnd::TooLarge(_)) => assert_eq!(verdict, Verdict::Fail),
        Some(BodyEnd::Timeout) => assert_eq!(verdict, Verdict::Error),
        other => panic!("the endless stream ended otherwise: {other:?}"),
    }
    let response = execution.transcript[0].exchanges[0]
        .response
        .as_ref()
        .unwrap();
    assert!(
        response.body_bytes <= 8 * 1024 * 1024 + 64 * 1024,
        "read past the bound: {}",
        response.body_bytes
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_megabyte_frame_stops_at_the_frame_bound() {
    let (verdict, execution) = judge("/huge-frame", true).await;
    assert_eq!(verdict, Verdict::Fail);
    assert!(
        matches!(end_of(&execution), Some(BodyEnd::TooLarge(_))),
        "{:?}",
        end_of(&execution)
    );
    let response = execution.transcript[0].exchanges[0]
        .response
        .as_ref()
        .unwrap();
    assert!(
        response.body_bytes < 4 * 1024 * 1024,
        "stopped reading early, at {} bytes",
        response.body_bytes
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_body_stops_at_the_body_bound() {
    let (verdict, execution) = judge("/huge-body", false).await;
    assert_eq!(verdict, Verdict::Fail);
    assert!(
        matches!(end_of(&execution), Some(BodyEnd::TooLarge(_))),
        "{:?}",
        end_of(&execution)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_utf8_is_noticed_and_judged() {
    let (verdict, execution) = judge("/invalid-utf8", true).await;
    assert_eq!(verdict, Verdict::Fail, "{:#?}", execution.checks);
    let response = execution.transcript[0].exchanges[0]
        .response
        .as_ref()
        .unwrap();
    assert!(!response.body_utf8);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_the_budget_cut_is_an_error_never_judged_on_its_prefix() {
    // The headers came, the body never ended: what the checks would see is a prefix of the
    // answer (no JSON document), so the step is not judged (ERROR), never a FAIL of its checks.
    let (verdict, execution) = judge("/half-body", false).await;
    assert_cut_not_judged(verdict, &execution);
    assert_eq!(end_of(&execution), Some(BodyEnd::Timeout));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_drip_ends_at_the_case_time() {
    // A stream still dripping when the case's budget runs out, before any terminal event, looks
    // the same as a slow host: the harness could not see it to its end (ERROR, never PASS).
    let (verdict, execution) = judge("/drip", true).await;
    assert_eq!(verdict, Verdict::Error, "{:#?}", execution.checks);
    assert_eq!(end_of(&execution), Some(BodyEnd::Timeout));
    assert!(
        execution.checks.iter().any(|c| c.check == STEP_COMPLETED),
        "{:#?}",
        execution.checks
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_target_is_an_error_not_a_failure() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    drop(listener);
    let runner = CaseRunner {
        driver: HttpDriver::new(&ClientOptions::default(), Limits::default()).unwrap(),
        target: Arc::new(external_target(format!("http://{address}"))),
        time_scale: 1.0,
        proptest_seed: 1,
        regressions_dir: None,
    };
    let execution = runner.run(&case("/anything", false)).await;
    assert_eq!(harness::run::judge(&execution).0, Verdict::Error);
}

/// A stream case on `path` with these checks (and a longer budget than the hostile probes').
fn stream_case(path: &str, expect: serde_json::Value) -> harness::case::Case {
    let case = json!({
        "id": "x.hostile.long", "title": "long", "requirements": ["exec.access.event-stream-by-execution-id"],
        "level": "MUST", "surface": "execution", "timeout_ms": 20000,
        "steps": [{"id": "s", "stream": {"path": path}, "expect": expect}]
    });
    lint_case("long.json", case.to_string().as_bytes())
        .unwrap()
        .case
}

fn long_response(execution: &harness::run::CaseExecution) -> &harness::transcript::ResponseRecord {
    execution.transcript[0].exchanges[0]
        .response
        .as_ref()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_violation_in_the_frames_past_the_kept_bound_fails() {
    let expect = json!([{"status": 200}, {"sequence": {"strictly_increasing": true}}, {"closed_by_server": true}]);
    let (verdict, execution) = judge_case(stream_case("/long-violating", expect)).await;
    let response = long_response(&execution);
    // The harness kept 5,000 frames and folded the other 25,000 as they arrived.
    assert_eq!(response.frames.len(), 5_000);
    let fold = response.folded.as_ref().expect("the rest was folded");
    assert_eq!(fold.frames, LONG_STREAM_FRAMES - 5_000);
    assert_eq!(fold.first_not_increasing, Some([15_000, 15_000]));
    assert_eq!(verdict, Verdict::Fail, "{:#?}", execution.checks);
    let sequence = execution
        .checks
        .iter()
        .find(|c| c.check == "sequence")
        .unwrap();
    assert_eq!(sequence.verdict, Verdict::Fail);
    assert!(
        sequence.message.contains("past the kept frames"),
        "{}",
        sequence.message
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_conforming_stream_passes_what_folds_and_is_not_judged_on_what_does_not() {
    // What folds (sequence rules, frame counts, keep-alive, types) is judged on every frame.
    let folding = json!([
        {"status": 200}, {"sequence": {"strictly_increasing": true, "contiguous": true, "ids_match": true}},
        {"frames": {"count": LONG_STREAM_FRAMES}}, {"events_include": ["execution.completed"]},
        {"events_exclude": ["execution.failed"]}, {"closed_by_server": true}
    ]);
    let (verdict, execution) = judge_case(stream_case("/long-conforming", folding)).await;
    assert_eq!(verdict, Verdict::Pass, "{:#?}", execution.checks);
    // What does not fold (the terminal rules and the order need the events in place) is ERROR,
    // never a PASS on frames the checks did not see.
    let whole = json!([
        {"status": 200}, {"terminal": {"exactly_one_last": true}},
        {"order": {"subsequence": ["execution.accepted", "execution.completed"]}}
    ]);
    let (verdict, execution) = judge_case(stream_case("/long-conforming", whole)).await;
    assert_eq!(verdict, Verdict::Error, "{:#?}", execution.checks);
    for check in ["terminal", "order"] {
        let outcome = execution.checks.iter().find(|c| c.check == check).unwrap();
        assert_eq!(outcome.verdict, Verdict::Error, "{outcome:#?}");
        assert!(
            outcome.message.contains("judged on a prefix"),
            "{}",
            outcome.message
        );
    }
}
