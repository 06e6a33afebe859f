//! The rules of the `w-*` defects of AI envelopes, the catalog, reliability, feedback, usage
//! facets and era-2 logs, observed over HTTP (the rows are in the defect table, `defects/mod.rs`).

use crate::w_host::*;
use crate::w_structured_runs::*;
use reference_runtime::defects::Defect;
use reference_runtime::openwop::{
    EnvelopeSettings, FeedbackSettings, FeedbackTargets, OpenWopConfig, ProviderUsageSettings,
    Strictness,
};
use serde_json::{Value, json};

const SO: &str = "conformance-structured-output";
const CT: &str = "conformance-envelope-contract";

fn with_kind(kind: &str, version: Option<u32>, payload: Value) -> Value {
    let mut e = envelope("corr-defect-000000001", payload);
    e["type"] = json!(kind);
    if let Some(v) = version {
        e["schemaVersion"] = json!(v);
    }
    json!({"envelope": e})
}

async fn outcome(
    host: &Host,
    workflow: &str,
    attempts: Value,
    inputs: Value,
    ai: Value,
) -> (String, Vec<Value>, Value) {
    structured_with(host, workflow, attempts, inputs, ai).await
}

async fn completes(host: &Host, workflow: &str, attempts: Value) -> bool {
    status(
        &outcome(host, workflow, attempts, json!({}), json!({}))
            .await
            .2,
    ) == "completed"
}

async fn fails(host: &Host, workflow: &str, attempts: Value) -> bool {
    status(
        &outcome(host, workflow, attempts, json!({}), json!({}))
            .await
            .2,
    ) == "failed"
}

fn without(field: &str) -> Value {
    let mut e = envelope("corr-defect-000000002", answer("x"));
    match field {
        "meta.source" => e["meta"] = json!({"ts": "2026-01-01T00:00:00Z"}),
        other => {
            e.as_object_mut().unwrap().remove(other);
        }
    }
    json!([{"envelope": e}, {"envelope": envelope("corr-defect-000000003", answer("x"))}])
}

pub(super) async fn missing_correlation_id_rejected(host: &Host) -> bool {
    fails(host, SO, without("correlationId")).await
}

pub(super) async fn missing_meta_source_rejected(host: &Host) -> bool {
    fails(host, SO, without("meta.source")).await
}

pub(super) async fn accepted_envelope_recorded(host: &Host) -> bool {
    let (_, log, _) = structured(
        host,
        json!([{"envelope": envelope("corr-recorded-0000001", answer("r"))}]),
    )
    .await;
    !of_type(&log, "output.chunk").is_empty()
}

pub(super) async fn chunks_in_order(host: &Host) -> bool {
    let chunks: Vec<Value> = ["{\"answer\":\"a\",", "\"confidence\":1}"]
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let mut c = envelope("corr-chunks-000000001", json!(f));
            c["partial"] = json!({"isPartial": i == 0, "index": i, "total": 2});
            c
        })
        .collect();
    let (_, log, _) = structured(host, json!([{"chunks": chunks}])).await;
    let flags: Vec<bool> = of_type(&log, "output.chunk")
        .iter()
        .map(|c| c["payload"]["isLast"] == true)
        .collect();
    flags == [false, true]
}

pub(super) async fn chunks_caused_by_correlation_id(host: &Host) -> bool {
    let (_, log, _) = structured(
        host,
        json!([{"envelope": envelope("corr-cause-0000000001", answer("c"))}]),
    )
    .await;
    of_type(&log, "output.chunk")
        .iter()
        .all(|c| c["causationId"] == "corr-cause-0000000001")
}

async fn re_emission(host: &Host) -> (Vec<Value>, Value) {
    let (_, log, _) = outcome(
        host,
        SO,
        json!([{"envelope": envelope("corr-again-0000000001", answer("first"))},
               {"envelope": envelope("corr-again-0000000001", answer("second"))}]),
        json!({"turns": 2}),
        json!({}),
    )
    .await;
    let second = of_type(&log, "node.completed")
        .first()
        .map(|e| e["payload"]["outputs"]["envelopes"][1]["payload"]["answer"].clone())
        .unwrap_or(Value::Null);
    (log, second)
}

pub(super) async fn re_emission_records_nothing(host: &Host) -> bool {
    let (log, _) = re_emission(host).await;
    of_type(&log, "output.chunk").len() == 1
}

pub(super) async fn re_emission_returns_cached(host: &Host) -> bool {
    re_emission(host).await.1 == "first"
}

pub(super) async fn unregistered_org_refused(host: &Host) -> bool {
    fails(
        host,
        SO,
        json!([with_kind("acme.widget", None, json!({"a": 1}))]),
    )
    .await
}

pub(super) async fn unnamespaced_refused(host: &Host) -> bool {
    fails(
        host,
        SO,
        json!([with_kind("answer", None, json!({"a": 1}))]),
    )
    .await
}

pub(super) async fn refusal_not_retried(host: &Host) -> bool {
    fails(
        host,
        SO,
        json!([{"refusal": {}}, {"envelope": envelope("corr-retry-0000000001", answer("r"))}]),
    )
    .await
}

pub(super) async fn ceiling_holds(host: &Host) -> bool {
    let (_, log, snapshot) = outcome(
        host,
        SO,
        json!([{"refusal": {}}, {"refusal": {}}, {"refusal": {}}, {"envelope": envelope("corr-ceiling-00000001", answer("x"))}]),
        json!({"dispatchAttempts": 4}),
        json!({"maxRefusals": 2}),
    )
    .await;
    status(&snapshot) == "failed" && of_type(&log, "envelope.refusal").len() == 2
}

pub(super) async fn non_member_refused(host: &Host) -> bool {
    fails(
        host,
        SO,
        json!([with_kind("example.w9-unlisted-kind", None, json!({"a": 1}))]),
    )
    .await
}

pub(super) async fn above_floor_refused(host: &Host) -> bool {
    fails(
        host,
        SO,
        json!([with_kind("example.answer", Some(3), answer("x"))]),
    )
    .await
}

pub(super) async fn absent_floor_is_zero(host: &Host) -> bool {
    fails(
        host,
        SO,
        json!([with_kind("error", Some(1), json!({"message": "m"}))]),
    )
    .await
}

pub(super) async fn drift_is_validated(host: &Host) -> bool {
    let bad = with_kind("example.answer", Some(1), json!({"answer": "old"}));
    fails(host, SO, json!([bad, bad, bad])).await
}

pub(super) async fn warn_admits_valid_drift(host: &Host) -> bool {
    completes(
        host,
        SO,
        json!([with_kind("example.answer", Some(1), answer("x"))]),
    )
    .await
}

pub(super) async fn catalog_refuses_first(host: &Host) -> bool {
    let (_, log, _) = structured(
        host,
        json!([with_kind("example.w9-unlisted-kind", Some(900), json!({}))]),
    )
    .await;
    failed_code(&log).as_deref() == Some("unknown_envelope_kind")
}

pub(super) async fn contract_enforced(host: &Host) -> bool {
    fails(
        host,
        CT,
        json!([with_kind("example.answer", None, answer("x"))]),
    )
    .await
}

pub(super) async fn contract_refused_distinctly(host: &Host) -> bool {
    let (_, log, _) = outcome(
        host,
        CT,
        json!([with_kind("example.answer", None, answer("x"))]),
        json!({}),
        json!({}),
    )
    .await;
    failed_code(&log).is_some_and(|c| c != "unknown_envelope_kind")
}

pub(super) async fn refusals_stack(host: &Host) -> bool {
    fails(
        host,
        CT,
        json!([with_kind("myndhyve.plan", None, json!({"a": 1}))]),
    )
    .await
}

pub(super) async fn reasoning_optional(host: &Host) -> bool {
    completes(
        host,
        SO,
        json!([{"envelope": envelope("corr-optional-0000001", answer("x"))}]),
    )
    .await
}

pub(super) async fn reasoning_not_routed(host: &Host) -> bool {
    let payload = json!({"reasoning": "I am uncertain", "answer": "x", "confidence": 0.1});
    completes(
        host,
        SO,
        json!([{"envelope": envelope("corr-routed-00000001", payload)}]),
    )
    .await
}

pub(super) async fn known_secret_redacted(host: &Host) -> bool {
    let payload = json!({"reasoning": "used opal-5e1f-secret", "answer": "x", "confidence": 0.1});
    let (_, log, _) = outcome(
        host,
        SO,
        json!([{"envelope": envelope("corr-secret-00000001", payload)}]),
        json!({"secret": "opal-5e1f-secret"}),
        json!({}),
    )
    .await;
    let derived = serde_json::to_string(&of_type(&log, "output.chunk")).unwrap();
    !derived.contains("opal-5e1f-secret")
}

pub(super) async fn reasoning_instructed(host: &Host) -> bool {
    let (run_id, _, _) = structured(
        host,
        json!([{"envelope": envelope("corr-instruct-0000001", answer("x"))}]),
    )
    .await;
    let calls = journal(host, &run_id).await;
    calls[0]["instructions"].to_string().contains("reasoning")
}

async fn refusal_log(host: &Host, text: &str) -> Vec<Value> {
    structured(host, json!([{"refusal": {"refusalText": text}}]))
        .await
        .1
}

pub(super) async fn refusal_recorded(host: &Host) -> bool {
    !of_type(&refusal_log(host, "no").await, "envelope.refusal").is_empty()
}

pub(super) async fn refusal_code(host: &Host) -> bool {
    failed_code(&refusal_log(host, "no").await).as_deref() == Some("envelope_refusal")
}

pub(super) async fn refusal_text_redacted(host: &Host) -> bool {
    let log = refusal_log(host, "not sharing sk-live-abcdefgh1234").await;
    !serde_json::to_string(&log)
        .unwrap()
        .contains("sk-live-abcdefgh1234")
}

const LEAK: &str = "sk-leak-0123456789abcdef";

fn leaky(n: usize) -> Value {
    let bad = json!({"envelope": envelope("corr-leaky-0000000001", json!({"answer": "a", "confidence": LEAK}))});
    let mut attempts = vec![bad; n];
    attempts.push(json!({"envelope": envelope("corr-leaky-0000000002", answer("late"))}));
    json!(attempts)
}

async fn exhausted(host: &Host) -> (String, Vec<Value>, Value) {
    structured(host, leaky(5)).await
}

pub(super) async fn retry_exhausted_emitted(host: &Host) -> bool {
    !of_type(&exhausted(host).await.1, "envelope.retry-exhausted").is_empty()
}

pub(super) async fn cap_breached_emitted(host: &Host) -> bool {
    of_type(&exhausted(host).await.1, "cap.breached")
        .iter()
        .any(|e| e["payload"]["kind"] == "schema")
}

pub(super) async fn exhaustion_code(host: &Host) -> bool {
    failed_code(&exhausted(host).await.1).as_deref() == Some("envelope_invalid")
}

pub(super) async fn rounds_respected(host: &Host) -> bool {
    let (run_id, _, _) = exhausted(host).await;
    journal(host, &run_id).await.len() == 3
}

pub(super) async fn final_error_redacted(host: &Host) -> bool {
    !serde_json::to_string(&exhausted(host).await.1)
        .unwrap()
        .contains(LEAK)
}

async fn one_violation(host: &Host) -> (Vec<Value>, Vec<Value>) {
    let (run_id, log, _) = structured(host, leaky(1)).await;
    (log, journal(host, &run_id).await)
}

pub(super) async fn retry_announced(host: &Host) -> bool {
    !of_type(&one_violation(host).await.0, "envelope.retry-attempted").is_empty()
}

pub(super) async fn previous_error_redacted(host: &Host) -> bool {
    !serde_json::to_string(&one_violation(host).await.0)
        .unwrap()
        .contains(LEAK)
}

pub(super) async fn fragment_quotes_no_output(host: &Host) -> bool {
    !serde_json::to_string(&one_violation(host).await.1)
        .unwrap()
        .contains(LEAK)
}

pub(super) async fn fragment_names_failure(host: &Host) -> bool {
    one_violation(host).await.1[1]["correctiveFragment"]
        .as_str()
        .is_some_and(|f| f.contains("/confidence"))
}

pub(super) async fn violation_budget_kept(host: &Host) -> bool {
    let calls = one_violation(host).await.1;
    calls[0]["maxOutputTokens"] == calls[1]["maxOutputTokens"]
}

async fn truncation(host: &Host) -> (Vec<Value>, Vec<Value>) {
    let (run_id, log, _) = structured(
        host,
        json!([{"text": "{\"type\":", "stopReason": "max_tokens"}, {"envelope": envelope("corr-trunc-0000000001", answer("ok"))}]),
    )
    .await;
    (log, journal(host, &run_id).await)
}

pub(super) async fn truncation_reported(host: &Host) -> bool {
    !of_type(&truncation(host).await.0, "envelope.truncated").is_empty()
}

pub(super) async fn truncation_budget_raised(host: &Host) -> bool {
    let calls = truncation(host).await.1;
    calls[1]["maxOutputTokens"].as_u64() > calls[0]["maxOutputTokens"].as_u64()
}

pub(super) async fn truncation_without_fragment(host: &Host) -> bool {
    truncation(host).await.1[1]["correctiveFragment"].is_null()
}

pub(super) async fn truncated_valid_not_complete(host: &Host) -> bool {
    let attempts = json!([
        {"envelope": envelope("corr-cut-valid-000001", answer("cut")), "stopReason": "length"},
        {"envelope": envelope("corr-cut-valid-000002", answer("clean"))},
    ]);
    let (_, log, _) = structured(host, attempts).await;
    of_type(&log, "node.completed")
        .first()
        .is_some_and(|e| e["payload"]["outputs"]["envelopes"][0]["payload"]["answer"] == "clean")
}

async fn recovery(host: &Host) -> Vec<Value> {
    let text = format!(
        "```json\n{}\n```",
        envelope("corr-recover-00000001", answer("r"))
    );
    structured(host, json!([{"text": text}])).await.1
}

pub(super) async fn recovery_consumes_nothing(host: &Host) -> bool {
    of_type(&recovery(host).await, "envelope.retry-attempted").is_empty()
}

pub(super) async fn recovery_reported(host: &Host) -> bool {
    of_type(&recovery(host).await, "envelope.recovery-applied").len() == 1
}

pub(super) async fn recovery_path_and_offset_only(host: &Host) -> bool {
    of_type(&recovery(host).await, "envelope.recovery-applied")
        .iter()
        .all(|e| {
            spec::schema::validate_run_event_payload("envelope.recovery-applied", &e["payload"])
                .is_ok()
        })
}

pub(super) async fn reliability_events_listed(host: &Host) -> bool {
    let doc = get_json(host, "/.well-known/openwop").await;
    let events = doc["envelopes"]["reliability"]["events"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    events.contains(&json!("envelope.refusal"))
        && events.contains(&json!("envelope.retry-exhausted"))
}

/// Whether a run whose `provider` emits a tier-one envelope (without optional members)
/// completes.
async fn tier_one_output_accepted(host: &Host, correlation_id: &str, provider: &str) -> bool {
    let mut body = structured_body(
        SO,
        json!([{"envelope": envelope(correlation_id, answer("x"))}]),
        json!({}),
        json!({}),
    );
    body["configurable"]["ai"]["mockProvider"]["config"]["provider"] = json!(provider);
    let run_id = host.create(body).await;
    raw_log(host, &run_id).await;
    status(&get_json(host, &run_path(&run_id)).await) == "completed"
}

pub(super) async fn any_provider_accepted(host: &Host) -> bool {
    tier_one_output_accepted(host, "corr-tier-one-000001", "mock-anthropic").await
}

pub(super) async fn cost_stamped(host: &Host) -> bool {
    let run_id = host
        .create(json!({"workflowId": "conformance-stream-text", "configurable": {"version": 1, "ai": {
            "mockProvider": {"id": "stream-text", "config": {"usage": {"promptTokens": 10, "completionTokens": 5}}}}}}))
        .await;
    let log = raw_log(host, &run_id).await;
    of_type(&log, "provider.usage")
        .iter()
        .all(|e| e["payload"]["costEstimateUsd"].is_number())
}

pub(super) async fn currency_iso(host: &Host) -> bool {
    let currency =
        get_json(host, "/.well-known/openwop").await["providerUsage"]["currency"].clone();
    currency
        .as_str()
        .is_some_and(|c| c.len() == 3 && c.bytes().all(|b| b.is_ascii_uppercase()))
}

async fn finished_noop(host: &Host) -> String {
    let run_id = host.create_fixture("conformance-noop").await;
    raw_log(host, &run_id).await;
    run_id
}

async fn annotate(host: &Host, run_id: &str, key: &str, body: Value) -> reqwest::Response {
    host.post(
        &format!("{}/annotations", run_path(run_id)),
        Some(key),
        &body,
    )
    .await
}

pub(super) async fn terminal_run_annotated(host: &Host) -> bool {
    let run_id = finished_noop(host).await;
    annotate(
        host,
        &run_id,
        KEY_A,
        json!({"signal": {"kind": "rating", "rating": 2}}),
    )
    .await
    .status()
        == 201
}

pub(super) async fn event_target_refused(host: &Host) -> bool {
    let run_id = finished_noop(host).await;
    let body = json!({"target": {"eventId": "evt-00000000000000000000000000000000"}, "signal": {"kind": "flag"}});
    annotate(host, &run_id, KEY_A, body)
        .await
        .status()
        .is_client_error()
}

/// An annotation without a target (on the run) is refused where the targets leave out `run`;
/// one on a node is accepted there.
pub(super) async fn run_target_refused(host: &Host) -> bool {
    let run_id = finished_noop(host).await;
    let on_run = json!({"signal": {"kind": "flag"}});
    let on_node = json!({"target": {"nodeId": "noop"}, "signal": {"kind": "flag"}});
    annotate(host, &run_id, KEY_A, on_run)
        .await
        .status()
        .is_client_error()
        && annotate(host, &run_id, KEY_A, on_node).await.status() == 201
}

/// `feedback.targets: [node, event]` (the deferred profile's).
pub(super) fn node_and_event_targets() -> OpenWopConfig {
    let mut config = OpenWopConfig::default();
    config.feedback.targets = FeedbackTargets::NodeAndEvent;
    config
}

pub(super) async fn refused_annotation_not_logged(host: &Host) -> bool {
    let run_id = finished_noop(host).await;
    let before = raw_log(host, &run_id).await;
    annotate(host, &run_id, KEY_A, json!({"target": {"eventId": "evt-00000000000000000000000000000000"}, "signal": {"kind": "flag"}})).await;
    raw_log(host, &run_id).await == before
}

pub(super) async fn node_target_accepted(host: &Host) -> bool {
    let run_id = finished_noop(host).await;
    annotate(
        host,
        &run_id,
        KEY_A,
        json!({"target": {"nodeId": "noop"}, "signal": {"kind": "flag"}}),
    )
    .await
    .status()
        == 201
}

pub(super) async fn flag_accepted(host: &Host) -> bool {
    let run_id = finished_noop(host).await;
    annotate(host, &run_id, KEY_A, json!({"signal": {"kind": "flag"}}))
        .await
        .status()
        == 201
}

pub(super) async fn annotations_tenant_bound(host: &Host) -> bool {
    let run_id = finished_noop(host).await;
    annotate(
        host,
        &run_id,
        KEY_A,
        json!({"signal": {"kind": "flag"}, "note": "private"}),
    )
    .await;
    let response = host
        .get(
            &format!("{}/annotations", run_path(&run_id)),
            Some(KEY_B),
            &[],
        )
        .await;
    response.status() == 403
}

async fn annotation_listing(host: &Host, body: Value) -> String {
    let run_id = finished_noop(host).await;
    annotate(host, &run_id, KEY_A, body).await;
    host.get(
        &format!("{}/annotations", run_path(&run_id)),
        Some(KEY_A),
        &[],
    )
    .await
    .text()
    .await
    .unwrap()
}

pub(super) async fn note_redacted(host: &Host) -> bool {
    let body = json!({"signal": {"kind": "flag"}, "note": "key sk-live-abcdefgh1234"});
    !annotation_listing(host, body)
        .await
        .contains("sk-live-abcdefgh1234")
}

pub(super) async fn correction_redacted(host: &Host) -> bool {
    let body = json!({"signal": {"kind": "correction", "correction": "key sk-live-abcdefgh1234"}});
    !annotation_listing(host, body)
        .await
        .contains("sk-live-abcdefgh1234")
}

pub(super) fn seams_on() -> OpenWopConfig {
    OpenWopConfig {
        seams_enabled: true,
        ..OpenWopConfig::default()
    }
}

async fn seeded_poll(host: &Host, completed: Value) -> (u16, Value) {
    let body = json!({"eventLogSchemaVersion": 2, "status": "completed", "events": [
        {"type": "run.resuming", "sequence": 0, "payload": {}},
        {"type": "run.completed", "sequence": 1, "payload": completed},
    ]});
    let seeded: Value = host
        .post(
            "/conformance/seams/sample/event-log/seed",
            Some(KEY_A),
            &body,
        )
        .await
        .json()
        .await
        .unwrap();
    let run_id = seeded["runId"].as_str().unwrap();
    let response = host
        .get(
            &format!("{}/events/poll?timeout=1", run_path(run_id)),
            Some(KEY_A),
            &[],
        )
        .await;
    (response.status().as_u16(), response.json().await.unwrap())
}

pub(super) async fn era2_translated(host: &Host) -> bool {
    let (_, body) = seeded_poll(host, json!({"outputs": {}})).await;
    body["events"][0]["type"] == "run.resume-started"
}

pub(super) async fn era2_never_drops(host: &Host) -> bool {
    let (status, body) = seeded_poll(host, json!({"outputs": {}, "legacyTotal": 1})).await;
    status == 500 && body["error"] == "payload_unprojectable"
}

/// `supportedEnvelopes` advertised without `kinds`.
pub(super) fn kinds_absent() -> OpenWopConfig {
    OpenWopConfig {
        envelopes: EnvelopeSettings {
            advertise_kinds: false,
            ..EnvelopeSettings::default()
        },
        ..OpenWopConfig::default()
    }
}

/// `envelopeStrictness.mode: strict`.
pub(super) fn strict() -> OpenWopConfig {
    OpenWopConfig {
        envelopes: EnvelopeSettings {
            strictness: Strictness::Strict,
            ..EnvelopeSettings::default()
        },
        ..OpenWopConfig::default()
    }
}

/// `feedback` advertised without `signals`.
pub(super) fn signals_absent() -> OpenWopConfig {
    OpenWopConfig {
        feedback: FeedbackSettings {
            advertise_signals: false,
            ..FeedbackSettings::default()
        },
        ..OpenWopConfig::default()
    }
}

pub(super) async fn absent_kinds_refuse_non_universal(host: &Host) -> bool {
    let (_, log, _) = structured(
        host,
        json!([with_kind("example.answer", Some(2), answer("x"))]),
    )
    .await;
    failed_code(&log).as_deref() == Some("unknown_envelope_kind")
}

pub(super) async fn strict_refuses_drift(host: &Host) -> bool {
    let (_, log, _) = structured(
        host,
        json!([with_kind("example.answer", Some(1), answer("x"))]),
    )
    .await;
    failed_code(&log).as_deref() == Some("unknown_schema_version")
        && of_type(&log, "output.chunk").is_empty()
}

pub(super) async fn absent_signals_accept_all_four(host: &Host) -> bool {
    let run_id = finished_noop(host).await;
    let mut all = true;
    for signal in [
        json!({"kind": "rating", "rating": 4}),
        json!({"kind": "correction", "correction": "c"}),
        json!({"kind": "label", "label": "l"}),
        json!({"kind": "flag"}),
    ] {
        let response = annotate(host, &run_id, KEY_A, json!({ "signal": signal })).await;
        all &= response.status() == 201;
    }
    all
}

#[tokio::test(start_paused = true)]
async fn feedback_signals_are_advertised_unless_switched_off() {
    let host = host_with(OpenWopConfig::default(), &[]).await;
    let feedback = get_json(&host, "/.well-known/openwop").await["feedback"].clone();
    assert_eq!(
        feedback["signals"],
        json!(["rating", "correction", "label", "flag"])
    );
    let host = host_with(signals_absent(), &[]).await;
    let feedback = get_json(&host, "/.well-known/openwop").await["feedback"].clone();
    assert!(feedback.get("signals").is_none(), "{feedback}");
    assert_eq!(feedback["targets"], json!(["run", "node"]));
}

/// Every reliability scenario this host knows, one run each; the event types they emitted.
async fn reliability_types_emitted(host: &Host) -> Vec<String> {
    let recovered = recovery(host).await;
    let mut emitted = Vec::new();
    for log in [
        exhausted(host).await.1,
        refusal_log(host, "no").await,
        truncation(host).await.0,
        recovered,
    ] {
        emitted.extend(types(&log));
    }
    emitted
}

pub(super) async fn only_emitted_events_listed(host: &Host) -> bool {
    let doc = get_json(host, "/.well-known/openwop").await;
    let listed = doc["envelopes"]["reliability"]["events"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let emitted = reliability_types_emitted(host).await;
    listed
        .iter()
        .all(|t| t.as_str().is_some_and(|t| emitted.iter().any(|e| e == t)))
}

// The remaining rules of this part of the catalogue, each with its own defect.

pub(super) async fn envelope_id_never_read_as_correlation(host: &Host) -> bool {
    let mut e = envelope("corr-defect-000000005", answer("x"));
    e.as_object_mut().unwrap().remove("correlationId");
    e["envelopeId"] = json!("env-defect-000000005");
    let next = envelope("corr-defect-000000006", answer("x"));
    fails(host, SO, json!([{"envelope": e}, {"envelope": next}])).await
}

pub(super) async fn strict_admits_at_floor(host: &Host) -> bool {
    let (_, log, snapshot) = structured(
        host,
        json!([with_kind("example.answer", Some(2), answer("x"))]),
    )
    .await;
    status(&snapshot) == "completed" && !of_type(&log, "output.chunk").is_empty()
}

/// A `conformance-stream-text` run through the `stream-text` mock: its prompt, its response
/// tokens and their usage.
async fn stream_text_log(host: &Host) -> Vec<Value> {
    let run_id = host
        .create(json!({"workflowId": "conformance-stream-text", "inputs": {"prompt": "Kestrel-Prompt-K3"},
            "configurable": {"version": 1, "ai": {"mockProvider": {"id": "stream-text", "config": {
                "tokens": ["Zebra", "-Response"], "usage": {"promptTokens": 5, "completionTokens": 2}}}}}}))
        .await;
    raw_log(host, &run_id).await
}

pub(super) async fn one_usage_per_call(host: &Host) -> bool {
    of_type(&stream_text_log(host).await, "provider.usage").len() == 1
}

/// `providerUsage` not advertised.
pub(super) fn usage_unadvertised() -> OpenWopConfig {
    OpenWopConfig {
        provider_usage: ProviderUsageSettings { advertise: false },
        ..OpenWopConfig::default()
    }
}

pub(super) async fn usage_omitted_when_unadvertised(host: &Host) -> bool {
    let discovery = get_json(host, "/.well-known/openwop").await;
    discovery.get("providerUsage").is_none()
        && of_type(&stream_text_log(host).await, "provider.usage").is_empty()
}

pub(super) async fn usage_without_prompt(host: &Host) -> bool {
    let log = stream_text_log(host).await;
    let usage = serde_json::to_string(&of_type(&log, "provider.usage")).unwrap();
    !usage.is_empty() && !usage.contains("Kestrel-Prompt-K3")
}

pub(super) async fn usage_without_response(host: &Host) -> bool {
    let log = stream_text_log(host).await;
    let usage = of_type(&log, "provider.usage");
    !usage.is_empty() && !serde_json::to_string(&usage).unwrap().contains("Zebra")
}

pub(super) async fn openai_output_without_optional_member_accepted(host: &Host) -> bool {
    tier_one_output_accepted(host, "corr-tier-one-000002", "mock-openai").await
}

pub(super) async fn retry_announced_before_it_is_made(host: &Host) -> bool {
    let kinds = types(&one_violation(host).await.0);
    let announced = kinds.iter().position(|t| t == "envelope.retry-attempted");
    let retried = kinds.iter().position(|t| t == "output.chunk");
    matches!((announced, retried), (Some(a), Some(r)) if a < r)
}

pub(super) async fn exhaustion_reports_the_final_reason(host: &Host) -> bool {
    let cut = json!({"text": "{\"type\":\"example.answer\",\"payload\":{\"answer\":\"cut", "stopReason": "max_tokens"});
    let (_, log, _) = structured(host, json!([cut, cut, cut])).await;
    let exhausted = of_type(&log, "envelope.retry-exhausted");
    !exhausted.is_empty()
        && exhausted
            .iter()
            .all(|e| e["payload"]["finalReason"] == "truncation")
}

/// The credential of the configured provider the two credential tests call.
const CANARY: &str = "sk-w9-canary-5a1t3d";
/// The environment variable the provider's credential is read from.
const CREDENTIAL_ENV: &str = "W9_USAGE_KEY";

/// The `provider.usage` payload of one `conformance-stream-text` run through a configured
/// (wiremock) OpenAI provider, on a runtime with `defects`.
async fn configured_provider_usage(defects: &[Defect]) -> Value {
    use reference_runtime::clock::SystemClock;
    use reference_runtime::config::{Config, ModelConfig, ProviderConfig, ProviderKind};
    use reference_runtime::defects::Defects;
    use reference_runtime::redact::CredentialSource;
    use reference_runtime::runtime::{RuntimeOptions, start};
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    let chunk = |body: Value| format!("data: {body}\n\n");
    let mut stream = chunk(
        json!({"id": "c", "object": "chat.completion.chunk", "created": 1,
        "model": "gpt-test", "choices": [{"index": 0, "delta": {"content": "Hi"}, "finish_reason": null}]}),
    );
    stream.push_str(&chunk(
        json!({"id": "c", "object": "chat.completion.chunk", "created": 1,
        "model": "gpt-test", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
    ));
    stream.push_str(&chunk(json!({"id": "c", "object": "chat.completion.chunk", "created": 1,
        "model": "gpt-test", "choices": [], "usage": {"prompt_tokens": 4, "completion_tokens": 1, "total_tokens": 5}})));
    stream.push_str("data: [DONE]\n\n");
    let upstream = MockServer::builder().start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-type", "text/event-stream")
                .set_body_string(stream),
        )
        .mount(&upstream)
        .await;
    let config = Config {
        providers: vec![ProviderConfig {
            id: "openai-primary".into(),
            kind: ProviderKind::OpenaiChat,
            base_url: upstream.uri(),
            credential_env: CREDENTIAL_ENV.into(),
            models: vec![ModelConfig {
                model: "gpt-test".into(),
                abilities: vec!["text-generation".into()],
                input_modalities: vec![spec::execution::Modality::Text],
                output_modalities: vec![spec::execution::Modality::Text],
                stream: true,
                tools: false,
                structured_output: false,
                asynchronous: false,
                cancel: true,
            }],
        }],
        ..Config::default()
    };
    let options = RuntimeOptions {
        config,
        defects: Defects::of(defects.iter().copied()),
        clock: std::sync::Arc::new(SystemClock),
        credentials: CredentialSource::from_pairs([(CREDENTIAL_ENV, CANARY)]),
    };
    let runtime = start("127.0.0.1:0".parse().unwrap(), options)
        .await
        .unwrap();
    let base = runtime.base_url();
    let client = reqwest::Client::new();
    let created: Value = client
        .post(format!("{base}/runs"))
        .bearer_auth(KEY_A)
        .json(
            &json!({"workflowId": "conformance-stream-text", "inputs": {"prompt": "hi"},
            "configurable": {"version": 1, "ai": {"provider": "openai-primary"}}}),
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let run_id = created["runId"].as_str().unwrap();
    let mut log = Vec::new();
    let mut after = 0;
    loop {
        let url = format!(
            "{base}{}/events/poll?afterSequence={after}&timeout=60",
            run_path(run_id)
        );
        let body: Value = client
            .get(url)
            .bearer_auth(KEY_A)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        log.extend(body["events"].as_array().cloned().unwrap_or_default());
        after = body["lastSequence"].as_i64().unwrap_or(after);
        if body["isTerminal"] == true {
            break;
        }
    }
    let usage = of_type(&log, "provider.usage");
    assert_eq!(usage.len(), 1, "one provider call, one provider.usage");
    usage[0]["payload"].clone()
}

#[tokio::test]
pub(super) async fn w_usage_credential_ref() {
    let names_credential = |usage: &Value| usage.to_string().contains(CREDENTIAL_ENV);
    assert!(!names_credential(&configured_provider_usage(&[]).await));
    assert!(names_credential(
        &configured_provider_usage(&[Defect::WUsageCredentialRef]).await
    ));
}

#[tokio::test]
pub(super) async fn w_usage_credential_hash() {
    use sha2::{Digest, Sha256};
    let fingerprint = hex::encode(Sha256::digest(CANARY.as_bytes()));
    let carries_hash = |usage: &Value| usage.to_string().contains(&fingerprint[..16]);
    assert!(!carries_hash(&configured_provider_usage(&[]).await));
    assert!(carries_hash(
        &configured_provider_usage(&[Defect::WUsageCredentialHash]).await
    ));
}
