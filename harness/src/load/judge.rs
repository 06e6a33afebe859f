//! Judging one subscriber's deliveries against its log's full read: lost, duplicated and
//! reordered events, frames after the terminal event, sequences the log does not hold.

use std::collections::{BTreeMap, BTreeSet};

use spec::openwop::StreamMode;
use spec::registry::{StreamTier, event_types};

use super::plan::LoadSurface;
use super::result::{Anomaly, AnomalyKind};
use super::subscriber::SubscriberRecord;
use super::workload::{FullRead, LogEvent};

/// What a stream selection shows of a log.
///
/// A run's log may carry events after its terminal one (`compensation.*`, `run.dead-lettered`,
/// vendor types: seed 002, "The terminal event"), and the chapter leaves open whether a stream
/// closing "after the run's terminal event" carries them first: those are `may_follow`, neither
/// lost when absent nor late when present. An execution's log ends at its terminal event.
#[derive(Debug, Clone)]
pub(crate) enum Expected {
    /// Exactly the `required` sequences, in order, then possibly some of `may_follow`.
    Events {
        /// Every event the stream must carry (through the terminal event).
        required: Vec<u64>,
        /// The log's events after its terminal event that the selection admits.
        may_follow: Vec<u64>,
    },
    /// `values` mode: snapshots fold events, so only their order and the terminal snapshot
    /// (an id at or past this sequence) are judged.
    Snapshots {
        /// The terminal event's sequence.
        terminal: Option<u64>,
        /// The log's updates-tier events after its terminal event (a snapshot may fold them).
        may_follow: Vec<u64>,
    },
}

impl Expected {
    /// How many events a complete stream carries at least (0 for snapshots).
    pub(crate) fn required_deliveries(&self) -> u64 {
        match self {
            Expected::Events { required, .. } => required.len() as u64,
            Expected::Snapshots { .. } => 0,
        }
    }

    fn may_follow(&self) -> &[u64] {
        match self {
            Expected::Events { may_follow, .. } | Expected::Snapshots { may_follow, .. } => {
                may_follow
            }
        }
    }
}

/// Whether `mode` admits `event_type` (debug every event; updates and messages by the
/// registry's tier, vendor types only in debug).
fn mode_admits(mode: StreamMode, event_type: &str) -> bool {
    let tier = event_types().get(event_type).map(|e| e.tier);
    match mode {
        StreamMode::Debug => true,
        StreamMode::Updates => tier == Some(StreamTier::Updates),
        StreamMode::Messages => tier == Some(StreamTier::Messages),
        // A `values` subscriber gets snapshots, not events (see [`expected`]).
        StreamMode::Values => false,
    }
}

/// What subscribers of `log` with `modes` should get.
pub(crate) fn expected(surface: LoadSurface, modes: &[StreamMode], log: &FullRead) -> Expected {
    let terminal = log.terminal(surface).map(|e| e.sequence);
    let after_terminal = |e: &&LogEvent| terminal.is_some_and(|t| e.sequence > t);
    match surface {
        LoadSurface::Execution => Expected::Events {
            required: log.events.iter().map(|e| e.sequence).collect(),
            may_follow: Vec::new(),
        },
        LoadSurface::Openwop if modes.contains(&StreamMode::Values) => Expected::Snapshots {
            terminal,
            may_follow: log
                .events
                .iter()
                .filter(after_terminal)
                .filter(|e| mode_admits(StreamMode::Updates, &e.event_type))
                .map(|e| e.sequence)
                .collect(),
        },
        LoadSurface::Openwop => {
            let (later, through): (Vec<&LogEvent>, Vec<&LogEvent>) = log
                .events
                .iter()
                .filter(|e| modes.iter().any(|m| mode_admits(*m, &e.event_type)))
                .partition(after_terminal);
            Expected::Events {
                required: through.iter().map(|e| e.sequence).collect(),
                may_follow: later.iter().map(|e| e.sequence).collect(),
            }
        }
    }
}

fn first(sequences: &BTreeSet<u64>) -> Vec<u64> {
    sequences.iter().copied().take(20).collect()
}

fn ranges(sequences: &BTreeSet<u64>) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut iter = sequences.iter().copied().peekable();
    while let Some(start) = iter.next() {
        let mut end = start;
        while iter.peek() == Some(&(end + 1)) {
            end = iter.next().unwrap_or(end);
        }
        out.push(if start == end {
            start.to_string()
        } else {
            format!("{start}–{end}")
        });
        if out.len() == 8 {
            break;
        }
    }
    let more = if out.len() == 8 { ", …" } else { "" };
    format!("{}{more}", out.join(", "))
}

/// Every broken rule of one subscriber. `terminal` is the log's terminal sequence; `mixed`
/// tolerates an event sent once per admitting mode (frames with distinct `event:` names).
pub(crate) fn judge(
    log_id: &str,
    record: &SubscriberRecord,
    expected: &Expected,
    terminal: Option<u64>,
    mixed: bool,
) -> Vec<Anomaly> {
    let mut out = Vec::new();
    let mut anomaly = |kind: AnomalyKind, sequences: &BTreeSet<u64>, detail: String| {
        out.push(Anomaly {
            log: log_id.to_string(),
            subscriber: record.subscriber,
            kind,
            count: sequences.len().max(1) as u64,
            sequences: first(sequences),
            detail,
        });
    };
    let mut seen: BTreeMap<(u64, Option<&str>), u32> = BTreeMap::new();
    let mut duplicated = BTreeSet::new();
    let mut reordered = BTreeSet::new();
    let mut highest: Option<u64> = None;
    let snapshots = matches!(expected, Expected::Snapshots { .. });
    let mut connection: Option<u32> = None;
    for delivery in &record.deliveries {
        let resumed = connection.is_some_and(|c| c != delivery.connection);
        connection = Some(delivery.connection);
        // `values` mode: "resumption MUST emit a state.snapshot first", the state at the cursor,
        // and the chapter leaves its `id:` open: the cursor's own sequence is no second copy.
        if snapshots && resumed && highest.is_some_and(|h| delivery.sequence <= h) {
            continue;
        }
        let key_event = mixed.then_some(delivery.frame_event.as_deref()).flatten();
        let count = seen.entry((delivery.sequence, key_event)).or_default();
        *count += 1;
        if *count > 1 {
            duplicated.insert(delivery.sequence);
        } else if highest.is_some_and(|h| delivery.sequence < h)
            && !(mixed && seen.contains_key(&(delivery.sequence, None)))
        {
            reordered.insert(delivery.sequence);
        }
        highest = highest.max(Some(delivery.sequence));
    }
    // In mixed modes a second copy under another `event:` name is tolerated, not reordered.
    if mixed {
        let mut firsts = BTreeSet::new();
        let mut max: Option<u64> = None;
        reordered.clear();
        for delivery in &record.deliveries {
            if !firsts.insert(delivery.sequence) {
                continue;
            }
            if max.is_some_and(|m| delivery.sequence < m) {
                reordered.insert(delivery.sequence);
            }
            max = max.max(Some(delivery.sequence));
        }
    }
    let got: BTreeSet<u64> = record.deliveries.iter().map(|d| d.sequence).collect();
    match expected {
        Expected::Events {
            required,
            may_follow,
        } => {
            let want: BTreeSet<u64> = required.iter().copied().collect();
            let lost: BTreeSet<u64> = want.difference(&got).copied().collect();
            let unexpected: BTreeSet<u64> = got
                .difference(&want)
                .filter(|s| !may_follow.contains(s))
                .copied()
                .collect();
            if !lost.is_empty() {
                anomaly(
                    AnomalyKind::Lost,
                    &lost,
                    format!(
                        "{} event(s) of the log never arrived: sequence {}{}",
                        lost.len(),
                        ranges(&lost),
                        if record.completed {
                            ""
                        } else {
                            " (the subscriber did not finish)"
                        }
                    ),
                );
            }
            if !unexpected.is_empty() {
                anomaly(
                    AnomalyKind::Unexpected,
                    &unexpected,
                    format!(
                        "{} frame(s) name a sequence the log's full read does not hold for this stream: {}",
                        unexpected.len(),
                        ranges(&unexpected)
                    ),
                );
            }
        }
        Expected::Snapshots { terminal, .. } => {
            if record.completed && terminal.is_some_and(|t| got.range(t..).next().is_none()) {
                let lost: BTreeSet<u64> = terminal.iter().copied().collect();
                anomaly(
                    AnomalyKind::Lost,
                    &lost,
                    "no state.snapshot folded the terminal event".into(),
                );
            }
        }
    }
    // Frames after the terminal one on the connection that carried it (a snapshot at or past
    // the terminal sequence folds it), except the log's events that may follow it.
    let first_terminal = terminal.and_then(|t| {
        record.deliveries.iter().position(|d| match expected {
            Expected::Snapshots { .. } => d.sequence >= t,
            Expected::Events { .. } => d.sequence == t,
        })
    });
    let after_terminal: BTreeSet<u64> = first_terminal.map_or_else(BTreeSet::new, |index| {
        let connection = record.deliveries[index].connection;
        record.deliveries[index + 1..]
            .iter()
            .filter(|d| d.connection == connection)
            .map(|d| d.sequence)
            .filter(|s| !expected.may_follow().contains(s))
            .collect()
    });
    if !duplicated.is_empty() {
        anomaly(
            AnomalyKind::Duplicated,
            &duplicated,
            format!(
                "{} event(s) arrived more than once: sequence {}",
                duplicated.len(),
                ranges(&duplicated)
            ),
        );
    }
    if !reordered.is_empty() {
        anomaly(
            AnomalyKind::Reordered,
            &reordered,
            format!(
                "{} event(s) arrived after a larger sequence: {}",
                reordered.len(),
                ranges(&reordered)
            ),
        );
    }
    if !after_terminal.is_empty() {
        anomaly(
            AnomalyKind::AfterTerminal,
            &after_terminal,
            format!(
                "{} frame(s) after the terminal event on the same stream: sequence {}",
                after_terminal.len(),
                ranges(&after_terminal)
            ),
        );
    }
    if record.open_after_terminal {
        anomaly(
            AnomalyKind::OpenAfterTerminal,
            &BTreeSet::new(),
            "the stream stayed open after its terminal event".into(),
        );
    }
    for (gap, after) in &record.keepalive_gaps {
        anomaly(
            AnomalyKind::KeepaliveGap,
            &after.iter().copied().collect(),
            format!(
                "{gap:.0} ms without a frame or keep-alive comment on an open stream{}",
                after
                    .map(|s| format!(" (after sequence {s})"))
                    .unwrap_or_default()
            ),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::subscriber::Delivery;

    fn record(sequences: &[(u64, u32)]) -> SubscriberRecord {
        SubscriberRecord {
            deliveries: sequences
                .iter()
                .map(|&(sequence, connection)| Delivery {
                    sequence,
                    connection,
                    at_ms: 0.0,
                    latency_ms: None,
                    frame_event: None,
                })
                .collect(),
            completed: true,
            ..SubscriberRecord::default()
        }
    }

    fn events(required: &[u64]) -> Expected {
        Expected::Events {
            required: required.to_vec(),
            may_follow: Vec::new(),
        }
    }

    #[test]
    fn events_after_a_runs_terminal_event_may_arrive_or_not() {
        let want = Expected::Events {
            required: vec![0, 1, 2],
            may_follow: vec![3],
        };
        for got in [
            record(&[(0, 0), (1, 0), (2, 0)]),
            record(&[(0, 0), (1, 0), (2, 0), (3, 0)]),
            record(&[(0, 0), (1, 0), (2, 0), (3, 1)]),
        ] {
            assert!(
                judge("w", &got, &want, Some(2), false).is_empty(),
                "{got:?}"
            );
        }
        let found = kinds(&judge(
            "w",
            &record(&[(0, 0), (1, 0), (2, 0), (3, 0), (3, 0), (4, 0)]),
            &want,
            Some(2),
            false,
        ));
        assert!(
            found.contains(&(AnomalyKind::Duplicated, vec![3])),
            "{found:?}"
        );
        assert!(
            found.contains(&(AnomalyKind::AfterTerminal, vec![4])),
            "{found:?}"
        );
        assert!(
            found.contains(&(AnomalyKind::Unexpected, vec![4])),
            "{found:?}"
        );
        let lost = kinds(&judge(
            "w",
            &record(&[(0, 0), (2, 0), (3, 0)]),
            &want,
            Some(2),
            false,
        ));
        assert_eq!(lost, vec![(AnomalyKind::Lost, vec![1])]);
    }

    #[test]
    fn expected_reads_the_log_after_its_terminal_event_as_optional() {
        let log = FullRead {
            events: [
                (0, "run.started"),
                (1, "node.completed"),
                (2, "run.completed"),
                (3, "example.run-archived"),
            ]
            .iter()
            .map(|&(sequence, t)| LogEvent {
                sequence,
                event_type: t.into(),
            })
            .collect(),
            problem: None,
        };
        match expected(LoadSurface::Openwop, &[StreamMode::Debug], &log) {
            Expected::Events {
                required,
                may_follow,
            } => {
                assert_eq!((required, may_follow), (vec![0, 1, 2], vec![3]));
            }
            other => panic!("{other:?}"),
        }
        match expected(LoadSurface::Openwop, &[StreamMode::Updates], &log) {
            Expected::Events { may_follow, .. } => {
                assert!(may_follow.is_empty(), "vendor types are debug-only")
            }
            other => panic!("{other:?}"),
        }
    }

    fn kinds(anomalies: &[Anomaly]) -> Vec<(AnomalyKind, Vec<u64>)> {
        anomalies
            .iter()
            .map(|a| (a.kind, a.sequences.clone()))
            .collect()
    }

    #[test]
    fn a_clean_resumed_stream_has_no_anomaly() {
        let want = events(&[1, 2, 3, 4]);
        let got = record(&[(1, 0), (2, 0), (3, 1), (4, 1)]);
        assert!(judge("x", &got, &want, Some(4), false).is_empty());
    }

    #[test]
    fn names_the_gap_the_repeat_the_reorder_and_late_frames() {
        let want = events(&[1, 2, 3, 4, 5, 6]);
        let got = record(&[(1, 0), (3, 0), (3, 0), (2, 0), (5, 0), (6, 0), (9, 0)]);
        let found = kinds(&judge("x", &got, &want, Some(6), false));
        assert!(found.contains(&(AnomalyKind::Lost, vec![4])), "{found:?}");
        assert!(found.contains(&(AnomalyKind::Duplicated, vec![3])));
        assert!(found.contains(&(AnomalyKind::Reordered, vec![2])));
        assert!(found.contains(&(AnomalyKind::AfterTerminal, vec![9])));
        assert!(found.contains(&(AnomalyKind::Unexpected, vec![9])));
        let lost = judge("x", &got, &want, Some(6), false)
            .into_iter()
            .find(|a| a.kind == AnomalyKind::Lost)
            .unwrap();
        assert!(lost.detail.contains("sequence 4"), "{}", lost.detail);
    }

    #[test]
    fn mixed_modes_tolerate_one_copy_per_mode() {
        let mut got = record(&[(1, 0), (1, 0), (2, 0)]);
        got.deliveries[0].frame_event = Some("run.started".into());
        got.deliveries[1].frame_event = Some("debug".into());
        let want = events(&[1, 2]);
        assert!(judge("x", &got, &want, Some(2), true).is_empty());
        assert!(!judge("x", &got, &want, Some(2), false).is_empty());
    }

    #[test]
    fn values_mode_judges_order_and_the_terminal_snapshot() {
        let want = Expected::Snapshots {
            terminal: Some(9),
            may_follow: Vec::new(),
        };
        // The anomalies of a subscriber given `(sequence, connection)` snapshots.
        let judged = |deliveries: &[(u64, u32)]| {
            kinds(&judge("x", &record(deliveries), &want, Some(9), false))
        };
        assert_eq!(judged(&[(2, 0), (5, 0), (9, 0)]), vec![]);
        assert_eq!(
            judged(&[(2, 0), (5, 0)]),
            vec![(AnomalyKind::Lost, vec![9])]
        );
        // A resumption's first snapshot (the state at the cursor) may carry the cursor's id;
        // the same id again within one connection is a second copy.
        assert_eq!(judged(&[(2, 0), (5, 0), (5, 1), (9, 1)]), vec![]);
        assert_eq!(
            judged(&[(2, 0), (5, 0), (5, 0), (9, 0)]),
            vec![(AnomalyKind::Duplicated, vec![5])]
        );
    }
}
