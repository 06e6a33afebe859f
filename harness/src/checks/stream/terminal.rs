//! `terminal`: the terminal-event rules. Which types are terminal comes from `spec`: the
//! execution protocol's event types on surface X, the run event registry on surface W.

use spec::execution::ExecutionEventType;
use spec::registry::{AfterTerminal, event_types};

use super::observed::render_types;
use crate::case::{CaseSurface, TerminalExpect};
use crate::checks::context::Outcome;
use crate::checks::events::ObservedEvent;
use crate::transcript::StepRecord;
use crate::verdict::{CheckOutcome, Level};

/// Whether an event type ends the execution (surface X) or the run (surface W).
pub(crate) fn is_terminal(surface: CaseSurface, event_type: Option<&str>) -> bool {
    match (surface, event_type) {
        (CaseSurface::Execution, Some(t)) => {
            ExecutionEventType::from_name(t).is_some_and(ExecutionEventType::is_terminal)
        }
        (CaseSurface::Openwop, Some(t)) => event_types().get(t).is_some_and(|e| e.terminal),
        _ => false,
    }
}

/// Whether a surface-W `values` snapshot shows the run in a terminal status: how a `values`
/// stream shows the run's end.
pub(crate) fn is_terminal_snapshot(snapshot: &serde_json::Value) -> bool {
    snapshot
        .get("status")
        .cloned()
        .and_then(|s| serde_json::from_value::<spec::openwop::RunStatus>(s).ok())
        .is_some_and(spec::openwop::RunStatus::is_terminal)
}

/// `none`, `exactly_one_last`, `type_in`, `nothing_forbidden_after`: one outcome per rule
/// asked.
pub(in crate::checks) fn terminal(
    out: &Outcome<'_>,
    step: &StepRecord,
    expect: &TerminalExpect,
) -> Vec<CheckOutcome> {
    let (_, observed) = match super::observed::observed_of(out, step) {
        Ok(pair) => pair,
        Err(failure) => return vec![*failure],
    };
    let surface = out.ctx.surface;
    // A mixed-mode run stream may send one event once per admitting mode (the chapter: a
    // consumer MUST tolerate it): a repeat of an event already seen is the same event, not a
    // later one, so the terminal rules judge each event once.
    let events = &distinct_events(surface, &observed.events);
    let terminals: Vec<usize> = events
        .iter()
        .enumerate()
        .filter(|(_, e)| is_terminal(surface, e.event_type.as_deref()))
        .map(|(i, _)| i)
        .collect();
    let mut outcomes = Vec::new();
    if expect.none == Some(true) {
        outcomes.push(if terminals.is_empty() {
            out.pass("no terminal event")
        } else {
            out.fail(
                "a terminal event was sent",
                "no terminal event",
                render_types(events),
            )
        });
    }
    if expect.exactly_one_last == Some(true) {
        outcomes.push(match terminals.as_slice() {
            [only] if surface == CaseSurface::Openwop || *only + 1 == events.len() => {
                out.pass("exactly one terminal event")
            }
            [_] => out.fail(
                "events follow the terminal event",
                "the terminal event last",
                render_types(events),
            ),
            [] => out.fail(
                "no terminal event",
                "exactly one terminal event",
                render_types(events),
            ),
            many => out.fail(
                format!("{} terminal events", many.len()),
                "exactly one terminal event",
                render_types(events),
            ),
        });
        // In a run log only forbidden types may not follow the terminal event: that is judged
        // by `nothing_forbidden_after`, not by position.
    }
    if let Some(types) = &expect.type_in {
        let kind = terminals
            .first()
            .and_then(|&i| events[i].event_type.clone())
            .unwrap_or_else(|| "(none)".into());
        outcomes.push(if types.contains(&kind) {
            out.pass(format!("terminal event `{kind}`"))
        } else {
            out.fail(format!("terminal event `{kind}`"), types.join(" or "), kind)
        });
    }
    if expect.nothing_forbidden_after == Some(true) {
        let after = terminals
            .first()
            .map_or(&events[..0], |&i| &events[i + 1..]);
        let mut forbidden = Vec::new();
        let mut unconstrained = Vec::new();
        for event in after {
            let kind = event.event_type.as_deref().unwrap_or("?");
            match surface {
                CaseSurface::Execution => forbidden.push(kind.to_string()),
                CaseSurface::Openwop => match event_types().get(kind).map(|e| e.after_terminal) {
                    Some(AfterTerminal::Forbidden) => forbidden.push(kind.to_string()),
                    Some(AfterTerminal::Unconstrained) => unconstrained.push(kind.to_string()),
                    Some(AfterTerminal::Allowed) | None => {}
                },
            }
        }
        outcomes.push(if forbidden.is_empty() {
            out.pass(format!(
                "nothing forbidden follows the terminal event ({} later event(s))",
                after.len()
            ))
        } else {
            out.fail(
                "forbidden events follow the terminal event",
                "no forbidden event after the terminal event",
                forbidden.join(", "),
            )
        });
        if !unconstrained.is_empty() {
            outcomes.push(out.fail_at(
                Level::Contract,
                "events the chapter leaves unconstrained follow the terminal event (the contract appends nothing)",
                unconstrained.join(", "),
            ));
        }
    }
    if outcomes.is_empty() {
        outcomes.push(out.pass("no terminal rule asked"));
    }
    outcomes
}

/// The events in stream order without repeats of a run event already seen (same `sequence` and
/// `eventId`); surface X streams are judged as sent.
fn distinct_events(surface: CaseSurface, events: &[ObservedEvent]) -> Vec<ObservedEvent> {
    if surface != CaseSurface::Openwop {
        return events.to_vec();
    }
    let mut seen = std::collections::HashSet::new();
    events
        .iter()
        .filter(|e| {
            let event_id = e.doc.get("eventId").and_then(serde_json::Value::as_str);
            match (e.sequence, event_id) {
                (Some(sequence), Some(event_id)) => seen.insert((sequence, event_id.to_string())),
                _ => true,
            }
        })
        .cloned()
        .collect()
}

/// How many leading events of two readings of one log are compared, `(of a, of b)`: all of
/// each, except past the terminal event. The chapter lets `compensation.*`, `run.dead-lettered`
/// and vendor types follow the terminal event, and a stream closes after the terminal event, so
/// whether a reading also carries what was appended after the terminal depends on when the host
/// appended it: when both readings hold their first terminal event at the same place, only the
/// events after it that both carry are compared (what each has past it must then agree).
pub(super) fn comparable_lengths(
    surface: CaseSurface,
    a: &[&ObservedEvent],
    b: &[&ObservedEvent],
) -> (usize, usize) {
    let first_terminal = |events: &[&ObservedEvent]| {
        events
            .iter()
            .position(|e| is_terminal(surface, e.event_type.as_deref()))
    };
    match (first_terminal(a), first_terminal(b)) {
        (Some(at_a), Some(at_b)) if at_a == at_b => {
            let shorter = a.len().min(b.len());
            (shorter, shorter)
        }
        _ => (a.len(), b.len()),
    }
}
