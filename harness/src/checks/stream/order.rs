//! `order`: the first event's type, `before` pairs (optionally per a field) and subsequences.

use super::observed::render_types;
use crate::case::OrderExpect;
use crate::checks::context::Outcome;
use crate::checks::events::field;
use crate::event_selector::EventSelector;
use crate::template::TemplateError;
use crate::transcript::StepRecord;
use crate::verdict::CheckOutcome;

/// The ordering constraints over the step's events, each event named by a selector.
pub(in crate::checks) fn order(
    out: &Outcome<'_>,
    step: &StepRecord,
    expect: &OrderExpect,
) -> CheckOutcome {
    let (_, observed) = observed!(out, step);
    let events = &observed.events;
    // A selector may read a value the host chose (`heartbeatId=${target.heartbeat_constant_id}`).
    let expanded = match expand_selectors(out, expect) {
        Ok(expanded) => expanded,
        Err(error) => return out.template(&error),
    };
    let expect = &expanded;
    if let Some(first) = &expect.first {
        let actual = events
            .first()
            .and_then(|e| e.event_type.clone())
            .unwrap_or_else(|| "(no events)".into());
        if &actual != first {
            return out.fail(
                format!("the first event is `{actual}`"),
                first.clone(),
                render_types(events),
            );
        }
    }
    if let Some([a, b]) = &expect.before {
        for (i, later) in events.iter().enumerate() {
            if !EventSelector::parse(b).matches(later) {
                continue;
            }
            let key = expect.per.as_ref().map(|p| field(&later.doc, p).cloned());
            let preceded = events[..i].iter().any(|earlier| {
                EventSelector::parse(a).matches(earlier)
                    && key.as_ref().is_none_or(|k| {
                        k.as_ref() == field(&earlier.doc, expect.per.as_deref().unwrap_or_default())
                    })
            });
            if !preceded {
                let per = expect
                    .per
                    .as_ref()
                    .map_or(String::new(), |p| format!(" with the same `{p}`"));
                return out.fail(
                    format!(
                        "`{b}` at sequence {} is not preceded by `{a}`{per}",
                        later.sequence.map_or("?".into(), |s| s.to_string())
                    ),
                    format!("every `{b}` after a `{a}`{per}"),
                    render_types(events),
                );
            }
        }
    }
    if let Some(chain) = &expect.subsequence {
        let mut position = 0;
        for spec in chain {
            match events[position..]
                .iter()
                .position(|e| EventSelector::parse(spec).matches(e))
            {
                Some(found) => position += found + 1,
                None => {
                    return out.fail(
                        format!("`{spec}` does not occur in order"),
                        chain.join(" → "),
                        render_types(events),
                    );
                }
            }
        }
    }
    out.pass("order as expected")
}

/// The constraints with every `${…}` of their selectors expanded.
fn expand_selectors(out: &Outcome<'_>, expect: &OrderExpect) -> Result<OrderExpect, TemplateError> {
    let expand = |text: &String| out.ctx.scope.interpolate(text);
    Ok(OrderExpect {
        first: expect.first.as_ref().map(expand).transpose()?,
        before: match &expect.before {
            Some([a, b]) => Some([expand(a)?, expand(b)?]),
            None => None,
        },
        per: expect.per.clone(),
        subsequence: expect
            .subsequence
            .as_ref()
            .map(|chain| chain.iter().map(expand).collect::<Result<Vec<_>, _>>())
            .transpose()?,
    })
}
