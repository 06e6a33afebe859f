//! [`WireRewrites`]: the wire defects switched on, one rewrite each (the `REWRITES` table).

use super::super::decisions::decisions;
use super::super::policy::KnownBad;
use crate::defects::{Defect, Defects};

/// The rewrites the wire layer applies: the policy's wire defects.
#[derive(Debug, Clone, Default)]
pub(super) struct WireRewrites {
    defects: Defects,
}

impl WireRewrites {
    /// The rewrites of `policy`, or `None` when it switches no wire defect on.
    pub(super) fn of(policy: &KnownBad) -> Option<Self> {
        let defects = policy.layered_in(REWRITES);
        (!defects.is_empty()).then_some(WireRewrites { defects })
    }
}

decisions! {
    WireRewrites, REWRITES {
        // Surface X: the submission's status, the events stream's cursors.
        after_cursor_ignored => XAfterIgnored,
        execution_last_event_id_inclusive => XLastEventIdInclusive,
        submission_answered_200 => XSubmissionAnswered200,
        // Surface W: the event stream's cursor, refusals and frames.
        run_last_event_id_inclusive => WLastEventIdInclusive,
        last_event_id_skips_next => WLastEventIdSkipsNext,
        last_event_id_before_authorization => WLastEventIdBeforeAuthorization,
        malformed_last_event_id_read_as_zero => WMalformedLastEventIdAccepted,
        supported_omitted => WSupportedMissing,
        supported_lists_combinations => WSupportedListsCombinations,
        stream_held_after_terminal => WStreamOpenAfterTerminal,
        messages_stream_held_after_terminal => WMessagesStreamOpenAfterTerminal,
        keep_alive_suppressed => WNoKeepAlive,
        batch_id_lowest => WBatchIdLowest,
        host_channel_misaddressed => WHostEventsWrongAddress,
        // Surface W: poll's page and cursor.
        poll_last_sequence_off_by_one => WPollLastSequenceOffByOne,
        poll_past_end_404 => WPollPastEnd404,
        subscriber_limit_silent => WSubscriberLimitSilentDrop,
        // Surface W: the discovery document.
        reliability_list_omits_refusal => WReliabilityEventsIncomplete,
        currency_not_iso => WCurrencyNotIso,
        reliability_list_overlisted => WReliabilityEventsOverlisted,
        poll_honours_last_sequence => WPollHonoursLastSequence,
        host_channel_address_object => WHostChannelAddressObject,
        heartbeat_budget_over_run_ceiling => WHeartbeatMaxRuntimeOverRunCeiling,
        // Surface W: the era-2 seed seam's rows.
        era2_drops_silently => WEra2SilentDrop,
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::delivery::DELIVERIES;
    use super::super::super::era2_reading::ERA2_READINGS;
    use super::super::super::execution_record::EXECUTION_RECORDS;
    use super::super::super::execution_wire::EXECUTION_WIRE;
    use super::super::super::policy::DECISIONS;
    use super::super::super::provider_exchange::PROVIDER_EXCHANGES;
    use super::super::super::run_record::RUN_RECORDS;
    use super::*;

    #[test]
    fn every_defect_is_one_decision_one_record_rewrite_or_one_wire_rewrite() {
        for &defect in Defect::ALL {
            let sites: Vec<&str> = DECISIONS
                .iter()
                .chain(RUN_RECORDS)
                .chain(EXECUTION_RECORDS)
                .chain(DELIVERIES)
                .chain(PROVIDER_EXCHANGES)
                .chain(ERA2_READINGS)
                .chain(EXECUTION_WIRE)
                .chain(REWRITES)
                .filter(|(_, d)| *d == defect)
                .map(|(name, _)| *name)
                .collect();
            assert_eq!(sites.len(), 1, "{defect} turns {sites:?}");
        }
        assert_eq!(
            DECISIONS.len()
                + RUN_RECORDS.len()
                + EXECUTION_RECORDS.len()
                + DELIVERIES.len()
                + PROVIDER_EXCHANGES.len()
                + ERA2_READINGS.len()
                + EXECUTION_WIRE.len()
                + REWRITES.len(),
            Defect::ALL.len()
        );
    }

    #[test]
    fn a_policy_of_engine_decisions_only_rewrites_nothing() {
        assert!(WireRewrites::of(&KnownBad::clean()).is_none());
        assert!(WireRewrites::of(&KnownBad::of([Defect::WShortEventId])).is_none());
        let rewrites = WireRewrites::of(&KnownBad::of([
            Defect::WBatchIdLowest,
            Defect::WShortEventId,
        ]));
        assert!(rewrites.is_some_and(|r| r.batch_id_lowest() && !r.poll_past_end_404()));
    }
}
