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
            "issue 8 asks for at least 30 defects"
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
