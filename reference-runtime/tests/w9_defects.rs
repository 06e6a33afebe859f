//! Every issue-9 `w-*` defect (AI envelopes, the catalog, reliability, feedback, usage facets,
//! era-2 logs), observed over HTTP: the rule holds on a clean host and breaks with the defect
//! switched on. All tests run on virtual time.

mod w9_support;
mod w_support;

use reference_runtime::defects::Defect;
use reference_runtime::openwop::{
    EnvelopeSettings, FeedbackSettings, OpenWopConfig, ProviderUsageSettings, Strictness,
};
use serde_json::{Value, json};
use w_support::*;
use w9_support::*;

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

/// The requirement sections issue 9 covers (its defects are tested here, not in w_defects).
const SECTIONS: [&str; 14] = [
    "events.ai-envelopes.",
    "events.envelope-",
    "events.supported-envelopes.",
    "events.schema-versions.",
    "events.reasoning.",
    "events.reliability.",
    "events.tier-one-subset.",
    "events.feedback.",
    "events.era2.",
    "events.provider-usage.cost-estimates",
    "events.provider-usage.currency",
    "events.provider-usage.exactly-one",
    "events.provider-usage.omitted",
    "events.provider-usage.no-",
];

const COVERED: &[Defect] = &[
    Defect::WEnvelopeCorrelationSynthesized,
    Defect::WEnvelopeMetaSourceSynthesized,
    Defect::WEnvelopeAcceptanceUnrecorded,
    Defect::WEnvelopeChunksReordered,
    Defect::WEnvelopeCausationMissing,
    Defect::WReEmissionRecorded,
    Defect::WReEmissionNotCached,
    Defect::WUnregisteredOrgKindAccepted,
    Defect::WUnnamespacedKindAccepted,
    Defect::WRefusalRetried,
    Defect::WMaxRefusalsIgnored,
    Defect::WUnknownKindAccepted,
    Defect::WAboveFloorAccepted,
    Defect::WAbsentFloorUnbounded,
    Defect::WDriftUnchecked,
    Defect::WWarnRefusesDrift,
    Defect::WCatalogOrderSwapped,
    Defect::WEnvelopeContractIgnored,
    Defect::WEnvelopeContractSameCode,
    Defect::WEnvelopeContractSubstitutes,
    Defect::WReasoningRequired,
    Defect::WRoutesOnReasoning,
    Defect::WReasoningSecretLeaked,
    Defect::WNoReasoningInstruction,
    Defect::WRefusalEventMissing,
    Defect::WRefusalWrongCode,
    Defect::WRetryExhaustedMissing,
    Defect::WCapBreachedMissing,
    Defect::WExhaustionWrongCode,
    Defect::WRetryAttemptedMissing,
    Defect::WTruncationNotReported,
    Defect::WTruncatedAccepted,
    Defect::WTruncationNoBudgetRaise,
    Defect::WTruncationCorrectiveFragment,
    Defect::WViolationFragmentEchoesOutput,
    Defect::WViolationFragmentGeneric,
    Defect::WViolationBudgetRaised,
    Defect::WSchemaRoundsIgnored,
    Defect::WRecoveryConsumesRetry,
    Defect::WRecoveryNotReported,
    Defect::WRecoveryCarriesContent,
    Defect::WPreviousErrorUnredacted,
    Defect::WFinalErrorUnredacted,
    Defect::WRefusalTextUnredacted,
    Defect::WReliabilityEventsIncomplete,
    Defect::WTierOneProviderRefusal,
    Defect::WCostEstimateMissing,
    Defect::WCurrencyNotIso,
    Defect::WAnnotationTerminalRefused,
    Defect::WAnnotationOutsideTargetAccepted,
    Defect::WRefusedAnnotationLogged,
    Defect::WAnnotationNodeTargetRefused,
    Defect::WAnnotationSignalRefused,
    Defect::WAnnotationCrossTenant,
    Defect::WAnnotationNoteUnredacted,
    Defect::WAnnotationCorrectionUnredacted,
    Defect::WEra2Untranslated,
    Defect::WEra2SilentDrop,
    Defect::WAbsentKindsAdmitted,
    Defect::WStrictAdmitsDrift,
    Defect::WAbsentSignalsNoneAccepted,
    Defect::WReliabilityEventsOverlisted,
    Defect::WEnvelopeIdAsCorrelationId,
    Defect::WStrictRefusesAtFloor,
    Defect::WDriftValidatedAsEmitted,
    Defect::WUsageRecordedTwice,
    Defect::WUsageEmittedUnadvertised,
    Defect::WUsageCredentialRef,
    Defect::WUsageCredentialHash,
    Defect::WUsageCarriesPrompt,
    Defect::WUsageCarriesResponse,
    Defect::WTierOneStrictModeRefusal,
    Defect::WReasoningUnredacted,
    Defect::WRetryAnnouncedAfterRetry,
    Defect::WExhaustionReasonFixed,
];

#[test]
fn every_issue_9_defect_has_a_test() {
    let catalogue: Vec<Defect> = Defect::ALL
        .iter()
        .copied()
        .filter(|d| d.surface() == "W" && SECTIONS.iter().any(|s| d.requirement().starts_with(s)))
        .collect();
    assert_eq!(catalogue, COVERED);
}

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

async fn missing_correlation_id_rejected(host: &Host) -> bool {
    fails(host, SO, without("correlationId")).await
}
defect_test!(
    w_envelope_correlation_synthesized,
    WEnvelopeCorrelationSynthesized,
    missing_correlation_id_rejected
);

async fn missing_meta_source_rejected(host: &Host) -> bool {
    fails(host, SO, without("meta.source")).await
}
defect_test!(
    w_envelope_meta_source_synthesized,
    WEnvelopeMetaSourceSynthesized,
    missing_meta_source_rejected
);

async fn accepted_envelope_recorded(host: &Host) -> bool {
    let (_, log, _) = structured(
        host,
        json!([{"envelope": envelope("corr-recorded-0000001", answer("r"))}]),
    )
    .await;
    !of_type(&log, "output.chunk").is_empty()
}
defect_test!(
    w_envelope_acceptance_unrecorded,
    WEnvelopeAcceptanceUnrecorded,
    accepted_envelope_recorded
);

async fn chunks_in_order(host: &Host) -> bool {
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
defect_test!(
    w_envelope_chunks_reordered,
    WEnvelopeChunksReordered,
    chunks_in_order
);

async fn chunks_caused_by_correlation_id(host: &Host) -> bool {
    let (_, log, _) = structured(
        host,
        json!([{"envelope": envelope("corr-cause-0000000001", answer("c"))}]),
    )
    .await;
    of_type(&log, "output.chunk")
        .iter()
        .all(|c| c["causationId"] == "corr-cause-0000000001")
}
defect_test!(
    w_envelope_causation_missing,
    WEnvelopeCausationMissing,
    chunks_caused_by_correlation_id
);

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

async fn re_emission_records_nothing(host: &Host) -> bool {
    let (log, _) = re_emission(host).await;
    of_type(&log, "output.chunk").len() == 1
}
defect_test!(
    w_re_emission_recorded,
    WReEmissionRecorded,
    re_emission_records_nothing
);

async fn re_emission_returns_cached(host: &Host) -> bool {
    re_emission(host).await.1 == "first"
}
defect_test!(
    w_re_emission_not_cached,
    WReEmissionNotCached,
    re_emission_returns_cached
);

async fn unregistered_org_refused(host: &Host) -> bool {
    fails(
        host,
        SO,
        json!([with_kind("acme.widget", None, json!({"a": 1}))]),
    )
    .await
}
defect_test!(
    w_unregistered_org_kind_accepted,
    WUnregisteredOrgKindAccepted,
    unregistered_org_refused
);

async fn unnamespaced_refused(host: &Host) -> bool {
    fails(
        host,
        SO,
        json!([with_kind("answer", None, json!({"a": 1}))]),
    )
    .await
}
defect_test!(
    w_unnamespaced_kind_accepted,
    WUnnamespacedKindAccepted,
    unnamespaced_refused
);

async fn refusal_not_retried(host: &Host) -> bool {
    fails(
        host,
        SO,
        json!([{"refusal": {}}, {"envelope": envelope("corr-retry-0000000001", answer("r"))}]),
    )
    .await
}
defect_test!(w_refusal_retried, WRefusalRetried, refusal_not_retried);

async fn ceiling_holds(host: &Host) -> bool {
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
defect_test!(w_max_refusals_ignored, WMaxRefusalsIgnored, ceiling_holds);

async fn non_member_refused(host: &Host) -> bool {
    fails(
        host,
        SO,
        json!([with_kind("example.w9-unlisted-kind", None, json!({"a": 1}))]),
    )
    .await
}
defect_test!(
    w_unknown_kind_accepted,
    WUnknownKindAccepted,
    non_member_refused
);

async fn above_floor_refused(host: &Host) -> bool {
    fails(
        host,
        SO,
        json!([with_kind("example.answer", Some(3), answer("x"))]),
    )
    .await
}
defect_test!(
    w_above_floor_accepted,
    WAboveFloorAccepted,
    above_floor_refused
);

async fn absent_floor_is_zero(host: &Host) -> bool {
    fails(
        host,
        SO,
        json!([with_kind("error", Some(1), json!({"message": "m"}))]),
    )
    .await
}
defect_test!(
    w_absent_floor_unbounded,
    WAbsentFloorUnbounded,
    absent_floor_is_zero
);

async fn drift_is_validated(host: &Host) -> bool {
    let bad = with_kind("example.answer", Some(1), json!({"answer": "old"}));
    fails(host, SO, json!([bad, bad, bad])).await
}
defect_test!(w_drift_unchecked, WDriftUnchecked, drift_is_validated);

async fn warn_admits_valid_drift(host: &Host) -> bool {
    completes(
        host,
        SO,
        json!([with_kind("example.answer", Some(1), answer("x"))]),
    )
    .await
}
defect_test!(
    w_warn_refuses_drift,
    WWarnRefusesDrift,
    warn_admits_valid_drift
);

async fn catalog_refuses_first(host: &Host) -> bool {
    let (_, log, _) = structured(
        host,
        json!([with_kind("example.w9-unlisted-kind", Some(900), json!({}))]),
    )
    .await;
    failed_code(&log).as_deref() == Some("unknown_envelope_kind")
}
defect_test!(
    w_catalog_order_swapped,
    WCatalogOrderSwapped,
    catalog_refuses_first
);

async fn contract_enforced(host: &Host) -> bool {
    fails(
        host,
        CT,
        json!([with_kind("example.answer", None, answer("x"))]),
    )
    .await
}
defect_test!(
    w_envelope_contract_ignored,
    WEnvelopeContractIgnored,
    contract_enforced
);

async fn contract_refused_distinctly(host: &Host) -> bool {
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
defect_test!(
    w_envelope_contract_same_code,
    WEnvelopeContractSameCode,
    contract_refused_distinctly
);

async fn refusals_stack(host: &Host) -> bool {
    fails(
        host,
        CT,
        json!([with_kind("myndhyve.plan", None, json!({"a": 1}))]),
    )
    .await
}
defect_test!(
    w_envelope_contract_substitutes,
    WEnvelopeContractSubstitutes,
    refusals_stack
);

async fn reasoning_optional(host: &Host) -> bool {
    completes(
        host,
        SO,
        json!([{"envelope": envelope("corr-optional-0000001", answer("x"))}]),
    )
    .await
}
defect_test!(w_reasoning_required, WReasoningRequired, reasoning_optional);

async fn reasoning_not_routed(host: &Host) -> bool {
    let payload = json!({"reasoning": "I am uncertain", "answer": "x", "confidence": 0.1});
    completes(
        host,
        SO,
        json!([{"envelope": envelope("corr-routed-00000001", payload)}]),
    )
    .await
}
defect_test!(
    w_routes_on_reasoning,
    WRoutesOnReasoning,
    reasoning_not_routed
);

async fn known_secret_redacted(host: &Host) -> bool {
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
defect_test!(
    w_reasoning_secret_leaked,
    WReasoningSecretLeaked,
    known_secret_redacted
);

async fn reasoning_instructed(host: &Host) -> bool {
    let (run_id, _, _) = structured(
        host,
        json!([{"envelope": envelope("corr-instruct-0000001", answer("x"))}]),
    )
    .await;
    let calls = journal(host, &run_id).await;
    calls[0]["instructions"].to_string().contains("reasoning")
}
defect_test!(
    w_no_reasoning_instruction,
    WNoReasoningInstruction,
    reasoning_instructed
);

async fn refusal_log(host: &Host, text: &str) -> Vec<Value> {
    structured(host, json!([{"refusal": {"refusalText": text}}]))
        .await
        .1
}

async fn refusal_recorded(host: &Host) -> bool {
    !of_type(&refusal_log(host, "no").await, "envelope.refusal").is_empty()
}
defect_test!(
    w_refusal_event_missing,
    WRefusalEventMissing,
    refusal_recorded
);

async fn refusal_code(host: &Host) -> bool {
    failed_code(&refusal_log(host, "no").await).as_deref() == Some("envelope_refusal")
}
defect_test!(w_refusal_wrong_code, WRefusalWrongCode, refusal_code);

async fn refusal_text_redacted(host: &Host) -> bool {
    let log = refusal_log(host, "not sharing sk-live-abcdefgh1234").await;
    !serde_json::to_string(&log)
        .unwrap()
        .contains("sk-live-abcdefgh1234")
}
defect_test!(
    w_refusal_text_unredacted,
    WRefusalTextUnredacted,
    refusal_text_redacted
);

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

async fn retry_exhausted_emitted(host: &Host) -> bool {
    !of_type(&exhausted(host).await.1, "envelope.retry-exhausted").is_empty()
}
defect_test!(
    w_retry_exhausted_missing,
    WRetryExhaustedMissing,
    retry_exhausted_emitted
);

async fn cap_breached_emitted(host: &Host) -> bool {
    of_type(&exhausted(host).await.1, "cap.breached")
        .iter()
        .any(|e| e["payload"]["kind"] == "schema")
}
defect_test!(
    w_cap_breached_missing,
    WCapBreachedMissing,
    cap_breached_emitted
);

async fn exhaustion_code(host: &Host) -> bool {
    failed_code(&exhausted(host).await.1).as_deref() == Some("envelope_invalid")
}
defect_test!(
    w_exhaustion_wrong_code,
    WExhaustionWrongCode,
    exhaustion_code
);

async fn rounds_respected(host: &Host) -> bool {
    let (run_id, _, _) = exhausted(host).await;
    journal(host, &run_id).await.len() == 3
}
defect_test!(
    w_schema_rounds_ignored,
    WSchemaRoundsIgnored,
    rounds_respected
);

async fn final_error_redacted(host: &Host) -> bool {
    !serde_json::to_string(&exhausted(host).await.1)
        .unwrap()
        .contains(LEAK)
}
defect_test!(
    w_final_error_unredacted,
    WFinalErrorUnredacted,
    final_error_redacted
);

async fn one_violation(host: &Host) -> (Vec<Value>, Vec<Value>) {
    let (run_id, log, _) = structured(host, leaky(1)).await;
    (log, journal(host, &run_id).await)
}

async fn retry_announced(host: &Host) -> bool {
    !of_type(&one_violation(host).await.0, "envelope.retry-attempted").is_empty()
}
defect_test!(
    w_retry_attempted_missing,
    WRetryAttemptedMissing,
    retry_announced
);

async fn previous_error_redacted(host: &Host) -> bool {
    !serde_json::to_string(&one_violation(host).await.0)
        .unwrap()
        .contains(LEAK)
}
defect_test!(
    w_previous_error_unredacted,
    WPreviousErrorUnredacted,
    previous_error_redacted
);

async fn fragment_quotes_no_output(host: &Host) -> bool {
    !serde_json::to_string(&one_violation(host).await.1)
        .unwrap()
        .contains(LEAK)
}
defect_test!(
    w_violation_fragment_echoes_output,
    WViolationFragmentEchoesOutput,
    fragment_quotes_no_output
);

async fn fragment_names_failure(host: &Host) -> bool {
    one_violation(host).await.1[1]["correctiveFragment"]
        .as_str()
        .is_some_and(|f| f.contains("/confidence"))
}
defect_test!(
    w_violation_fragment_generic,
    WViolationFragmentGeneric,
    fragment_names_failure
);

async fn violation_budget_kept(host: &Host) -> bool {
    let calls = one_violation(host).await.1;
    calls[0]["maxOutputTokens"] == calls[1]["maxOutputTokens"]
}
defect_test!(
    w_violation_budget_raised,
    WViolationBudgetRaised,
    violation_budget_kept
);

async fn truncation(host: &Host) -> (Vec<Value>, Vec<Value>) {
    let (run_id, log, _) = structured(
        host,
        json!([{"text": "{\"type\":", "stopReason": "max_tokens"}, {"envelope": envelope("corr-trunc-0000000001", answer("ok"))}]),
    )
    .await;
    (log, journal(host, &run_id).await)
}

async fn truncation_reported(host: &Host) -> bool {
    !of_type(&truncation(host).await.0, "envelope.truncated").is_empty()
}
defect_test!(
    w_truncation_not_reported,
    WTruncationNotReported,
    truncation_reported
);

async fn truncation_budget_raised(host: &Host) -> bool {
    let calls = truncation(host).await.1;
    calls[1]["maxOutputTokens"].as_u64() > calls[0]["maxOutputTokens"].as_u64()
}
defect_test!(
    w_truncation_no_budget_raise,
    WTruncationNoBudgetRaise,
    truncation_budget_raised
);

async fn truncation_without_fragment(host: &Host) -> bool {
    truncation(host).await.1[1]["correctiveFragment"].is_null()
}
defect_test!(
    w_truncation_corrective_fragment,
    WTruncationCorrectiveFragment,
    truncation_without_fragment
);

async fn truncated_valid_not_complete(host: &Host) -> bool {
    let attempts = json!([
        {"envelope": envelope("corr-cut-valid-000001", answer("cut")), "stopReason": "length"},
        {"envelope": envelope("corr-cut-valid-000002", answer("clean"))},
    ]);
    let (_, log, _) = structured(host, attempts).await;
    of_type(&log, "node.completed")
        .first()
        .is_some_and(|e| e["payload"]["outputs"]["envelopes"][0]["payload"]["answer"] == "clean")
}
defect_test!(
    w_truncated_accepted,
    WTruncatedAccepted,
    truncated_valid_not_complete
);

async fn recovery(host: &Host) -> Vec<Value> {
    let text = format!(
        "```json\n{}\n```",
        envelope("corr-recover-00000001", answer("r"))
    );
    structured(host, json!([{"text": text}])).await.1
}

async fn recovery_consumes_nothing(host: &Host) -> bool {
    of_type(&recovery(host).await, "envelope.retry-attempted").is_empty()
}
defect_test!(
    w_recovery_consumes_retry,
    WRecoveryConsumesRetry,
    recovery_consumes_nothing
);

async fn recovery_reported(host: &Host) -> bool {
    of_type(&recovery(host).await, "envelope.recovery-applied").len() == 1
}
defect_test!(
    w_recovery_not_reported,
    WRecoveryNotReported,
    recovery_reported
);

async fn recovery_path_and_offset_only(host: &Host) -> bool {
    of_type(&recovery(host).await, "envelope.recovery-applied")
        .iter()
        .all(|e| {
            spec::schema::validate_run_event_payload("envelope.recovery-applied", &e["payload"])
                .is_ok()
        })
}
defect_test!(
    w_recovery_carries_content,
    WRecoveryCarriesContent,
    recovery_path_and_offset_only
);

async fn reliability_events_listed(host: &Host) -> bool {
    let doc = get_json(host, "/.well-known/openwop").await;
    let events = doc["envelopes"]["reliability"]["events"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    events.contains(&json!("envelope.refusal"))
        && events.contains(&json!("envelope.retry-exhausted"))
}
defect_test!(
    w_reliability_events_incomplete,
    WReliabilityEventsIncomplete,
    reliability_events_listed
);

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

async fn any_provider_accepted(host: &Host) -> bool {
    tier_one_output_accepted(host, "corr-tier-one-000001", "mock-anthropic").await
}
defect_test!(
    w_tier_one_provider_refusal,
    WTierOneProviderRefusal,
    any_provider_accepted
);

async fn cost_stamped(host: &Host) -> bool {
    let run_id = host
        .create(json!({"workflowId": "conformance-stream-text", "configurable": {"version": 1, "ai": {
            "mockProvider": {"id": "stream-text", "config": {"usage": {"promptTokens": 10, "completionTokens": 5}}}}}}))
        .await;
    let log = raw_log(host, &run_id).await;
    of_type(&log, "provider.usage")
        .iter()
        .all(|e| e["payload"]["costEstimateUsd"].is_number())
}
defect_test!(w_cost_estimate_missing, WCostEstimateMissing, cost_stamped);

async fn currency_iso(host: &Host) -> bool {
    let currency =
        get_json(host, "/.well-known/openwop").await["providerUsage"]["currency"].clone();
    currency
        .as_str()
        .is_some_and(|c| c.len() == 3 && c.bytes().all(|b| b.is_ascii_uppercase()))
}
defect_test!(w_currency_not_iso, WCurrencyNotIso, currency_iso);

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

async fn terminal_run_annotated(host: &Host) -> bool {
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
defect_test!(
    w_annotation_terminal_refused,
    WAnnotationTerminalRefused,
    terminal_run_annotated
);

async fn event_target_refused(host: &Host) -> bool {
    let run_id = finished_noop(host).await;
    let body = json!({"target": {"eventId": "evt-00000000000000000000000000000000"}, "signal": {"kind": "flag"}});
    annotate(host, &run_id, KEY_A, body)
        .await
        .status()
        .is_client_error()
}
defect_test!(
    w_annotation_outside_target_accepted,
    WAnnotationOutsideTargetAccepted,
    event_target_refused
);

async fn refused_annotation_not_logged(host: &Host) -> bool {
    let run_id = finished_noop(host).await;
    let before = raw_log(host, &run_id).await;
    annotate(host, &run_id, KEY_A, json!({"target": {"eventId": "evt-00000000000000000000000000000000"}, "signal": {"kind": "flag"}})).await;
    raw_log(host, &run_id).await == before
}
defect_test!(
    w_refused_annotation_logged,
    WRefusedAnnotationLogged,
    refused_annotation_not_logged
);

async fn node_target_accepted(host: &Host) -> bool {
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
defect_test!(
    w_annotation_node_target_refused,
    WAnnotationNodeTargetRefused,
    node_target_accepted
);

async fn flag_accepted(host: &Host) -> bool {
    let run_id = finished_noop(host).await;
    annotate(host, &run_id, KEY_A, json!({"signal": {"kind": "flag"}}))
        .await
        .status()
        == 201
}
defect_test!(
    w_annotation_signal_refused,
    WAnnotationSignalRefused,
    flag_accepted
);

async fn annotations_tenant_bound(host: &Host) -> bool {
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
defect_test!(
    w_annotation_cross_tenant,
    WAnnotationCrossTenant,
    annotations_tenant_bound
);

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

async fn note_redacted(host: &Host) -> bool {
    let body = json!({"signal": {"kind": "flag"}, "note": "key sk-live-abcdefgh1234"});
    !annotation_listing(host, body)
        .await
        .contains("sk-live-abcdefgh1234")
}
defect_test!(
    w_annotation_note_unredacted,
    WAnnotationNoteUnredacted,
    note_redacted
);

async fn correction_redacted(host: &Host) -> bool {
    let body = json!({"signal": {"kind": "correction", "correction": "key sk-live-abcdefgh1234"}});
    !annotation_listing(host, body)
        .await
        .contains("sk-live-abcdefgh1234")
}
defect_test!(
    w_annotation_correction_unredacted,
    WAnnotationCorrectionUnredacted,
    correction_redacted
);

fn seams_on() -> OpenWopConfig {
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

async fn era2_translated(host: &Host) -> bool {
    let (_, body) = seeded_poll(host, json!({"outputs": {}})).await;
    body["events"][0]["type"] == "run.resume-started"
}
defect_test!(
    w_era2_untranslated,
    WEra2Untranslated,
    era2_translated,
    seams_on()
);

async fn era2_never_drops(host: &Host) -> bool {
    let (status, body) = seeded_poll(host, json!({"outputs": {}, "legacyTotal": 1})).await;
    status == 500 && body["error"] == "payload_unprojectable"
}
defect_test!(
    w_era2_silent_drop,
    WEra2SilentDrop,
    era2_never_drops,
    seams_on()
);

/// `supportedEnvelopes` advertised without `kinds`.
fn kinds_absent() -> OpenWopConfig {
    OpenWopConfig {
        envelopes: EnvelopeSettings {
            advertise_kinds: false,
            ..EnvelopeSettings::default()
        },
        ..OpenWopConfig::default()
    }
}

/// `envelopeStrictness.mode: strict`.
fn strict() -> OpenWopConfig {
    OpenWopConfig {
        envelopes: EnvelopeSettings {
            strictness: Strictness::Strict,
            ..EnvelopeSettings::default()
        },
        ..OpenWopConfig::default()
    }
}

/// `feedback` advertised without `signals`.
fn signals_absent() -> OpenWopConfig {
    OpenWopConfig {
        feedback: FeedbackSettings {
            advertise_signals: false,
        },
        ..OpenWopConfig::default()
    }
}

async fn absent_kinds_refuse_non_universal(host: &Host) -> bool {
    let (_, log, _) = structured(
        host,
        json!([with_kind("example.answer", Some(2), answer("x"))]),
    )
    .await;
    failed_code(&log).as_deref() == Some("unknown_envelope_kind")
}
defect_test!(
    w_absent_kinds_admitted,
    WAbsentKindsAdmitted,
    absent_kinds_refuse_non_universal,
    kinds_absent()
);

async fn strict_refuses_drift(host: &Host) -> bool {
    let (_, log, _) = structured(
        host,
        json!([with_kind("example.answer", Some(1), answer("x"))]),
    )
    .await;
    failed_code(&log).as_deref() == Some("unknown_schema_version")
        && of_type(&log, "output.chunk").is_empty()
}
defect_test!(
    w_strict_admits_drift,
    WStrictAdmitsDrift,
    strict_refuses_drift,
    strict()
);

async fn absent_signals_accept_all_four(host: &Host) -> bool {
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
defect_test!(
    w_absent_signals_none_accepted,
    WAbsentSignalsNoneAccepted,
    absent_signals_accept_all_four,
    signals_absent()
);

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

async fn only_emitted_events_listed(host: &Host) -> bool {
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
defect_test!(
    w_reliability_events_overlisted,
    WReliabilityEventsOverlisted,
    only_emitted_events_listed
);

// The rest of issue 9's rules, each with its own defect.

async fn envelope_id_never_read_as_correlation(host: &Host) -> bool {
    let mut e = envelope("corr-defect-000000005", answer("x"));
    e.as_object_mut().unwrap().remove("correlationId");
    e["envelopeId"] = json!("env-defect-000000005");
    let next = envelope("corr-defect-000000006", answer("x"));
    fails(host, SO, json!([{"envelope": e}, {"envelope": next}])).await
}
defect_test!(
    w_envelope_id_as_correlation_id,
    WEnvelopeIdAsCorrelationId,
    envelope_id_never_read_as_correlation
);

async fn strict_admits_at_floor(host: &Host) -> bool {
    let (_, log, snapshot) = structured(
        host,
        json!([with_kind("example.answer", Some(2), answer("x"))]),
    )
    .await;
    status(&snapshot) == "completed" && !of_type(&log, "output.chunk").is_empty()
}
defect_test!(
    w_strict_refuses_at_floor,
    WStrictRefusesAtFloor,
    strict_admits_at_floor,
    strict()
);

defect_test!(
    w_drift_validated_as_emitted,
    WDriftValidatedAsEmitted,
    drift_is_validated
);

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

async fn one_usage_per_call(host: &Host) -> bool {
    of_type(&stream_text_log(host).await, "provider.usage").len() == 1
}
defect_test!(
    w_usage_recorded_twice,
    WUsageRecordedTwice,
    one_usage_per_call
);

/// `providerUsage` not advertised.
fn usage_unadvertised() -> OpenWopConfig {
    OpenWopConfig {
        provider_usage: ProviderUsageSettings { advertise: false },
        ..OpenWopConfig::default()
    }
}

async fn usage_omitted_when_unadvertised(host: &Host) -> bool {
    let discovery = get_json(host, "/.well-known/openwop").await;
    discovery.get("providerUsage").is_none()
        && of_type(&stream_text_log(host).await, "provider.usage").is_empty()
}
defect_test!(
    w_usage_emitted_unadvertised,
    WUsageEmittedUnadvertised,
    usage_omitted_when_unadvertised,
    usage_unadvertised()
);

async fn usage_without_prompt(host: &Host) -> bool {
    let log = stream_text_log(host).await;
    let usage = serde_json::to_string(&of_type(&log, "provider.usage")).unwrap();
    !usage.is_empty() && !usage.contains("Kestrel-Prompt-K3")
}
defect_test!(
    w_usage_carries_prompt,
    WUsageCarriesPrompt,
    usage_without_prompt
);

async fn usage_without_response(host: &Host) -> bool {
    let log = stream_text_log(host).await;
    let usage = of_type(&log, "provider.usage");
    !usage.is_empty() && !serde_json::to_string(&usage).unwrap().contains("Zebra")
}
defect_test!(
    w_usage_carries_response,
    WUsageCarriesResponse,
    usage_without_response
);

async fn openai_output_without_optional_member_accepted(host: &Host) -> bool {
    tier_one_output_accepted(host, "corr-tier-one-000002", "mock-openai").await
}
defect_test!(
    w_tier_one_strict_mode_refusal,
    WTierOneStrictModeRefusal,
    openai_output_without_optional_member_accepted
);

defect_test!(
    w_reasoning_unredacted,
    WReasoningUnredacted,
    known_secret_redacted
);

async fn retry_announced_before_it_is_made(host: &Host) -> bool {
    let kinds = types(&one_violation(host).await.0);
    let announced = kinds.iter().position(|t| t == "envelope.retry-attempted");
    let retried = kinds.iter().position(|t| t == "output.chunk");
    matches!((announced, retried), (Some(a), Some(r)) if a < r)
}
defect_test!(
    w_retry_announced_after_retry,
    WRetryAnnouncedAfterRetry,
    retry_announced_before_it_is_made
);

async fn exhaustion_reports_the_final_reason(host: &Host) -> bool {
    let cut = json!({"text": "{\"type\":\"example.answer\",\"payload\":{\"answer\":\"cut", "stopReason": "max_tokens"});
    let (_, log, _) = structured(host, json!([cut, cut, cut])).await;
    let exhausted = of_type(&log, "envelope.retry-exhausted");
    !exhausted.is_empty()
        && exhausted
            .iter()
            .all(|e| e["payload"]["finalReason"] == "truncation")
}
defect_test!(
    w_exhaustion_reason_fixed,
    WExhaustionReasonFixed,
    exhaustion_reports_the_final_reason
);

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
    let upstream = MockServer::start().await;
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
async fn w_usage_credential_ref() {
    let names_credential = |usage: &Value| usage.to_string().contains(CREDENTIAL_ENV);
    assert!(!names_credential(&configured_provider_usage(&[]).await));
    assert!(names_credential(
        &configured_provider_usage(&[Defect::WUsageCredentialRef]).await
    ));
}

#[tokio::test]
async fn w_usage_credential_hash() {
    use sha2::{Digest, Sha256};
    let fingerprint = hex::encode(Sha256::digest(CANARY.as_bytes()));
    let carries_hash = |usage: &Value| usage.to_string().contains(&fingerprint[..16]);
    assert!(!carries_hash(&configured_provider_usage(&[]).await));
    assert!(carries_hash(
        &configured_provider_usage(&[Defect::WUsageCredentialHash]).await
    ));
}
