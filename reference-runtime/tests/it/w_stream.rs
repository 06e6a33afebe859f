//! Surface W: `GET /runs/{runId}/events` — every stream mode and mixed
//! combination on one finished run, resumption at every sequence, live resumption, batching,
//! keep-alive, the subscriber limit, and the order of validation.

use std::time::Duration;

use crate::w_host::*;
use reference_runtime::openwop::OpenWopConfig;
use serde_json::{Value, json};
use spec::registry::{StreamTier, event_types};
use tokio::time::Instant;

/// A finished run of `conformance-all-tiers` (events of every tier) and its log.
async fn finished_all_tiers(host: &Host) -> (String, Vec<Value>) {
    let run_id = host.create_fixture("conformance-all-tiers").await;
    host.wait_for(&run_id, "interrupt.requested").await;
    resolve(host, &run_id, "approve").await;
    let log = host.finished_log(&run_id).await;
    (run_id, log)
}

/// Accepts the interrupt of the gate node `node` (`approve` in conformance-all-tiers, `gate` in
/// upstream's conformance-approval).
async fn resolve(host: &Host, run_id: &str, node: &str) {
    let response = host
        .post(
            &format!("{}/interrupts/{node}", run_path(run_id)),
            Some(KEY_A),
            &json!({"resumeValue": {"action": "accept"}}),
        )
        .await;
    assert_eq!(response.status(), 200);
}

/// The model of the chapter's tier table, computed from the registry.
fn admits(mode: &str, event_type: &str) -> bool {
    match mode {
        "debug" => true,
        "messages" => event_type == "output.chunk",
        "updates" => event_types()
            .get(event_type)
            .is_some_and(|e| e.tier == StreamTier::Updates),
        other => panic!("not a mode: {other}"),
    }
}

/// The frames a clean host must send for `modes` after `after`: (id, event, data).
fn expected(log: &[Value], modes: &[&str], after: Option<u64>) -> Vec<(u64, String, Value)> {
    let mixed = modes.len() > 1;
    log.iter()
        .filter(|e| after.is_none_or(|a| e["sequence"].as_u64().unwrap() > a))
        .filter_map(|e| {
            let event_type = e["type"].as_str().unwrap();
            let mode = modes.iter().find(|m| admits(m, event_type))?;
            let seq = e["sequence"].as_u64().unwrap();
            Some(match (mixed, *mode) {
                (true, mode) => (seq, mode.to_string(), e.clone()),
                (false, "messages") => (seq, "ai.message.chunk".to_string(), e["payload"].clone()),
                (false, _) => (seq, event_type.to_string(), e.clone()),
            })
        })
        .collect()
}

fn observed(frames: &[Frame]) -> Vec<(u64, String, Value)> {
    frames
        .iter()
        .map(|f| (f.seq(), f.event.clone().unwrap(), f.json()))
        .collect()
}

fn selections() -> Vec<Vec<&'static str>> {
    let modes = ["updates", "messages", "debug"];
    let mut all: Vec<Vec<&str>> = modes.iter().map(|m| vec![*m]).collect();
    for a in modes {
        for b in modes {
            if a != b {
                all.push(vec![a, b]);
                for c in modes {
                    if c != a && c != b {
                        all.push(vec![a, b, c]);
                    }
                }
            }
        }
    }
    all
}

async fn open(
    host: &Host,
    run_id: &str,
    query: &str,
    last_event_id: Option<&str>,
) -> reqwest::Response {
    let headers: Vec<(&str, &str)> = last_event_id
        .map(|id| ("last-event-id", id))
        .into_iter()
        .collect();
    host.stream(run_id, query, &headers).await
}

#[tokio::test]
async fn every_mode_and_mixed_combination_on_one_finished_run() {
    let host = host().await;
    let (run_id, log) = finished_all_tiers(&host).await;
    let default = read_all(open(&host, &run_id, "", None).await).await;
    assert_eq!(
        observed(&default),
        expected(&log, &["updates"], None),
        "default is updates"
    );
    for modes in selections() {
        let query = format!("?streamMode={}", modes.join(","));
        let frames = read_all(open(&host, &run_id, &query, None).await).await;
        assert_eq!(observed(&frames), expected(&log, &modes, None), "{query}");
        assert!(!frames.is_empty(), "{query}");
    }
    // Vendor events appear in debug only; node.started never in updates.
    let updates = read_all(open(&host, &run_id, "?streamMode=updates", None).await).await;
    assert!(updates.iter().all(|f| {
        let t = f.event.as_deref().unwrap();
        !t.starts_with("example.") && t != "node.started" && t != "provider.usage"
    }));
    // messages: the chunk payloads with Tier 1 meta on the last one.
    let messages = read_all(open(&host, &run_id, "?streamMode=messages", None).await).await;
    let last = messages.last().unwrap().json();
    assert_eq!(last["isLast"], true);
    assert!(last["meta"]["finishReason"].is_string() && last["meta"]["usage"].is_object());
}

#[tokio::test]
async fn values_sends_a_snapshot_after_each_updates_transition() {
    let host = host().await;
    let (run_id, log) = finished_all_tiers(&host).await;
    let frames = read_all(open(&host, &run_id, "?streamMode=values", None).await).await;
    let expected_ids: Vec<u64> = expected(&log, &["updates"], None)
        .iter()
        .map(|f| f.0)
        .collect();
    assert_eq!(
        frames.iter().map(Frame::seq).collect::<Vec<_>>(),
        expected_ids
    );
    for frame in &frames {
        assert_eq!(frame.event.as_deref(), Some("state.snapshot"));
        assert_eq!(frame.json()["runId"], run_id.as_str());
    }
    let statuses: Vec<String> = frames
        .iter()
        .map(|f| f.json()["status"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(statuses.first().unwrap(), "running");
    assert!(statuses.iter().any(|s| s == "waiting-approval"));
    assert_eq!(statuses.last().unwrap(), "completed");
}

#[tokio::test]
async fn resume_at_every_sequence_in_every_mode_is_exclusive() {
    let host = host().await;
    let (run_id, log) = finished_all_tiers(&host).await;
    let last = log.len() as u64 - 1;
    let mut cursors: Vec<u64> = (0..=last + 2).collect();
    cursors.push(u64::MAX);
    for modes in selections() {
        let query = format!("?streamMode={}", modes.join(","));
        for cursor in &cursors {
            let id = cursor.to_string();
            let frames = read_all(open(&host, &run_id, &query, Some(&id)).await).await;
            assert_eq!(
                observed(&frames),
                expected(&log, &modes, Some(*cursor)),
                "{query} after {cursor}"
            );
        }
    }
    let huge =
        read_all(open(&host, &run_id, "", Some("123456789012345678901234567890")).await).await;
    assert!(
        huge.is_empty(),
        "a well-formed integer past the end is never refused"
    );
    for cursor in &cursors {
        let frames = read_all(
            open(
                &host,
                &run_id,
                "?streamMode=values",
                Some(&cursor.to_string()),
            )
            .await,
        )
        .await;
        if *cursor < last {
            assert_eq!(
                frames.len(),
                1,
                "values resumption starts with one snapshot"
            );
            assert_eq!(frames[0].event.as_deref(), Some("state.snapshot"));
            assert_eq!(frames[0].seq(), last, "id = the highest sequence folded");
            assert_eq!(frames[0].json()["status"], "completed");
        } else {
            assert!(
                frames.is_empty(),
                "at or past the end of a terminal run: no frame"
            );
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_live_run_resumed_mid_way_is_held_open_then_continues_without_gap_or_duplicate() {
    let host = host().await;
    let run_id = host.create_fixture("conformance-all-tiers").await;
    let mut first = SseReader::new(open(&host, &run_id, "?streamMode=debug", None).await);
    let mut seen = Vec::new();
    loop {
        let frame = first.next_frame().await.unwrap();
        validate_frame(&frame);
        seen.push(frame.clone());
        if frame.event.as_deref() == Some("interrupt.requested") {
            break;
        }
    }
    drop(first);
    let last_id = seen.last().unwrap().id.clone().unwrap();
    let mut resumed =
        SseReader::new(open(&host, &run_id, "?streamMode=debug", Some(&last_id)).await);
    // Nothing after the cursor yet: the stream is held open (only keep-alive comments).
    let waited = tokio::time::timeout(Duration::from_secs(60), async {
        let mut comments = 0;
        while comments < 3 {
            match resumed.next_item().await {
                Some(Item::Comment(_)) => comments += 1,
                other => panic!("expected only keep-alive comments, got {other:?}"),
            }
        }
    })
    .await;
    assert!(waited.is_ok(), "three keep-alives within 60 s");
    resolve(&host, &run_id, "approve").await;
    let rest = resumed.frames_until_close().await;
    for frame in &rest {
        validate_frame(frame);
    }
    let log = host.finished_log(&run_id).await;
    let all: Vec<u64> = seen.iter().chain(rest.iter()).map(Frame::seq).collect();
    assert_eq!(
        all,
        (0..log.len() as u64).collect::<Vec<_>>(),
        "no gap, no duplicate"
    );
    assert_eq!(rest.last().unwrap().event.as_deref(), Some("run.completed"));
}

#[tokio::test(start_paused = true)]
async fn live_streams_in_every_mode_match_the_log_and_close_after_the_terminal_event() {
    let host = host().await;
    let run_id = host
        .create(
            json!({"workflowId": "conformance-all-tiers", "configurable": {"version": 1,
            "ai": {"mockProvider": {"id": "stream-text", "config": {"delayMsPerToken": 1000}}}}}),
        )
        .await;
    let mut readers = Vec::new();
    for modes in selections() {
        let response = open(
            &host,
            &run_id,
            &format!("?streamMode={}", modes.join(",")),
            None,
        )
        .await;
        readers.push((modes, SseReader::new(response)));
    }
    let values = SseReader::new(open(&host, &run_id, "?streamMode=values", None).await);
    host.wait_for(&run_id, "interrupt.requested").await;
    resolve(&host, &run_id, "approve").await;
    let log = host.finished_log(&run_id).await;
    for (modes, mut reader) in readers {
        let frames = reader.frames_until_close().await;
        for frame in &frames {
            validate_frame(frame);
        }
        assert_eq!(observed(&frames), expected(&log, &modes, None), "{modes:?}");
    }
    let mut values = values;
    let snapshots = values.frames_until_close().await;
    assert_eq!(snapshots.last().unwrap().json()["status"], "completed");
}

#[tokio::test]
async fn batches_carry_the_highest_sequence_flush_on_suspension_and_terminal_and_resume() {
    let host = host().await;
    let (run_id, log) = finished_all_tiers(&host).await;
    for modes in [
        vec!["updates"],
        vec!["debug"],
        vec!["updates", "messages"],
        vec!["messages", "debug"],
    ] {
        let query = format!("?streamMode={}&bufferMs=200", modes.join(","));
        let frames = read_all(open(&host, &run_id, &query, None).await).await;
        let want: Vec<Value> = expected(&log, &modes, None)
            .into_iter()
            .map(|f| log[f.0 as usize].clone())
            .collect();
        let mut flat = Vec::new();
        for frame in &frames {
            assert_eq!(frame.event.as_deref(), Some("batch"), "{query}");
            let batch = frame.json();
            let batch = batch.as_array().unwrap();
            let highest = batch
                .iter()
                .map(|e| e["sequence"].as_u64().unwrap())
                .max()
                .unwrap();
            assert_eq!(frame.seq(), highest, "batch id = its highest sequence");
            flat.extend(batch.iter().cloned());
            // Resuming from a batch id gives exactly the rest.
            let rest =
                read_all(open(&host, &run_id, &query, Some(&frame.seq().to_string())).await).await;
            let rest: Vec<Value> = rest
                .iter()
                .flat_map(|f| f.json().as_array().unwrap().clone())
                .collect();
            let want_rest: Vec<Value> = want
                .iter()
                .filter(|e| e["sequence"].as_u64().unwrap() > highest)
                .cloned()
                .collect();
            assert_eq!(rest, want_rest, "{query} after batch {highest}");
        }
        assert_eq!(
            flat, want,
            "{query}: batches flatten to the unbatched stream"
        );
        let first = frames[0].json();
        assert_eq!(
            first.as_array().unwrap().last().unwrap()["type"],
            "node.suspended",
            "flush on node.suspended"
        );
    }
    let zero = read_all(open(&host, &run_id, "?bufferMs=0", None).await).await;
    assert!(zero.iter().all(|f| f.event.as_deref() != Some("batch")));
    let messages =
        read_all(open(&host, &run_id, "?streamMode=messages&bufferMs=500", None).await).await;
    assert!(
        messages
            .iter()
            .all(|f| f.event.as_deref() == Some("ai.message.chunk")),
        "ignored for messages alone"
    );
    let values =
        read_all(open(&host, &run_id, "?streamMode=values&bufferMs=500", None).await).await;
    assert!(
        values
            .iter()
            .all(|f| f.event.as_deref() == Some("state.snapshot")),
        "ignored for values"
    );
}

#[tokio::test(start_paused = true)]
async fn a_live_batch_flushes_on_its_timer_then_on_the_terminal_event() {
    let host = host().await;
    let started = Instant::now();
    let run_id = host
        .create(json!({"workflowId": "conformance-delay", "inputs": {"delayMs": 10_000}}))
        .await;
    let mut reader =
        SseReader::new(open(&host, &run_id, "?streamMode=debug&bufferMs=1000", None).await);
    let first = reader.next_frame().await.unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "flushed by the 1 s timer, before the run ended"
    );
    let seqs = |f: &Frame| -> Vec<u64> {
        f.json()
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["sequence"].as_u64().unwrap())
            .collect()
    };
    assert_eq!(seqs(&first), [0, 1]);
    assert_eq!(first.seq(), 1);
    let second = reader.next_frame().await.unwrap();
    assert_eq!(seqs(&second), [2, 3]);
    assert_eq!(second.json()[1]["type"], "run.completed");
    assert!(
        reader.next_frame().await.is_none(),
        "closed after the terminal event"
    );
    let resumed =
        read_all(open(&host, &run_id, "?streamMode=debug&bufferMs=1000", Some("1")).await).await;
    assert_eq!(resumed.len(), 1);
    assert_eq!(seqs(&resumed[0]), [2, 3]);
}

#[tokio::test(start_paused = true)]
async fn a_live_batch_flushes_at_node_suspended() {
    let host = host().await;
    let run_id = host.create_fixture("conformance-approval").await;
    let mut reader = SseReader::new(open(&host, &run_id, "?bufferMs=5000", None).await);
    let first = reader.next_frame().await.unwrap().json();
    let types: Vec<&str> = first
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        ["run.started", "node.suspended"],
        "flushed at node.suspended"
    );
    let second = reader.next_frame().await.unwrap().json();
    assert_eq!(second[0]["type"], "interrupt.requested");
    resolve(&host, &run_id, "gate").await;
    let rest = reader.frames_until_close().await;
    assert_eq!(
        rest.last()
            .unwrap()
            .json()
            .as_array()
            .unwrap()
            .last()
            .unwrap()["type"],
        "run.completed"
    );
}

#[tokio::test(start_paused = true)]
async fn keep_alive_comments_follow_the_configured_interval() {
    for (config, interval) in [
        (OpenWopConfig::default(), Duration::from_secs(15)),
        (
            OpenWopConfig {
                keep_alive_secs: 2,
                ..OpenWopConfig::default()
            },
            Duration::from_secs(2),
        ),
    ] {
        let host = host_with(config, &[]).await;
        let run_id = host.create_fixture("conformance-approval").await;
        let mut reader = SseReader::new(open(&host, &run_id, "", None).await);
        loop {
            let frame = reader.next_frame().await.unwrap();
            if frame.event.as_deref() == Some("interrupt.requested") {
                break;
            }
        }
        for _ in 0..3 {
            let since = Instant::now();
            assert!(matches!(reader.next_item().await, Some(Item::Comment(_))));
            assert!(
                since.elapsed() <= interval,
                "{:?} > {interval:?}",
                since.elapsed()
            );
            assert!(since.elapsed() <= Duration::from_secs(30));
        }
    }
    assert!(
        toml::from_str::<OpenWopConfig>("keep_alive_secs = 31").is_err(),
        "never above 30 s"
    );
}

#[tokio::test]
async fn the_subscriber_limit_answers_429_with_retry_after_and_frees_slots() {
    let config = OpenWopConfig {
        max_subscribers_per_run: 2,
        ..OpenWopConfig::default()
    };
    let host = host_with(config, &[]).await;
    let run_id = host.create_fixture("conformance-approval").await;
    let mut a = SseReader::new(open(&host, &run_id, "", None).await);
    let mut b = SseReader::new(open(&host, &run_id, "?streamMode=debug", None).await);
    let refused = open(&host, &run_id, "?streamMode=messages", None).await;
    assert_eq!(refused.headers()["retry-after"], "1");
    expect_error(refused, 429, "rate_limited").await;
    let other = host.create_fixture("conformance-approval").await;
    assert_eq!(
        open(&host, &other, "", None).await.status(),
        200,
        "the limit is per run"
    );
    resolve(&host, &run_id, "gate").await;
    a.frames_until_close().await;
    b.frames_until_close().await;
    let after = read_all(open(&host, &run_id, "", None).await).await;
    assert!(!after.is_empty(), "slots are freed when streams end");
}

#[tokio::test]
async fn stream_mode_is_validated_before_content_negotiation() {
    let host = host().await;
    let run_id = host.create_fixture("conformance-noop").await;
    host.finished_log(&run_id).await;
    for bad in [
        "bogus",
        "",
        "values,updates",
        "updates,values",
        "updates,bogus",
        "Updates",
        "updates,",
        ",debug",
    ] {
        let response = open(&host, &run_id, &format!("?streamMode={bad}"), None).await;
        let body = expect_error(response, 400, "unsupported_stream_mode").await;
        let mut supported: Vec<String> =
            serde_json::from_value(body["details"]["supported"].clone()).unwrap();
        supported.sort();
        assert_eq!(
            supported,
            ["debug", "messages", "updates", "values"],
            "single modes only"
        );
        for accept in ["text/event-stream", "application/json"] {
            let with_accept = host
                .stream(
                    &run_id,
                    &format!("?streamMode={bad}"),
                    &[("accept", accept)],
                )
                .await;
            expect_error(with_accept, 400, "unsupported_stream_mode").await;
        }
    }
    let json_accept = host
        .stream(
            &run_id,
            "?streamMode=updates",
            &[("accept", "application/json")],
        )
        .await;
    assert_eq!(json_accept.status(), 200, "never 406");
    let ignored = read_all(open(&host, &run_id, "?resumable=true&foo=bar", None).await).await;
    assert!(!ignored.is_empty(), "unknown parameters are ignored");
    for bad in ["5001", "-1", "abc", "1.5"] {
        let response = open(&host, &run_id, &format!("?bufferMs={bad}"), None).await;
        expect_error(response, 400, "validation_error").await;
    }
}

#[tokio::test]
async fn a_malformed_last_event_id_is_refused_only_after_authorisation() {
    let host = host().await;
    let run_id = host.create_fixture("conformance-noop").await;
    host.finished_log(&run_id).await;
    for bad in ["abc", "-1", "1.5", "", "1 2", "0x1"] {
        let response = open(&host, &run_id, "", Some(bad)).await;
        expect_error(response, 400, "validation_error").await;
    }
    let unreadable = [
        (run_path(&run_id), KEY_B),
        (
            run_path("tenant-a/run-00000000000000000000000000000000"),
            KEY_A,
        ),
        (
            run_path("tenant-b/run-00000000000000000000000000000000"),
            KEY_A,
        ),
    ];
    for (path, key) in unreadable {
        let url = format!("{path}/events");
        let plain = host.get(&url, Some(key), &[]).await;
        let with = host.get(&url, Some(key), &[("last-event-id", "abc")]).await;
        assert_eq!(plain.status(), with.status(), "{url}");
        let plain: Value = plain.json().await.unwrap();
        let with: Value = with.json().await.unwrap();
        assert_eq!(plain, with, "identical with and without the header");
        let no_key = host.get(&url, None, &[("last-event-id", "abc")]).await;
        expect_error(no_key, 401, "unauthenticated").await;
    }
}
