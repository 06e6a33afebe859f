//! `last_sequence`: poll's `lastSequence` is the highest sequence of the log at the time of the
//! response.
//!
//! Poll returns every event after its cursor, in log order, so when it returns events the last
//! one's sequence is the log's highest. When it returns none, the log ends at or before the
//! cursor (or is empty, -1, when there is no cursor), and it still holds whatever an earlier
//! reading saw: the log is append-only. Events may follow the terminal event (`compensation.*`,
//! `run.dead-lettered`, vendor types) at any time, so a finished log read earlier is a lower
//! bound, never the expected value.

use serde_json::Value;

use super::cursor::cursor_integer;
use crate::case::LastSequenceExpect;
use crate::checks::context::Outcome;
use crate::template::TemplateError;
use crate::transcript::StepRecord;
use crate::verdict::CheckOutcome;

/// See the module documentation.
pub(in crate::checks) fn last_sequence(
    out: &Outcome<'_>,
    step: &StepRecord,
    expect: &LastSequenceExpect,
) -> CheckOutcome {
    let (response, observed) = observed!(out, step);
    let bound = |value: &Option<Value>| -> Result<Option<i128>, Box<CheckOutcome>> {
        let Some(value) = value else { return Ok(None) };
        let expanded = out
            .ctx
            .scope
            .expand(value)
            .map_err(|e| Box::new(out.template(&e)))?;
        cursor_integer(&expanded).map(Some).ok_or_else(|| {
            Box::new(out.template(&TemplateError::Missing(
                value.to_string(),
                format!("a bound of `last_sequence` must be an integer, got {expanded}"),
            )))
        })
    };
    let (cursor, at_least) = match (bound(&expect.cursor), bound(&expect.at_least)) {
        (Ok(cursor), Ok(at_least)) => (cursor, at_least),
        (Err(failure), _) | (_, Err(failure)) => return *failure,
    };
    let reported = response
        .json
        .as_ref()
        .and_then(|body| body.get("lastSequence"))
        .and_then(Value::as_i64)
        .map(i128::from);
    let Some(reported) = reported else {
        return out.fail(
            "the body has no integer `lastSequence`",
            "an integer `lastSequence`",
            response.json.as_ref().map_or_else(
                || "a body that is not JSON".to_string(),
                |body| {
                    body.get("lastSequence")
                        .map_or("absent".into(), Value::to_string)
                },
            ),
        );
    };
    let lower = at_least.unwrap_or(-1);
    if let Some(highest) = observed.events.iter().filter_map(|e| e.sequence).max() {
        let highest = i128::from(highest);
        return if reported == highest && reported >= lower {
            out.pass(format!(
                "lastSequence {reported}: the last event the poll returned"
            ))
        } else if reported != highest {
            out.fail(
                "lastSequence is not the highest sequence of the log",
                format!("{highest} (the last event the poll returned)"),
                reported.to_string(),
            )
        } else {
            out.fail(
                "the log ends before a sequence an earlier reading held",
                format!("at least {lower}"),
                reported.to_string(),
            )
        };
    }
    let upper = cursor.unwrap_or(-1);
    if (lower..=upper).contains(&reported) {
        out.pass(match cursor {
            Some(cursor) => format!(
                "lastSequence {reported}: no event after {cursor}, and the log held {lower} before"
            ),
            None => "lastSequence -1: the log is empty".to_string(),
        })
    } else {
        out.fail(
            "lastSequence is not the highest sequence of the log",
            match cursor {
                Some(cursor) => format!(
                    "{lower}..={upper} (no event after the cursor {cursor}; an earlier reading held {lower})"
                ),
                None if lower > -1 => format!(
                    "-1 for an empty log, yet an earlier reading held {lower}: the poll returned no event"
                ),
                None => "-1 (the poll returned no event: the log is empty)".to_string(),
            },
            reported.to_string(),
        )
    }
}
