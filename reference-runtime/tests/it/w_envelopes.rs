//! AI envelopes (E1–E5), the envelope catalog, envelope contracts, reasoning, reliability and
//! the cost estimate of `provider.usage`, observed over HTTP on clean hosts (the default
//! configuration, a strict host and a host advertising no kinds). All tests run on virtual time.

use crate::w_host::*;
use crate::w_structured_runs::*;
use reference_runtime::openwop::{EnvelopeSettings, OpenWopConfig, Strictness};
use serde_json::{Value, json};

fn config(envelopes: EnvelopeSettings) -> OpenWopConfig {
    OpenWopConfig {
        envelopes,
        ..OpenWopConfig::default()
    }
}

#[tokio::test(start_paused = true)]
async fn an_accepted_envelope_is_recorded_with_its_correlation_id() {
    let host = host().await;
    let (run_id, _, snapshot) = structured(
        &host,
        json!([{"envelope": envelope("corr-accepted-0000001", answer("yes"))}]),
    )
    .await;
    assert_eq!(status(&snapshot), "completed");
    let log = host.finished_log(&run_id).await;
    let chunks = of_type(&log, "output.chunk");
    assert_eq!(chunks.len(), 1);
    assert_eq!(chunks[0]["causationId"], "corr-accepted-0000001");
    assert_eq!(chunks[0]["payload"]["channel"], "envelope:example.answer");
    assert_eq!(chunks[0]["payload"]["isLast"], true);
    let recorded: Value =
        serde_json::from_str(chunks[0]["payload"]["chunk"].as_str().unwrap()).unwrap();
    assert_eq!(recorded, answer("yes"));
    let completed = of_type(&log, "node.completed")[0];
    assert_eq!(
        completed["payload"]["outputs"]["envelopes"][0]["payload"],
        answer("yes")
    );
    assert!(completed.get("causationId").is_none());
    let usage = of_type(&log, "provider.usage");
    assert_eq!(usage.len(), 1, "one provider.usage per call");
    assert!(usage[0]["payload"]["costEstimateUsd"].as_f64().unwrap() > 0.0);
    assert_eq!(usage[0]["payload"]["currency"], "USD");
}

#[tokio::test(start_paused = true)]
async fn envelopes_missing_correlation_id_or_meta_source_are_rejected() {
    let host = host().await;
    for drop in ["correlationId", "meta"] {
        let mut bad = envelope("corr-rejected-0000001", answer("x"));
        bad.as_object_mut().unwrap().remove(drop);
        if drop == "meta" {
            bad["meta"] = json!({"ts": "2026-01-01T00:00:00Z"});
        }
        let (_, log, snapshot) = structured(
            &host,
            json!([{"envelope": bad}, {"envelope": envelope("corr-never-used-000001", answer("x"))}]),
        )
        .await;
        assert_eq!(status(&snapshot), "failed", "{drop}");
        assert_eq!(failed_code(&log).as_deref(), Some("envelope_invalid"));
        assert!(of_type(&log, "output.chunk").is_empty());
        assert!(log.iter().all(|e| e.get("causationId").is_none()));
    }
}

#[tokio::test(start_paused = true)]
async fn partial_chunks_are_recorded_in_order_and_reassembled() {
    let host = host().await;
    let fragments = ["{\"answer\":\"jo", "ined\",\"confidence\"", ":1}"];
    let chunks: Vec<Value> = fragments
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let mut chunk = envelope("corr-partial-00000001", json!(f));
            chunk["partial"] = json!({"isPartial": i < 2, "index": i, "total": 3});
            chunk
        })
        .collect();
    let (run_id, _, _) = structured(&host, json!([{"chunks": chunks}])).await;
    let log = host.finished_log(&run_id).await;
    let recorded: Vec<(&str, bool)> = of_type(&log, "output.chunk")
        .iter()
        .map(|e| {
            (
                e["payload"]["chunk"].as_str().unwrap(),
                e["payload"]["isLast"] == true,
            )
        })
        .collect();
    assert_eq!(
        recorded,
        [
            (fragments[0], false),
            (fragments[1], false),
            (fragments[2], true)
        ]
    );
    let completed = of_type(&log, "node.completed")[0];
    assert_eq!(
        completed["payload"]["outputs"]["envelopes"][0]["payload"]["answer"],
        "joined"
    );
}

#[tokio::test(start_paused = true)]
async fn a_re_emission_returns_the_cached_outcome_and_records_nothing() {
    let host = host().await;
    let (run_id, _, snapshot) = structured_with(
        &host,
        "conformance-structured-output",
        json!([
            {"envelope": envelope("corr-cached-000000001", answer("first"))},
            {"envelope": envelope("corr-cached-000000001", answer("second"))},
            {"envelope": envelope("corr-fresh-0000000001", answer("third"))},
        ]),
        json!({"turns": 3}),
        json!({}),
    )
    .await;
    assert_eq!(status(&snapshot), "completed");
    let log = host.finished_log(&run_id).await;
    let chunks = of_type(&log, "output.chunk");
    let causes: Vec<&str> = chunks
        .iter()
        .map(|c| c["causationId"].as_str().unwrap())
        .collect();
    assert_eq!(causes, ["corr-cached-000000001", "corr-fresh-0000000001"]);
    let envelopes = &of_type(&log, "node.completed")[0]["payload"]["outputs"]["envelopes"];
    assert_eq!(envelopes[1]["payload"]["answer"], "first");
    assert_eq!(envelopes[1]["cached"], true);
    assert!(!serde_json::to_string(&log).unwrap().contains("second"));
}

#[tokio::test(start_paused = true)]
async fn a_refusal_is_not_retried_and_the_ceiling_bounds_re_dispatch() {
    let host = host().await;
    let (run_id, log, snapshot) = structured(
        &host,
        json!([{"refusal": {"refusalText": "no"}}, {"envelope": envelope("corr-unused-00000001", answer("x"))}]),
    )
    .await;
    assert_eq!(status(&snapshot), "failed");
    assert_eq!(snapshot["error"]["code"], "envelope_refusal");
    assert_eq!(of_type(&log, "envelope.refusal").len(), 1);
    assert!(of_type(&log, "envelope.retry-attempted").is_empty());
    assert_eq!(journal(&host, &run_id).await.len(), 1);

    let (run_id, log, snapshot) = structured_with(
        &host,
        "conformance-structured-output",
        json!([{"refusal": {}}, {"refusal": {}}, {"refusal": {}}, {"envelope": envelope("corr-unused-00000002", answer("x"))}]),
        json!({"dispatchAttempts": 4}),
        json!({"maxRefusals": 2}),
    )
    .await;
    assert_eq!(status(&snapshot), "failed");
    assert_eq!(of_type(&log, "envelope.refusal").len(), 2);
    assert_eq!(of_type(&log, "node.retried").len(), 1);
    assert_eq!(of_type(&log, "node.failed")[0]["payload"]["attempts"], 2);
    assert_eq!(journal(&host, &run_id).await.len(), 2);

    // Below the ceiling, a re-dispatched node may still succeed.
    let (_, log, snapshot) = structured_with(
        &host,
        "conformance-structured-output",
        json!([{"refusal": {}}, {"envelope": envelope("corr-second-try-00001", answer("x"))}]),
        json!({"dispatchAttempts": 2}),
        json!({"maxRefusals": 2}),
    )
    .await;
    assert_eq!(status(&snapshot), "completed");
    assert_eq!(of_type(&log, "envelope.refusal").len(), 1);
}

async fn refusal_of(
    host: &Host,
    kind: &str,
    version: Option<u32>,
    workflow: &str,
) -> (String, String) {
    let payload = match kind {
        "example.answer" => answer("a"),
        "example.summary" => json!({"summary": "s"}),
        "error" => json!({"message": "m"}),
        _ => json!({"a": 1}),
    };
    let mut emitted = envelope("corr-catalog-00000001", payload);
    emitted["type"] = json!(kind);
    if let Some(version) = version {
        emitted["schemaVersion"] = json!(version);
    }
    let (_, log, snapshot) = structured_with(
        host,
        workflow,
        json!([{"envelope": emitted}]),
        json!({}),
        json!({}),
    )
    .await;
    if status(&snapshot) == "completed" {
        return ("completed".into(), String::new());
    }
    let failed = of_type(&log, "node.failed")[0];
    (
        failed["payload"]["error"]["code"]
            .as_str()
            .unwrap()
            .to_string(),
        failed["payload"]["error"]["details"]["check"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    )
}

#[tokio::test(start_paused = true)]
async fn the_catalog_flow_refuses_in_order() {
    let host = host().await;
    let so = "conformance-structured-output";
    let pair = |code: &str, check: &str| (code.to_string(), check.to_string());
    assert_eq!(
        refusal_of(&host, "acme.widget", None, so).await,
        pair("envelope_invalid", "namespace")
    );
    assert_eq!(
        refusal_of(&host, "answer", None, so).await,
        pair("envelope_invalid", "namespace")
    );
    assert_eq!(
        refusal_of(&host, "example.w9-unlisted-kind", Some(900), so).await,
        pair("unknown_envelope_kind", "supportedEnvelopes")
    );
    assert_eq!(
        refusal_of(&host, "example.answer", Some(3), so).await,
        pair("unknown_schema_version", "schemaVersions")
    );
    assert_eq!(
        refusal_of(&host, "error", Some(1), so).await,
        pair("unknown_schema_version", "schemaVersions")
    );
    // Below the floor under warn: validated against the advertised version and admitted.
    assert_eq!(
        refusal_of(&host, "example.answer", Some(1), so).await.0,
        "completed"
    );
    let ct = "conformance-envelope-contract";
    assert_eq!(
        refusal_of(&host, "example.answer", None, ct).await,
        pair("envelope_invalid", "envelopeContracts")
    );
    assert_eq!(
        refusal_of(&host, "myndhyve.plan", None, ct).await,
        pair("unknown_envelope_kind", "supportedEnvelopes")
    );
    assert_eq!(
        refusal_of(&host, "example.summary", None, ct).await.0,
        "completed"
    );
}

#[tokio::test(start_paused = true)]
async fn a_strict_host_refuses_drift_and_a_host_without_kinds_refuses_non_universal_kinds() {
    let strict = host_with(
        config(EnvelopeSettings {
            strictness: Strictness::Strict,
            ..EnvelopeSettings::default()
        }),
        &[],
    )
    .await;
    let discovery = get_json(&strict, "/.well-known/openwop").await;
    assert_eq!(discovery["envelopeStrictness"]["mode"], "strict");
    let so = "conformance-structured-output";
    assert_eq!(
        refusal_of(&strict, "example.answer", Some(1), so).await,
        (
            "unknown_schema_version".to_string(),
            "envelopeStrictness".to_string()
        )
    );
    assert_eq!(
        refusal_of(&strict, "example.answer", Some(2), so).await.0,
        "completed"
    );

    let no_kinds = host_with(
        config(EnvelopeSettings {
            advertise_kinds: false,
            ..EnvelopeSettings::default()
        }),
        &[],
    )
    .await;
    let discovery = get_json(&no_kinds, "/.well-known/openwop").await;
    assert!(discovery["supportedEnvelopes"].is_object());
    assert!(discovery["supportedEnvelopes"].get("kinds").is_none());
    assert_eq!(
        refusal_of(&no_kinds, "example.answer", Some(2), so).await.0,
        "unknown_envelope_kind"
    );
    let universal = envelope("corr-universal-000001", json!({"message": "m"}));
    let mut universal = universal;
    universal["type"] = json!("error");
    let (_, _, snapshot) = structured(&no_kinds, json!([{"envelope": universal}])).await;
    assert_eq!(status(&snapshot), "completed");
}

#[tokio::test(start_paused = true)]
async fn truncation_retries_raise_the_budget_without_a_fragment() {
    let host = host().await;
    let (run_id, log, snapshot) = structured_with(
        &host,
        "conformance-structured-output",
        json!([
            {"text": "{\"type\":\"example.answer\",\"payload\":{", "stopReason": "max_tokens", "usage": {"outputTokens": 100}},
            {"envelope": envelope("corr-after-cut-000001", answer("ok"))},
        ]),
        json!({}),
        json!({"maxTokens": 100}),
    )
    .await;
    assert_eq!(status(&snapshot), "completed");
    let truncated = of_type(&log, "envelope.truncated")[0];
    assert_eq!(truncated["payload"]["stopReason"], "max_tokens");
    assert_eq!(truncated["payload"]["outputTokenCount"], 100);
    let retry = of_type(&log, "envelope.retry-attempted")[0];
    assert_eq!(retry["payload"]["attempt"], 2);
    assert_eq!(retry["payload"]["reason"], "truncation");
    let calls = journal(&host, &run_id).await;
    assert_eq!(calls[0]["maxOutputTokens"], 100);
    assert_eq!(calls[1]["maxOutputTokens"], 200);
    assert_eq!(calls[1]["correctiveFragment"], Value::Null);
}

#[tokio::test(start_paused = true)]
async fn violations_retry_with_a_fragment_and_exhaust_into_cap_breached() {
    let host = host().await;
    let leak = "sk-leak-0123456789abcdef";
    let bad = json!({"envelope": envelope("corr-violation-000001", json!({"answer": "a", "confidence": leak}))});
    let (run_id, log, snapshot) = structured(
        &host,
        json!([bad, bad, bad, {"envelope": envelope("corr-late-0000000001", answer("late"))}]),
    )
    .await;
    assert_eq!(status(&snapshot), "failed");
    assert_eq!(snapshot["error"]["code"], "envelope_invalid");
    let text = serde_json::to_string(&log).unwrap();
    assert!(!text.contains(leak) && !text.contains("late"));
    let retries: Vec<u64> = of_type(&log, "envelope.retry-attempted")
        .iter()
        .map(|e| e["payload"]["attempt"].as_u64().unwrap())
        .collect();
    assert_eq!(retries, [2, 3]);
    let exhausted = of_type(&log, "envelope.retry-exhausted")[0];
    assert_eq!(exhausted["payload"]["totalAttempts"], 3);
    assert_eq!(exhausted["payload"]["finalReason"], "schema-violation");
    let cap = of_type(&log, "cap.breached")[0];
    assert_eq!(
        cap["payload"],
        json!({"kind": "schema", "limit": 2, "observed": 3, "nodeId": "answer"})
    );
    let calls = journal(&host, &run_id).await;
    assert_eq!(calls.len(), 3);
    let fragment = calls[1]["correctiveFragment"].as_str().unwrap();
    assert!(fragment.contains("/confidence fails `type`"), "{fragment}");
    assert!(!serde_json::to_string(&calls).unwrap().contains(leak));
    assert_eq!(calls[1]["maxOutputTokens"], calls[0]["maxOutputTokens"]);
    assert_eq!(of_type(&log, "provider.usage").len(), 3);

    let cut = json!({"text": "{", "stopReason": "length"});
    let (_, log, snapshot) = structured(&host, json!([cut, cut, cut])).await;
    assert_eq!(
        snapshot["error"]["code"],
        "envelope_truncation_unrecoverable"
    );
    assert_eq!(of_type(&log, "envelope.truncated").len(), 3);
    assert_eq!(
        of_type(&log, "envelope.retry-exhausted")[0]["payload"]["finalReason"],
        "truncation"
    );
}

#[tokio::test(start_paused = true)]
async fn lenient_recovery_consumes_no_retry_and_reports_only_path_and_offset() {
    let host = host().await;
    let text = format!(
        "Sure:\n```json\n{}\n```",
        envelope("corr-fenced-000000001", answer("fenced"))
    );
    let (run_id, _, snapshot) = structured(&host, json!([{"text": text}])).await;
    assert_eq!(status(&snapshot), "completed");
    let log = host.finished_log(&run_id).await;
    let recovery = of_type(&log, "envelope.recovery-applied");
    assert_eq!(recovery.len(), 1);
    assert_eq!(
        recovery[0]["payload"],
        json!({"nodeId": "answer", "path": "markdown-fence", "byteOffset": 14})
    );
    assert!(of_type(&log, "envelope.retry-attempted").is_empty());
}

#[tokio::test(start_paused = true)]
async fn reasoning_is_optional_unrouted_and_redacted() {
    let host = host().await;
    let secret = "opal-7f3a9c1e5b2d";
    let payload = json!({"reasoning": format!("uncertain; used {secret} and sk-live-abcdefgh1234"), "answer": "a", "confidence": 1});
    let (run_id, _, snapshot) = structured_with(
        &host,
        "conformance-structured-output",
        json!([{"envelope": envelope("corr-reasoning-000001", payload)}]),
        json!({"secret": secret}),
        json!({}),
    )
    .await;
    assert_eq!(status(&snapshot), "completed");
    let log = host.finished_log(&run_id).await;
    for event in of_type(&log, "output.chunk")
        .iter()
        .chain(of_type(&log, "node.completed").iter())
    {
        let text = event.to_string();
        assert!(
            !text.contains(secret) && !text.contains("sk-live-abcdefgh1234"),
            "{text}"
        );
    }
    let calls = journal(&host, &run_id).await;
    assert!(
        calls[0]["instructions"][1]
            .as_str()
            .unwrap()
            .contains("reasoning")
    );
    let (_, _, snapshot) = structured(
        &host,
        json!([{"envelope": envelope("corr-no-reasoning-01", answer("a"))}]),
    )
    .await;
    assert_eq!(status(&snapshot), "completed");
}

#[tokio::test(start_paused = true)]
async fn discovery_advertises_what_is_implemented() {
    let host = host().await;
    let doc = get_json(&host, "/.well-known/openwop").await;
    assert!(
        doc["testing"]["mockProviders"]
            .as_array()
            .unwrap()
            .contains(&json!("envelope-program"))
    );
    assert_eq!(
        doc["supportedEnvelopes"]["kinds"],
        json!(["example.answer", "example.summary", "ui.text"])
    );
    assert_eq!(doc["schemaVersions"]["kinds"], json!({"example.answer": 2}));
    assert_eq!(doc["envelopeStrictness"]["mode"], "warn");
    assert_eq!(doc["envelopeContracts"]["advertised"], true);
    assert_eq!(doc["limits"]["schemaRounds"], 2);
    let reliability = &doc["envelopes"]["reliability"];
    assert_eq!(reliability["maxRetryAttempts"], 3);
    assert_eq!(reliability["completion"]["truncationBudgetMultiplier"], 2);
    let events = reliability["events"].as_array().unwrap();
    assert!(
        events.contains(&json!("envelope.refusal"))
            && events.contains(&json!("envelope.retry-exhausted"))
    );
    assert_eq!(doc["providerUsage"]["costEstimates"], true);
    assert_eq!(doc["providerUsage"]["currency"], "USD");
    assert_eq!(doc["feedback"]["targets"], json!(["run", "node"]));
    assert!(
        doc.get("conformance").is_none(),
        "the seams are off by default"
    );
    for family in [
        "supportedEnvelopes",
        "schemaVersions",
        "envelopeStrictness",
        "envelopeContracts",
        "envelopes",
        "feedback",
    ] {
        assert_eq!(doc[family]["status"], "stable", "{family}");
    }
}

#[tokio::test(start_paused = true)]
async fn bad_programs_and_options_are_refused_at_creation() {
    let host = host().await;
    for body in [
        structured_body(
            "conformance-structured-output",
            json!([]),
            json!({}),
            json!({}),
        ),
        structured_body(
            "conformance-structured-output",
            json!([{"text": "a", "refusal": {}}]),
            json!({}),
            json!({}),
        ),
        structured_body(
            "conformance-structured-output",
            json!([{"text": "a"}]),
            json!({}),
            json!({"maxRefusals": 0}),
        ),
    ] {
        let response = host.post("/runs", Some(KEY_A), &body).await;
        assert_eq!(response.status(), 400);
    }
    let (_, _, snapshot) = structured_with(
        &host,
        "conformance-structured-output",
        json!([{"text": "a"}]),
        json!({"turns": 17}),
        json!({}),
    )
    .await;
    assert_eq!(snapshot["error"]["code"], "validation_error");
}
