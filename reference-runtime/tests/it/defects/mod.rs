//! Every defect of the catalogue (`reference_runtime::defects`), observed over HTTP: one table
//! of (defect, rule, configuration) rows, each row a test. A rule row's test runs its rule on a
//! clean surface-W host under its configuration (the rule must hold) and on a host with the
//! defect switched on (it must break), on virtual time. A scenario row (every surface-X defect,
//! and the surface-W ones whose observation needs a host of its own) names its scenario test,
//! which runs once with the defect off and once on (`x.rs`, `w_ai.rs`). The coverage guard
//! below fails when a defect of the catalogue has no row, or more than one.

mod load;
mod w_ai;
mod w_heartbeats;
mod w_payloads;
mod w_streams;
mod x;

use std::collections::BTreeMap;

use reference_runtime::defects::Defect;
use reference_runtime::openwop::OpenWopConfig;

use crate::w_host::host_with;

/// One row of the defect table: the defect, the rule it breaks, the configuration its rule is
/// observed under.
#[derive(Debug, Clone, Copy)]
struct Row {
    defect: Defect,
    /// The rule (an `async fn(&Host) -> bool`) or the scenario test.
    rule: &'static str,
    /// The host configuration, as written in the table.
    configuration: &'static str,
}

/// What a scenario row names as its configuration: each scenario builds its own host.
const SCENARIO: &str = "the scenario's own";

/// The table, the tests of its rule rows, and a compile-time reference to the test of each
/// scenario row (a row without its test does not build).
macro_rules! defect_table {
    (
        rules { $( $name:ident: $defect:ident => $rule:path, $config:expr; )* }
        scenarios { $( $sdefect:ident => $scenario:path; )* }
    ) => {
        /// Every defect of the catalogue with its rule and configuration.
        const TABLE: &[Row] = &[
            $( Row { defect: Defect::$defect, rule: stringify!($rule), configuration: stringify!($config) }, )*
            $( Row { defect: Defect::$sdefect, rule: stringify!($scenario), configuration: SCENARIO }, )*
        ];

        $(
            #[tokio::test(start_paused = true)]
            async fn $name() {
                let clean = host_with($config, &[]).await;
                assert!($rule(&clean).await, "the rule holds on a clean host");
                drop(clean);
                let defective = host_with($config, &[Defect::$defect]).await;
                assert!(
                    !$rule(&defective).await,
                    "{} must break its rule",
                    Defect::$defect
                );
            }
        )*

        const _: &[fn()] = &[$( $scenario ),*];
    };
}

defect_table! {
    rules {
        // Surface W: streams, resumption, poll and the subscriber limit (w_streams.rs).
        w_last_event_id_inclusive: WLastEventIdInclusive => w_streams::last_event_id_is_exclusive, OpenWopConfig::default();
        w_last_event_id_skips_next: WLastEventIdSkipsNext => w_streams::resume_starts_at_the_next_event, OpenWopConfig::default();
        w_last_event_id_before_authorization: WLastEventIdBeforeAuthorization => w_streams::header_read_after_authorisation, OpenWopConfig::default();
        w_malformed_last_event_id_accepted: WMalformedLastEventIdAccepted => w_streams::malformed_cursor_refused, OpenWopConfig::default();
        w_values_resume_without_snapshot: WValuesResumeWithoutSnapshot => w_streams::values_resumption_starts_with_a_snapshot, OpenWopConfig::default();
        w_406_for_json_accept: WNotAcceptableForJsonAccept => w_streams::bad_mode_is_400_before_negotiation, OpenWopConfig::default();
        w_supported_missing: WSupportedMissing => w_streams::details_supported_present, OpenWopConfig::default();
        w_supported_lists_combinations: WSupportedListsCombinations => w_streams::supported_lists_single_modes, OpenWopConfig::default();
        w_values_combination_accepted: WValuesCombinationAccepted => w_streams::values_never_combines, OpenWopConfig::default();
        w_vendor_event_in_updates: WVendorEventInUpdates => w_streams::vendor_events_in_debug_only, OpenWopConfig::default();
        w_mixed_modes_reordered: WMixedModesReordered => w_streams::mixed_modes_in_log_order, OpenWopConfig::default();
        w_event_after_terminal: WEventAfterTerminal => w_streams::nothing_after_the_terminal_event, OpenWopConfig::default();
        w_second_terminal: WSecondTerminal => w_streams::exactly_one_terminal, OpenWopConfig::default();
        w_no_terminal_on_cancel: WNoTerminalOnCancel => w_streams::cancel_appends_run_cancelled, OpenWopConfig::default();
        w_stream_open_after_terminal: WStreamOpenAfterTerminal => w_streams::stream_closes_after_terminal, OpenWopConfig::default();
        w_messages_stream_open_after_terminal: WMessagesStreamOpenAfterTerminal => w_streams::messages_stream_closes_after_terminal, OpenWopConfig::default();
        w_run_completed_without_outputs: WRunCompletedWithoutOutputs => w_streams::run_completed_carries_outputs, OpenWopConfig::default();
        w_no_keep_alive: WNoKeepAlive => w_streams::keep_alive_within_30s, OpenWopConfig::default();
        w_batch_id_lowest: WBatchIdLowest => w_streams::batch_id_is_highest, OpenWopConfig::default();
        w_no_flush_on_suspended: WNoFlushOnSuspended => w_streams::batch_flushes_at_suspension, OpenWopConfig::default();
        w_poll_last_sequence_off_by_one: WPollLastSequenceOffByOne => w_streams::poll_last_sequence_is_highest, OpenWopConfig::default();
        w_poll_past_end_404: WPollPastEnd404 => w_streams::poll_past_end_is_empty, OpenWopConfig::default();
        w_short_event_id: WShortEventId => w_streams::event_ids_follow_the_grammar, OpenWopConfig::default();
        w_provider_usage_after_node_completed: WProviderUsageAfterNodeCompleted => w_streams::usage_before_node_completed, OpenWopConfig::default();
        w_subscriber_limit_silent_drop: WSubscriberLimitSilentDrop => w_streams::past_the_limit_is_429, OpenWopConfig { max_subscribers_per_run: 1, ..OpenWopConfig::default() };
        // Surface W: heartbeats, the host channel and poll parameters (w_heartbeats.rs).
        w_heartbeat_evaluated_only_on_change: WHeartbeatEvaluatedOnlyOnChange => w_heartbeats::evaluated_every_tick, w_heartbeats::constant();
        w_heartbeat_renotify_on_unchanged: WHeartbeatRenotifyOnUnchanged => w_heartbeats::one_state_change, w_heartbeats::constant();
        w_host_events_wrong_address: WHostEventsWrongAddress => w_heartbeats::channel_at_default_address, w_heartbeats::constant();
        w_host_channel_address_object: WHostChannelAddressObject => w_heartbeats::channel_address_is_a_path, w_heartbeats::constant();
        w_host_events_carry_run_data: WHostEventsCarryRunData => w_heartbeats::no_run_data, w_heartbeats::constant();
        w_poll_honours_last_sequence: WPollHonoursLastSequence => w_heartbeats::last_sequence_ignored, OpenWopConfig::default();
        w_heartbeat_queues_overlapping_ticks: WHeartbeatQueuesOverlappingTicks => w_heartbeats::overlapping_ticks_skipped, w_heartbeats::busy();
        w_heartbeat_no_timeout_status: WHeartbeatNoTimeoutStatus => w_heartbeats::overrun_status_timeout, w_heartbeats::overrun();
        w_heartbeat_max_runtime_ignored: WHeartbeatMaxRuntimeIgnored => w_heartbeats::bounded_by_max_runtime, w_heartbeats::overrun();
        w_heartbeat_max_runtime_over_run_ceiling: WHeartbeatMaxRuntimeOverRunCeiling => w_heartbeats::budget_within_run_ceiling, OpenWopConfig::default();
        w_heartbeat_interval_below_min: WHeartbeatIntervalBelowMin => w_heartbeats::interval_at_least_min, w_heartbeats::constant();
        w_heartbeat_prior_state_not_passed: WHeartbeatPriorStateNotPassed => w_heartbeats::toggle_flips_every_tick, w_heartbeats::toggle();
        w_heartbeat_first_tick_not_a_transition: WHeartbeatFirstTickNotATransition => w_heartbeats::first_tick_from_empty, w_heartbeats::constant();
        w_heartbeat_create_run_ignored: WHeartbeatCreateRunIgnored => w_heartbeats::run_created_on_transition, w_heartbeats::created_runs();
        w_heartbeat_create_run_on_unchanged: WHeartbeatCreateRunOnUnchanged => w_heartbeats::no_run_on_unchanged_ticks, w_heartbeats::created_runs();
        // Surface W: payloads as upstream states them (w_payloads.rs).
        w_owner_subject_string: WOwnerSubjectString => w_payloads::run_started_valid, OpenWopConfig::default();
        w_node_failed_error_without_message: WNodeFailedErrorWithoutMessage => w_payloads::node_failed_valid, OpenWopConfig::default();
        w_resolved_by_string: WResolvedByString => w_payloads::interrupt_resolved_valid, OpenWopConfig::default();
        w_interrupt_requested_without_key: WInterruptRequestedWithoutKey => w_payloads::interrupt_requested_valid, OpenWopConfig::default();
        w_node_started_without_type_id: WNodeStartedWithoutTypeId => w_payloads::node_started_valid, OpenWopConfig::default();
        w_provider_usage_model_empty: WProviderUsageModelEmpty => w_payloads::provider_usage_valid, OpenWopConfig::default();
        // Surface W: AI envelopes, the catalog, reliability, feedback, usage facets, era-2 logs (w_ai.rs).
        w_envelope_correlation_synthesized: WEnvelopeCorrelationSynthesized => w_ai::missing_correlation_id_rejected, OpenWopConfig::default();
        w_envelope_meta_source_synthesized: WEnvelopeMetaSourceSynthesized => w_ai::missing_meta_source_rejected, OpenWopConfig::default();
        w_envelope_acceptance_unrecorded: WEnvelopeAcceptanceUnrecorded => w_ai::accepted_envelope_recorded, OpenWopConfig::default();
        w_envelope_chunks_reordered: WEnvelopeChunksReordered => w_ai::chunks_in_order, OpenWopConfig::default();
        w_envelope_causation_missing: WEnvelopeCausationMissing => w_ai::chunks_caused_by_correlation_id, OpenWopConfig::default();
        w_re_emission_recorded: WReEmissionRecorded => w_ai::re_emission_records_nothing, OpenWopConfig::default();
        w_re_emission_not_cached: WReEmissionNotCached => w_ai::re_emission_returns_cached, OpenWopConfig::default();
        w_unregistered_org_kind_accepted: WUnregisteredOrgKindAccepted => w_ai::unregistered_org_refused, OpenWopConfig::default();
        w_unnamespaced_kind_accepted: WUnnamespacedKindAccepted => w_ai::unnamespaced_refused, OpenWopConfig::default();
        w_refusal_retried: WRefusalRetried => w_ai::refusal_not_retried, OpenWopConfig::default();
        w_max_refusals_ignored: WMaxRefusalsIgnored => w_ai::ceiling_holds, OpenWopConfig::default();
        w_unknown_kind_accepted: WUnknownKindAccepted => w_ai::non_member_refused, OpenWopConfig::default();
        w_above_floor_accepted: WAboveFloorAccepted => w_ai::above_floor_refused, OpenWopConfig::default();
        w_absent_floor_unbounded: WAbsentFloorUnbounded => w_ai::absent_floor_is_zero, OpenWopConfig::default();
        w_drift_unchecked: WDriftUnchecked => w_ai::drift_is_validated, OpenWopConfig::default();
        w_warn_refuses_drift: WWarnRefusesDrift => w_ai::warn_admits_valid_drift, OpenWopConfig::default();
        w_catalog_order_swapped: WCatalogOrderSwapped => w_ai::catalog_refuses_first, OpenWopConfig::default();
        w_envelope_contract_ignored: WEnvelopeContractIgnored => w_ai::contract_enforced, OpenWopConfig::default();
        w_envelope_contract_same_code: WEnvelopeContractSameCode => w_ai::contract_refused_distinctly, OpenWopConfig::default();
        w_envelope_contract_substitutes: WEnvelopeContractSubstitutes => w_ai::refusals_stack, OpenWopConfig::default();
        w_reasoning_required: WReasoningRequired => w_ai::reasoning_optional, OpenWopConfig::default();
        w_routes_on_reasoning: WRoutesOnReasoning => w_ai::reasoning_not_routed, OpenWopConfig::default();
        w_reasoning_secret_leaked: WReasoningSecretLeaked => w_ai::known_secret_redacted, OpenWopConfig::default();
        w_no_reasoning_instruction: WNoReasoningInstruction => w_ai::reasoning_instructed, OpenWopConfig::default();
        w_refusal_event_missing: WRefusalEventMissing => w_ai::refusal_recorded, OpenWopConfig::default();
        w_refusal_wrong_code: WRefusalWrongCode => w_ai::refusal_code, OpenWopConfig::default();
        w_refusal_text_unredacted: WRefusalTextUnredacted => w_ai::refusal_text_redacted, OpenWopConfig::default();
        w_retry_exhausted_missing: WRetryExhaustedMissing => w_ai::retry_exhausted_emitted, OpenWopConfig::default();
        w_cap_breached_missing: WCapBreachedMissing => w_ai::cap_breached_emitted, OpenWopConfig::default();
        w_exhaustion_wrong_code: WExhaustionWrongCode => w_ai::exhaustion_code, OpenWopConfig::default();
        w_schema_rounds_ignored: WSchemaRoundsIgnored => w_ai::rounds_respected, OpenWopConfig::default();
        w_final_error_unredacted: WFinalErrorUnredacted => w_ai::final_error_redacted, OpenWopConfig::default();
        w_retry_attempted_missing: WRetryAttemptedMissing => w_ai::retry_announced, OpenWopConfig::default();
        w_previous_error_unredacted: WPreviousErrorUnredacted => w_ai::previous_error_redacted, OpenWopConfig::default();
        w_violation_fragment_echoes_output: WViolationFragmentEchoesOutput => w_ai::fragment_quotes_no_output, OpenWopConfig::default();
        w_violation_fragment_generic: WViolationFragmentGeneric => w_ai::fragment_names_failure, OpenWopConfig::default();
        w_violation_budget_raised: WViolationBudgetRaised => w_ai::violation_budget_kept, OpenWopConfig::default();
        w_truncation_not_reported: WTruncationNotReported => w_ai::truncation_reported, OpenWopConfig::default();
        w_truncation_no_budget_raise: WTruncationNoBudgetRaise => w_ai::truncation_budget_raised, OpenWopConfig::default();
        w_truncation_corrective_fragment: WTruncationCorrectiveFragment => w_ai::truncation_without_fragment, OpenWopConfig::default();
        w_truncated_accepted: WTruncatedAccepted => w_ai::truncated_valid_not_complete, OpenWopConfig::default();
        w_recovery_consumes_retry: WRecoveryConsumesRetry => w_ai::recovery_consumes_nothing, OpenWopConfig::default();
        w_recovery_not_reported: WRecoveryNotReported => w_ai::recovery_reported, OpenWopConfig::default();
        w_recovery_carries_content: WRecoveryCarriesContent => w_ai::recovery_path_and_offset_only, OpenWopConfig::default();
        w_reliability_events_incomplete: WReliabilityEventsIncomplete => w_ai::reliability_events_listed, OpenWopConfig::default();
        w_tier_one_provider_refusal: WTierOneProviderRefusal => w_ai::any_provider_accepted, OpenWopConfig::default();
        w_cost_estimate_missing: WCostEstimateMissing => w_ai::cost_stamped, OpenWopConfig::default();
        w_currency_not_iso: WCurrencyNotIso => w_ai::currency_iso, OpenWopConfig::default();
        w_annotation_terminal_refused: WAnnotationTerminalRefused => w_ai::terminal_run_annotated, OpenWopConfig::default();
        w_annotation_outside_target_accepted: WAnnotationOutsideTargetAccepted => w_ai::event_target_refused, OpenWopConfig::default();
        w_run_annotation_outside_target_accepted: WRunAnnotationOutsideTargetAccepted => w_ai::run_target_refused, w_ai::node_and_event_targets();
        w_refused_annotation_logged: WRefusedAnnotationLogged => w_ai::refused_annotation_not_logged, OpenWopConfig::default();
        w_annotation_node_target_refused: WAnnotationNodeTargetRefused => w_ai::node_target_accepted, OpenWopConfig::default();
        w_annotation_signal_refused: WAnnotationSignalRefused => w_ai::flag_accepted, OpenWopConfig::default();
        w_annotation_cross_tenant: WAnnotationCrossTenant => w_ai::annotations_tenant_bound, OpenWopConfig::default();
        w_annotation_note_unredacted: WAnnotationNoteUnredacted => w_ai::note_redacted, OpenWopConfig::default();
        w_annotation_correction_unredacted: WAnnotationCorrectionUnredacted => w_ai::correction_redacted, OpenWopConfig::default();
        w_era2_untranslated: WEra2Untranslated => w_ai::era2_translated, w_ai::seams_on();
        w_era2_silent_drop: WEra2SilentDrop => w_ai::era2_never_drops, w_ai::seams_on();
        w_absent_kinds_admitted: WAbsentKindsAdmitted => w_ai::absent_kinds_refuse_non_universal, w_ai::kinds_absent();
        w_strict_admits_drift: WStrictAdmitsDrift => w_ai::strict_refuses_drift, w_ai::strict();
        w_absent_signals_none_accepted: WAbsentSignalsNoneAccepted => w_ai::absent_signals_accept_all_four, w_ai::signals_absent();
        w_reliability_events_overlisted: WReliabilityEventsOverlisted => w_ai::only_emitted_events_listed, OpenWopConfig::default();
        w_envelope_id_as_correlation_id: WEnvelopeIdAsCorrelationId => w_ai::envelope_id_never_read_as_correlation, OpenWopConfig::default();
        w_strict_refuses_at_floor: WStrictRefusesAtFloor => w_ai::strict_admits_at_floor, w_ai::strict();
        w_drift_validated_as_emitted: WDriftValidatedAsEmitted => w_ai::drift_is_validated, OpenWopConfig::default();
        w_usage_recorded_twice: WUsageRecordedTwice => w_ai::one_usage_per_call, OpenWopConfig::default();
        w_usage_emitted_unadvertised: WUsageEmittedUnadvertised => w_ai::usage_omitted_when_unadvertised, w_ai::usage_unadvertised();
        w_usage_carries_prompt: WUsageCarriesPrompt => w_ai::usage_without_prompt, OpenWopConfig::default();
        w_usage_carries_response: WUsageCarriesResponse => w_ai::usage_without_response, OpenWopConfig::default();
        w_tier_one_strict_mode_refusal: WTierOneStrictModeRefusal => w_ai::openai_output_without_optional_member_accepted, OpenWopConfig::default();
        w_reasoning_unredacted: WReasoningUnredacted => w_ai::known_secret_redacted, OpenWopConfig::default();
        w_retry_announced_after_retry: WRetryAnnouncedAfterRetry => w_ai::retry_announced_before_it_is_made, OpenWopConfig::default();
        w_exhaustion_reason_fixed: WExhaustionReasonFixed => w_ai::exhaustion_reports_the_final_reason, OpenWopConfig::default();
    }
    scenarios {
        // Both surfaces: delivery to several subscribers of one live log (load.rs).
        DropsEventUnderLoad => load::drops_event_under_load;
        // Surface W: usage facets whose provider is configured by the scenario (w_ai.rs).
        WUsageCredentialRef => w_ai::w_usage_credential_ref;
        WUsageCredentialHash => w_ai::w_usage_credential_hash;
        // Surface X: the execution protocol (x.rs).
        XReplayCreatesNewExecution => x::x_replay_creates_new_execution;
        XMismatchedKeyAccepted => x::x_mismatched_key_accepted;
        XConcurrentDuplicatesCallTwice => x::x_concurrent_duplicates_call_twice;
        XProviderCalledBeforeValidation => x::x_provider_called_before_validation;
        XMalformedRequestAccepted => x::x_malformed_request_accepted;
        XFallbackAfterOutput => x::x_fallback_after_output;
        XSequenceRepeated => x::x_sequence_repeated;
        XAfterIgnored => x::x_after_ignored;
        XLastEventIdInclusive => x::x_last_event_id_inclusive;
        XNoTerminalOnCancel => x::x_no_terminal_on_cancel;
        XSecondTerminal => x::x_second_terminal;
        XNegativeUsage => x::x_negative_usage;
        XUnknownUsageUnit => x::x_unknown_usage_unit;
        XToolArgumentsWrongOrder => x::x_tool_arguments_wrong_order;
        XCanaryInError => x::x_canary_in_error;
        XRequestEchoedInError => x::x_request_echoed_in_error;
        XCredentialInManifest => x::x_credential_in_manifest;
        XCredentialFromExtension => x::x_credential_from_extension;
        XSubmissionAnswered200 => x::x_submission_answered_200;
        XDeadlineIgnored => x::x_deadline_ignored;
        XMaxAttemptsIgnored => x::x_max_attempts_ignored;
        XProviderCodeAsPortable => x::x_provider_code_as_portable;
        XHttpStatusAsCode => x::x_http_status_as_code;
        XTextOutputTruncated => x::x_text_output_truncated;
        XQuotaRetriedUnrecorded => x::x_quota_retried_unrecorded;
        XLaterUsageFactNegative => x::x_later_usage_fact_negative;
    }
}

/// How `rows` covers the catalogue: the defects without a row and those with more than one, each
/// in catalogue order.
fn coverage_gaps(rows: &[Row]) -> (Vec<Defect>, Vec<Defect>) {
    let mut count: BTreeMap<Defect, usize> = BTreeMap::new();
    for row in rows {
        *count.entry(row.defect).or_default() += 1;
    }
    let missing = Defect::ALL
        .iter()
        .copied()
        .filter(|d| !count.contains_key(d))
        .collect();
    let repeated = Defect::ALL
        .iter()
        .copied()
        .filter(|d| count.get(d).is_some_and(|n| *n > 1))
        .collect();
    (missing, repeated)
}

#[test]
fn every_defect_of_the_catalogue_has_exactly_one_row() {
    let (missing, repeated) = coverage_gaps(TABLE);
    assert!(missing.is_empty(), "defects without a row: {missing:?}");
    assert!(
        repeated.is_empty(),
        "defects with more than one row: {repeated:?}"
    );
    for row in TABLE {
        assert!(
            !row.rule.is_empty() && !row.configuration.is_empty(),
            "{row:?}"
        );
    }
}

#[test]
fn the_coverage_guard_finds_a_missing_and_a_repeated_defect() {
    let first = Defect::ALL[0];
    let last = Defect::ALL[Defect::ALL.len() - 1];
    let row = |defect| Row {
        defect,
        rule: "rule",
        configuration: "configuration",
    };
    let made_up: Vec<Row> = Defect::ALL[1..]
        .iter()
        .copied()
        .chain([last])
        .map(row)
        .collect();
    assert_eq!(coverage_gaps(&made_up), (vec![first], vec![last]));
    let complete: Vec<Row> = Defect::ALL.iter().copied().map(row).collect();
    assert_eq!(coverage_gaps(&complete), (vec![], vec![]));
}
