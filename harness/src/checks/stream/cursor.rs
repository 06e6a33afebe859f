//! `exclusive_after`: a resumed read sends exactly the events after the cursor.

use super::terminal::{comparable_lengths, is_terminal};
use serde_json::Value;

use crate::case::ExclusiveAfterExpect;
use crate::checks::context::Outcome;
use crate::checks::events::{Framing, ObservedEvent, observe};
use crate::checks::json_match::json_equal;
use crate::transcript::StepRecord;
use crate::verdict::CheckOutcome;

/// The step's events are exactly those of the full log with a sequence above the cursor, in
/// order and unchanged (past the terminal event, see [`comparable_lengths`]).
pub(in crate::checks) fn exclusive_after(
    out: &Outcome<'_>,
    step: &StepRecord,
    expect: &ExclusiveAfterExpect,
) -> CheckOutcome {
    let (_, observed) = observed!(out, step);
    let cursor = match out.ctx.scope.expand(&expect.cursor) {
        Ok(v) => v,
        Err(e) => return out.template(&e),
    };
    let Some(cursor) = cursor_integer(&cursor) else {
        return out.fail(
            "the cursor is not an integer",
            "an integer cursor",
            cursor.to_string(),
        );
    };
    let Some(full_step) = out.ctx.steps.get(&expect.full) else {
        return out.fail(
            format!("step `{}` recorded nothing", expect.full),
            "the full log",
            "nothing",
        );
    };
    let full = match out.response(full_step) {
        Ok(r) => observe(r),
        Err(failure) => return *failure,
    };
    let mut expected: Vec<&ObservedEvent> = full
        .events
        .iter()
        .filter(|e| e.sequence.is_some_and(|s| i128::from(s) > cursor))
        .collect();
    let mut got: Vec<&ObservedEvent> = observed.events.iter().collect();
    let sent: Vec<Option<u64>> = got.iter().map(|e| e.sequence).collect();
    let resent = if got
        .iter()
        .any(|e| e.sequence.is_some_and(|s| i128::from(s) == cursor))
    {
        Some(format!("event {cursor} (the cursor itself) was re-sent"))
    } else if got
        .iter()
        .any(|e| e.sequence.is_some_and(|s| i128::from(s) < cursor))
    {
        Some("events at or before the cursor were sent".to_string())
    } else {
        None
    };
    // Past the terminal event, what was appended after one reading closed is not required of
    // it. When the full log's terminal event is at or before the cursor, every event after the
    // cursor follows it: only what both readings hold is compared.
    let surface = out.ctx.surface;
    let cursor_past_terminal = full
        .events
        .iter()
        .find(|e| is_terminal(surface, e.event_type.as_deref()))
        .and_then(|e| e.sequence)
        .is_some_and(|s| i128::from(s) <= cursor);
    let (expected_len, got_len) = if cursor_past_terminal {
        let common = expected.len().min(got.len());
        (common, common)
    } else {
        comparable_lengths(surface, &expected, &got)
    };
    let uncompared = (expected.len() - expected_len, got.len() - got_len);
    expected.truncate(expected_len);
    got.truncate(got_len);
    let expected_seqs: Vec<Option<u64>> = expected.iter().map(|e| e.sequence).collect();
    let got_seqs: Vec<Option<u64>> = got.iter().map(|e| e.sequence).collect();
    if resent.is_some() || expected_seqs != got_seqs {
        let reason = resent.unwrap_or_else(|| {
            "the events after the cursor differ from the full log's".to_string()
        });
        return out.fail(
            reason,
            format!(
                "sequences sent: {:?} (those > {cursor})",
                expected_seqs.iter().flatten().collect::<Vec<_>>()
            ),
            format!(
                "sequences sent: [{}]",
                sent.iter()
                    .map(|s| s.map_or("?".into(), |s| s.to_string()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        );
    }
    for (want, have) in expected.iter().zip(&got) {
        if have.framing != Framing::ChunkPayload
            && want.framing != Framing::ChunkPayload
            && !json_equal(&want.doc, &have.doc)
        {
            return out.fail(
                format!(
                    "event {} differs from the full log's",
                    want.sequence.unwrap_or_default()
                ),
                want.doc.to_string(),
                have.doc.to_string(),
            );
        }
    }
    let past_terminal = match uncompared {
        (0, 0) => String::new(),
        (0, more) => {
            format!("; and {more} event(s) after the terminal event the full reading does not hold")
        }
        (fewer, _) => {
            format!("; without {fewer} event(s) after the terminal event the full reading holds")
        }
    };
    out.pass(format!(
        "exactly the {} event(s) after {cursor}, in log order{past_terminal}",
        got.len()
    ))
}

/// A cursor a case gives, as a JSON integer or decimal text. Cursors may exceed 64 bits (a
/// well-formed decimal integer past the end of any log); one beyond `i128` is `i128::MAX`.
pub(super) fn cursor_integer(cursor: &Value) -> Option<i128> {
    cursor
        .as_u64()
        .map(i128::from)
        .or_else(|| cursor.as_i64().map(i128::from))
        .or_else(|| cursor.as_str().and_then(|s| s.parse::<i128>().ok()))
        .or_else(|| {
            cursor
                .as_str()
                .filter(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
                .map(|_| i128::MAX)
        })
}
