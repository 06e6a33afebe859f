//! [`ExecutionWireRewrites`]: surface X's defects that the execution layer applies at the
//! boundary with the service at hand (the `EXECUTION_WIRE` table).

use super::super::decisions::decisions;
use super::super::policy::KnownBad;
use crate::defects::{Defect, Defects};

/// The rewrites the execution layer applies: the policy's defects of the `EXECUTION_WIRE` table.
#[derive(Debug, Clone, Default)]
pub(super) struct ExecutionWireRewrites {
    defects: Defects,
}

impl ExecutionWireRewrites {
    /// The rewrites of `policy`, or `None` when it switches none of them on.
    pub(super) fn of(policy: &KnownBad) -> Option<Self> {
        let defects = policy.layered_in(EXECUTION_WIRE);
        (!defects.is_empty()).then_some(ExecutionWireRewrites { defects })
    }

    /// Whether a submission's body is read by the layer (some rewrite needs it).
    pub(super) fn reads_submissions(&self) -> bool {
        self.unknown_request_members_ignored()
            || self.validation_error_echoes_request()
            || self.provider_called_before_validation()
            || self.rewrites_keys()
    }

    /// Whether a keyed submission is rewritten by what the layer remembers of its key.
    pub(super) fn rewrites_keys(&self) -> bool {
        self.mismatched_key_accepted()
            || self.replay_creates_new_execution()
            || self.concurrent_duplicates_race()
    }

    /// Whether an execution's snapshot or result is rewritten.
    pub(super) fn rewrites_results(&self) -> bool {
        self.last_text_delta_dropped() || self.tool_fragments_reversed()
    }
}

decisions! {
    ExecutionWireRewrites, EXECUTION_WIRE {
        // `GET /v1/providers`.
        manifest_shows_credential => XCredentialInManifest,
        // `POST /v1/executions`: the body admission reads, what happens around its answer.
        unknown_request_members_ignored => XMalformedRequestAccepted,
        validation_error_echoes_request => XRequestEchoedInError,
        provider_called_before_validation => XProviderCalledBeforeValidation,
        // `POST /v1/executions` under an Idempotency-Key: what the key leads to.
        mismatched_key_accepted => XMismatchedKeyAccepted,
        replay_creates_new_execution => XReplayCreatesNewExecution,
        concurrent_duplicates_race => XConcurrentDuplicatesCallTwice,
        // `GET /v1/executions/{id}` and `…/result`: the materialised result.
        last_text_delta_dropped => XTextOutputTruncated,
        tool_fragments_reversed => XToolArgumentsWrongOrder,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_tables_defects_make_the_layer() {
        assert!(ExecutionWireRewrites::of(&KnownBad::clean()).is_none());
        assert!(ExecutionWireRewrites::of(&KnownBad::of([Defect::XAfterIgnored])).is_none());
        let rewrites = ExecutionWireRewrites::of(&KnownBad::of([
            Defect::XTextOutputTruncated,
            Defect::XAfterIgnored,
        ]))
        .expect("a layer");
        assert!(rewrites.rewrites_results() && !rewrites.reads_submissions());
        assert!(!rewrites.manifest_shows_credential());
    }
}
