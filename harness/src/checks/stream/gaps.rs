//! `event_gaps`: consecutive events of a type (of one value at a member, with `per`) happened
//! at least a bound apart.

use std::collections::BTreeMap;

use crate::case::EventGapsExpect;
use crate::checks::context::Outcome;
use crate::checks::events::ObservedEvent;
use crate::template::TemplateError;
use crate::transcript::StepRecord;
use crate::verdict::CheckOutcome;

/// Consecutive events of `type` (carrying one value at `per`, when given) happened at least
/// `min_ms` (expanded) apart: by the host's `timestamp`s when every such event carries one,
/// else by arrival.
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
    let bound = i64::try_from(min_ms).unwrap_or(i64::MAX);
    // The host's own `timestamp`s say when each event happened, free of delivery jitter (a
    // loaded host may deliver one message late and the next on time). They are read when every
    // event carries one fine enough for the bound (a stamp's resolution at most a quarter of
    // it), and a gap fails only when even the latest instants its stamps allow are too close;
    // otherwise arrival times are read.
    let stamped: Option<Vec<(i64, i64)>> = matching
        .iter()
        .map(|e| {
            let text = e.doc.get("timestamp")?.as_str()?;
            let at = chrono::DateTime::parse_from_rfc3339(text).ok()?;
            Some((at.timestamp_millis(), resolution_ms(text)))
        })
        .collect();
    // Each event with the time it happened, so that grouping by `per` keeps each time with
    // its own event (an event with no arrival time is left out, not another's time taken).
    let (timed, slack, clock): (Vec<(&ObservedEvent, i64)>, i64, &str) = match stamped {
        Some(stamps)
            if !stamps.is_empty() && stamps.iter().all(|(_, r)| r.saturating_mul(4) <= bound) =>
        {
            let slack = stamps.iter().map(|(_, r)| r - 1).max().unwrap_or(0);
            (
                matching
                    .iter()
                    .copied()
                    .zip(stamps.into_iter().map(|(at, _)| at))
                    .collect(),
                slack,
                "by the host's timestamps",
            )
        }
        _ => (
            matching
                .iter()
                .filter_map(|e| Some((*e, i64::try_from(e.at_ms?).unwrap_or(i64::MAX))))
                .collect(),
            0,
            "by arrival",
        ),
    };
    // The series whose consecutive members are compared: one, or one per value at `per`.
    let mut series: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for (event, at) in &timed {
        let key = match &expect.per {
            None => Some(String::new()),
            Some(member) => crate::checks::events::field(&event.doc, member).map(|v| v.to_string()),
        };
        if let Some(key) = key {
            series.entry(key).or_default().push(*at);
        }
    }
    let pairs: usize = series.values().map(|t| t.len().saturating_sub(1)).sum();
    if let Some(member) = &expect.per
        && pairs == 0
    {
        return out.not_judged(
            format!(
                "no two `{}` events carry the same `{member}`, so no gap of one was read",
                expect.event_type
            ),
            format!("{} `{}` event(s)", matching.len(), expect.event_type),
        );
    }
    for (value, times) in &series {
        if let Some(pair) = times.windows(2).find(|w| w[1] - w[0] + slack < bound) {
            let of = expect
                .per
                .as_ref()
                .map(|member| format!(" with `{member}` {value}"))
                .unwrap_or_default();
            return out.fail(
                format!(
                    "two `{}` events{of} {} ms apart ({clock})",
                    expect.event_type,
                    pair[1] - pair[0]
                ),
                format!(
                    "at least {} ms between consecutive `{}` events{of}",
                    min_ms, expect.event_type
                ),
                format!("times (ms, {clock}): {times:?}"),
            );
        }
    }
    let per = expect
        .per
        .as_ref()
        .map(|member| format!(" of {} `{member}`(s)", series.len()))
        .unwrap_or_default();
    out.pass(format!(
        "{} `{}` event(s){per}, each at least {} ms after the previous ({clock})",
        timed.len(),
        expect.event_type,
        min_ms
    ))
}

/// The resolution of an RFC 3339 timestamp in milliseconds, from its fractional seconds: 1000
/// for none, 100 for one digit, 10 for two, 1 for three or more (the check reads milliseconds).
fn resolution_ms(timestamp: &str) -> i64 {
    let time = timestamp
        .split_once(['T', 't'])
        .map_or(timestamp, |(_, t)| t);
    let digits = time
        .split_once('.')
        .map_or(0, |(_, f)| f.bytes().take_while(u8::is_ascii_digit).count());
    match digits {
        0 => 1000,
        1 => 100,
        2 => 10,
        _ => 1,
    }
}
