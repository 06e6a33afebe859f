//! Switchable, single-rule defects: the known-bad hosts the harness must catch.
//!
//! Each defect breaks exactly one rule, is off by default, and is switched on by name
//! (`--defect NAME`, repeatable). The code that implements a rule checks
//! [`Defects::has`] in exactly one place, next to the rule itself, so a defect never leaks into
//! other behaviour. `reference-runtime --list-defects` prints this catalogue.

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

/// The mission area a defect belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Area {
    /// Event ordering and sequences.
    Ordering,
    /// `Last-Event-ID` / `after` exclusivity and resumption.
    Cursor,
    /// Idempotency-Key behaviour.
    Idempotency,
    /// Stream-mode validation and filtering.
    StreamMode,
    /// Terminal-event rules.
    Terminal,
    /// Credential and request-content redaction.
    Redaction,
    /// Delivery to many subscribers at once (judged by `conformance load`, not by the cases).
    Load,
    /// Other protocol rules.
    Other,
}

impl Area {
    /// A stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            Area::Ordering => "ordering",
            Area::Cursor => "cursor",
            Area::Idempotency => "idempotency",
            Area::StreamMode => "stream-mode",
            Area::Terminal => "terminal",
            Area::Redaction => "redaction",
            Area::Load => "load",
            Area::Other => "other",
        }
    }
}

macro_rules! defects {
    ($( $variant:ident => ($name:literal, $surface:literal, $area:ident, $requirement:literal, $what:literal) ),* $(,)?) => {
        /// One switchable defect.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Defect {
            $(
                #[doc = $what]
                $variant,
            )*
        }

        impl Defect {
            /// Every defect, in catalogue order.
            pub const ALL: &'static [Defect] = &[$(Defect::$variant),*];

            /// The name used on the command line.
            pub fn name(self) -> &'static str {
                match self { $(Defect::$variant => $name),* }
            }

            /// `X` (execution protocol) or `W` (run events).
            pub fn surface(self) -> &'static str {
                match self { $(Defect::$variant => $surface),* }
            }

            /// The mission area.
            pub fn area(self) -> Area {
                match self { $(Defect::$variant => Area::$area),* }
            }

            /// The requirement (registry id) the defect breaks.
            pub fn requirement(self) -> &'static str {
                match self { $(Defect::$variant => $requirement),* }
            }

            /// What the defective host does.
            pub fn description(self) -> &'static str {
                match self { $(Defect::$variant => $what),* }
            }
        }
    };
}

defects! {
    // Surface X: the execution protocol.
    XReplayCreatesNewExecution => ("x-replay-creates-new-execution", "X", Idempotency, "exec.idempotency.same-request-same-execution",
        "An Idempotency-Key replay with the same request creates a new execution."),
    XMismatchedKeyAccepted => ("x-mismatched-key-accepted", "X", Idempotency, "exec.idempotency.different-request-fails",
        "An Idempotency-Key reused with a different request is accepted as a replay."),
    XConcurrentDuplicatesCallTwice => ("x-concurrent-duplicates-call-twice", "X", Idempotency, "exec.idempotency.same-request-same-execution",
        "Concurrent duplicate submissions race: more than one execution and provider call."),
    XProviderCalledBeforeValidation => ("x-provider-called-before-validation", "X", Other, "exec.admission.reject-unsatisfied-requirements-before-provider-output",
        "A request whose requirements no provider satisfies still calls a provider before failing."),
    XMalformedRequestAccepted => ("x-malformed-request-accepted", "X", Other, "exec.admission.reject-malformed-before-provider-output",
        "Unknown members of the closed request object are ignored instead of refused."),
    XFallbackAfterOutput => ("x-fallback-after-output", "X", Ordering, "exec.event-types.route-attempt-failed",
        "A provider failure after output was exposed falls back to another provider."),
    XSequenceRepeated => ("x-sequence-repeated", "X", Ordering, "exec.events.sequence-monotonic",
        "The second event of every execution repeats the first event's sequence."),
    XAfterIgnored => ("x-after-ignored", "X", Cursor, "exec.cursors.accepts-after",
        "The `after` query cursor is ignored: the stream always starts at the beginning."),
    XLastEventIdInclusive => ("x-last-event-id-inclusive", "X", Cursor, "exec.cursors.only-larger-sequences",
        "Last-Event-ID N re-sends event N."),
    XNoTerminalOnCancel => ("x-no-terminal-on-cancel", "X", Terminal, "exec.event-types.execution-failed",
        "Cancel stops the provider but never appends execution.failed."),
    XSecondTerminal => ("x-second-terminal", "X", Terminal, "exec.event-types.execution-completed-terminal",
        "A succeeded execution appends a second execution.completed."),
    XNegativeUsage => ("x-negative-usage", "X", Other, "exec.usage.quantity-non-negative",
        "Usage facts report negative quantities."),
    XUnknownUsageUnit => ("x-unknown-usage-unit", "X", Other, "exec.usage.known-units",
        "Usage facts use an unknown, un-namespaced unit."),
    XToolArgumentsWrongOrder => ("x-tool-arguments-wrong-order", "X", Ordering, "exec.materialization.tool-arguments-into-result",
        "Tool argument fragments are folded into the result in reverse order."),
    XCanaryInError => ("x-canary-in-error", "X", Redaction, "exec.credentials.never-in-error-content",
        "A provider's error body (which may echo the credential) is copied into the execution error."),
    XRequestEchoedInError => ("x-request-echoed-in-error", "X", Redaction, "exec.errors.no-unredacted-request-content",
        "Validation errors echo the offending request content."),
    XCredentialInManifest => ("x-credential-in-manifest", "X", Redaction, "exec.credentials.never-in-manifests",
        "Provider manifests include the provider credential."),
    XCredentialFromExtension => ("x-credential-from-extension", "X", Redaction, "exec.credentials.never-in-request-extensions",
        "An `api_key` in the request's `openai.request` extension is used as the provider credential."),
    XSubmissionAnswered200 => ("x-submission-answered-200", "X", Other, "exec.submission.returns-202",
        "A new execution is answered 200 instead of 202."),
    XDeadlineIgnored => ("x-deadline-ignored", "X", Other, "exec.request.deadline-total",
        "`deadline_ms` is accepted but never enforced."),
    XMaxAttemptsIgnored => ("x-max-attempts-ignored", "X", Ordering, "exec.request.routing-bounded",
        "With fallback allowed, `max_attempts` is ignored: every candidate is tried."),
    XProviderCodeAsPortable => ("x-provider-code-as-portable", "X", Other, "exec.errors.provider-code-not-replace-portable",
        "A provider failure's portable `code` is replaced by the provider's own code."),
    XHttpStatusAsCode => ("x-http-status-as-code", "X", Other, "exec.errors.provider-code-not-replace-portable",
        "An unavailable provider's portable `code` is reported as the provider-native `http_503` on the stream."),
    XTextOutputTruncated => ("x-text-output-truncated", "X", Ordering, "exec.materialization.output-delta-into-result",
        "The materialised text of each output drops its last delta."),
    XQuotaRetriedUnrecorded => ("x-quota-retried-unrecorded", "X", Ordering, "exec.event-types.route-attempt-failed",
        "A 429 the provider marks not retryable (OpenAI's insufficient_quota) is retried on the next candidate, which the seed leaves open, but without appending route.attempt_failed: the second route.selected follows no failed attempt."),
    XLaterUsageFactNegative => ("x-later-usage-fact-negative", "X", Other, "exec.usage.quantity-non-negative",
        "Every usage fact after the first of a report carries a negative quantity; the first stays valid, so only a check of every fact catches it."),
    // Surface W: the run events chapter.
    WLastEventIdInclusive => ("w-last-event-id-inclusive", "W", Cursor, "events.resume.no-re-emit-n",
        "Last-Event-ID N re-sends event N."),
    WLastEventIdSkipsNext => ("w-last-event-id-skips-next", "W", Cursor, "events.resume.stream-after-n-in-log-order",
        "Last-Event-ID N skips event N+1."),
    WLastEventIdBeforeAuthorization => ("w-last-event-id-before-authorization", "W", Cursor, "events.resume.unreadable-run-same-response",
        "Last-Event-ID is validated before authorisation: an unreadable run answers differently with a malformed header."),
    WMalformedLastEventIdAccepted => ("w-malformed-last-event-id-accepted", "W", Cursor, "events.resume.malformed-refused-400",
        "A malformed Last-Event-ID is read as 0 instead of refused."),
    WValuesResumeWithoutSnapshot => ("w-values-resume-without-snapshot", "W", Cursor, "events.resume.values-snapshot-first",
        "A values-mode resumption does not start with a state.snapshot frame."),
    WNotAcceptableForJsonAccept => ("w-406-for-json-accept", "W", StreamMode, "events.stream-mode.validate-before-negotiation",
        "A bad streamMode with Accept: application/json gets 406 instead of 400."),
    WSupportedMissing => ("w-supported-missing", "W", StreamMode, "events.stream-mode.details-supported-lists-modes",
        "The 400 unsupported_stream_mode omits details.supported."),
    WSupportedListsCombinations => ("w-supported-lists-combinations", "W", StreamMode, "events.stream-mode.combinations-not-listed",
        "details.supported lists combinations as well as single modes."),
    WValuesCombinationAccepted => ("w-values-combination-accepted", "W", StreamMode, "events.stream-mode.outside-pattern-400",
        "values combined with another mode is accepted."),
    WVendorEventInUpdates => ("w-vendor-event-in-updates", "W", StreamMode, "events.stream-mode.vendor-events-debug-only",
        "Vendor events are sent in updates mode too."),
    WMixedModesReordered => ("w-mixed-modes-reordered", "W", StreamMode, "events.stream-mode.mixed-no-reorder",
        "A mixed-mode stream sends each mode's events as a group instead of in log order."),
    WEventAfterTerminal => ("w-event-after-terminal", "W", Terminal, "events.terminal.none-after-node-events",
        "A node event is appended after the run's terminal event."),
    WSecondTerminal => ("w-second-terminal", "W", Terminal, "events.terminal.exactly-one",
        "A completed run's log gets a second terminal event."),
    WNoTerminalOnCancel => ("w-no-terminal-on-cancel", "W", Terminal, "events.terminal.exactly-one",
        "Cancel stops the run but never appends run.cancelled."),
    WStreamOpenAfterTerminal => ("w-stream-open-after-terminal", "W", Terminal, "events.sse.close-after-terminal",
        "The event stream stays open after the terminal event."),
    WMessagesStreamOpenAfterTerminal => ("w-messages-stream-open-after-terminal", "W", Terminal, "events.sse.close-after-terminal",
        "A messages-mode event stream (which shows no run event) stays open after the run's terminal event."),
    WRunCompletedWithoutOutputs => ("w-run-completed-without-outputs", "W", Terminal, "events.payloads.run-completed-outputs-object",
        "run.completed carries no outputs member."),
    WNoKeepAlive => ("w-no-keep-alive", "W", Other, "events.sse.keep-alive-30s",
        "The event stream sends no keep-alive comments."),
    WBatchIdLowest => ("w-batch-id-lowest", "W", Cursor, "events.batching.batch-id-highest-sequence",
        "A batch frame's id is its lowest sequence."),
    WNoFlushOnSuspended => ("w-no-flush-on-suspended", "W", Other, "events.batching.flush-on-node-suspended",
        "Batching does not flush on node.suspended."),
    WPollLastSequenceOffByOne => ("w-poll-last-sequence-off-by-one", "W", Cursor, "events.poll.last-sequence-highest",
        "Poll's lastSequence is one less than the highest sequence."),
    WPollPastEnd404 => ("w-poll-past-end-404", "W", Cursor, "events.poll.cursor-past-end-empty",
        "A poll cursor past the end of the log answers 404."),
    WShortEventId => ("w-short-event-id", "W", Other, "events.envelope.id-fields-follow-grammar",
        "eventId values are shorter than the 16-character grammar allows."),
    WProviderUsageAfterNodeCompleted => ("w-provider-usage-after-node-completed", "W", Ordering, "events.provider-usage.before-node-completed",
        "provider.usage is appended after the node's node.completed."),
    WSubscriberLimitSilentDrop => ("w-subscriber-limit-silent-drop", "W", Other, "events.subscribers.no-silent-drop",
        "Past the subscriber limit the stream is answered 200 and closed without events instead of 429."),
    // Both surfaces (the log hub is shared); caught by `conformance load`, not by the cases.
    DropsEventUnderLoad => ("w-drops-event-under-load", "W", Load, "events.subscribers.no-silent-drop",
        "While several subscribers read one live log, every subscriber silently loses one event per 7 it is sent (both surfaces: the log hub is shared). A single subscriber, or a read of a finished log, loses nothing, so the single-subscriber cases pass."),
    // Surface W: AI envelopes, the envelope catalog, reliability, feedback, usage facets, era-2 logs.
    WEnvelopeCorrelationSynthesized => ("w-envelope-correlation-synthesized", "W", Other, "events.ai-envelopes.reject-missing-correlation-id",
        "An envelope without correlationId is accepted under a correlationId the host mints."),
    WEnvelopeMetaSourceSynthesized => ("w-envelope-meta-source-synthesized", "W", Other, "events.ai-envelopes.reject-missing-meta-source",
        "An envelope without meta.source is accepted as if it said ai-generation."),
    WEnvelopeAcceptanceUnrecorded => ("w-envelope-acceptance-unrecorded", "W", Other, "events.ai-envelopes.acceptance-recorded-as-events",
        "An accepted envelope is recorded by no run event (no output.chunk)."),
    WEnvelopeChunksReordered => ("w-envelope-chunks-reordered", "W", Ordering, "events.ai-envelopes.e1-recording-events-ordered",
        "The chunks of a partial emission are recorded in reverse order."),
    WEnvelopeCausationMissing => ("w-envelope-causation-missing", "W", Other, "events.ai-envelopes.e2-causation-id-is-correlation-id",
        "Events an envelope produces carry no causationId."),
    WReEmissionRecorded => ("w-re-emission-recorded", "W", Other, "events.ai-envelopes.e2-re-emission-no-new-events",
        "A re-emission of a recorded correlationId is processed again and records new events."),
    WReEmissionNotCached => ("w-re-emission-not-cached", "W", Other, "events.ai-envelopes.e2-re-emission-cached-outcome",
        "A re-emission of a recorded correlationId returns its own payload instead of the cached outcome."),
    WUnregisteredOrgKindAccepted => ("w-unregistered-org-kind-accepted", "W", Other, "events.ai-envelopes.e3-unregistered-org-kind-invalid",
        "The catalog advertises and admits acme.widget, a kind whose org is not registered."),
    WUnnamespacedKindAccepted => ("w-unnamespaced-kind-accepted", "W", Other, "events.ai-envelopes.kind-namespaced",
        "The catalog advertises and admits `answer`, a kind with no org namespace."),
    WRefusalRetried => ("w-refusal-retried", "W", Other, "events.ai-envelopes.e5-no-retry-after-refusal",
        "The emission that produced a refusal is retried."),
    WMaxRefusalsIgnored => ("w-max-refusals-ignored", "W", Other, "events.ai-envelopes.e5-max-refusals-ceiling",
        "A refused node is re-dispatched past configurable.ai.maxRefusals."),
    WUnknownKindAccepted => ("w-unknown-kind-accepted", "W", Other, "events.supported-envelopes.refuse-non-member",
        "A kind outside supportedEnvelopes.kinds is admitted."),
    WAboveFloorAccepted => ("w-above-floor-accepted", "W", Other, "events.schema-versions.above-floor-refused",
        "A schemaVersion above the advertised floor is admitted."),
    WAbsentFloorUnbounded => ("w-absent-floor-unbounded", "W", Other, "events.schema-versions.absent-kind-floor-zero",
        "A kind absent from schemaVersions.kinds admits any schemaVersion (no floor of 0)."),
    WDriftUnchecked => ("w-drift-unchecked", "W", Other, "events.envelope-strictness.absent-mode-not-no-checking",
        "Under warn, an envelope below the floor is admitted without validating its payload."),
    WWarnRefusesDrift => ("w-warn-refuses-drift", "W", Other, "events.envelope-strictness.warn-when-absent",
        "Under warn, an envelope below the floor is refused as if the mode were strict."),
    WCatalogOrderSwapped => ("w-catalog-order-swapped", "W", Ordering, "events.envelope-catalog.check-order",
        "schemaVersions is checked before supportedEnvelopes."),
    WEnvelopeContractIgnored => ("w-envelope-contract-ignored", "W", Other, "events.envelope-contracts.refuse-unlisted-type",
        "A node's acceptedEnvelopes is not enforced."),
    WEnvelopeContractSameCode => ("w-envelope-contract-same-code", "W", Other, "events.envelope-contracts.distinct-from-type-id-refusal",
        "The envelope-contract refusal uses the catalog's unknown_envelope_kind code."),
    WEnvelopeContractSubstitutes => ("w-envelope-contract-substitutes", "W", Other, "events.envelope-contracts.refusals-stack",
        "A kind a node's contract lists is admitted although supportedEnvelopes lacks it."),
    WReasoningRequired => ("w-reasoning-required", "W", Other, "events.reasoning.not-required",
        "An envelope without reasoning is refused when its kind's schema permits reasoning."),
    WRoutesOnReasoning => ("w-routes-on-reasoning", "W", Other, "events.reasoning.no-routing-on-reasoning",
        "A node fails when its envelope's reasoning says it is uncertain."),
    WReasoningSecretLeaked => ("w-reasoning-secret-leaked", "W", Redaction, "events.reasoning.secret-not-in-derived-events",
        "The run's known secrets (sensitive inputs) are not redacted from envelope-derived events."),
    WNoReasoningInstruction => ("w-no-reasoning-instruction", "W", Other, "events.reasoning.instruct-model",
        "The model is never instructed to populate reasoning."),
    WRefusalEventMissing => ("w-refusal-event-missing", "W", Other, "events.reliability.emit-refusal",
        "A refusal fails the node without an envelope.refusal event."),
    WRefusalWrongCode => ("w-refusal-wrong-code", "W", Other, "events.reliability.refusal-fails-node",
        "A refusal fails the node with envelope_invalid instead of envelope_refusal."),
    WRetryExhaustedMissing => ("w-retry-exhausted-missing", "W", Other, "events.reliability.emit-retry-exhausted",
        "Exhausted retries fail the node without envelope.retry-exhausted."),
    WCapBreachedMissing => ("w-cap-breached-missing", "W", Other, "events.reliability.exhaustion-cap-breached-schema",
        "Exhausted retries record no cap.breached of kind schema."),
    WExhaustionWrongCode => ("w-exhaustion-wrong-code", "W", Other, "events.reliability.exhaustion-fails-node",
        "Exhausted retries fail the node with internal_error."),
    WRetryAttemptedMissing => ("w-retry-attempted-missing", "W", Other, "events.reliability.retry-attempted-with-reason",
        "Retries happen without envelope.retry-attempted."),
    WTruncationNotReported => ("w-truncation-not-reported", "W", Other, "events.reliability.truncation-emits-truncated",
        "A truncated attempt records no envelope.truncated."),
    WTruncatedAccepted => ("w-truncated-accepted", "W", Other, "events.reliability.complete-only-on-clean-stop-valid-payload",
        "A truncated attempt whose text parses into a valid envelope is accepted."),
    WTruncationNoBudgetRaise => ("w-truncation-no-budget-raise", "W", Other, "events.reliability.truncation-retry-raises-budget",
        "A truncation retry keeps the output budget."),
    WTruncationCorrectiveFragment => ("w-truncation-corrective-fragment", "W", Other, "events.reliability.truncation-retry-no-schema-fragment",
        "A truncation retry carries a schema-correcting fragment."),
    WViolationFragmentEchoesOutput => ("w-violation-fragment-echoes-output", "W", Redaction, "events.reliability.violation-fragment-no-model-output",
        "A schema-violation retry's corrective fragment quotes the model's output."),
    WViolationFragmentGeneric => ("w-violation-fragment-generic", "W", Other, "events.reliability.violation-fragment-reproduces-failure",
        "A schema-violation retry's corrective fragment does not say what failed."),
    WViolationBudgetRaised => ("w-violation-budget-raised", "W", Other, "events.reliability.violation-retry-no-budget-raise",
        "A schema-violation retry raises the output budget."),
    WSchemaRoundsIgnored => ("w-schema-rounds-ignored", "W", Other, "events.reliability.paths-count-against-schema-rounds",
        "One emission is retried once more than limits.schemaRounds allows."),
    WRecoveryConsumesRetry => ("w-recovery-consumes-retry", "W", Other, "events.reliability.lenient-recovery-consumes-no-retry",
        "A lenient-parse recovery counts as a retry (envelope.retry-attempted)."),
    WRecoveryNotReported => ("w-recovery-not-reported", "W", Other, "events.reliability.recovery-applied-once",
        "A lenient-parse recovery records no envelope.recovery-applied."),
    WRecoveryCarriesContent => ("w-recovery-carries-content", "W", Redaction, "events.reliability.recovery-applied-only-path-and-offset",
        "envelope.recovery-applied carries the recovered text."),
    WPreviousErrorUnredacted => ("w-previous-error-unredacted", "W", Redaction, "events.reliability.redact-previous-error",
        "previousError is the validator's own message, unredacted (it quotes the payload)."),
    WFinalErrorUnredacted => ("w-final-error-unredacted", "W", Redaction, "events.reliability.redact-final-error",
        "finalError is the validator's own message, unredacted (it quotes the payload)."),
    WRefusalTextUnredacted => ("w-refusal-text-unredacted", "W", Redaction, "events.reliability.redact-refusal-text",
        "refusalText is recorded without redaction."),
    WReliabilityEventsIncomplete => ("w-reliability-events-incomplete", "W", Other, "events.reliability.events-list-includes-both",
        "envelopes.reliability.events omits envelope.refusal."),
    WTierOneProviderRefusal => ("w-tier-one-provider-refusal", "W", Other, "events.tier-one-subset.accept-from-any-advertised-provider",
        "A Tier 1 envelope is refused when it comes from a provider whose id names anthropic."),
    WCostEstimateMissing => ("w-cost-estimate-missing", "W", Other, "events.provider-usage.cost-estimates-stamped",
        "providerUsage.costEstimates is advertised but provider.usage carries no costEstimateUsd."),
    WCurrencyNotIso => ("w-currency-not-iso", "W", Other, "events.provider-usage.currency-iso-4217",
        "providerUsage.currency is advertised as `usd`, not an ISO 4217 code."),
    WAnnotationTerminalRefused => ("w-annotation-terminal-refused", "W", Other, "events.feedback.accept-on-terminal-run",
        "An annotation on a terminal run is refused with 409 run_terminal."),
    WAnnotationOutsideTargetAccepted => ("w-annotation-outside-target-accepted", "W", Other, "events.feedback.refuse-outside-targets",
        "An annotation on an event (a target outside feedback.targets) is accepted."),
    WRunAnnotationOutsideTargetAccepted => ("w-run-annotation-outside-target-accepted", "W", Other, "events.feedback.refuse-outside-targets",
        "An annotation on the run (no target) is accepted although feedback.targets does not list run."),
    WRefusedAnnotationLogged => ("w-refused-annotation-logged", "W", Other, "events.feedback.refused-not-in-run-log",
        "A refused annotation is written to the run's event log (as a vendor event, example.annotation-refused)."),
    WAnnotationNodeTargetRefused => ("w-annotation-node-target-refused", "W", Other, "events.feedback.targets-names-attachable-resources",
        "An annotation on a node is refused although feedback.targets lists node."),
    WAnnotationSignalRefused => ("w-annotation-signal-refused", "W", Other, "events.feedback.signals-lists-accepted",
        "A flag signal is refused although feedback.signals lists it."),
    WAnnotationCrossTenant => ("w-annotation-cross-tenant", "W", Redaction, "events.feedback.tenant-isolation",
        "Another tenant can list a run's annotations."),
    WAnnotationNoteUnredacted => ("w-annotation-note-unredacted", "W", Redaction, "events.feedback.redact-note",
        "An annotation's note is persisted and listed without redaction."),
    WAnnotationCorrectionUnredacted => ("w-annotation-correction-unredacted", "W", Redaction, "events.feedback.redact-correction",
        "An annotation's signal.correction is persisted and listed without redaction."),
    WEra2Untranslated => ("w-era2-untranslated", "W", Other, "events.era2.readers-translate",
        "An era-2 log is served in its v1 type spellings."),
    WEra2SilentDrop => ("w-era2-silent-drop", "W", Other, "events.era2.projection-no-silent-drop",
        "An era-2 property the v2 payload cannot carry is dropped silently instead of failing 500 payload_unprojectable."),
    // Surface W: seats read under a non-default configuration, the reliability list.
    WAbsentKindsAdmitted => ("w-absent-kinds-admitted", "W", Other, "events.supported-envelopes.absent-kinds-refuse-non-universal",
        "With supportedEnvelopes advertised without kinds, every non-universal kind is admitted unchecked."),
    WStrictAdmitsDrift => ("w-strict-admits-drift", "W", Other, "events.envelope-strictness.strict-refuses",
        "Under strict, an envelope below the floor is admitted (validated as under warn) instead of refused."),
    WAbsentSignalsNoneAccepted => ("w-absent-signals-none-accepted", "W", Other, "events.feedback.signals-absent-means-all-four",
        "With feedback advertised without signals, every annotation is refused (absent read as an empty list)."),
    WReliabilityEventsOverlisted => ("w-reliability-events-overlisted", "W", Other, "events.reliability.events-list-only-emitted",
        "envelopes.reliability.events also lists envelope.nl-to-format-engaged, an event this host never emits."),
    // Surface W: the rest of the envelope, feedback and era-2 rules, each with its own defect.
    WEnvelopeIdAsCorrelationId => ("w-envelope-id-as-correlation-id", "W", Other, "events.ai-envelopes.nothing-synthesized",
        "An envelope without correlationId is accepted under its envelopeId instead of rejected."),
    WStrictRefusesAtFloor => ("w-strict-refuses-at-floor", "W", Other, "events.envelope-strictness.below-floor-only",
        "Strictness governs the floor itself: under strict, an envelope at the advertised schema version is refused as drift."),
    WDriftValidatedAsEmitted => ("w-drift-validated-as-emitted", "W", Other, "events.envelope-strictness.warn-validates-against-advertised",
        "Under warn, an envelope below the floor is validated against its own (older) version's schema instead of the advertised one."),
    WUsageRecordedTwice => ("w-usage-recorded-twice", "W", Other, "events.provider-usage.exactly-one-per-invocation",
        "Each provider call's usage is recorded twice: from the provider's final usage report and again at the node's end."),
    WUsageEmittedUnadvertised => ("w-usage-emitted-unadvertised", "W", Other, "events.provider-usage.omitted-when-not-advertised",
        "provider.usage is recorded although the host does not advertise providerUsage."),
    WUsageCredentialRef => ("w-usage-credential-ref", "W", Redaction, "events.provider-usage.no-credential-refs",
        "provider.usage names the credential the call used (credentialRef: env:<variable>)."),
    WUsageCredentialHash => ("w-usage-credential-hash", "W", Redaction, "events.provider-usage.no-hashed-credential-ids",
        "provider.usage carries a SHA-256 fingerprint of the credential the call used (credentialId)."),
    WUsageCarriesPrompt => ("w-usage-carries-prompt", "W", Redaction, "events.provider-usage.no-prompt-text",
        "provider.usage carries the prompt it was billed for (prompt)."),
    WUsageCarriesResponse => ("w-usage-carries-response", "W", Redaction, "events.provider-usage.no-response-text",
        "provider.usage carries the response text it was billed for (completion)."),
    WTierOneStrictModeRefusal => ("w-tier-one-strict-mode-refusal", "W", Other, "events.tier-one-subset.no-provider-specific-refusal",
        "An envelope from an OpenAI provider is refused when its payload omits an optional property (OpenAI strict mode's every-property-required rule)."),
    WReasoningUnredacted => ("w-reasoning-unredacted", "W", Redaction, "events.reasoning.secret-not-in-reasoning",
        "The payload's reasoning is spared the run's secret redaction (passed through as model diagnostics)."),
    WRetryAnnouncedAfterRetry => ("w-retry-announced-after-retry", "W", Ordering, "events.reliability.retry-attempted-before-retry",
        "envelope.retry-attempted is recorded once the retry has returned, after the events of the retried attempt."),
    WExhaustionReasonFixed => ("w-exhaustion-reason-fixed", "W", Other, "events.reliability.exhaustion-emits-retry-exhausted",
        "envelope.retry-exhausted always reports finalReason schema-violation, whatever the final failure was (a truncation)."),
    // Surface W: heartbeats, the host channel and poll parameters.
    WHeartbeatEvaluatedOnlyOnChange => ("w-heartbeat-evaluated-only-on-change", "W", Other, "events.heartbeat.emit-evaluated",
        "heartbeat.evaluated is emitted only on ticks that change state."),
    WHeartbeatRenotifyOnUnchanged => ("w-heartbeat-renotify-on-unchanged", "W", Other, "events.heartbeat.unchanged-tick-no-state-changed",
        "heartbeat.stateChanged is emitted on unchanged ticks too (from and to equal)."),
    WHostEventsWrongAddress => ("w-host-events-wrong-address", "W", Other, "events.host-events.default-address",
        "The host channel is served at /host/stream while discovery declares /host/events (which answers 404)."),
    WHostChannelAddressObject => ("w-host-channel-address-object", "W", Other, "events.host-events.every-channel-has-address",
        "Discovery declares heartbeat.deliveryChannel as an object {address} instead of the channel's address."),
    WHostEventsCarryRunData => ("w-host-events-carry-run-data", "W", Redaction, "events.host-events.no-run-data",
        "Heartbeat messages carry the id of the host's most recently created run (runId)."),
    WPollHonoursLastSequence => ("w-poll-honours-last-sequence", "W", Cursor, "events.poll.last-sequence-not-a-parameter",
        "A lastSequence query parameter acts as poll's cursor when afterSequence is absent."),
    WHeartbeatQueuesOverlappingTicks => ("w-heartbeat-queues-overlapping-ticks", "W", Other, "events.heartbeat.skip-overlapping-tick",
        "A tick that falls while the prior evaluation runs is queued and evaluated after it instead of skipped."),
    WHeartbeatNoTimeoutStatus => ("w-heartbeat-no-timeout-status", "W", Other, "events.heartbeat.overrun-status-timeout",
        "An evaluation stopped at maxRuntimeMs is reported with status error instead of timeout."),
    WHeartbeatMaxRuntimeIgnored => ("w-heartbeat-max-runtime-ignored", "W", Other, "events.heartbeat.bound-by-max-runtime",
        "An evaluation is not bounded by maxRuntimeMs: an overrun runs to completion and reports ok."),
    WHeartbeatMaxRuntimeOverRunCeiling => ("w-heartbeat-max-runtime-over-run-ceiling", "W", Other, "events.heartbeat.max-runtime-capped-by-max-run-duration",
        "Discovery advertises heartbeat.maxRuntimeMs a second past limits.maxRunDurationMs: the evaluation budget is not capped by the run ceiling."),
    WHeartbeatIntervalBelowMin => ("w-heartbeat-interval-below-min", "W", Other, "events.heartbeat.interval-at-least-min",
        "Heartbeats tick twice per configured interval, below minIntervalSec."),
    WHeartbeatPriorStateNotPassed => ("w-heartbeat-prior-state-not-passed", "W", Other, "events.heartbeat.pass-prior-state",
        "The predicate is never given the prior tick's state."),
    WHeartbeatFirstTickNotATransition => ("w-heartbeat-first-tick-not-a-transition", "W", Other, "events.heartbeat.first-tick-transition-from-empty",
        "A heartbeat's first tick stores its state silently instead of treating it as a transition from {}."),
    WHeartbeatCreateRunIgnored => ("w-heartbeat-create-run-ignored", "W", Other, "events.heartbeat.create-run-on-transition-if-asked",
        "The run a predicate asks for on a transition is never created."),
    WHeartbeatCreateRunOnUnchanged => ("w-heartbeat-create-run-on-unchanged", "W", Other, "events.heartbeat.unchanged-tick-no-create-run",
        "The run a predicate asks for is created on unchanged ticks too."),
    // Surface W: payloads as upstream run-event-payloads and subject schemas state them.
    WOwnerSubjectString => ("w-owner-subject-string", "W", Other, "events.payloads.run-started-owner",
        "run.started carries owner.subject as a bare string instead of a Subject object."),
    WNodeFailedErrorWithoutMessage => ("w-node-failed-error-without-message", "W", Other, "events.payloads.validates-against-type-index",
        "node.failed carries an error object without its required message."),
    WResolvedByString => ("w-resolved-by-string", "W", Other, "events.payloads.validates-against-type-index",
        "interrupt.resolved carries resolvedBy as a bare string instead of a Subject object."),
    WInterruptRequestedWithoutKey => ("w-interrupt-requested-without-key", "W", Other, "events.payloads.validates-against-type-index",
        "interrupt.requested omits the re-entry key suspend-request.schema.json requires."),
    WNodeStartedWithoutTypeId => ("w-node-started-without-type-id", "W", Other, "events.payloads.validates-against-type-index",
        "node.started omits its required typeId."),
    WProviderUsageModelEmpty => ("w-provider-usage-model-empty", "W", Other, "events.payloads.validates-against-type-index",
        "provider.usage names its model as the empty string (upstream: minLength 1)."),
}

impl fmt::Display for Defect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown defect name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown defect `{0}` (see --list-defects)")]
pub struct UnknownDefect(pub String);

impl FromStr for Defect {
    type Err = UnknownDefect;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Defect::ALL
            .iter()
            .copied()
            .find(|d| d.name() == name)
            .ok_or_else(|| UnknownDefect(name.to_string()))
    }
}

/// The set of defects switched on (empty by default: a clean runtime).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Defects(BTreeSet<Defect>);

impl Defects {
    /// No defects.
    pub fn none() -> Self {
        Self::default()
    }

    /// The given defects.
    pub fn of(defects: impl IntoIterator<Item = Defect>) -> Self {
        Defects(defects.into_iter().collect())
    }

    /// Whether `defect` is switched on.
    pub fn has(&self, defect: Defect) -> bool {
        self.0.contains(&defect)
    }

    /// The switched-on defects.
    pub fn iter(&self) -> impl Iterator<Item = Defect> + '_ {
        self.0.iter().copied()
    }

    /// Whether the runtime is clean.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_parse_back() {
        let mut names = BTreeSet::new();
        for &defect in Defect::ALL {
            assert!(
                names.insert(defect.name()),
                "duplicate name {}",
                defect.name()
            );
            assert_eq!(defect.name().parse::<Defect>().unwrap(), defect);
            assert!(defect.name().starts_with(&defect.surface().to_lowercase()));
        }
        assert!(
            Defect::ALL.len() >= 30,
            "the catalogue holds at least 30 defects"
        );
    }

    #[test]
    fn every_defect_names_a_registered_requirement() {
        let registry = spec::requirements::registry();
        for &defect in Defect::ALL {
            assert!(
                registry.get(defect.requirement()).is_some(),
                "{} names unknown requirement {}",
                defect,
                defect.requirement()
            );
        }
    }
}
