//! Helpers of the AI-envelope, feedback and era-2 tests: runs of the
//! structured-output fixture with an `envelope-program`, the log read without validation (a
//! defect may break it), the snapshot, the mock's call journal.

use serde_json::{Value, json};

use crate::w_host::{Host, KEY_A, run_path};

/// An AI envelope of the conformance kind `example.answer`.
pub fn envelope(correlation_id: &str, payload: Value) -> Value {
    json!({
        "type": "example.answer", "correlationId": correlation_id, "payload": payload,
        "meta": {"source": "ai-generation", "ts": "2026-01-01T00:00:00Z"}
    })
}

/// A valid `example.answer` payload.
pub fn answer(text: &str) -> Value {
    json!({"answer": text, "confidence": 0.5})
}

/// The `POST /runs` body of a structured-output run.
pub fn structured_body(workflow: &str, attempts: Value, inputs: Value, ai: Value) -> Value {
    let mut ai = ai;
    ai["mockProvider"] = json!({"id": "envelope-program", "config": {"attempts": attempts}});
    json!({"workflowId": workflow, "inputs": inputs, "configurable": {"version": 1, "ai": ai}})
}

/// Starts a `conformance-structured-output` run and returns its finished log and snapshot.
pub async fn structured(host: &Host, attempts: Value) -> (String, Vec<Value>, Value) {
    structured_with(
        host,
        "conformance-structured-output",
        attempts,
        json!({}),
        json!({}),
    )
    .await
}

/// Starts a structured run with inputs and `configurable.ai` options; returns the run id, the
/// finished log (unvalidated) and the snapshot.
pub async fn structured_with(
    host: &Host,
    workflow: &str,
    attempts: Value,
    inputs: Value,
    ai: Value,
) -> (String, Vec<Value>, Value) {
    let run_id = host
        .create(structured_body(workflow, attempts, inputs, ai))
        .await;
    let log = raw_log(host, &run_id).await;
    let snapshot = get_json(host, &run_path(&run_id)).await;
    (run_id, log, snapshot)
}

/// A GET as tenant A, the JSON body.
pub async fn get_json(host: &Host, path: &str) -> Value {
    host.get(path, Some(KEY_A), &[]).await.json().await.unwrap()
}

/// The log, long-polled to the terminal event, without validating it.
pub async fn raw_log(host: &Host, run_id: &str) -> Vec<Value> {
    let mut after: Option<i64> = None;
    let mut log = Vec::new();
    loop {
        let query = after.map_or("timeout=60".to_string(), |a| {
            format!("afterSequence={a}&timeout=60")
        });
        let body = get_json(host, &format!("{}/events/poll?{query}", run_path(run_id))).await;
        let events = body["events"].as_array().cloned().unwrap_or_default();
        if let Some(last) = events.last() {
            after = last["sequence"].as_i64();
        }
        log.extend(events);
        if body["isTerminal"] == true {
            return log;
        }
    }
}

/// The mock's call journal of a run.
pub async fn journal(host: &Host, run_id: &str) -> Vec<Value> {
    let path = format!(
        "/conformance/seams/mock-ai/runs/{}/calls",
        spec::openwop::encode_run_id_for_path(run_id)
    );
    get_json(host, &path).await["calls"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// The events of one type.
pub fn of_type<'a>(log: &'a [Value], event_type: &str) -> Vec<&'a Value> {
    log.iter().filter(|e| e["type"] == event_type).collect()
}

/// The error code of the run's failed node, if any.
pub fn failed_code(log: &[Value]) -> Option<String> {
    of_type(log, "node.failed")
        .first()
        .and_then(|e| e["payload"]["error"]["code"].as_str())
        .map(str::to_string)
}

/// The snapshot status.
pub fn status(snapshot: &Value) -> &str {
    snapshot["status"].as_str().unwrap_or_default()
}
