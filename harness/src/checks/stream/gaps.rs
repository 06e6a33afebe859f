//! `event_gaps`: consecutive events of a type happened at least a bound apart.

use crate::case::EventGapsExpect;
use crate::checks::{ObservedEvent, Outcome};
use crate::template::TemplateError;
use crate::transcript::StepRecord;
use crate::verdict::CheckOutcome;

/// Consecutive events of `type` happened at least `min_ms` (expanded) apart: by the host's
/// `timestamp`s when every such event carries one, else by arrival.
pub(in crate::checks) fn event_gaps(
    out: &Outcome<'_>,
    step: &StepRecord,
    expect: &EventGapsExpect,
) -> CheckOutcome {
    let (_, observed) = observed!(out, step);
    let min_ms = match out.ctx.scope.expand(&expect.min_ms) {
        Ok(value) => match value.as_f64() {
            Some(ms) if ms >= 0.0 => ms.round() as u64,
            _ => {
                return out.template(&TemplateError::Syntax(
                    "event_gaps.min_ms".into(),
                    format!("must be a non-negative number, got {value}"),
                ));
            }
        },
        Err(error) => return out.template(&error),
    };
    let matching: Vec<&ObservedEvent> = observed
        .events
        .iter()
        .filter(|e| e.event_type.as_deref() == Some(expect.event_type.as_str()))
        .collect();
    // The host's own `timestamp`s say when each event happened, free of delivery jitter (a
    // loaded host may deliver one message late and the next on time); arrival times are the
    // fallback when an event carries none.
    let stamped: Option<Vec<i64>> = matching
        .iter()
        .map(|e| {
            e.doc
                .get("timestamp")
                .and_then(|t| t.as_str())
                .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
                .map(|t| t.timestamp_millis())
        })
        .collect();
    let (times, clock): (Vec<i64>, &str) = match stamped {
        Some(times) if !times.is_empty() => (times, "by the host's timestamps"),
        _ => (
            matching
                .iter()
                .filter_map(|e| e.at_ms)
                .map(|ms| i64::try_from(ms).unwrap_or(i64::MAX))
                .collect(),
            "by arrival",
        ),
    };
    let bound = i64::try_from(min_ms).unwrap_or(i64::MAX);
    if let Some(pair) = times.windows(2).find(|w| w[1] - w[0] < bound) {
        return out.fail(
            format!(
                "two `{}` events {} ms apart ({clock})",
                expect.event_type,
                pair[1] - pair[0]
            ),
            format!(
                "at least {} ms between consecutive `{}` events",
                min_ms, expect.event_type
            ),
            format!("times (ms, {clock}): {times:?}"),
        );
    }
    out.pass(format!(
        "{} `{}` event(s), each at least {} ms after the previous ({clock})",
        times.len(),
        expect.event_type,
        min_ms
    ))
}
