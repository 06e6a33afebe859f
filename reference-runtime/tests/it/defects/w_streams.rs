//! The rules of the `w-*` defects of streams, resumption, poll and the subscriber limit, observed
//! over HTTP (the rows are in the defect table, `defects/mod.rs`).

use std::time::Duration;

use crate::w_host::*;
use serde_json::{Value, json};
use spec::schema::{Published, validate, validate_run_event_payload};

async fn finished(host: &Host, workflow_id: &str) -> (String, Vec<Value>) {
    let run_id = host.create_fixture(workflow_id).await;
    let log = raw_log(host, &run_id).await;
    (run_id, log)
}

/// The log, long-polled to the terminal event, without validating (a defect may break it).
async fn raw_log(host: &Host, run_id: &str) -> Vec<Value> {
    loop {
        let response = host
            .get(
                &format!("{}/events/poll?timeout=60", run_path(run_id)),
                Some(KEY_A),
                &[],
            )
            .await;
        let body: Value = response.json().await.unwrap();
        if body["isTerminal"] == true {
            return body["events"].as_array().unwrap().clone();
        }
        let last = body["lastSequence"].as_i64().unwrap();
        host.get(
            &format!(
                "{}/events/poll?afterSequence={last}&timeout=60",
                run_path(run_id)
            ),
            Some(KEY_A),
            &[],
        )
        .await;
    }
}

async fn frames(host: &Host, run_id: &str, query: &str, headers: &[(&str, &str)]) -> Vec<Frame> {
    SseReader::unchecked(host.stream(run_id, query, headers).await)
        .frames_until_close()
        .await
}

pub(super) async fn last_event_id_is_exclusive(host: &Host) -> bool {
    let (run_id, _) = finished(host, "conformance-noop").await;
    let got = frames(
        host,
        &run_id,
        "?streamMode=debug",
        &[("last-event-id", "1")],
    )
    .await;
    got.iter().all(|f| f.seq() > 1)
}

pub(super) async fn resume_starts_at_the_next_event(host: &Host) -> bool {
    let (run_id, _) = finished(host, "conformance-noop").await;
    let got = frames(
        host,
        &run_id,
        "?streamMode=debug",
        &[("last-event-id", "0")],
    )
    .await;
    got.first().map(Frame::seq) == Some(1)
}

pub(super) async fn header_read_after_authorisation(host: &Host) -> bool {
    let (run_id, _) = finished(host, "conformance-noop").await;
    let url = format!("{}/events", run_path(&run_id));
    let plain = host.get(&url, Some(KEY_B), &[]).await.status();
    let with = host
        .get(&url, Some(KEY_B), &[("last-event-id", "abc")])
        .await
        .status();
    plain == with
}

pub(super) async fn malformed_cursor_refused(host: &Host) -> bool {
    let (run_id, _) = finished(host, "conformance-noop").await;
    host.stream(&run_id, "", &[("last-event-id", "abc")])
        .await
        .status()
        == 400
}

pub(super) async fn values_resumption_starts_with_a_snapshot(host: &Host) -> bool {
    let (run_id, _) = finished(host, "conformance-noop").await;
    let got = frames(
        host,
        &run_id,
        "?streamMode=values",
        &[("last-event-id", "0")],
    )
    .await;
    got.first().and_then(|f| f.event.as_deref()) == Some("state.snapshot")
}

pub(super) async fn bad_mode_is_400_before_negotiation(host: &Host) -> bool {
    let (run_id, _) = finished(host, "conformance-noop").await;
    let response = host
        .stream(
            &run_id,
            "?streamMode=bogus",
            &[("accept", "application/json")],
        )
        .await;
    response.status() == 400
}

async fn supported_modes(host: &Host) -> Option<Vec<String>> {
    let (run_id, _) = finished(host, "conformance-noop").await;
    let body: Value = host
        .stream(&run_id, "?streamMode=bogus", &[])
        .await
        .json()
        .await
        .unwrap();
    serde_json::from_value(body["details"]["supported"].clone()).ok()
}

pub(super) async fn details_supported_present(host: &Host) -> bool {
    supported_modes(host).await.is_some_and(|s| !s.is_empty())
}

pub(super) async fn supported_lists_single_modes(host: &Host) -> bool {
    supported_modes(host)
        .await
        .is_some_and(|s| s.iter().all(|m| !m.contains(',')))
}

pub(super) async fn values_never_combines(host: &Host) -> bool {
    let (run_id, _) = finished(host, "conformance-noop").await;
    host.stream(&run_id, "?streamMode=values,updates", &[])
        .await
        .status()
        == 400
}

pub(super) async fn vendor_events_in_debug_only(host: &Host) -> bool {
    let (run_id, _) = finished(host, "conformance-debug-noise").await;
    let got = frames(host, &run_id, "?streamMode=updates", &[]).await;
    got.iter()
        .all(|f| !f.event.as_deref().unwrap().starts_with("example."))
}

pub(super) async fn mixed_modes_in_log_order(host: &Host) -> bool {
    let (run_id, _) = finished(host, "conformance-multi-node").await;
    let got = frames(host, &run_id, "?streamMode=updates,debug", &[]).await;
    let ids: Vec<u64> = got.iter().map(Frame::seq).collect();
    ids.windows(2).all(|w| w[0] < w[1])
}

/// Cancels a cancellable run and lets its task observe the cancel (virtual time passes only
/// when every task is idle); returns the log.
async fn cancelled_log(host: &Host) -> Vec<Value> {
    let run_id = host.create_fixture("conformance-cancellable").await;
    let response = host
        .post(
            &format!("{}/cancel", run_path(&run_id)),
            Some(KEY_A),
            &json!({}),
        )
        .await;
    assert_eq!(response.status(), 200);
    tokio::time::sleep(Duration::from_secs(1)).await;
    let body: Value = host
        .get(
            &format!("{}/events/poll?timeout=1", run_path(&run_id)),
            Some(KEY_A),
            &[],
        )
        .await
        .json()
        .await
        .unwrap();
    body["events"].as_array().unwrap().clone()
}

pub(super) async fn nothing_after_the_terminal_event(host: &Host) -> bool {
    let log = cancelled_log(host).await;
    log.last().is_some_and(|e| e["type"] == "run.cancelled")
}

pub(super) async fn exactly_one_terminal(host: &Host) -> bool {
    let (_, log) = finished(host, "conformance-noop").await;
    log.iter()
        .filter(|e| {
            matches!(
                e["type"].as_str(),
                Some("run.completed" | "run.failed" | "run.cancelled")
            )
        })
        .count()
        == 1
}

pub(super) async fn cancel_appends_run_cancelled(host: &Host) -> bool {
    let log = cancelled_log(host).await;
    log.iter().any(|e| e["type"] == "run.cancelled")
}

pub(super) async fn stream_closes_after_terminal(host: &Host) -> bool {
    let (run_id, _) = finished(host, "conformance-noop").await;
    let mut reader = SseReader::unchecked(host.stream(&run_id, "", &[]).await);
    tokio::time::timeout(Duration::from_secs(120), reader.frames_until_close())
        .await
        .is_ok()
}

pub(super) async fn messages_stream_closes_after_terminal(host: &Host) -> bool {
    let (run_id, _) = finished(host, "conformance-noop").await;
    let mut reader = SseReader::unchecked(host.stream(&run_id, "?streamMode=messages", &[]).await);
    tokio::time::timeout(Duration::from_secs(120), reader.frames_until_close())
        .await
        .is_ok()
}

pub(super) async fn run_completed_carries_outputs(host: &Host) -> bool {
    let (_, log) = finished(host, "conformance-noop").await;
    let completed = log.iter().find(|e| e["type"] == "run.completed").unwrap();
    completed["payload"]["outputs"].is_object()
        && validate_run_event_payload("run.completed", &completed["payload"]).is_ok()
}

pub(super) async fn keep_alive_within_30s(host: &Host) -> bool {
    let run_id = host.create_fixture("conformance-approval").await;
    let mut reader = SseReader::unchecked(host.stream(&run_id, "", &[]).await);
    while reader.next_frame().await.unwrap().event.as_deref() != Some("interrupt.requested") {}
    let comment = tokio::time::timeout(Duration::from_secs(30), reader.next_item()).await;
    matches!(comment, Ok(Some(Item::Comment(_))))
}

pub(super) async fn batch_id_is_highest(host: &Host) -> bool {
    let (run_id, _) = finished(host, "conformance-noop").await;
    let got = frames(host, &run_id, "?streamMode=debug&bufferMs=100", &[]).await;
    got.iter().all(|f| {
        let highest = f
            .json()
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["sequence"].as_u64().unwrap())
            .max();
        highest == Some(f.seq())
    })
}

pub(super) async fn batch_flushes_at_suspension(host: &Host) -> bool {
    let run_id = host.create_fixture("conformance-approval").await;
    let mut reader = SseReader::unchecked(host.stream(&run_id, "?bufferMs=5000", &[]).await);
    let first = reader.next_frame().await.unwrap().json();
    first.as_array().unwrap().last().unwrap()["type"] == "node.suspended"
}

pub(super) async fn poll_last_sequence_is_highest(host: &Host) -> bool {
    let (run_id, _) = finished(host, "conformance-noop").await;
    let body: Value = host
        .get(
            &format!("{}/events/poll", run_path(&run_id)),
            Some(KEY_A),
            &[],
        )
        .await
        .json()
        .await
        .unwrap();
    let highest = body["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["sequence"].as_i64().unwrap())
        .max();
    Some(body["lastSequence"].as_i64().unwrap()) == highest
}

pub(super) async fn poll_past_end_is_empty(host: &Host) -> bool {
    let (run_id, _) = finished(host, "conformance-noop").await;
    let response = host
        .get(
            &format!("{}/events/poll?afterSequence=1000", run_path(&run_id)),
            Some(KEY_A),
            &[],
        )
        .await;
    response.status() == 200 && response.json::<Value>().await.unwrap()["events"] == json!([])
}

pub(super) async fn event_ids_follow_the_grammar(host: &Host) -> bool {
    let (_, log) = finished(host, "conformance-noop").await;
    log.iter().all(|e| validate(Published::RunEvent, e).is_ok())
}

pub(super) async fn usage_before_node_completed(host: &Host) -> bool {
    let run_id = host
        .create(
            json!({"workflowId": "conformance-stream-text", "configurable": {"version": 1,
            "ai": {"mockProvider": {"id": "stream-text", "config": {}}}}}),
        )
        .await;
    let log = raw_log(host, &run_id).await;
    let position = |t: &str| log.iter().position(|e| e["type"] == t).unwrap();
    position("provider.usage") < position("node.completed")
}

pub(super) async fn past_the_limit_is_429(host: &Host) -> bool {
    let run_id = host.create_fixture("conformance-approval").await;
    let _held = SseReader::unchecked(host.stream(&run_id, "", &[]).await);
    let second = host.stream(&run_id, "", &[]).await;
    second.status() == 429 && second.headers().contains_key("retry-after")
}
