//! `event_gaps`: consecutive events of a type arrive at least a bound apart.

use crate::case::EventGapsExpect;
use crate::checks::Outcome;
use crate::template::TemplateError;
use crate::transcript::StepRecord;
use crate::verdict::CheckOutcome;

/// Consecutive events of `type` arrive at least `min_ms` (expanded) apart.
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
    let arrivals: Vec<u64> = observed
        .events
        .iter()
        .filter(|e| e.event_type.as_deref() == Some(expect.event_type.as_str()))
        .filter_map(|e| e.at_ms)
        .collect();
    if let Some(pair) = arrivals
        .windows(2)
        .find(|w| w[1].saturating_sub(w[0]) < min_ms)
    {
        return out.fail(
            format!(
                "two `{}` events arrived {} ms apart",
                expect.event_type,
                pair[1] - pair[0]
            ),
            format!(
                "at least {} ms between consecutive `{}` events",
                min_ms, expect.event_type
            ),
            format!("arrivals (ms): {arrivals:?}"),
        );
    }
    out.pass(format!(
        "{} `{}` event(s), each at least {} ms after the previous",
        arrivals.len(),
        expect.event_type,
        min_ms
    ))
}
