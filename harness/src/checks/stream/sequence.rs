//! `sequence`: the sequence rules over a step's events.

use crate::case::SequenceExpect;
use crate::checks::context::Outcome;
use crate::transcript::StepRecord;
use crate::verdict::CheckOutcome;

/// The first sequence, strict or non-decreasing order, contiguity, and `id:` = sequence.
pub(in crate::checks) fn sequence(
    out: &Outcome<'_>,
    step: &StepRecord,
    expect: &SequenceExpect,
) -> CheckOutcome {
    let (_, observed) = observed!(out, step);
    let missing: Vec<usize> = observed
        .events
        .iter()
        .enumerate()
        .filter(|(_, e)| e.sequence.is_none())
        .map(|(i, _)| i)
        .collect();
    if !missing.is_empty() {
        return out.fail(
            "events without a sequence",
            "a sequence on every event",
            format!("events at positions {missing:?}"),
        );
    }
    let sequences = observed.sequences();
    let rendered = format!("{sequences:?}");
    if let Some(first) = expect.first
        && sequences.first() != Some(&first)
    {
        return out.fail(
            format!("the first sequence is not {first}"),
            first.to_string(),
            rendered,
        );
    }
    if expect.non_decreasing == Some(true) && !sequences.windows(2).all(|w| w[0] <= w[1]) {
        return out.fail("sequences decrease", "non-decreasing sequences", rendered);
    }
    let strict_by_default = expect.non_decreasing != Some(true);
    if expect.strictly_increasing.unwrap_or(strict_by_default)
        && !sequences.windows(2).all(|w| w[0] < w[1])
    {
        return out.fail(
            "sequences are not strictly increasing",
            "strictly increasing sequences",
            rendered,
        );
    }
    if expect.contiguous == Some(true) && !sequences.windows(2).all(|w| w[1] == w[0] + 1) {
        return out.fail(
            "sequences have gaps",
            "sequences increasing by exactly 1",
            rendered,
        );
    }
    if expect.ids_match == Some(true) {
        for event in observed
            .events
            .iter()
            .filter(|e| !e.batched && e.frame_index.is_some())
        {
            let id = event
                .frame_id
                .as_deref()
                .and_then(|i| i.parse::<u64>().ok());
            if id != event.sequence {
                return out.fail(
                    "a frame's id is not its event's sequence",
                    format!("id: {}", event.sequence.unwrap_or_default()),
                    format!("id: {}", event.frame_id.as_deref().unwrap_or("(absent)")),
                );
            }
        }
    }
    out.pass(format!("{} sequence(s) as expected", sequences.len()))
}
