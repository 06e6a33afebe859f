//! Checks on which events a step received: `events_include` / `events_exclude`,
//! `every_event`, `events_equal`, `listed_types_observed`.

use serde_json::Value;
use spec::registry::{TypeNameVerdict, orgs};

use super::observed::render_types;
use super::terminal::comparable_lengths;
use crate::case::{EveryEventExpect, ListedTypesObservedExpect};
use crate::checks::context::Outcome;
use crate::checks::events::{ObservedEvent, observe};
use crate::checks::json_match::{first_difference, json_condition, json_equal};
use crate::transcript::StepRecord;
use crate::verdict::CheckOutcome;

/// Each of `types` occurs (`include`) or none does (`"vendor"`: any vendor type).
pub(in crate::checks) fn events_include(
    out: &Outcome<'_>,
    step: &StepRecord,
    types: &[String],
    include: bool,
) -> CheckOutcome {
    let (_, observed) = observed!(out, step);
    let is_vendor = |t: &str| orgs().classify_type(t) == TypeNameVerdict::Vendor;
    let present = |wanted: &str| {
        observed.events.iter().any(|e| {
            let kind = e.event_type.as_deref().unwrap_or_default();
            if wanted == "vendor" {
                is_vendor(kind)
            } else {
                kind == wanted
            }
        })
    };
    let offending: Vec<&String> = types.iter().filter(|t| present(t) != include).collect();
    if offending.is_empty() {
        out.pass(if include {
            "every expected type occurs"
        } else {
            "no excluded type occurs"
        })
    } else if include {
        out.fail(
            format!("missing: {offending:?}"),
            format!("events of types {types:?}"),
            render_types(&observed.events),
        )
    } else {
        out.fail(
            format!("present: {offending:?}"),
            format!("no events of types {types:?}"),
            render_types(&observed.events),
        )
    }
}

/// Every event of the type (and passing the filter) satisfies the condition.
pub(in crate::checks) fn every_event(
    out: &Outcome<'_>,
    step: &StepRecord,
    expect: &EveryEventExpect,
) -> CheckOutcome {
    let (_, observed) = observed!(out, step);
    let mut checked = 0;
    for event in &observed.events {
        if expect
            .event_type
            .as_deref()
            .is_some_and(|t| event.event_type.as_deref() != Some(t))
        {
            continue;
        }
        if let Some(filter) = &expect.filter {
            match json_condition(Some(&event.doc), filter, out.ctx.scope) {
                Err(e) => return out.template(&e),
                Ok(Err(_)) => continue,
                Ok(Ok(())) => {}
            }
        }
        checked += 1;
        match json_condition(Some(&event.doc), &expect.json, out.ctx.scope) {
            Err(e) => return out.template(&e),
            Ok(Ok(())) => {}
            Ok(Err(m)) => {
                return out.fail(
                    format!(
                        "{} fails the condition at `{}`",
                        event.label(),
                        expect.json.pointer
                    ),
                    m.expected,
                    m.actual,
                );
            }
        }
    }
    out.pass(format!("{checked} event(s) satisfy the condition"))
}

/// The step's events equal another step's, sequence and document, batching flattened (past the
/// terminal event, see [`comparable_lengths`]).
pub(in crate::checks) fn events_equal(
    out: &Outcome<'_>,
    step: &StepRecord,
    other: &str,
) -> CheckOutcome {
    let (_, observed) = observed!(out, step);
    let Some(other_step) = out.ctx.steps.get(other) else {
        return out.fail(
            format!("step `{other}` recorded nothing"),
            "its events",
            "nothing",
        );
    };
    let theirs = match out.response(other_step) {
        Ok(r) => observe(r),
        Err(failure) => return *failure,
    };
    let mine: Vec<&ObservedEvent> = observed.events.iter().collect();
    let want: Vec<&ObservedEvent> = theirs.events.iter().collect();
    // Past the terminal event, what was appended after one reading closed is not required of it.
    let (mine_len, want_len) = comparable_lengths(out.ctx.surface, &mine, &want);
    let mine: Vec<(Option<u64>, &Value)> = mine[..mine_len]
        .iter()
        .map(|e| (e.sequence, &e.doc))
        .collect();
    let want: Vec<(Option<u64>, &Value)> = want[..want_len]
        .iter()
        .map(|e| (e.sequence, &e.doc))
        .collect();
    let same = mine.len() == want.len()
        && mine
            .iter()
            .zip(&want)
            .all(|(a, b)| a.0 == b.0 && json_equal(a.1, b.1));
    if same {
        return out.pass(format!("the same {} event(s) as `{other}`", mine.len()));
    }
    // Where they first differ: a sequence, or a member of one event's document.
    let first = mine.iter().zip(&want).find_map(|(a, b)| {
        if a.0 != b.0 {
            return Some(format!(
                "the sequences first differ ({:?} where {:?})",
                a.0, b.0
            ));
        }
        let pointer = first_difference(b.1, a.1)?;
        let at = |doc: &Value| {
            doc.pointer(&pointer)
                .map_or_else(|| "(absent)".to_string(), clipped)
        };
        Some(format!(
            "the event of sequence {} differs at `{}`: {} where `{other}` has {}",
            a.0.map_or_else(|| "?".to_string(), |s| s.to_string()),
            if pointer.is_empty() { "/" } else { &pointer },
            at(a.1),
            at(b.1),
        ))
    });
    let why = first
        .unwrap_or_else(|| format!("{} event(s) where `{other}` has {}", mine.len(), want.len()));
    out.fail(
        format!("the events differ from `{other}`'s: {why}"),
        render_types(&theirs.events),
        render_types(&observed.events),
    )
}

/// A value as JSON text, cut at 120 characters (a message names where two documents differ; the
/// transcript holds them whole).
fn clipped(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(120) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// Every event type a list in this step's body names occurs among the given steps' events.
pub(in crate::checks) fn listed_types_observed(
    out: &Outcome<'_>,
    step: &StepRecord,
    expect: &ListedTypesObservedExpect,
) -> CheckOutcome {
    let response = match out.response(step) {
        Ok(r) => r,
        Err(failure) => return *failure,
    };
    let listed = response
        .json
        .as_ref()
        .and_then(|body| body.pointer(&expect.pointer))
        .and_then(Value::as_array);
    let Some(listed) = listed else {
        return out.fail(
            format!("`{}` is not a list", expect.pointer),
            "an array of event types",
            response
                .json
                .as_ref()
                .and_then(|body| body.pointer(&expect.pointer))
                .map_or("nothing".to_string(), Value::to_string),
        );
    };
    let mut observed: Vec<ObservedEvent> = Vec::new();
    for id in &expect.steps {
        let Some(other) = out.ctx.steps.get(id) else {
            return out.fail(
                format!("step `{id}` recorded nothing"),
                "its events",
                "nothing",
            );
        };
        match out.response(other) {
            Ok(r) => observed.extend(observe(r).events),
            Err(failure) => return *failure,
        }
    }
    let seen = |wanted: &str| {
        observed
            .iter()
            .any(|e| e.event_type.as_deref() == Some(wanted))
    };
    let unprovoked = |t: &Value| {
        t.as_str()
            .is_some_and(|t| expect.not_provoked.iter().any(|n| n == t))
    };
    let (unexercised, never): (Vec<&Value>, Vec<&Value>) = listed
        .iter()
        .filter(|t| !t.as_str().is_some_and(seen))
        .partition(|t| unprovoked(t));
    let never: Vec<String> = never.into_iter().map(Value::to_string).collect();
    if never.is_empty() {
        let judged = listed.len() - unexercised.len();
        let mut message = format!(
            "each of the {judged} listed type(s) this case provokes occurs in {:?}",
            expect.steps
        );
        if !unexercised.is_empty() {
            let names: Vec<String> = unexercised.iter().map(|t| t.to_string()).collect();
            message.push_str(&format!(
                "; not exercised (no scenario here provokes it): {}",
                names.join(", ")
            ));
        }
        out.pass(message)
    } else {
        out.fail(
            format!("listed but never observed: {}", never.join(", ")),
            format!("every type of `{}` among the events", expect.pointer),
            render_types(&observed),
        )
    }
}
