//! Surface W: `GET /runs/{runId}/events/poll`.

use std::time::Duration;

use crate::w_host::*;
use reference_runtime::store::Surface;
use serde_json::{Value, json};
use tokio::time::Instant;

#[tokio::test]
async fn poll_is_closed_starts_at_zero_and_honours_after_sequence() {
    let host = host().await;
    let run_id = host.create_fixture("conformance-multi-node").await;
    let log = host.finished_log(&run_id).await;
    let whole = host.poll(&run_id, "").await;
    let keys: Vec<&String> = whole.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        ["runId", "events", "lastSequence", "status", "isTerminal"]
    );
    assert_eq!(whole["runId"], run_id.as_str());
    assert_eq!(whole["events"][0]["sequence"], 0);
    assert_eq!(whole["lastSequence"], log.len() as i64 - 1);
    assert_eq!(whole["status"], "completed");
    assert_eq!(whole["isTerminal"], true);
    for after in 0..log.len() {
        let body = host.poll(&run_id, &format!("afterSequence={after}")).await;
        let got: Vec<u64> = body["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["sequence"].as_u64().unwrap())
            .collect();
        assert_eq!(
            got,
            ((after as u64 + 1)..log.len() as u64).collect::<Vec<_>>()
        );
        assert_eq!(body["lastSequence"], log.len() as i64 - 1);
    }
    for past in [
        log.len().to_string(),
        "1000".into(),
        "99999999999999999999999".into(),
    ] {
        let body = host
            .poll(&run_id, &format!("afterSequence={past}&timeout=1"))
            .await;
        assert_eq!(body["events"], json!([]), "past the end is 200 and []");
    }
    let again = host.poll(&run_id, "").await;
    assert_eq!(again, whole, "a finished log reads the same twice");
}

#[tokio::test]
async fn poll_parameters_are_checked() {
    let host = host().await;
    let run_id = host.create_fixture("conformance-noop").await;
    host.finished_log(&run_id).await;
    let path = format!("{}/events/poll", run_path(&run_id));
    for query in [
        "afterSequence=-1",
        "afterSequence=abc",
        "afterSequence=1.5",
        "timeout=0",
        "timeout=61",
        "timeout=x",
    ] {
        let response = host.get(&format!("{path}?{query}"), Some(KEY_A), &[]).await;
        expect_error(response, 400, "validation_error").await;
    }
    for query in ["timeout=1", "timeout=60", "lastSequence=3", "since=x"] {
        let response = host.get(&format!("{path}?{query}"), Some(KEY_A), &[]).await;
        assert_eq!(
            response.status(),
            200,
            "{query}: unknown parameters are ignored"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_long_poll_waits_up_to_its_timeout_or_until_the_next_event() {
    let host = host().await;
    let run_id = host.create_fixture("conformance-approval").await;
    let log = host.wait_for(&run_id, "interrupt.requested").await;
    let last = log.last().unwrap()["sequence"].as_u64().unwrap();
    let started = Instant::now();
    let body = host
        .poll(&run_id, &format!("afterSequence={last}&timeout=7"))
        .await;
    assert_eq!(body["events"], json!([]));
    assert_eq!(
        started.elapsed(),
        Duration::from_secs(7),
        "held for the whole timeout"
    );
    assert_eq!(body["status"], "waiting-approval");
    assert_eq!(body["isTerminal"], false);
    let waiting = {
        let base = host.base.clone();
        let client = host.client.clone();
        let url = format!(
            "{base}{}/events/poll?afterSequence={last}&timeout=60",
            run_path(&run_id)
        );
        tokio::spawn(async move {
            let response = client.get(url).bearer_auth(KEY_A).send().await.unwrap();
            (Instant::now(), response.json::<Value>().await.unwrap())
        })
    };
    // Ten virtual seconds pass with the poll held at the host (there is no event for it).
    let asked_at = Instant::now();
    tokio::time::sleep(Duration::from_secs(10)).await;
    assert!(!waiting.is_finished(), "held, not answered");
    let resolved_at = Instant::now();
    let response = host
        .post(
            &format!("{}/interrupts/gate", run_path(&run_id)),
            Some(KEY_A),
            &json!({"resumeValue": {"action": "accept"}}),
        )
        .await;
    assert_eq!(response.status(), 200);
    let (answered_at, body) = waiting.await.unwrap();
    assert!(answered_at >= resolved_at, "held until the append");
    assert!(
        answered_at.duration_since(asked_at) < Duration::from_secs(60),
        "released by the append, not the timeout"
    );
    let first = &body["events"][0];
    validate_event(first);
    assert_eq!(first["sequence"], last + 1);
    assert_eq!(first["type"], "interrupt.resolved");
}

#[tokio::test(start_paused = true)]
async fn an_empty_log_has_last_sequence_minus_one() {
    let host = host().await;
    let run_id = "tenant-a/run-emptyemptyemptyempty";
    host.hub
        .create(
            run_id,
            Surface::Run,
            json!({"kind": "openwop-run", "runId": run_id, "workflowId": "conformance-noop",
                   "owner": {"tenant": "tenant-a", "subject": {"issuer": "urn:conformance-harness:reference-runtime", "subjectId": "conformance-a", "tenant": "tenant-a", "lane": "api-key", "kind": "user"}}, "inputs": {}}),
        )
        .unwrap();
    let body = host.poll(run_id, "timeout=1").await;
    assert_eq!(body["lastSequence"], -1);
    assert_eq!(body["events"], json!([]));
    assert_eq!(body["status"], "pending");
    assert_eq!(body["isTerminal"], false);
}
