//! Checks on event logs: validity, sequences, cursors, terminal rules, ordering, frames,
//! keep-alives, materialisation.

use serde_json::{Value, json};
use spec::registry::{AfterTerminal, TypeNameVerdict, event_types, orgs};
use spec::schema::{Published, validate, validate_run_event_payload};

use super::Outcome;
use super::events::{Observed, ObservedEvent, field, observe};
use super::json_match::{json_condition, json_equal};
use crate::case::{
    CaseSurface, EveryEventExpect, ExclusiveAfterExpect, FramesExpect, KeepaliveExpect,
    ListedTypesObservedExpect, OrderExpect, SequenceExpect, TerminalExpect,
};
use crate::template::TemplateError;
use crate::transcript::{BodyEnd, FrameKind, ResponseRecord, StepRecord};
use crate::verdict::{CheckOutcome, Level};

fn observed_of<'r>(
    out: &Outcome<'_>,
    step: &'r StepRecord,
) -> Result<(&'r ResponseRecord, Observed), Box<CheckOutcome>> {
    let response = out.response(step)?;
    Ok((response, observe(response)))
}

macro_rules! observed {
    ($out:expr, $step:expr) => {
        match observed_of($out, $step) {
            Ok(pair) => pair,
            Err(failure) => return *failure,
        }
    };
}

fn is_terminal(surface: CaseSurface, event_type: Option<&str>) -> bool {
    match (surface, event_type) {
        (CaseSurface::Execution, Some(t)) => {
            matches!(t, "execution.completed" | "execution.failed")
        }
        (CaseSurface::Openwop, Some(t)) => event_types().get(t).is_some_and(|e| e.terminal),
        _ => false,
    }
}

fn render_types(events: &[ObservedEvent]) -> String {
    events
        .iter()
        .map(|e| {
            format!(
                "{} {}",
                e.sequence.map_or("?".into(), |s| s.to_string()),
                e.event_type.as_deref().unwrap_or("?")
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

pub(super) fn events_valid(out: &Outcome<'_>, step: &StepRecord) -> CheckOutcome {
    let (_, observed) = observed!(out, step);
    let mut problems = Vec::new();
    for (index, data) in &observed.unparsable {
        problems.push(format!(
            "frame {index}: data is not JSON: {}",
            super::response::preview(data)
        ));
    }
    for event in &observed.events {
        let at = format!(
            "event {}",
            event.sequence.map_or("?".into(), |s| s.to_string())
        );
        match out.ctx.surface {
            CaseSurface::Execution => {
                if let Err(v) = validate(Published::ExecutionEvent, &event.doc) {
                    problems.push(format!(
                        "{at}: {}",
                        v.iter()
                            .take(3)
                            .map(ToString::to_string)
                            .collect::<Vec<_>>()
                            .join("; ")
                    ));
                }
            }
            CaseSurface::Openwop if event.frame_event.as_deref() == Some("ai.message.chunk") => {
                if let Err(v) = validate_run_event_payload("output.chunk", &event.doc) {
                    problems.push(format!(
                        "{at} (ai.message.chunk): {}",
                        v.iter()
                            .take(3)
                            .map(ToString::to_string)
                            .collect::<Vec<_>>()
                            .join("; ")
                    ));
                }
            }
            CaseSurface::Openwop => {
                if let Err(v) = validate(Published::RunEvent, &event.doc) {
                    problems.push(format!(
                        "{at}: {}",
                        v.iter()
                            .take(3)
                            .map(ToString::to_string)
                            .collect::<Vec<_>>()
                            .join("; ")
                    ));
                    continue;
                }
                let kind = event.event_type.as_deref().unwrap_or_default();
                if orgs().classify_type(kind) == TypeNameVerdict::Registered
                    && let Err(v) = validate_run_event_payload(kind, &event.doc["payload"])
                {
                    problems.push(format!(
                        "{at} ({kind}) payload: {}",
                        v.iter()
                            .take(3)
                            .map(ToString::to_string)
                            .collect::<Vec<_>>()
                            .join("; ")
                    ));
                }
            }
        }
    }
    for (index, _, snapshot) in &observed.snapshots {
        if let Err(v) = validate(Published::RunSnapshot, snapshot) {
            problems.push(format!(
                "state.snapshot frame {index}: {}",
                v.iter()
                    .take(3)
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; ")
            ));
        }
    }
    if problems.is_empty() {
        out.pass(format!(
            "{} event(s) and {} snapshot(s) validate",
            observed.events.len(),
            observed.snapshots.len()
        ))
    } else {
        out.fail(
            format!("{} invalid event(s) or frame(s)", problems.len()),
            "every event valid against the published schemas",
            problems.join("\n"),
        )
    }
}

pub(super) fn sequence(
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

pub(super) fn exclusive_after(
    out: &Outcome<'_>,
    step: &StepRecord,
    expect: &ExclusiveAfterExpect,
) -> CheckOutcome {
    let (_, observed) = observed!(out, step);
    let cursor = match out.ctx.scope.expand(&expect.cursor) {
        Ok(v) => v,
        Err(e) => return out.template(&e),
    };
    // Cursors may exceed 64 bits (a well-formed decimal integer past the end of any log).
    let Some(cursor) = cursor
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
    else {
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
    let expected: Vec<&ObservedEvent> = full
        .events
        .iter()
        .filter(|e| e.sequence.is_some_and(|s| i128::from(s) > cursor))
        .collect();
    let got: Vec<&ObservedEvent> = observed.events.iter().collect();
    let expected_seqs: Vec<Option<u64>> = expected.iter().map(|e| e.sequence).collect();
    let got_seqs: Vec<Option<u64>> = got.iter().map(|e| e.sequence).collect();
    if expected_seqs != got_seqs {
        let reason = if got
            .iter()
            .any(|e| e.sequence.is_some_and(|s| i128::from(s) == cursor))
        {
            format!("event {cursor} (the cursor itself) was re-sent")
        } else if got
            .iter()
            .any(|e| e.sequence.is_some_and(|s| i128::from(s) < cursor))
        {
            "events at or before the cursor were sent".to_string()
        } else {
            "the events after the cursor differ from the full log's".to_string()
        };
        return out.fail(
            reason,
            format!(
                "sequences sent: {:?} (those > {cursor})",
                expected_seqs.iter().flatten().collect::<Vec<_>>()
            ),
            format!(
                "sequences sent: [{}]",
                got_seqs
                    .iter()
                    .map(|s| s.map_or("?".into(), |s| s.to_string()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        );
    }
    for (want, have) in expected.iter().zip(&got) {
        if have.frame_event.as_deref() != Some("ai.message.chunk")
            && want.frame_event.as_deref() != Some("ai.message.chunk")
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
    out.pass(format!(
        "exactly the {} event(s) after {cursor}, in log order",
        got.len()
    ))
}

pub(super) fn terminal(
    out: &Outcome<'_>,
    step: &StepRecord,
    expect: &TerminalExpect,
) -> Vec<CheckOutcome> {
    let (_, observed) = match observed_of(out, step) {
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
        if surface == CaseSurface::Openwop && terminals.len() == 1 {
            // In a run log only forbidden types may not follow; the last-position rule is
            // judged by `nothing_forbidden_after`.
        }
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
            let event_id = e.doc.get("eventId").and_then(Value::as_str);
            match (e.sequence, event_id) {
                (Some(sequence), Some(event_id)) => seen.insert((sequence, event_id.to_string())),
                _ => true,
            }
        })
        .cloned()
        .collect()
}

fn matches_spec(event: &ObservedEvent, spec: &str) -> bool {
    let (kind, condition) = match spec.split_once('@') {
        Some((kind, condition)) => (kind, Some(condition)),
        None => (spec, None),
    };
    if event.event_type.as_deref() != Some(kind) {
        return false;
    }
    match condition.and_then(|c| c.split_once('=')) {
        Some((name, value)) => field(&event.doc, name).is_some_and(|v| match v {
            Value::String(text) => text == value,
            // `attempt=1` names the number 1, `flag=true` the boolean.
            other => {
                serde_json::from_str::<Value>(value).is_ok_and(|parsed| json_equal(other, &parsed))
            }
        }),
        None => true,
    }
}

pub(super) fn order(out: &Outcome<'_>, step: &StepRecord, expect: &OrderExpect) -> CheckOutcome {
    let (_, observed) = observed!(out, step);
    let events = &observed.events;
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
            if !matches_spec(later, b) {
                continue;
            }
            let key = expect.per.as_ref().map(|p| field(&later.doc, p).cloned());
            let preceded = events[..i].iter().any(|earlier| {
                matches_spec(earlier, a)
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
                .position(|e| matches_spec(e, spec))
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

pub(super) fn closed_by_server(out: &Outcome<'_>, step: &StepRecord, want: bool) -> CheckOutcome {
    let response = match out.response(step) {
        Ok(r) => r,
        Err(failure) => return *failure,
    };
    let closed = response.end == BodyEnd::ServerClosed;
    let actual = match &response.end {
        BodyEnd::ServerClosed => "the server closed the stream".to_string(),
        BodyEnd::ClientStopped => {
            "the harness stopped reading (the stream was still open)".to_string()
        }
        BodyEnd::Timeout => "the stream was still open when the case's time ran out".to_string(),
        BodyEnd::Broken(why) => format!("the connection broke: {why}"),
        BodyEnd::TooLarge(why) => format!("the harness stopped: {why}"),
    };
    if closed == want {
        out.pass(actual)
    } else if want {
        out.fail(
            "the server did not close the stream",
            "the server closes the stream",
            actual,
        )
    } else {
        out.fail(
            "the server closed the stream",
            "the stream held open",
            actual,
        )
    }
}

pub(super) fn frames(out: &Outcome<'_>, step: &StepRecord, expect: &FramesExpect) -> CheckOutcome {
    let response = match out.response(step) {
        Ok(r) => r,
        Err(failure) => return *failure,
    };
    let frames: Vec<_> = response.events().collect();
    let listing = || {
        frames
            .iter()
            .map(|(_, id, event, _, _)| {
                format!("id:{} event:{}", id.unwrap_or("-"), event.unwrap_or("-"))
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    if let Some(count) = &expect.count {
        let count = match out.ctx.scope.expand(count) {
            Ok(v) => v.as_u64(),
            Err(e) => return out.template(&e),
        };
        if count != Some(frames.len() as u64) {
            return out.fail(
                format!("{} frame(s)", frames.len()),
                format!("{} frame(s)", count.map_or("?".into(), |c| c.to_string())),
                listing(),
            );
        }
    }
    if let Some(min) = expect.min
        && (frames.len() as u64) < min
    {
        return out.fail(
            format!("only {} frame(s)", frames.len()),
            format!("at least {min}"),
            listing(),
        );
    }
    if let Some(allowed) = &expect.event_in
        && let Some((_, _, event, _, _)) = frames
            .iter()
            .find(|(_, _, e, _, _)| !e.is_some_and(|e| allowed.iter().any(|a| a == e)))
    {
        return out.fail(
            format!("a frame named `{}`", event.unwrap_or("(none)")),
            allowed.join(" or "),
            listing(),
        );
    }
    if let Some(first) = &expect.first_event {
        let actual = frames.first().and_then(|f| f.2).unwrap_or("(no frame)");
        if actual != first {
            return out.fail(
                format!("the first frame is `{actual}`"),
                first.clone(),
                listing(),
            );
        }
    }
    if expect.ids_numeric == Some(true)
        && let Some((_, id, _, _, _)) = frames
            .iter()
            .find(|(_, id, _, _, _)| !id.is_some_and(|i| i.parse::<u64>().is_ok()))
    {
        return out.fail(
            "a frame without a numeric id",
            "every frame's id: a non-negative integer",
            format!("id: {}", id.unwrap_or("(absent)")),
        );
    }
    if expect.has_batch == Some(true)
        && !frames
            .iter()
            .any(|(_, _, e, _, j)| *e == Some("batch") && j.is_some_and(Value::is_array))
    {
        return out.fail(
            "no batch frame",
            "at least one `batch` frame with an array",
            listing(),
        );
    }
    if expect.batch_id_highest == Some(true) {
        for (_, id, event, _, json) in &frames {
            if *event != Some("batch") {
                continue;
            }
            let highest = json.and_then(Value::as_array).and_then(|a| {
                a.iter()
                    .filter_map(|d| d.get("sequence").and_then(Value::as_u64))
                    .max()
            });
            if id.and_then(|i| i.parse::<u64>().ok()) != highest {
                return out.fail(
                    "a batch frame's id is not its highest sequence",
                    format!("id: {}", highest.map_or("?".into(), |h| h.to_string())),
                    format!("id: {}", id.unwrap_or("(absent)")),
                );
            }
        }
    }
    if let Some(modes) = &expect.event_names_admitting_mode {
        let observed = observe(response);
        for event in &observed.events {
            let name = event.frame_event.as_deref().unwrap_or("(none)");
            let kind = event.event_type.as_deref().unwrap_or_default();
            let admits = |mode: &str| mode_admits(mode, kind);
            let ok = match name {
                "ai.message.chunk" => modes.iter().any(|m| m == "messages"),
                "batch" => true,
                mode if modes.iter().any(|m| m == mode) => admits(mode),
                _ => false,
            };
            if !ok {
                return out.fail(
                    format!("`{kind}` arrived in a frame named `{name}`"),
                    format!("`event:` naming a mode of {modes:?} that admits `{kind}`"),
                    format!("event: {name}"),
                );
            }
        }
    }
    if expect.event_is_type == Some(true) {
        for (_, id, event, _, json) in &frames {
            let Some(doc) = json.filter(|j| j.is_object()) else {
                continue;
            };
            if matches!(
                *event,
                Some("state.snapshot" | "batch" | "ai.message.chunk")
            ) {
                continue;
            }
            let kind = doc.get("type").and_then(Value::as_str);
            if kind != *event {
                return out.fail(
                    format!(
                        "frame {} is named `{}`",
                        id.unwrap_or("-"),
                        event.unwrap_or("(none)")
                    ),
                    format!("event: {}", kind.unwrap_or("(its type)")),
                    format!("event: {}", event.unwrap_or("(none)")),
                );
            }
        }
    }
    if expect.no_truncated_frame == Some(true)
        && let Some(partial) = &response.trailing_partial_frame
    {
        return out.fail(
            "the stream ended inside a frame",
            "every frame ended by a blank line",
            partial.clone(),
        );
    }
    out.pass(format!("{} frame(s) as expected", frames.len()))
}

/// Whether a stream mode admits an event type (contract tier table; vendor types only in debug).
pub fn mode_admits(mode: &str, event_type: &str) -> bool {
    use spec::registry::StreamTier;
    let tier = event_types().get(event_type).map(|e| e.tier);
    match mode {
        "debug" => true,
        "updates" | "values" => tier == Some(StreamTier::Updates),
        "messages" => tier == Some(StreamTier::Messages),
        _ => false,
    }
}

pub(super) fn keepalive(
    out: &Outcome<'_>,
    step: &StepRecord,
    expect: &KeepaliveExpect,
) -> CheckOutcome {
    let response = match out.response(step) {
        Ok(r) => r,
        Err(failure) => return *failure,
    };
    let comments = response
        .frames
        .iter()
        .filter(|f| matches!(f.kind, FrameKind::Comment { .. }))
        .count() as u32;
    let mut marks: Vec<u64> = vec![response.headers_at_ms];
    marks.extend(response.frames.iter().map(|f| f.at_ms));
    marks.push(response.end_at_ms);
    let max_gap = marks
        .windows(2)
        .map(|w| w[1].saturating_sub(w[0]))
        .max()
        .unwrap_or(0);
    if comments < expect.min_comments {
        return out.fail(
            format!(
                "{comments} keep-alive comment(s) in {} ms",
                response.end_at_ms.saturating_sub(response.headers_at_ms)
            ),
            format!("at least {} comment(s)", expect.min_comments),
            format!("{comments} comment(s); longest silence {max_gap} ms"),
        );
    }
    if max_gap > expect.max_gap_ms {
        return out.fail(
            format!("a silence of {max_gap} ms"),
            format!("no silence longer than {} ms", expect.max_gap_ms),
            format!("{max_gap} ms"),
        );
    }
    out.pass(format!(
        "{comments} keep-alive comment(s); longest silence {max_gap} ms"
    ))
}

/// Folds an execution log's deltas into the materialised result: `output.delta` per
/// `output_index`, tool calls by `call_id` in order of first appearance.
pub fn fold_execution_events(events: &[ObservedEvent]) -> Value {
    let mut outputs: std::collections::BTreeMap<u64, String> = std::collections::BTreeMap::new();
    let mut calls: Vec<(String, String, String)> = Vec::new();
    for event in events {
        let doc = &event.doc;
        match event.event_type.as_deref() {
            Some("output.delta") => {
                let index = doc.get("output_index").and_then(Value::as_u64).unwrap_or(0);
                outputs
                    .entry(index)
                    .or_default()
                    .push_str(doc.get("delta").and_then(Value::as_str).unwrap_or_default());
            }
            Some("tool.call.started") => {
                let id = doc
                    .get("call_id")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                let name = doc
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                match calls.iter_mut().find(|c| c.0 == id) {
                    Some(call) => call.1 = name,
                    None => calls.push((id, name, String::new())),
                }
            }
            Some("tool.call.arguments.delta") => {
                let id = doc
                    .get("call_id")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let delta = doc.get("delta").and_then(Value::as_str).unwrap_or_default();
                if let Some(call) = calls.iter_mut().find(|c| c.0 == id) {
                    call.2.push_str(delta);
                }
            }
            _ => {}
        }
    }
    json!({
        "outputs": outputs.into_iter().map(|(index, text)| json!({"index": index, "type": "text", "text": text})).collect::<Vec<_>>(),
        "tool_calls": calls.into_iter().map(|(call_id, name, arguments)| json!({"call_id": call_id, "name": name, "arguments": arguments})).collect::<Vec<_>>(),
    })
}

pub(super) fn fold_equals(out: &Outcome<'_>, step: &StepRecord, result: &Value) -> CheckOutcome {
    let (_, observed) = observed!(out, step);
    let want = match out.ctx.scope.expand(result) {
        Ok(v) => v,
        Err(e) => return out.template(&e),
    };
    let folded = fold_execution_events(&observed.events);
    let normalise = |v: &Value| {
        let mut v = v.clone();
        for key in ["outputs", "tool_calls"] {
            if v.get(key).is_none() {
                v[key] = json!([]);
            }
        }
        v
    };
    if json_equal(&normalise(&folded), &normalise(&want)) {
        out.pass("the materialised result equals the folded deltas")
    } else {
        out.fail(
            "the materialised result differs from the folded deltas",
            serde_json::to_string_pretty(&folded).unwrap_or_default(),
            serde_json::to_string_pretty(&want).unwrap_or_default(),
        )
    }
}

pub(super) fn events_include(
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

pub(super) fn every_event(
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
                        "event {} fails the condition at `{}`",
                        event.sequence.map_or("?".into(), |s| s.to_string()),
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

pub(super) fn events_equal(out: &Outcome<'_>, step: &StepRecord, other: &str) -> CheckOutcome {
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
    let mine: Vec<(Option<u64>, &Value)> = observed
        .events
        .iter()
        .map(|e| (e.sequence, &e.doc))
        .collect();
    let want: Vec<(Option<u64>, &Value)> =
        theirs.events.iter().map(|e| (e.sequence, &e.doc)).collect();
    let same = mine.len() == want.len()
        && mine
            .iter()
            .zip(&want)
            .all(|(a, b)| a.0 == b.0 && json_equal(a.1, b.1));
    if same {
        out.pass(format!("the same {} event(s) as `{other}`", mine.len()))
    } else {
        out.fail(
            format!("the events differ from `{other}`'s"),
            render_types(&theirs.events),
            render_types(&observed.events),
        )
    }
}

pub(super) fn listed_types_observed(
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
    let never: Vec<String> = listed
        .iter()
        .filter(|t| !t.as_str().is_some_and(seen))
        .map(Value::to_string)
        .collect();
    if never.is_empty() {
        out.pass(format!(
            "each of the {} listed type(s) occurs in {:?}",
            listed.len(),
            expect.steps
        ))
    } else {
        out.fail(
            format!("listed but never observed: {}", never.join(", ")),
            format!("every type of `{}` among the events", expect.pointer),
            render_types(&observed),
        )
    }
}

pub(super) fn event_gaps(
    out: &Outcome<'_>,
    step: &StepRecord,
    expect: &crate::case::EventGapsExpect,
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
