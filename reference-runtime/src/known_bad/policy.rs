//! [`KnownBad`]: the one injected policy, built once from the switched-on defects.
//!
//! Each method is one decision of the engine or a service that a defect changes, named for that
//! decision; each such defect answers exactly one decision (the `DECISIONS` table). The defects
//! that change only what goes over the wire are not decisions of the runtime: the policy hands
//! them to the wire layer (`wire/`), whose `REWRITES` table lists them (its test checks that
//! every defect is in exactly one of the two tables). A clean runtime answers every decision
//! the clean way (`false`).

use super::decisions::decisions;
use crate::defects::{Defect, Defects};

/// The known-bad policy: which decisions the runtime takes the defective way, and which
/// defects the wire layer rewrites.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KnownBad {
    /// The switched-on defects the engine and services decide (rows of `DECISIONS`).
    defects: Defects,
    /// The switched-on defects the wire layer rewrites (every other one).
    wire: Defects,
}

impl From<Defects> for KnownBad {
    fn from(defects: Defects) -> Self {
        let decided = |defect: &Defect| DECISIONS.iter().any(|(_, d)| d == defect);
        KnownBad {
            defects: Defects::of(defects.iter().filter(decided)),
            wire: Defects::of(defects.iter().filter(|d| !decided(d))),
        }
    }
}

decisions! {
    KnownBad, DECISIONS {
        replay_creates_new_execution => XReplayCreatesNewExecution,
        mismatched_key_accepted => XMismatchedKeyAccepted,
        concurrent_duplicates_race => XConcurrentDuplicatesCallTwice,
        provider_called_before_validation => XProviderCalledBeforeValidation,
        unknown_request_members_ignored => XMalformedRequestAccepted,
        falls_back_after_output => XFallbackAfterOutput,
        second_sequence_repeated => XSequenceRepeated,
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
        deadline_ignored => XDeadlineIgnored,
        max_attempts_ignored => XMaxAttemptsIgnored,
        provider_code_as_portable => XProviderCodeAsPortable,
        http_status_as_code => XHttpStatusAsCode,
        last_text_delta_dropped => XTextOutputTruncated,
        values_resume_without_snapshot => WValuesResumeWithoutSnapshot,
        negotiates_before_validating_mode => WNotAcceptableForJsonAccept,
        values_combination_accepted => WValuesCombinationAccepted,
        vendor_events_in_updates => WVendorEventInUpdates,
        mixed_modes_grouped => WMixedModesReordered,
        node_event_after_terminal => WEventAfterTerminal,
        run_second_terminal => WSecondTerminal,
        run_cancel_without_terminal => WNoTerminalOnCancel,
        run_completed_without_outputs => WRunCompletedWithoutOutputs,
        no_flush_on_suspended => WNoFlushOnSuspended,
        event_ids_short => WShortEventId,
        usage_after_node_completed => WProviderUsageAfterNodeCompleted,
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
        anthropic_tier_one_refused => WTierOneProviderRefusal,
        cost_estimate_omitted => WCostEstimateMissing,
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
        self.defects.is_empty() && self.wire.is_empty()
    }

    /// The switched-on defects the wire layer rewrites.
    pub(super) fn wire_defects(&self) -> &Defects {
        &self.wire
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clean_policy_takes_every_decision_the_clean_way() {
        let clean = KnownBad::clean();
        assert!(clean.is_clean());
        assert!(!clean.event_ids_short() && !clean.refusal_event_omitted());
        assert!(clean.wire_defects().is_empty());
        let bad = KnownBad::of([Defect::WShortEventId]);
        assert!(!bad.is_clean() && bad.event_ids_short() && !bad.refusal_event_omitted());
        assert!(bad.wire_defects().is_empty());
        let rewritten = KnownBad::of([Defect::WBatchIdLowest]);
        assert!(!rewritten.is_clean() && !rewritten.event_ids_short());
        assert!(rewritten.wire_defects().has(Defect::WBatchIdLowest));
    }
}
