//! `frames`: SSE frame-level rules (counts, `event:` names, ids, batches, truncation).

use serde_json::Value;
use spec::registry::event_types;

use crate::case::FramesExpect;
use crate::checks::context::Outcome;
use crate::checks::events::observe;
use crate::transcript::StepRecord;
use crate::verdict::CheckOutcome;

/// Every frame rule the expectation asks, the first broken one failing.
pub(in crate::checks) fn frames(
    out: &Outcome<'_>,
    step: &StepRecord,
    expect: &FramesExpect,
) -> CheckOutcome {
    // A stream held open without its headers sent nothing in its window: no frame.
    let response = match out.received(step) {
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

/// Whether a stream mode may admit an event type (the chapter's tier table; vendor types only in
/// debug). A type the chapter's `updates` list reads either way (`updates_either`) is admitted
/// in `updates` without being required there.
fn mode_admits(mode: &str, event_type: &str) -> bool {
    use spec::registry::StreamTier;
    let entry = event_types().get(event_type);
    match mode {
        "debug" => true,
        "updates" | "values" => entry.is_some_and(|e| e.may_appear_in_updates()),
        "messages" => entry.is_some_and(|e| e.tier == StreamTier::Messages),
        _ => false,
    }
}
