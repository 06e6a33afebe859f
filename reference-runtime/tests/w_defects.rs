//! Every `w-*` defect of the catalogue, observed over HTTP: the rule holds on a clean host and
//! breaks with the defect switched on. All tests run on virtual time.

mod w_support;

use std::time::Duration;

use reference_runtime::defects::Defect;
use reference_runtime::openwop::OpenWopConfig;
use serde_json::{Value, json};
use spec::schema::{Published, validate, validate_run_event_payload};
use w_support::*;

/// Runs `rule` on a clean host (it must hold) and on a host with `defect` (it must break).
macro_rules! defect_test {
    ($name:ident, $defect:ident, $rule:ident) => {
        defect_test!($name, $defect, $rule, OpenWopConfig::default());
    };
    ($name:ident, $defect:ident, $rule:ident, $config:expr) => {
        #[tokio::test(start_paused = true)]
        async fn $name() {
            let clean = host_with($config, &[]).await;
            assert!($rule(&clean).await, "the rule holds on a clean host");
            let defective = host_with($config, &[Defect::$defect]).await;
            assert!(
                !$rule(&defective).await,
                "{} must break its rule",
                Defect::$defect
            );
        }
    };
}

/// Every surface-W defect this file covers (checked against the catalogue below).
const COVERED: &[Defect] = &[
    Defect::WLastEventIdInclusive,
    Defect::WLastEventIdSkipsNext,
    Defect::WLastEventIdBeforeAuthorization,
    Defect::WMalformedLastEventIdAccepted,
    Defect::WValuesResumeWithoutSnapshot,
    Defect::WNotAcceptableForJsonAccept,
    Defect::WSupportedMissing,
    Defect::WSupportedListsCombinations,
    Defect::WValuesCombinationAccepted,
    Defect::WVendorEventInUpdates,
    Defect::WMixedModesReordered,
    Defect::WEventAfterTerminal,
    Defect::WSecondTerminal,
    Defect::WNoTerminalOnCancel,
    Defect::WStreamOpenAfterTerminal,
    Defect::WRunCompletedWithoutOutputs,
    Defect::WNoKeepAlive,
    Defect::WBatchIdLowest,
    Defect::WNoFlushOnSuspended,
    Defect::WPollLastSequenceOffByOne,
    Defect::WPollPastEnd404,
    Defect::WShortEventId,
    Defect::WProviderUsageAfterNodeCompleted,
    Defect::WSubscriberLimitSilentDrop,
];

#[test]
fn every_surface_w_defect_has_a_test() {
    // Issue 9's defects (AI envelopes, feedback, usage facets, era-2 logs) are tested in
    // w9_defects.rs; the first one starts the tail of the catalogue they occupy.
    let catalogue: Vec<Defect> = Defect::ALL
        .iter()
        .copied()
        .take_while(|d| *d != Defect::WEnvelopeCorrelationSynthesized)
        .filter(|d| d.surface() == "W")
        .collect();
    assert_eq!(catalogue, COVERED);
}

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

async fn last_event_id_is_exclusive(host: &Host) -> bool {
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
defect_test!(
    w_last_event_id_inclusive,
    WLastEventIdInclusive,
    last_event_id_is_exclusive
);

async fn resume_starts_at_the_next_event(host: &Host) -> bool {
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
defect_test!(
    w_last_event_id_skips_next,
    WLastEventIdSkipsNext,
    resume_starts_at_the_next_event
);

async fn header_read_after_authorisation(host: &Host) -> bool {
    let (run_id, _) = finished(host, "conformance-noop").await;
    let url = format!("{}/events", run_path(&run_id));
    let plain = host.get(&url, Some(KEY_B), &[]).await.status();
    let with = host
        .get(&url, Some(KEY_B), &[("last-event-id", "abc")])
        .await
        .status();
    plain == with
}
defect_test!(
    w_last_event_id_before_authorization,
    WLastEventIdBeforeAuthorization,
    header_read_after_authorisation
);

async fn malformed_cursor_refused(host: &Host) -> bool {
    let (run_id, _) = finished(host, "conformance-noop").await;
    host.stream(&run_id, "", &[("last-event-id", "abc")])
        .await
        .status()
        == 400
}
defect_test!(
    w_malformed_last_event_id_accepted,
    WMalformedLastEventIdAccepted,
    malformed_cursor_refused
);

async fn values_resumption_starts_with_a_snapshot(host: &Host) -> bool {
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
defect_test!(
    w_values_resume_without_snapshot,
    WValuesResumeWithoutSnapshot,
    values_resumption_starts_with_a_snapshot
);

async fn bad_mode_is_400_before_negotiation(host: &Host) -> bool {
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
defect_test!(
    w_406_for_json_accept,
    WNotAcceptableForJsonAccept,
    bad_mode_is_400_before_negotiation
);

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

async fn details_supported_present(host: &Host) -> bool {
    supported_modes(host).await.is_some_and(|s| !s.is_empty())
}
defect_test!(
    w_supported_missing,
    WSupportedMissing,
    details_supported_present
);

async fn supported_lists_single_modes(host: &Host) -> bool {
    supported_modes(host)
        .await
        .is_some_and(|s| s.iter().all(|m| !m.contains(',')))
}
defect_test!(
    w_supported_lists_combinations,
    WSupportedListsCombinations,
    supported_lists_single_modes
);

async fn values_never_combines(host: &Host) -> bool {
    let (run_id, _) = finished(host, "conformance-noop").await;
    host.stream(&run_id, "?streamMode=values,updates", &[])
        .await
        .status()
        == 400
}
defect_test!(
    w_values_combination_accepted,
    WValuesCombinationAccepted,
    values_never_combines
);

async fn vendor_events_in_debug_only(host: &Host) -> bool {
    let (run_id, _) = finished(host, "conformance-debug-noise").await;
    let got = frames(host, &run_id, "?streamMode=updates", &[]).await;
    got.iter()
        .all(|f| !f.event.as_deref().unwrap().starts_with("example."))
}
defect_test!(
    w_vendor_event_in_updates,
    WVendorEventInUpdates,
    vendor_events_in_debug_only
);

async fn mixed_modes_in_log_order(host: &Host) -> bool {
    let (run_id, _) = finished(host, "conformance-multi-node").await;
    let got = frames(host, &run_id, "?streamMode=updates,debug", &[]).await;
    let ids: Vec<u64> = got.iter().map(Frame::seq).collect();
    ids.windows(2).all(|w| w[0] < w[1])
}
defect_test!(
    w_mixed_modes_reordered,
    WMixedModesReordered,
    mixed_modes_in_log_order
);

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

async fn nothing_after_the_terminal_event(host: &Host) -> bool {
    let log = cancelled_log(host).await;
    log.last().is_some_and(|e| e["type"] == "run.cancelled")
}
defect_test!(
    w_event_after_terminal,
    WEventAfterTerminal,
    nothing_after_the_terminal_event
);

async fn exactly_one_terminal(host: &Host) -> bool {
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
defect_test!(w_second_terminal, WSecondTerminal, exactly_one_terminal);

async fn cancel_appends_run_cancelled(host: &Host) -> bool {
    let log = cancelled_log(host).await;
    log.iter().any(|e| e["type"] == "run.cancelled")
}
defect_test!(
    w_no_terminal_on_cancel,
    WNoTerminalOnCancel,
    cancel_appends_run_cancelled
);

async fn stream_closes_after_terminal(host: &Host) -> bool {
    let (run_id, _) = finished(host, "conformance-noop").await;
    let mut reader = SseReader::unchecked(host.stream(&run_id, "", &[]).await);
    tokio::time::timeout(Duration::from_secs(120), reader.frames_until_close())
        .await
        .is_ok()
}
defect_test!(
    w_stream_open_after_terminal,
    WStreamOpenAfterTerminal,
    stream_closes_after_terminal
);

async fn run_completed_carries_outputs(host: &Host) -> bool {
    let (_, log) = finished(host, "conformance-noop").await;
    let completed = log.iter().find(|e| e["type"] == "run.completed").unwrap();
    completed["payload"]["outputs"].is_object()
        && validate_run_event_payload("run.completed", &completed["payload"]).is_ok()
}
defect_test!(
    w_run_completed_without_outputs,
    WRunCompletedWithoutOutputs,
    run_completed_carries_outputs
);

async fn keep_alive_within_30s(host: &Host) -> bool {
    let run_id = host.create_fixture("conformance-approval").await;
    let mut reader = SseReader::unchecked(host.stream(&run_id, "", &[]).await);
    while reader.next_frame().await.unwrap().event.as_deref() != Some("interrupt.requested") {}
    let comment = tokio::time::timeout(Duration::from_secs(30), reader.next_item()).await;
    matches!(comment, Ok(Some(Item::Comment(_))))
}
defect_test!(w_no_keep_alive, WNoKeepAlive, keep_alive_within_30s);

async fn batch_id_is_highest(host: &Host) -> bool {
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
defect_test!(w_batch_id_lowest, WBatchIdLowest, batch_id_is_highest);

async fn batch_flushes_at_suspension(host: &Host) -> bool {
    let run_id = host.create_fixture("conformance-approval").await;
    let mut reader = SseReader::unchecked(host.stream(&run_id, "?bufferMs=5000", &[]).await);
    let first = reader.next_frame().await.unwrap().json();
    first.as_array().unwrap().last().unwrap()["type"] == "node.suspended"
}
defect_test!(
    w_no_flush_on_suspended,
    WNoFlushOnSuspended,
    batch_flushes_at_suspension
);

async fn poll_last_sequence_is_highest(host: &Host) -> bool {
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
defect_test!(
    w_poll_last_sequence_off_by_one,
    WPollLastSequenceOffByOne,
    poll_last_sequence_is_highest
);

async fn poll_past_end_is_empty(host: &Host) -> bool {
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
defect_test!(w_poll_past_end_404, WPollPastEnd404, poll_past_end_is_empty);

async fn event_ids_follow_the_grammar(host: &Host) -> bool {
    let (_, log) = finished(host, "conformance-noop").await;
    log.iter().all(|e| validate(Published::RunEvent, e).is_ok())
}
defect_test!(
    w_short_event_id,
    WShortEventId,
    event_ids_follow_the_grammar
);

async fn usage_before_node_completed(host: &Host) -> bool {
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
defect_test!(
    w_provider_usage_after_node_completed,
    WProviderUsageAfterNodeCompleted,
    usage_before_node_completed
);

async fn past_the_limit_is_429(host: &Host) -> bool {
    let run_id = host.create_fixture("conformance-approval").await;
    let _held = SseReader::unchecked(host.stream(&run_id, "", &[]).await);
    let second = host.stream(&run_id, "", &[]).await;
    second.status() == 429 && second.headers().contains_key("retry-after")
}
defect_test!(
    w_subscriber_limit_silent_drop,
    WSubscriberLimitSilentDrop,
    past_the_limit_is_429,
    OpenWopConfig {
        max_subscribers_per_run: 1,
        ..OpenWopConfig::default()
    }
);
