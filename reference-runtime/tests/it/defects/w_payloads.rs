//! The rules of the defects of payloads as upstream states them (`run-event-payloads.schema.json`,
//! `subject.schema.json`): each rule holds on a clean host and breaks with its defect. Each
//! rule is the harness's own judgement, `validate_run_event_payload` of the event's payload.

use crate::w_host::*;
use serde_json::{Value, json};
use spec::schema::validate_run_event_payload;

/// The whole log of a run once terminal, read through poll without the support module's
/// validation (a defective host's events must reach the rule, not panic the reader).
async fn raw_finished_log(host: &Host, run_id: &str) -> Vec<Value> {
    let poll = |query: String| async move {
        let path = format!("{}/events/poll?{query}", run_path(run_id));
        host.get(&path, Some(KEY_A), &[])
            .await
            .json::<Value>()
            .await
            .unwrap()
    };
    loop {
        let body = poll("timeout=60".to_string()).await;
        if body["isTerminal"] == true {
            return body["events"].as_array().cloned().unwrap_or_default();
        }
        if let Some(last) = body["lastSequence"].as_i64().filter(|l| *l >= 0) {
            poll(format!("afterSequence={last}&timeout=60")).await;
        }
    }
}

/// Whether every event of `event_type` in `log` validates (and there is at least one).
fn all_valid(log: &[Value], event_type: &str) -> bool {
    let events: Vec<&Value> = log.iter().filter(|e| e["type"] == event_type).collect();
    !events.is_empty()
        && events
            .iter()
            .all(|e| validate_run_event_payload(event_type, &e["payload"]) == Ok(true))
}

pub(super) async fn run_started_valid(host: &Host) -> bool {
    let run_id = host.create_fixture("conformance-noop").await;
    let log = raw_finished_log(host, &run_id).await;
    all_valid(&log, "run.started") && log[0]["payload"]["owner"]["subject"].is_object()
}

pub(super) async fn node_failed_valid(host: &Host) -> bool {
    let run_id = host.create_fixture("conformance-failure").await;
    all_valid(&raw_finished_log(host, &run_id).await, "node.failed")
}

pub(super) async fn interrupt_resolved_valid(host: &Host) -> bool {
    let run_id = host.create_fixture("conformance-approval").await;
    host.wait_for(&run_id, "interrupt.requested").await;
    let resolved = host
        .post(
            &format!("{}/interrupts/approve", run_path(&run_id)),
            Some(KEY_A),
            &json!({"resumeValue": {"action": "accept"}}),
        )
        .await;
    assert!(resolved.status().is_success(), "{}", resolved.status());
    all_valid(&raw_finished_log(host, &run_id).await, "interrupt.resolved")
}
