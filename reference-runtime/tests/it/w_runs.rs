//! Surface W: runs, cancel, interrupts, tenant-bound ids, keys, the flat
//! error envelope, discovery and `OpenWOP-Version`, over real HTTP.

use crate::w_host::*;
use reference_runtime::openwop::OpenWopConfig;
use serde_json::{Value, json};
use spec::schema::Published;

#[tokio::test]
async fn discovery_advertises_what_is_implemented_with_an_etag() {
    let host = host().await;
    let response = host.get("/.well-known/openwop", None, &[]).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["openwop-version"], "2.0");
    let etag = response.headers()["etag"].to_str().unwrap().to_string();
    assert!(etag.starts_with('"') && etag.ends_with('"'));
    let doc: Value = response.json().await.unwrap();
    validate_doc(Published::Discovery, &doc);
    assert_eq!(doc["protocolVersions"], json!(["2.0"]));
    assert_eq!(doc["preferredVersion"], "2.0");
    let mut fixtures: Vec<&str> = spec::fixtures::all().iter().map(|f| f.id).collect();
    fixtures.sort();
    assert_eq!(doc["fixtures"], json!(fixtures));
    assert_eq!(
        doc["testing"]["mockProviders"],
        json!([
            "stream-text",
            "tool-calls",
            "error",
            "usage-only",
            "envelope-program"
        ])
    );
    for family in ["providerUsage", "heartbeat", "limits"] {
        let record = &doc[family];
        assert_eq!(record["status"], "stable", "{family}");
        assert_eq!(record["since"], "2.0", "{family}");
        assert!(record["witness"].is_string(), "{family}");
    }
    assert_eq!(doc["heartbeat"]["minIntervalSec"], 1);
    // feedback, envelopes and the envelope catalog: tests/it/w_envelopes.rs.
    for absent in ["replay", "runList"] {
        assert!(doc.get(absent).is_none(), "{absent} is not implemented");
    }
    let not_modified = host
        .get("/.well-known/openwop", None, &[("if-none-match", &etag)])
        .await;
    assert_eq!(not_modified.status(), 304);
    assert_eq!(not_modified.headers()["openwop-version"], "2.0");
    assert_eq!(not_modified.headers()["etag"], etag.as_str());
    assert!(not_modified.bytes().await.unwrap().is_empty());
    let other = host
        .get(
            "/.well-known/openwop",
            None,
            &[("if-none-match", "\"other\"")],
        )
        .await;
    assert_eq!(other.status(), 200);
}

#[tokio::test]
async fn every_protected_endpoint_needs_a_known_bearer_key() {
    let host = host().await;
    let run_id = host.create_fixture("conformance-noop").await;
    let path = run_path(&run_id);
    for key in [None, Some("not-a-key")] {
        let checks = [
            host.post("/runs", key, &json!({"workflowId": "conformance-noop"}))
                .await,
            host.get(&path, key, &[]).await,
            host.post(&format!("{path}/cancel"), key, &json!({})).await,
            host.post(
                &format!("{path}/interrupts/x"),
                key,
                &json!({"resumeValue": 1}),
            )
            .await,
            host.get(&format!("{path}/events"), key, &[]).await,
            host.get(&format!("{path}/events/poll"), key, &[]).await,
            host.get("/host/events", key, &[]).await,
        ];
        for response in checks {
            assert_eq!(response.headers()["www-authenticate"], "Bearer");
            expect_error(response, 401, "unauthenticated").await;
        }
    }
}

#[tokio::test]
async fn create_answers_201_with_links_that_resolve() {
    let host = host().await;
    let response = host
        .post(
            "/runs",
            Some(KEY_A),
            &json!({"workflowId": "conformance-noop", "tags": ["t"], "metadata": {"m": 1}}),
        )
        .await;
    assert_eq!(response.status(), 201);
    assert_eq!(response.headers()["openwop-version"], "2.0");
    let body: Value = response.json().await.unwrap();
    validate_doc(Published::CreateRunResponse, &body);
    let run_id = body["runId"].as_str().unwrap();
    assert!(run_id.starts_with("tenant-a/"), "tenant-bound: {run_id}");
    let opaque = run_id.split_once('/').unwrap().1;
    assert!(opaque.len() >= 16 && !opaque.contains('~'));
    assert_eq!(body["status"], "running");
    let status_url = body["statusUrl"].as_str().unwrap();
    assert_eq!(status_url, host.url(&run_path(run_id)));
    let snapshot = host
        .client
        .get(status_url)
        .bearer_auth(KEY_A)
        .send()
        .await
        .unwrap();
    assert_eq!(snapshot.status(), 200);
    let events = host
        .client
        .get(body["eventsUrl"].as_str().unwrap())
        .bearer_auth(KEY_A)
        .send()
        .await
        .unwrap();
    let frames = read_all(events).await;
    assert_eq!(
        frames.last().unwrap().event.as_deref(),
        Some("run.completed")
    );
    let log = host.finished_log(run_id).await;
    assert_eq!(log[0]["payload"]["tags"], json!(["t"]));
    assert_eq!(log[0]["payload"]["metadata"], json!({"m": 1}));
}

#[tokio::test]
async fn malformed_creations_are_refused_with_the_flat_envelope() {
    let host = host().await;
    let cases = [
        (
            json!({"workflowId": "no-such-workflow"}),
            400,
            "validation_error",
        ),
        (
            json!({"workflowId": "conformance-noop", "bogus": 1}),
            400,
            "validation_error",
        ),
        (json!({}), 400, "validation_error"),
        (json!({"workflowId": 7}), 400, "validation_error"),
        (
            json!({"workflowId": "conformance-noop", "configurable": {"version": 2}}),
            400,
            "validation_error",
        ),
        (
            json!({"workflowId": "conformance-noop", "configurable": {"version": 1, "bogus": {}}}),
            400,
            "validation_error",
        ),
        (
            json!({"workflowId": "conformance-noop", "tags": vec!["t"; 101]}),
            400,
            "validation_error",
        ),
        (
            json!({"workflowId": "conformance-stream-text", "configurable": {"version": 1, "ai": {
            "provider": "p", "mockProvider": {"id": "stream-text"}}}}),
            400,
            "validation_error",
        ),
    ];
    for (body, status, code) in cases {
        expect_error(host.post("/runs", Some(KEY_A), &body).await, status, code).await;
    }
    let not_json = host
        .client
        .post(host.url("/runs"))
        .bearer_auth(KEY_A)
        .header("content-type", "text/plain")
        .body("{\"workflowId\":\"conformance-noop\"}")
        .send()
        .await
        .unwrap();
    expect_error(not_json, 415, "unsupported_media_type").await;
    let broken = host
        .client
        .post(host.url("/runs"))
        .bearer_auth(KEY_A)
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    expect_error(broken, 400, "validation_error").await;
    let huge = host
        .client
        .post(host.url("/runs"))
        .bearer_auth(KEY_A)
        .header("content-type", "application/json")
        .body(format!(
            "{{\"workflowId\":\"conformance-noop\",\"metadata\":{{\"x\":\"{}\"}}}}",
            "a".repeat(1_100_000)
        ))
        .send()
        .await
        .unwrap();
    expect_error(huge, 413, "payload_too_large").await;
}

async fn create_with_key(
    host: &Host,
    tenant_key: &str,
    key: &str,
    body: &Value,
) -> reqwest::Response {
    host.client
        .post(host.url("/runs"))
        .bearer_auth(tenant_key)
        .header("idempotency-key", key)
        .json(body)
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn idempotency_key_replays_the_first_response_and_refuses_a_different_body() {
    let host = host().await;
    let body = json!({"workflowId": "conformance-noop", "inputs": {"a": 1, "b": 2}});
    let first = create_with_key(&host, KEY_A, "key-1", &body).await;
    assert_eq!(first.status(), 201);
    assert!(first.headers().get("openwop-idempotent-replay").is_none());
    let first: Value = first.json().await.unwrap();
    let reordered: Value =
        serde_json::from_str(r#"{"inputs":{"b":2,"a":1},"workflowId":"conformance-noop"}"#)
            .unwrap();
    let replay = create_with_key(&host, KEY_A, "key-1", &reordered).await;
    assert_eq!(replay.status(), 201);
    assert_eq!(replay.headers()["openwop-idempotent-replay"], "true");
    let replay: Value = replay.json().await.unwrap();
    assert_eq!(replay, first, "the recorded response, byte for byte");
    let other = create_with_key(
        &host,
        KEY_A,
        "key-1",
        &json!({"workflowId": "conformance-multi-node"}),
    )
    .await;
    expect_error(other, 409, "idempotency_key_mismatch").await;
    // Keys are per tenant.
    let tenant_b = create_with_key(&host, KEY_B, "key-1", &body).await;
    assert_eq!(tenant_b.status(), 201);
    assert!(
        tenant_b
            .headers()
            .get("openwop-idempotent-replay")
            .is_none()
    );
    // A refused request does not use up its key.
    let refused = create_with_key(&host, KEY_A, "key-2", &json!({"workflowId": "nope"})).await;
    expect_error(refused, 400, "validation_error").await;
    let fresh = create_with_key(&host, KEY_A, "key-2", &body).await;
    assert_eq!(fresh.status(), 201);
    assert!(fresh.headers().get("openwop-idempotent-replay").is_none());
    let invalid = create_with_key(&host, KEY_A, "has space", &body).await;
    expect_error(invalid, 400, "idempotency_key_invalid").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_duplicates_create_one_run() {
    let host = std::sync::Arc::new(host().await);
    let body = json!({"workflowId": "conformance-noop"});
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let host = std::sync::Arc::clone(&host);
            let body = body.clone();
            tokio::spawn(async move {
                let response = create_with_key(&host, KEY_A, "same", &body).await;
                assert_eq!(response.status(), 201);
                let json: Value = response.json().await.unwrap();
                json["runId"].as_str().unwrap().to_string()
            })
        })
        .collect();
    let mut ids = Vec::new();
    for task in tasks {
        ids.push(task.await.unwrap());
    }
    ids.dedup();
    assert_eq!(ids.len(), 1, "{ids:?}");
    let runs = host
        .hub
        .store()
        .logs(reference_runtime::store::Surface::Run)
        .unwrap();
    assert_eq!(runs.len(), 1);
}

#[tokio::test]
async fn get_run_returns_the_snapshot_under_both_path_encodings_with_an_etag() {
    let host = host().await;
    let run_id = host.create_fixture("conformance-noop").await;
    host.finished_log(&run_id).await;
    for path in [
        run_path(&run_id),
        format!("/runs/{}", run_id.replace('/', "%2F")),
    ] {
        let response = host.get(&path, Some(KEY_A), &[]).await;
        assert_eq!(response.status(), 200, "{path}");
        let etag = response.headers()["etag"].to_str().unwrap().to_string();
        let snapshot: Value = response.json().await.unwrap();
        validate_doc(Published::RunSnapshot, &snapshot);
        assert_eq!(snapshot["runId"], run_id.as_str());
        assert_eq!(snapshot["workflowId"], "conformance-noop");
        assert_eq!(snapshot["eventLogSchemaVersion"], 3);
        assert_eq!(snapshot["status"], "completed");
        assert!(snapshot["startedAt"].is_string() && snapshot["completedAt"].is_string());
        let cached = host
            .get(&path, Some(KEY_A), &[("if-none-match", &etag)])
            .await;
        assert_eq!(cached.status(), 304);
    }
}

#[tokio::test]
async fn tenant_bound_ids_never_disclose_another_tenants_run() {
    let host = host().await;
    let run_id = host.create_fixture("conformance-noop").await;
    host.finished_log(&run_id).await;
    let path = run_path(&run_id);
    let missing_b = run_path("tenant-b/run-00000000000000000000000000000000");
    for p in [
        path.clone(),
        format!("{path}/events"),
        format!("{path}/events/poll"),
    ] {
        expect_error(
            host.get(&p, Some(KEY_B), &[]).await,
            403,
            "id_tenant_mismatch",
        )
        .await;
    }
    let forged = host.get(&missing_b, Some(KEY_A), &[]).await;
    let existing = host.get(&path, Some(KEY_B), &[]).await;
    let (a, b) = (
        expect_error(forged, 403, "id_tenant_mismatch").await,
        expect_error(existing, 403, "id_tenant_mismatch").await,
    );
    assert_eq!(a, b, "identical whether or not the run exists");
    expect_error(
        host.post(&format!("{path}/cancel"), Some(KEY_B), &json!({}))
            .await,
        403,
        "id_tenant_mismatch",
    )
    .await;
    let unknown = run_path("tenant-a/run-00000000000000000000000000000000");
    expect_error(host.get(&unknown, Some(KEY_A), &[]).await, 404, "not_found").await;
    for bad in [
        "/runs/run-00000000000000000000000000000000",
        "/runs/tenant-a~2Xrun-0000000000000000",
        "/runs/tenant-a~2Fshort",
    ] {
        expect_error(
            host.get(bad, Some(KEY_A), &[]).await,
            400,
            "validation_error",
        )
        .await;
    }
}

#[tokio::test]
async fn cancel_ends_the_run_with_one_run_cancelled_and_a_terminal_run_answers_409() {
    let host = host().await;
    let run_id = host.create_fixture("conformance-cancellable").await;
    let path = run_path(&run_id);
    let response = host
        .post(
            &format!("{path}/cancel"),
            Some(KEY_A),
            &json!({"reason": "test"}),
        )
        .await;
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    validate_doc(Published::CancelRunResponse, &body);
    assert_eq!(body, json!({"runId": run_id, "status": "cancelled"}));
    let log = host.finished_log(&run_id).await;
    for event in &log {
        validate_event(event);
    }
    assert_eq!(
        types(&log),
        ["run.started", "node.started", "run.cancelled"]
    );
    let cancelled = &log[2]["payload"];
    assert_eq!(cancelled["reason"], "test");
    assert_eq!(cancelled["cancelledBy"], "conformance-a");
    assert!(cancelled["durationMs"].is_u64());
    let again = host
        .client
        .post(host.url(&format!("{path}/cancel")))
        .bearer_auth(KEY_A)
        .send()
        .await
        .unwrap();
    expect_error(again, 409, "run_terminal").await;
    assert_eq!(
        host.finished_log(&run_id).await.len(),
        3,
        "late work appends nothing"
    );
    let snapshot: Value = host
        .get(&path, Some(KEY_A), &[])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(snapshot["status"], "cancelled");
    let done = host.create_fixture("conformance-noop").await;
    host.finished_log(&done).await;
    expect_error(
        host.post(
            &format!("{}/cancel", run_path(&done)),
            Some(KEY_A),
            &json!({}),
        )
        .await,
        409,
        "run_terminal",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_racing_completion_leaves_exactly_one_terminal_event() {
    let host = host().await;
    let mut outcomes = std::collections::BTreeMap::new();
    for _ in 0..60 {
        let run_id = host
            .create(json!({"workflowId": "conformance-delay", "inputs": {"delayMs": 0}}))
            .await;
        let response = host
            .post(
                &format!("{}/cancel", run_path(&run_id)),
                Some(KEY_A),
                &json!({}),
            )
            .await;
        let status = response.status().as_u16();
        *outcomes.entry(status).or_insert(0) += 1;
        let log = host.finished_log(&run_id).await;
        let terminal: Vec<String> = types(&log)
            .into_iter()
            .filter(|t| matches!(t.as_str(), "run.completed" | "run.failed" | "run.cancelled"))
            .collect();
        assert_eq!(terminal.len(), 1, "{log:?}");
        assert_eq!(log.last().unwrap()["type"], terminal[0].as_str());
        match status {
            200 => assert_eq!(terminal[0], "run.cancelled"),
            409 => assert_eq!(terminal[0], "run.completed"),
            other => panic!("unexpected {other}"),
        }
    }
    eprintln!("race outcomes: {outcomes:?}");
    assert!(outcomes.values().sum::<i32>() == 60, "{outcomes:?}");
}

#[tokio::test]
async fn interrupts_resolve_once_and_refuse_what_is_not_open() {
    let host = host().await;
    let run_id = host.create_fixture("conformance-approval").await;
    let path = run_path(&run_id);
    host.wait_for(&run_id, "interrupt.requested").await;
    let wrong_node = host
        .post(
            &format!("{path}/interrupts/after"),
            Some(KEY_A),
            &json!({"resumeValue": {}}),
        )
        .await;
    expect_error(wrong_node, 404, "interrupt_not_found").await;
    let bad_action = host
        .post(
            &format!("{path}/interrupts/gate"),
            Some(KEY_A),
            &json!({"resumeValue": {"action": "maybe"}}),
        )
        .await;
    let body = expect_error(bad_action, 400, "validation_error").await;
    assert_eq!(body["details"]["actions"], json!(["accept", "reject"]));
    let no_body = host
        .post(&format!("{path}/interrupts/gate"), Some(KEY_A), &json!({}))
        .await;
    expect_error(no_body, 400, "validation_error").await;
    let other_tenant = host
        .post(
            &format!("{path}/interrupts/gate"),
            Some(KEY_B),
            &json!({"resumeValue": {"action": "accept"}}),
        )
        .await;
    expect_error(other_tenant, 403, "id_tenant_mismatch").await;
    let ok = host
        .post(
            &format!("{path}/interrupts/gate"),
            Some(KEY_A),
            &json!({"resumeValue": {"action": "reject"}}),
        )
        .await;
    assert_eq!(ok.status(), 200);
    let ok: Value = ok.json().await.unwrap();
    assert_eq!(ok["nodeId"], "gate");
    let log = host.finished_log(&run_id).await;
    let resolved: Vec<&Value> = log
        .iter()
        .filter(|e| e["type"] == "interrupt.resolved")
        .collect();
    assert_eq!(resolved.len(), 1);
    assert_eq!(resolved[0]["payload"]["decision"], "rejected");
    let duplicate = host
        .post(
            &format!("{path}/interrupts/gate"),
            Some(KEY_A),
            &json!({"resumeValue": {"action": "accept"}}),
        )
        .await;
    expect_error(duplicate, 409, "run_terminal").await;
    assert_eq!(
        host.finished_log(&run_id).await.len(),
        log.len(),
        "late work appends nothing"
    );
}

#[tokio::test]
async fn a_duplicate_resolution_while_the_run_is_live_is_refused() {
    let host = host().await;
    let run_id = host.create_fixture("conformance-all-tiers").await;
    let path = run_path(&run_id);
    host.wait_for(&run_id, "interrupt.requested").await;
    let url = format!("{path}/interrupts/approve");
    let accept = json!({"resumeValue": {"action": "accept"}});
    assert_eq!(host.post(&url, Some(KEY_A), &accept).await.status(), 200);
    let second = host.post(&url, Some(KEY_A), &accept).await;
    let status = second.status().as_u16();
    let body: Value = second.json().await.unwrap();
    assert!(
        (status == 409
            && (body["error"] == "interrupt_already_resolved" || body["error"] == "run_terminal")),
        "{status} {body}"
    );
    let log = host.finished_log(&run_id).await;
    assert_eq!(
        log.iter()
            .filter(|e| e["type"] == "interrupt.resolved")
            .count(),
        1
    );
}

#[tokio::test]
async fn cancel_of_a_suspended_run_ends_it() {
    let host = host().await;
    let run_id = host.create_fixture("conformance-approval").await;
    host.wait_for(&run_id, "interrupt.requested").await;
    let response = host
        .post(
            &format!("{}/cancel", run_path(&run_id)),
            Some(KEY_A),
            &json!({}),
        )
        .await;
    assert_eq!(response.status(), 200);
    let log = host.finished_log(&run_id).await;
    assert_eq!(log.last().unwrap()["type"], "run.cancelled");
    let late = host
        .post(
            &format!("{}/interrupts/gate", run_path(&run_id)),
            Some(KEY_A),
            &json!({"resumeValue": {"action": "accept"}}),
        )
        .await;
    expect_error(late, 409, "run_terminal").await;
    assert_eq!(host.finished_log(&run_id).await.len(), log.len());
}

#[tokio::test]
async fn openwop_version_is_on_every_response_and_foreign_majors_are_refused() {
    let host = host().await;
    let run_id = host.create_fixture("conformance-noop").await;
    host.finished_log(&run_id).await;
    let responses = [
        host.get("/.well-known/openwop", None, &[]).await,
        host.get(&run_path(&run_id), Some(KEY_A), &[]).await,
        host.get(&run_path(&run_id), None, &[]).await,
        host.get(
            &format!("{}/events/poll", run_path(&run_id)),
            Some(KEY_A),
            &[],
        )
        .await,
        host.get(&format!("{}/events", run_path(&run_id)), Some(KEY_A), &[])
            .await,
        host.get(
            &run_path(&run_id),
            Some(KEY_A),
            &[("openwop-version", "2.0")],
        )
        .await,
        host.get(&run_path(&run_id), Some(KEY_A), &[("openwop-version", "2")])
            .await,
    ];
    for response in responses {
        assert_eq!(
            response.headers()["openwop-version"],
            "2.0",
            "{}",
            response.url()
        );
    }
    let v1 = host
        .get(
            &run_path(&run_id),
            Some(KEY_A),
            &[("openwop-version", "1.0")],
        )
        .await;
    let body = expect_error(v1, 406, "protocol_version_unsupported").await;
    assert_eq!(body["details"]["protocolVersions"], json!(["2.0"]));
    let garbage = host
        .get(
            &run_path(&run_id),
            Some(KEY_A),
            &[("openwop-version", "two")],
        )
        .await;
    expect_error(garbage, 400, "validation_error").await;
    let wrong_method = host
        .client
        .delete(host.url(&run_path(&run_id)))
        .bearer_auth(KEY_A)
        .send()
        .await
        .unwrap();
    expect_error(wrong_method, 404, "not_found").await;
}

#[tokio::test]
async fn configured_keys_replace_the_defaults() {
    let config: OpenWopConfig = toml::from_str(
        r#"
        [[api_keys]]
        key = "k-one"
        tenant = "one"
        subject = "s1"
        "#,
    )
    .unwrap();
    let host = host_with(config, &[]).await;
    expect_error(
        host.post(
            "/runs",
            Some(KEY_A),
            &json!({"workflowId": "conformance-noop"}),
        )
        .await,
        401,
        "unauthenticated",
    )
    .await;
    let run_id = host
        .create_as("k-one", json!({"workflowId": "conformance-noop"}))
        .await;
    assert!(run_id.starts_with("one/"));
}
