//! [`KnownBad`]: the one injected policy, built once from the switched-on defects.
//!
//! Each method is one decision a defect changes, named for that decision; each defect of the
//! catalogue answers exactly one decision (the `DECISIONS` table, checked by the test below).
//! A clean runtime answers every decision the clean way (`false`).

use crate::defects::{Defect, Defects};

/// The known-bad policy: which decisions the runtime takes the defective way.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KnownBad {
    defects: Defects,
}

impl From<Defects> for KnownBad {
    fn from(defects: Defects) -> Self {
        KnownBad { defects }
    }
}

/// The decisions: each a method answering whether the runtime takes it the defective way, and a
/// row of `DECISIONS` naming the one defect that does.
macro_rules! decisions {
    ($( $decision:ident => $defect:ident, )*) => {
        impl KnownBad {
            $(
                #[doc = concat!("Whether the runtime takes this decision the defective way: ",
                    "[`Defect::", stringify!($defect), "`].")]
                pub(crate) fn $decision(&self) -> bool {
                    self.defects.has(Defect::$defect)
                }
            )*
        }

        /// Every decision with the defect that turns it, in catalogue order.
        #[cfg(test)]
        const DECISIONS: &[(&str, Defect)] = &[$( (stringify!($decision), Defect::$defect), )*];
    };
}

decisions! {
    replay_creates_new_execution => XReplayCreatesNewExecution,
    mismatched_key_accepted => XMismatchedKeyAccepted,
    concurrent_duplicates_race => XConcurrentDuplicatesCallTwice,
    provider_called_before_validation => XProviderCalledBeforeValidation,
    unknown_request_members_ignored => XMalformedRequestAccepted,
    falls_back_after_output => XFallbackAfterOutput,
    second_sequence_repeated => XSequenceRepeated,
    after_cursor_ignored => XAfterIgnored,
    execution_last_event_id_inclusive => XLastEventIdInclusive,
    execution_cancel_without_terminal => XNoTerminalOnCancel,
    execution_second_terminal => XSecondTerminal,
    usage_quantity_negated => XNegativeUsage,
    usage_unit_unknown => XUnknownUsageUnit,
    later_usage_facts_negated => XLaterUsageFactNegative,
    quota_retry_unrecorded => XQuotaRetriedUnrecorded,
    tool_fragments_reversed => XToolArgumentsWrongOrder,
    provider_error_body_copied => XCanaryInError,
    validation_error_echoes_request => XRequestEchoedInError,
    manifest_shows_credential => XCredentialInManifest,
    credential_taken_from_extension => XCredentialFromExtension,
    submission_answered_200 => XSubmissionAnswered200,
    deadline_ignored => XDeadlineIgnored,
    max_attempts_ignored => XMaxAttemptsIgnored,
    provider_code_as_portable => XProviderCodeAsPortable,
    http_status_as_code => XHttpStatusAsCode,
    last_text_delta_dropped => XTextOutputTruncated,
    run_last_event_id_inclusive => WLastEventIdInclusive,
    last_event_id_skips_next => WLastEventIdSkipsNext,
    last_event_id_before_authorization => WLastEventIdBeforeAuthorization,
    malformed_last_event_id_read_as_zero => WMalformedLastEventIdAccepted,
    values_resume_without_snapshot => WValuesResumeWithoutSnapshot,
    negotiates_before_validating_mode => WNotAcceptableForJsonAccept,
    supported_omitted => WSupportedMissing,
    supported_lists_combinations => WSupportedListsCombinations,
    values_combination_accepted => WValuesCombinationAccepted,
    vendor_events_in_updates => WVendorEventInUpdates,
    mixed_modes_grouped => WMixedModesReordered,
    node_event_after_terminal => WEventAfterTerminal,
    run_second_terminal => WSecondTerminal,
    run_cancel_without_terminal => WNoTerminalOnCancel,
    stream_held_after_terminal => WStreamOpenAfterTerminal,
    messages_stream_held_after_terminal => WMessagesStreamOpenAfterTerminal,
    run_completed_without_outputs => WRunCompletedWithoutOutputs,
    keep_alive_suppressed => WNoKeepAlive,
    batch_id_lowest => WBatchIdLowest,
    no_flush_on_suspended => WNoFlushOnSuspended,
    poll_last_sequence_off_by_one => WPollLastSequenceOffByOne,
    poll_past_end_404 => WPollPastEnd404,
    event_ids_short => WShortEventId,
    usage_after_node_completed => WProviderUsageAfterNodeCompleted,
    subscriber_limit_silent => WSubscriberLimitSilentDrop,
    drops_events_under_load => DropsEventUnderLoad,
    correlation_id_minted => WEnvelopeCorrelationSynthesized,
    meta_source_assumed => WEnvelopeMetaSourceSynthesized,
    acceptance_unrecorded => WEnvelopeAcceptanceUnrecorded,
    chunks_reversed => WEnvelopeChunksReordered,
    causation_omitted => WEnvelopeCausationMissing,
    re_emission_reprocessed => WReEmissionRecorded,
    re_emission_answered_uncached => WReEmissionNotCached,
    admits_unregistered_org_kind => WUnregisteredOrgKindAccepted,
    admits_unnamespaced_kind => WUnnamespacedKindAccepted,
    refusal_retried => WRefusalRetried,
    max_refusals_ignored => WMaxRefusalsIgnored,
    unknown_kind_admitted => WUnknownKindAccepted,
    above_floor_admitted => WAboveFloorAccepted,
    absent_floor_unbounded => WAbsentFloorUnbounded,
    drift_unchecked => WDriftUnchecked,
    warn_refuses_drift => WWarnRefusesDrift,
    catalog_checks_swapped => WCatalogOrderSwapped,
    envelope_contract_ignored => WEnvelopeContractIgnored,
    envelope_contract_uses_catalog_code => WEnvelopeContractSameCode,
    envelope_contract_substitutes => WEnvelopeContractSubstitutes,
    reasoning_required => WReasoningRequired,
    routes_on_reasoning => WRoutesOnReasoning,
    secrets_unredacted_in_derived_events => WReasoningSecretLeaked,
    reasoning_instruction_omitted => WNoReasoningInstruction,
    refusal_event_omitted => WRefusalEventMissing,
    refusal_fails_as_invalid => WRefusalWrongCode,
    retry_exhausted_omitted => WRetryExhaustedMissing,
    cap_breached_omitted => WCapBreachedMissing,
    exhaustion_fails_as_internal => WExhaustionWrongCode,
    retry_attempted_omitted => WRetryAttemptedMissing,
    truncation_unreported => WTruncationNotReported,
    truncated_accepted => WTruncatedAccepted,
    truncation_budget_kept => WTruncationNoBudgetRaise,
    truncation_fragment_added => WTruncationCorrectiveFragment,
    violation_fragment_echoes_output => WViolationFragmentEchoesOutput,
    violation_fragment_generic => WViolationFragmentGeneric,
    violation_budget_raised => WViolationBudgetRaised,
    schema_rounds_exceeded => WSchemaRoundsIgnored,
    recovery_consumes_retry => WRecoveryConsumesRetry,
    recovery_unreported => WRecoveryNotReported,
    recovery_carries_content => WRecoveryCarriesContent,
    previous_error_unredacted => WPreviousErrorUnredacted,
    final_error_unredacted => WFinalErrorUnredacted,
    refusal_text_unredacted => WRefusalTextUnredacted,
    reliability_list_omits_refusal => WReliabilityEventsIncomplete,
    anthropic_tier_one_refused => WTierOneProviderRefusal,
    cost_estimate_omitted => WCostEstimateMissing,
    currency_not_iso => WCurrencyNotIso,
    annotation_on_terminal_refused => WAnnotationTerminalRefused,
    annotation_outside_targets_accepted => WAnnotationOutsideTargetAccepted,
    refused_annotation_logged => WRefusedAnnotationLogged,
    annotation_on_node_refused => WAnnotationNodeTargetRefused,
    flag_signal_refused => WAnnotationSignalRefused,
    annotations_cross_tenant => WAnnotationCrossTenant,
    annotation_note_unredacted => WAnnotationNoteUnredacted,
    annotation_correction_unredacted => WAnnotationCorrectionUnredacted,
    era2_untranslated => WEra2Untranslated,
    era2_drops_silently => WEra2SilentDrop,
    absent_kinds_admit_all => WAbsentKindsAdmitted,
    strict_admits_drift => WStrictAdmitsDrift,
    absent_signals_accept_none => WAbsentSignalsNoneAccepted,
    reliability_list_overlisted => WReliabilityEventsOverlisted,
    envelope_id_as_correlation_id => WEnvelopeIdAsCorrelationId,
    strict_refuses_at_floor => WStrictRefusesAtFloor,
    drift_validated_as_emitted => WDriftValidatedAsEmitted,
    usage_recorded_twice => WUsageRecordedTwice,
    usage_recorded_unadvertised => WUsageEmittedUnadvertised,
    usage_names_credential => WUsageCredentialRef,
    usage_hashes_credential => WUsageCredentialHash,
    usage_carries_prompt => WUsageCarriesPrompt,
    usage_carries_response => WUsageCarriesResponse,
    openai_strict_mode_refusal => WTierOneStrictModeRefusal,
    reasoning_unredacted => WReasoningUnredacted,
    retry_announced_late => WRetryAnnouncedAfterRetry,
    exhaustion_reason_fixed => WExhaustionReasonFixed,
    heartbeat_evaluated_only_on_change => WHeartbeatEvaluatedOnlyOnChange,
    heartbeat_renotifies_unchanged => WHeartbeatRenotifyOnUnchanged,
    host_channel_misaddressed => WHostEventsWrongAddress,
    host_events_carry_run_id => WHostEventsCarryRunData,
    poll_honours_last_sequence => WPollHonoursLastSequence,
    heartbeat_queues_overlapping_ticks => WHeartbeatQueuesOverlappingTicks,
    heartbeat_overrun_as_error => WHeartbeatNoTimeoutStatus,
    heartbeat_max_runtime_ignored => WHeartbeatMaxRuntimeIgnored,
    heartbeat_ticks_twice_per_interval => WHeartbeatIntervalBelowMin,
    heartbeat_prior_state_withheld => WHeartbeatPriorStateNotPassed,
    heartbeat_first_tick_silent => WHeartbeatFirstTickNotATransition,
    heartbeat_create_run_ignored => WHeartbeatCreateRunIgnored,
    heartbeat_creates_run_on_unchanged => WHeartbeatCreateRunOnUnchanged,
    owner_subject_as_string => WOwnerSubjectString,
    node_failed_error_without_message => WNodeFailedErrorWithoutMessage,
    resolved_by_as_string => WResolvedByString,
    interrupt_requested_without_key => WInterruptRequestedWithoutKey,
    node_started_without_type_id => WNodeStartedWithoutTypeId,
    usage_model_empty => WProviderUsageModelEmpty,
}

impl KnownBad {
    /// The clean policy: every decision taken the clean way.
    pub fn clean() -> Self {
        Self::default()
    }

    /// The policy of the given defects.
    pub fn of(defects: impl IntoIterator<Item = Defect>) -> Self {
        Defects::of(defects).into()
    }

    /// Whether the runtime runs known-bad at all.
    pub fn is_clean(&self) -> bool {
        self.defects.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_defect_turns_exactly_one_decision() {
        for &defect in Defect::ALL {
            let decisions: Vec<&str> = DECISIONS
                .iter()
                .filter(|(_, d)| *d == defect)
                .map(|(name, _)| *name)
                .collect();
            assert_eq!(decisions.len(), 1, "{defect} turns {decisions:?}");
        }
        assert_eq!(DECISIONS.len(), Defect::ALL.len());
    }

    #[test]
    fn the_clean_policy_takes_every_decision_the_clean_way() {
        let clean = KnownBad::clean();
        assert!(clean.is_clean());
        assert!(!clean.batch_id_lowest() && !clean.refusal_event_omitted());
        let bad = KnownBad::of([Defect::WBatchIdLowest]);
        assert!(!bad.is_clean() && bad.batch_id_lowest() && !bad.refusal_event_omitted());
    }
}
