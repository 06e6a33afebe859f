//! Surface W: the workflow engine runs every fixture with the events of
//! the contract, and every event is a closed RunEventDoc whose payload validates.

use crate::w_host::*;
use reference_runtime::defects::Defect;
use reference_runtime::openwop::{ApiKeyConfig, OpenWopConfig};
use serde_json::{Value, json};

/// Checks the envelope rules every log must satisfy: sequences 0.. without gaps, eventIds of
/// the grammar and unique, one run id, exactly one terminal event and it is the last.
fn check_log(log: &[Value], run_id: &str) {
    for (i, event) in log.iter().enumerate() {
        validate_event(event);
        assert_eq!(event["sequence"], i as u64, "sequence from 0 without gaps");
        assert_eq!(event["runId"], run_id);
        assert!(event["eventId"].as_str().unwrap().len() >= 16);
        assert!(event["schemaVersion"].as_u64().unwrap() >= 1);
    }
    let mut ids: Vec<&str> = log.iter().map(|e| e["eventId"].as_str().unwrap()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), log.len(), "eventIds are unique");
    let terminal: Vec<usize> = log
        .iter()
        .enumerate()
        .filter(|(_, e)| {
            matches!(
                e["type"].as_str(),
                Some("run.completed" | "run.failed" | "run.cancelled")
            )
        })
        .map(|(i, _)| i)
        .collect();
    assert_eq!(
        terminal,
        [log.len() - 1],
        "exactly one terminal event, last: {log:?}"
    );
}

#[tokio::test]
async fn noop_completes_with_the_owner_block_and_an_outputs_object() {
    let host = host().await;
    let run_id = host.create_fixture("conformance-noop").await;
    let log = host.finished_log(&run_id).await;
    check_log(&log, &run_id);
    assert_eq!(
        types(&log),
        [
            "run.started",
            "node.started",
            "node.completed",
            "run.completed"
        ]
    );
    let owner = &log[0]["payload"]["owner"];
    assert_eq!(owner["tenant"], "tenant-a");
    assert_eq!(owner["subject"]["subjectId"], "conformance-a");
    assert_eq!(owner["subject"]["lane"], "api-key");
    assert_eq!(log[0]["payload"]["workflowId"], "conformance-noop");
    assert!(log[3]["payload"]["outputs"].is_object());
    assert_eq!(log[1]["nodeId"], "noop");
    assert_eq!(log[1]["payload"]["typeId"], "core.noop");
    let snapshot: Value = host
        .get(&run_path(&run_id), Some(KEY_A), &[])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        &snapshot["owner"], owner,
        "run.started echoes the snapshot owner"
    );
    assert_eq!(snapshot["status"], "completed");
}

#[tokio::test]
async fn multi_node_completes_a_b_c_in_order() {
    let host = host().await;
    let run_id = host.create_fixture("conformance-multi-node").await;
    let log = host.finished_log(&run_id).await;
    check_log(&log, &run_id);
    let completed: Vec<&str> = log
        .iter()
        .filter(|e| e["type"] == "node.completed")
        .map(|e| e["payload"]["nodeId"].as_str().unwrap())
        .collect();
    assert_eq!(completed, ["a", "b", "c"]);
}

#[tokio::test(start_paused = true)]
async fn delay_waits_on_the_tokio_clock_and_is_running_meanwhile() {
    let host = host().await;
    let started = tokio::time::Instant::now();
    let run_id = host
        .create(json!({"workflowId": "conformance-delay", "inputs": {"delayMs": 20_000}}))
        .await;
    let snapshot: Value = host
        .get(&run_path(&run_id), Some(KEY_A), &[])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(snapshot["status"], "running");
    let log = host.finished_log(&run_id).await;
    check_log(&log, &run_id);
    assert!(started.elapsed() >= std::time::Duration::from_secs(20));
    assert_eq!(log[2]["payload"]["outputs"]["delayMs"], 20_000);
}

#[tokio::test]
async fn delay_inputs_out_of_range_are_refused_at_creation() {
    let host = host().await;
    for delay in [json!(60_001), json!(-1), json!("10"), json!(1.5)] {
        let response = host
            .post(
                "/runs",
                Some(KEY_A),
                &json!({"workflowId": "conformance-delay", "inputs": {"delayMs": delay}}),
            )
            .await;
        expect_error(response, 400, "validation_error").await;
    }
}

#[tokio::test]
async fn failure_fails_the_node_then_the_run_and_the_snapshot_carries_the_error() {
    let host = host().await;
    let run_id = host.create_fixture("conformance-failure").await;
    let log = host.finished_log(&run_id).await;
    check_log(&log, &run_id);
    assert_eq!(
        types(&log),
        ["run.started", "node.started", "node.failed", "run.failed"]
    );
    assert_eq!(log[2]["payload"]["attempts"], 1);
    assert_eq!(log[3]["payload"]["failedNodeId"], "fail");
    let snapshot: Value = host
        .get(&run_path(&run_id), Some(KEY_A), &[])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(snapshot["status"], "failed");
    assert_eq!(snapshot["error"]["code"], "conformance_test_failure");
    assert!(snapshot["error"]["message"].as_str().is_some());
}

#[tokio::test]
async fn debug_noise_emits_log_variable_and_vendor_events() {
    let host = host().await;
    let run_id = host.create_fixture("conformance-debug-noise").await;
    let log = host.finished_log(&run_id).await;
    check_log(&log, &run_id);
    assert_eq!(
        types(&log),
        [
            "run.started",
            "node.started",
            "log.appended",
            "variable.changed",
            "example.noise-emitted",
            "node.completed",
            "run.completed"
        ]
    );
}

fn stream_text(config: Value) -> Value {
    json!({
        "workflowId": "conformance-stream-text",
        "configurable": {"version": 1, "ai": {"mockProvider": {"id": "stream-text", "config": config}}}
    })
}

#[tokio::test]
async fn stream_text_emits_one_chunk_per_token_then_one_usage_before_node_completed() {
    let host = host().await;
    let run_id = host
        .create(stream_text(json!({
            "tokens": ["Hello", " ", "world", "!"], "delayMsPerToken": 0,
            "finishReason": "stop",
            "usage": {"promptTokens": 5, "completionTokens": 4, "totalTokens": 9}
        })))
        .await;
    let log = host.finished_log(&run_id).await;
    check_log(&log, &run_id);
    assert_eq!(
        types(&log),
        [
            "run.started",
            "node.started",
            "output.chunk",
            "output.chunk",
            "output.chunk",
            "output.chunk",
            "provider.usage",
            "node.completed",
            "run.completed"
        ]
    );
    let chunks: Vec<&Value> = log.iter().filter(|e| e["type"] == "output.chunk").collect();
    let text: String = chunks
        .iter()
        .map(|c| c["payload"]["chunk"].as_str().unwrap())
        .collect();
    assert_eq!(text, "Hello world!");
    for (i, chunk) in chunks.iter().enumerate() {
        let payload = &chunk["payload"];
        assert_eq!(payload["isLast"], i == 3);
        assert_eq!(payload["runId"], run_id.as_str());
        assert_eq!(payload["nodeId"], "ai");
        assert_eq!(payload["meta"]["model"], "mock-stream-text");
    }
    let last = &chunks[3]["payload"]["meta"];
    assert_eq!(last["finishReason"], "stop");
    assert_eq!(
        last["usage"],
        json!({"promptTokens": 5, "completionTokens": 4, "totalTokens": 9})
    );
    let usage = &log[6]["payload"];
    assert_eq!(
        usage,
        &json!({"provider": "mock", "model": "mock-stream-text", "inputTokens": 5,
                "outputTokens": 4, "totalTokens": 9, "costEstimateUsd": 8.5e-6,
                "currency": "USD", "nodeId": "ai"})
    );
    assert_eq!(
        log[8]["payload"]["outputs"],
        json!({"text": "Hello world!"})
    );
}

#[tokio::test(start_paused = true)]
async fn stream_text_token_delays_run_on_the_tokio_clock() {
    let host = host().await;
    let started = tokio::time::Instant::now();
    let run_id = host
        .create(stream_text(
            json!({"tokens": ["a", "b", "c"], "delayMsPerToken": 5000}),
        ))
        .await;
    let log = host.finished_log(&run_id).await;
    check_log(&log, &run_id);
    assert!(started.elapsed() >= std::time::Duration::from_secs(15));
}

#[tokio::test]
async fn tool_calls_mock_reports_its_calls_in_the_last_chunk_meta() {
    let host = host().await;
    let run_id = host
        .create(json!({
            "workflowId": "conformance-stream-text",
            "configurable": {"version": 1, "ai": {"mockProvider": {"id": "tool-calls", "config": {
                "toolCalls": [{"id": "c1", "name": "search", "arguments": {"q": "x"}},
                              {"id": "c2", "name": "fetch", "arguments": "{\"u\":1}"}]
            }}}}
        }))
        .await;
    let log = host.finished_log(&run_id).await;
    check_log(&log, &run_id);
    let chunk = log.iter().find(|e| e["type"] == "output.chunk").unwrap();
    let meta = &chunk["payload"]["meta"];
    assert_eq!(chunk["payload"]["isLast"], true);
    assert_eq!(meta["finishReason"], "tool_calls");
    assert_eq!(
        meta["toolCalls"],
        json!([{"id": "c1", "name": "search", "arguments": "{\"q\":\"x\"}"},
               {"id": "c2", "name": "fetch", "arguments": "{\"u\":1}"}])
    );
    assert_eq!(
        log.iter().filter(|e| e["type"] == "provider.usage").count(),
        1
    );
}

#[tokio::test(start_paused = true)]
async fn error_mock_fails_the_run_deterministically_after_its_usage() {
    let host = host().await;
    let started = tokio::time::Instant::now();
    let run_id = host
        .create(json!({
            "workflowId": "conformance-stream-text",
            "configurable": {"version": 1, "ai": {"mockProvider": {"id": "error", "config": {
                "code": "rate_limited", "message": "slow down", "retryable": true, "failAfterMs": 3000
            }}}}
        }))
        .await;
    let log = host.finished_log(&run_id).await;
    check_log(&log, &run_id);
    assert!(started.elapsed() >= std::time::Duration::from_secs(3));
    assert_eq!(
        types(&log),
        [
            "run.started",
            "node.started",
            "provider.usage",
            "node.failed",
            "run.failed"
        ]
    );
    let error = &log[4]["payload"]["error"];
    assert_eq!(error["code"], "rate_limited");
    assert_eq!(error["message"], "slow down");
    assert_eq!(error["retryable"], true);
}

#[tokio::test]
async fn usage_only_mock_sends_one_empty_chunk_with_usage() {
    let host = host().await;
    let run_id = host
        .create(json!({
            "workflowId": "conformance-stream-text",
            "configurable": {"version": 1, "ai": {"mockProvider": {"id": "usage-only", "config": {
                "usage": {"promptTokens": 7, "completionTokens": 0, "totalTokens": 7}
            }}}}
        }))
        .await;
    let log = host.finished_log(&run_id).await;
    check_log(&log, &run_id);
    let chunks: Vec<&Value> = log.iter().filter(|e| e["type"] == "output.chunk").collect();
    assert_eq!(chunks.len(), 1);
    assert_eq!(chunks[0]["payload"]["chunk"], "");
    assert_eq!(chunks[0]["payload"]["meta"]["usage"]["promptTokens"], 7);
    let usage = log.iter().find(|e| e["type"] == "provider.usage").unwrap();
    assert_eq!(usage["payload"]["inputTokens"], 7);
}

#[tokio::test]
async fn provider_usage_never_carries_a_credential_or_prompt_text() {
    let host = host().await;
    let run_id = host
        .create(json!({
            "workflowId": "conformance-stream-text",
            "inputs": {"prompt": "secret prompt text"},
            "configurable": {"version": 1, "ai": {
                "credentialRef": "secret:canary-credential",
                "mockProvider": {"id": "stream-text", "config": {"tokens": ["response text"]}}
            }}
        }))
        .await;
    let log = host.finished_log(&run_id).await;
    let usage = log.iter().find(|e| e["type"] == "provider.usage").unwrap();
    let text = usage.to_string();
    for leak in ["secret", "canary", "prompt text", "response text"] {
        assert!(!text.contains(leak), "{leak} in {text}");
    }
}

#[tokio::test]
async fn mock_providers_are_per_run_and_validated() {
    let host = host().await;
    let a = host.create(stream_text(json!({"tokens": ["A"]}))).await;
    let b = host
        .create(stream_text(json!({"tokens": ["B", "B"]})))
        .await;
    let log_a = host.finished_log(&a).await;
    let log_b = host.finished_log(&b).await;
    let chunks = |log: &[Value]| log.iter().filter(|e| e["type"] == "output.chunk").count();
    assert_eq!((chunks(&log_a), chunks(&log_b)), (1, 2));
    for (id, config) in [
        ("no-such-mock", json!({})),
        ("stream-text", json!({"bogus": true})),
        ("stream-text", json!({"delayMsPerToken": 5001})),
        ("stream-text", json!({"finishReason": "done"})),
        ("error", json!({"code": "acme.unregistered"})),
    ] {
        let response = host
            .post(
                "/runs",
                Some(KEY_A),
                &json!({"workflowId": "conformance-stream-text", "configurable": {"version": 1,
                    "ai": {"mockProvider": {"id": id, "config": config}}}}),
            )
            .await;
        let body = expect_error(response, 400, "validation_error").await;
        assert_eq!(
            body["details"]["supported"],
            json!([
                "stream-text",
                "tool-calls",
                "error",
                "usage-only",
                "envelope-program"
            ])
        );
    }
}

#[tokio::test]
async fn mock_providers_are_forbidden_to_production_keys() {
    let mut config = OpenWopConfig::default();
    config.api_keys.push(ApiKeyConfig {
        key: "hk_live_tenant_a".into(),
        tenant: "tenant-a".into(),
        subject: "production".into(),
    });
    let host = host_with(config, &[]).await;
    let response = host
        .post("/runs", Some("hk_live_tenant_a"), &stream_text(json!({})))
        .await;
    expect_error(response, 403, "mock_provider_forbidden").await;
    host.create_as(
        "hk_live_tenant_a",
        json!({"workflowId": "conformance-noop"}),
    )
    .await;
}

#[tokio::test]
async fn a_configured_provider_must_exist() {
    let host = host().await;
    let response = host
        .post(
            "/runs",
            Some(KEY_A),
            &json!({"workflowId": "conformance-stream-text",
                    "configurable": {"version": 1, "ai": {"provider": "openai-primary"}}}),
        )
        .await;
    expect_error(response, 400, "validation_error").await;
}

#[tokio::test]
async fn approval_suspends_then_resumes_on_the_interrupt_endpoint() {
    let host = host().await;
    let run_id = host.create_fixture("conformance-approval").await;
    let log = host.wait_for(&run_id, "interrupt.requested").await;
    let suspended = log.iter().find(|e| e["type"] == "node.suspended").unwrap();
    assert_eq!(suspended["payload"]["kind"], "approval");
    let interrupt_id = suspended["payload"]["interruptId"].as_str().unwrap();
    assert!(interrupt_id.starts_with("tenant-a/"));
    let snapshot: Value = host
        .get(&run_path(&run_id), Some(KEY_A), &[])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(snapshot["status"], "waiting-approval");
    assert_eq!(snapshot["currentNodeId"], "gate");
    let response = host
        .post(
            &format!("{}/interrupts/gate", run_path(&run_id)),
            Some(KEY_A),
            &json!({"resumeValue": {"action": "accept"}}),
        )
        .await;
    assert_eq!(response.status(), 200);
    let log = host.finished_log(&run_id).await;
    check_log(&log, &run_id);
    assert_eq!(
        types(&log),
        [
            "run.started",
            "node.started",
            "node.suspended",
            "interrupt.requested",
            "interrupt.resolved",
            "node.resumed",
            "node.completed",
            "run.completed"
        ]
    );
    let resolved = &log[4]["payload"];
    assert_eq!(resolved["interruptId"], interrupt_id);
    assert_eq!(resolved["action"], "accept");
    assert_eq!(resolved["decision"], "granted");
    assert_eq!(resolved["resolvedBy"]["subjectId"], "conformance-a");
}

#[tokio::test]
async fn the_all_tiers_fixture_produces_every_tier() {
    let host = host().await;
    let run_id = host.create_fixture("conformance-all-tiers").await;
    host.wait_for(&run_id, "interrupt.requested").await;
    let response = host
        .post(
            &format!("{}/interrupts/approve", run_path(&run_id)),
            Some(KEY_A),
            &json!({"resumeValue": {"action": "accept"}}),
        )
        .await;
    assert_eq!(response.status(), 200);
    let log = host.finished_log(&run_id).await;
    check_log(&log, &run_id);
    let t = types(&log);
    for expected in [
        "log.appended",
        "example.noise-emitted",
        "node.suspended",
        "output.chunk",
        "provider.usage",
        "run.completed",
    ] {
        assert!(t.iter().any(|x| x == expected), "{expected} missing: {t:?}");
    }
}

#[tokio::test]
async fn defects_are_off_unless_switched_on() {
    let host = host_with(OpenWopConfig::default(), &[Defect::WShortEventId]).await;
    let run_id = host.create_fixture("conformance-noop").await;
    let response = host
        .get(
            &format!("{}/events/poll", run_path(&run_id)),
            Some(KEY_A),
            &[],
        )
        .await;
    let body: Value = response.json().await.unwrap();
    assert!(
        body["events"][0]["eventId"].as_str().unwrap().len() < 16,
        "the switched-on defect shows"
    );
}

/// A host whose runs may take at most `ceiling_ms`.
async fn host_with_ceiling(ceiling_ms: u64) -> Host {
    let mut config = OpenWopConfig {
        max_run_duration_ms: ceiling_ms,
        ..OpenWopConfig::default()
    };
    config.heartbeat.max_runtime_ms = ceiling_ms;
    host_with(config, &[]).await
}

#[tokio::test(start_paused = true)]
async fn a_run_past_its_ceiling_fails_with_cap_breached_and_run_timeout() {
    let host = host_with_ceiling(1000).await;
    let run_id = host
        .create(json!({"workflowId": "conformance-delay", "inputs": {"delayMs": 20_000}}))
        .await;
    let log = host.finished_log(&run_id).await;
    check_log(&log, &run_id);
    assert_eq!(
        types(&log),
        ["run.started", "node.started", "cap.breached", "run.failed"]
    );
    let breached = &log[2]["payload"];
    assert_eq!(breached["kind"], "run-duration");
    assert_eq!(breached["limit"], 1000);
    assert!(breached["observed"].as_u64().unwrap() >= 1000);
    assert_eq!(log[3]["payload"]["error"]["code"], "run_timeout");
}

#[tokio::test(start_paused = true)]
async fn a_run_within_its_ceiling_is_untouched() {
    let host = host_with_ceiling(1000).await;
    let run_id = host
        .create(json!({"workflowId": "conformance-delay", "inputs": {"delayMs": 900}}))
        .await;
    let log = host.finished_log(&run_id).await;
    check_log(&log, &run_id);
    assert_eq!(
        types(&log).last().map(String::as_str),
        Some("run.completed")
    );
}
