//! Checks on plain responses: status, headers, JSON members, error envelopes, schemas,
//! equality of values, absence of text, and concurrent responses.

use serde_json::Value;

use super::context::{EvalContext, Outcome};
use super::json_match::{json_condition, json_equal};
use crate::case::{CaseSurface, Check, ErrorExpect, HeaderExpect, JsonExpect, ResponsesExpect};
use crate::transcript::{FrameKind, StepRecord};
use crate::verdict::CheckOutcome;

/// How a composite check judges its inner checks (the dispatcher, `super::evaluate`, passed in
/// so this module does not call back into it).
pub(super) type Judge = fn(&Check, &EvalContext<'_>) -> Vec<CheckOutcome>;

pub(super) fn status(out: &Outcome<'_>, step: &StepRecord, allowed: &[u16]) -> CheckOutcome {
    // A stream held open through its window without its headers is a stream served and held:
    // a success status is what it will carry. A refusal it cannot be judged to be.
    if let Ok(held) = out.received(step)
        && !held.headers_received()
        && allowed.iter().any(|status| (200..300).contains(status))
    {
        return out.pass(
            "the stream was served and held open through the window, its status line not sent yet (the host writes its headers with its first byte)",
        );
    }
    let response = match out.response(step) {
        Ok(r) => r,
        Err(failure) => return *failure,
    };
    let expected = allowed
        .iter()
        .map(u16::to_string)
        .collect::<Vec<_>>()
        .join(" or ");
    if allowed.contains(&response.status) {
        out.pass(format!("status {}", response.status))
    } else {
        out.fail(
            format!("status {} where {expected} was expected", response.status),
            expected,
            response.status.to_string(),
        )
    }
}

pub(super) fn header(out: &Outcome<'_>, step: &StepRecord, expect: &HeaderExpect) -> CheckOutcome {
    let response = match out.response(step) {
        Ok(r) => r,
        Err(failure) => return *failure,
    };
    let name = expect.name.to_ascii_lowercase();
    let value = response.header(&name);
    let want_present = expect.present.unwrap_or(true);
    match (want_present, value) {
        (false, None) => return out.pass(format!("no `{name}` header")),
        (false, Some(v)) => {
            return out.fail(format!("a `{name}` header was sent"), "no such header", v);
        }
        (true, None) => {
            return out.fail(
                format!("no `{name}` header"),
                format!("a `{name}` header"),
                "(absent)",
            );
        }
        (true, Some(_)) => {}
    }
    let value = value.unwrap_or_default();
    if let Some(equals) = &expect.equals {
        let want = match out.ctx.scope.interpolate(equals) {
            Ok(w) => w,
            Err(e) => return out.template(&e),
        };
        if value != want {
            return out.fail(format!("`{name}` is `{value}`"), want, value);
        }
    }
    if let Some(pattern) = &expect.matches
        && !regex::Regex::new(pattern).is_ok_and(|r| r.is_match(value))
    {
        return out.fail(
            format!("`{name}` does not match /{pattern}/"),
            format!("/{pattern}/"),
            value,
        );
    }
    out.pass(format!("`{name}: {value}`"))
}

pub(super) fn json(out: &Outcome<'_>, step: &StepRecord, expect: &JsonExpect) -> CheckOutcome {
    let response = match out.response(step) {
        Ok(r) => r,
        Err(failure) => return *failure,
    };
    let Some(body) = response.json.as_ref() else {
        return out.fail(
            "the body is not JSON",
            "a JSON body",
            preview(&response.body),
        );
    };
    match json_condition(Some(body), expect, out.ctx.scope) {
        Err(e) => out.template(&e),
        Ok(Ok(())) => out.pass(format!("`{}` as expected", expect.pointer)),
        Ok(Err(m)) => out.fail(
            format!("`{}` is not as expected", expect.pointer),
            m.expected,
            m.actual,
        ),
    }
}

pub(super) fn error_envelope(
    out: &Outcome<'_>,
    step: &StepRecord,
    expect: &ErrorExpect,
) -> CheckOutcome {
    let response = match out.response(step) {
        Ok(r) => r,
        Err(failure) => return *failure,
    };
    let Some(body) = response.json.as_ref() else {
        return out.fail(
            "the error body is not JSON",
            "an error envelope",
            preview(&response.body),
        );
    };
    let (schema, code) = match out.ctx.surface {
        CaseSurface::Execution => (
            spec::schema::Published::ExecutionError,
            body.pointer("/error/code"),
        ),
        CaseSurface::Openwop => (spec::schema::Published::OpenWopError, body.get("error")),
    };
    if let Err(violations) = spec::schema::validate(schema, body) {
        let list: Vec<String> = violations.iter().take(5).map(ToString::to_string).collect();
        return out.fail(
            format!("the body is not a valid {} envelope", schema.name()),
            format!("a body valid against {}", schema.file_name()),
            format!("{body}\n{}", list.join("\n")),
        );
    }
    let code = code.and_then(Value::as_str).unwrap_or_default();
    let allowed: Vec<String> = expect
        .code
        .iter()
        .cloned()
        .chain(expect.code_in.iter().flatten().cloned())
        .collect();
    if !allowed.is_empty() && !allowed.iter().any(|a| a == code) {
        return out.fail(
            format!("error code `{code}`"),
            allowed.join(" or "),
            code.to_string(),
        );
    }
    out.pass(format!("error envelope with code `{code}`"))
}

pub(super) fn schema(
    out: &Outcome<'_>,
    step: &StepRecord,
    published: spec::schema::Published,
) -> CheckOutcome {
    let response = match out.response(step) {
        Ok(r) => r,
        Err(failure) => return *failure,
    };
    let Some(body) = response.json.as_ref() else {
        return out.fail(
            "the body is not JSON",
            format!("a body valid against {}", published.file_name()),
            preview(&response.body),
        );
    };
    match spec::schema::validate(published, body) {
        Ok(()) => out.pass(format!(
            "the body validates against {}",
            published.file_name()
        )),
        Err(violations) => out.fail(
            format!(
                "the body does not validate against {}",
                published.file_name()
            ),
            format!("a body valid against {}", published.file_name()),
            violations
                .iter()
                .take(8)
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n"),
        ),
    }
}

pub(super) fn same(out: &Outcome<'_>, values: &[Value], equal: bool) -> CheckOutcome {
    let expanded: Result<Vec<Value>, _> = values.iter().map(|v| out.ctx.scope.expand(v)).collect();
    let expanded = match expanded {
        Ok(v) => v,
        Err(e) => return out.template(&e),
    };
    let rendered = expanded
        .iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    if equal {
        if expanded.windows(2).all(|w| json_equal(&w[0], &w[1])) {
            out.pass(format!("all equal: {rendered}"))
        } else {
            out.fail("the values differ", "equal values", rendered)
        }
    } else {
        let all_distinct = expanded
            .iter()
            .enumerate()
            .all(|(i, a)| expanded[i + 1..].iter().all(|b| !json_equal(a, b)));
        if all_distinct {
            out.pass(format!("all distinct: {rendered}"))
        } else {
            out.fail(
                "some values are equal",
                "pairwise distinct values",
                rendered,
            )
        }
    }
}

pub(super) fn text_absent(
    out: &Outcome<'_>,
    step: &StepRecord,
    needles: &[String],
) -> CheckOutcome {
    let mut expanded = Vec::new();
    for needle in needles {
        match out.ctx.scope.interpolate(needle) {
            Ok(n) if !n.is_empty() => expanded.push(n),
            Ok(_) => {}
            Err(e) => return out.template(&e),
        }
    }
    for exchange in &step.exchanges {
        let Some(response) = &exchange.response else {
            continue;
        };
        for needle in &expanded {
            if let Some(place) = find_text(response, needle) {
                return out.fail(
                    format!("the response contains a forbidden text in its {place}"),
                    format!("no `{needle}`"),
                    format!("found in the {place}"),
                );
            }
        }
    }
    out.pass(format!(
        "none of {} forbidden text(s) appears",
        expanded.len()
    ))
}

/// Where a text occurs in a response: `headers`, `body` or `frame`.
pub(crate) fn find_text(
    response: &crate::transcript::ResponseRecord,
    needle: &str,
) -> Option<&'static str> {
    if response.headers.iter().any(|h| h.value.contains(needle)) {
        return Some("headers");
    }
    if response.body.contains(needle) {
        return Some("body");
    }
    let in_frames = response.frames.iter().any(|f| match &f.kind {
        FrameKind::Event {
            data, id, event, ..
        } => {
            data.contains(needle)
                || id.as_deref().is_some_and(|i| i.contains(needle))
                || event.as_deref().is_some_and(|e| e.contains(needle))
        }
        FrameKind::Comment { text } => text.contains(needle),
    });
    if in_frames {
        return Some("stream");
    }
    response
        .trailing_partial_frame
        .as_deref()
        .filter(|t| t.contains(needle))
        .map(|_| "stream")
}

pub(super) fn each(
    out: &Outcome<'_>,
    step: &StepRecord,
    checks: &[Check],
    ctx: &EvalContext<'_>,
    judge: Judge,
) -> Vec<CheckOutcome> {
    each_selected(out, step, checks, ctx, None, judge)
}

/// `each_with_status`: the checks on every response with the status; at least one must have it
/// unless the case says none may (then, none having it, nothing is judged).
pub(super) fn each_with_status(
    out: &Outcome<'_>,
    step: &StepRecord,
    expect: &crate::case::EachWithStatus,
    ctx: &EvalContext<'_>,
    judge: Judge,
) -> Vec<CheckOutcome> {
    let statuses: Vec<u16> = step
        .exchanges
        .iter()
        .filter_map(|e| e.response.as_ref().map(|r| r.status))
        .collect();
    if !statuses.contains(&expect.status) {
        if !expect.at_least_one {
            return Vec::new();
        }
        return vec![out.fail(
            format!("no response has status {}", expect.status),
            format!("at least one response with status {}", expect.status),
            format!("statuses: {statuses:?}"),
        )];
    }
    each_selected(out, step, &expect.expect, ctx, Some(expect.status), judge)
}

fn each_selected(
    out: &Outcome<'_>,
    step: &StepRecord,
    checks: &[Check],
    ctx: &EvalContext<'_>,
    status: Option<u16>,
    judge: Judge,
) -> Vec<CheckOutcome> {
    let mut outcomes = Vec::new();
    let missing = step
        .exchanges
        .iter()
        .filter(|e| e.response.is_none())
        .count();
    for (i, exchange) in step.exchanges.iter().enumerate() {
        if exchange.response.is_none() {
            // Checks over a response that never arrived judge nothing (said once below).
            continue;
        }
        if status.is_some_and(|s| exchange.response.as_ref().map(|r| r.status) != Some(s)) {
            continue;
        }
        let single = StepRecord {
            exchanges: vec![exchange.clone()],
            ..step.clone()
        };
        for (j, check) in checks.iter().enumerate() {
            let inner = EvalContext {
                surface: ctx.surface,
                case_level: out.level,
                case_requirements: &out.requirements,
                step: &single,
                steps: ctx.steps,
                scope: ctx.scope,
                location: format!("{}/each/{j}#response{i}", ctx.location),
            };
            outcomes.extend(judge(check, &inner));
        }
    }
    if missing > 0 {
        outcomes.push(out.not_judged(
            format!(
                "{missing} of the step's {} response(s) never arrived",
                step.exchanges.len()
            ),
            "no response",
        ));
    }
    if outcomes.is_empty() {
        outcomes.push(out.fail("the step has no responses to check", "responses", "none"));
    }
    outcomes
}

pub(super) fn responses(
    out: &Outcome<'_>,
    step: &StepRecord,
    expect: &ResponsesExpect,
) -> CheckOutcome {
    let responses: Vec<_> = step
        .exchanges
        .iter()
        .filter_map(|e| e.response.as_ref())
        .collect();
    let missing = step.exchanges.len() - responses.len();
    let never_arrived = || {
        out.not_judged(
            format!(
                "{missing} of the step's {} response(s) never arrived",
                step.exchanges.len()
            ),
            format!("{} response(s)", responses.len()),
        )
    };
    if let Some(counts) = &expect.status_counts {
        let mut wanted = std::collections::BTreeMap::<String, u64>::new();
        for (status, count) in counts {
            match out.ctx.scope.expand(count) {
                Ok(value) => match value.as_u64() {
                    Some(n) => {
                        wanted.insert(status.clone(), n);
                    }
                    None => {
                        return out.fail(
                            "a count is not an integer",
                            "an integer",
                            value.to_string(),
                        );
                    }
                },
                Err(e) => return out.template(&e),
            }
        }
        let counts = &wanted;
        let mut actual = std::collections::BTreeMap::<String, u64>::new();
        for r in &responses {
            *actual.entry(r.status.to_string()).or_default() += 1;
        }
        if missing > 0 {
            return never_arrived();
        }
        if &actual != counts {
            return out.fail(
                "the responses' statuses are not as expected",
                format!("{counts:?}"),
                format!("{actual:?}"),
            );
        }
    }
    if let Some(pointer) = &expect.same_at {
        let values: Vec<Option<&Value>> = responses
            .iter()
            .map(|r| r.json.as_ref().and_then(|j| j.pointer(pointer)))
            .collect();
        let first = values.first().copied().flatten();
        if responses.is_empty() {
            return never_arrived();
        }
        if first.is_none()
            || values
                .iter()
                .any(|v| v.is_none_or(|v| first.is_none_or(|f| !json_equal(v, f))))
        {
            let rendered: Vec<String> = values
                .iter()
                .map(|v| v.map_or("(absent)".into(), |v| v.to_string()))
                .collect();
            return out.fail(
                format!("the responses disagree at `{pointer}`"),
                "the same value in every response",
                rendered.join(", "),
            );
        }
    }
    if missing > 0 {
        // What arrived agrees, but the rest was never seen: no pass on half the evidence.
        return never_arrived();
    }
    out.pass(format!("{} responses as expected", responses.len()))
}

/// A short preview of a body for messages.
pub(crate) fn preview(body: &str) -> String {
    let mut text: String = body.chars().take(300).collect();
    if body.chars().count() > 300 {
        text.push('…');
    }
    if text.is_empty() {
        "(empty body)".into()
    } else {
        text
    }
}
