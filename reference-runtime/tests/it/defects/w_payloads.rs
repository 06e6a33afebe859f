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
            &format!("{}/interrupts/gate", run_path(&run_id)),
            Some(KEY_A),
            &json!({"resumeValue": {"action": "accept"}}),
        )
        .await;
    assert!(resolved.status().is_success(), "{}", resolved.status());
    all_valid(&raw_finished_log(host, &run_id).await, "interrupt.resolved")
}

/// The log of a run up to its first `event_type`, read through poll without validation.
async fn raw_log_until(host: &Host, run_id: &str, event_type: &str) -> Vec<Value> {
    let mut log: Vec<Value> = Vec::new();
    loop {
        let query = match log.last().and_then(|e| e["sequence"].as_i64()) {
            Some(after) => format!("afterSequence={after}&timeout=60"),
            None => "timeout=60".to_string(),
        };
        let path = format!("{}/events/poll?{query}", run_path(run_id));
        let body: Value = host
            .get(&path, Some(KEY_A), &[])
            .await
            .json()
            .await
            .unwrap();
        log.extend(body["events"].as_array().cloned().unwrap_or_default());
        if log.iter().any(|e| e["type"] == event_type) || body["isTerminal"] == true {
            return log;
        }
    }
}

pub(super) async fn interrupt_requested_valid(host: &Host) -> bool {
    let run_id = host.create_fixture("conformance-approval").await;
    let log = raw_log_until(host, &run_id, "interrupt.requested").await;
    all_valid(&log, "interrupt.requested")
}

pub(super) async fn node_started_valid(host: &Host) -> bool {
    let run_id = host.create_fixture("conformance-noop").await;
    all_valid(&raw_finished_log(host, &run_id).await, "node.started")
}

pub(super) async fn provider_usage_valid(host: &Host) -> bool {
    let run_id = host
        .create(
            json!({"workflowId": "conformance-stream-text", "inputs": {"prompt": "hi"},
            "configurable": {"version": 1, "ai": {"mockProvider": {"id": "stream-text",
                "config": {"usage": {"promptTokens": 10, "completionTokens": 5}}}}}}),
        )
        .await;
    all_valid(&raw_finished_log(host, &run_id).await, "provider.usage")
}
