//! Checks that need every frame of a stream, when the harness did not keep every frame.
//!
//! The driver keeps a stream's first frames and folds the rest as they arrive
//! ([`crate::stream_fold`]), and stops reading at its read bound (`BodyEnd::TooLarge`). The
//! checks judge the kept frames; [`whole_stream`] then completes their judgement with the fold
//! where the fold can (sequence rules, keep-alive, frame counts, event types, JSON validity),
//! and otherwise makes the outcome ERROR ("judged on a prefix"): never a PASS on frames no
//! check saw. A violation found in the kept frames is a violation of the whole stream (they are
//! its prefix), so such a FAIL stands.

use super::keepalive::KeepaliveSeen;
use crate::case::{CheckKind, FramesExpect, KeepaliveExpect, SequenceExpect};
use crate::checks::context::Outcome;
use crate::checks::events::observe;
use crate::transcript::StreamFold;
use crate::transcript::{BodyEnd, FrameKind, ResponseRecord, StepRecord};
use crate::verdict::{CheckOutcome, Verdict};
use spec::registry::{TypeNameVerdict, orgs};

/// Whether a check kind reads every frame (or event) of the step's stream.
fn needs_every_frame(kind: &CheckKind) -> bool {
    matches!(
        kind,
        CheckKind::EventGaps(_)
            | CheckKind::EventsValid(_)
            | CheckKind::Sequence(_)
            | CheckKind::ExclusiveAfter(_)
            | CheckKind::Terminal(_)
            | CheckKind::Order(_)
            | CheckKind::Frames(_)
            | CheckKind::Keepalive(_)
            | CheckKind::FoldEquals(_)
            | CheckKind::EventsInclude(_)
            | CheckKind::EventsExclude(_)
            | CheckKind::EveryEvent(_)
            | CheckKind::EventsEqual(_)
            | CheckKind::ListedTypesObserved(_)
            | CheckKind::TextAbsent(_)
    )
}

/// Whether a violation found in a prefix of the stream is a violation of the whole stream.
fn prefix_failure_stands(kind: &CheckKind) -> bool {
    matches!(
        kind,
        CheckKind::EventsValid(_)
            | CheckKind::Sequence(_)
            | CheckKind::EventsExclude(_)
            | CheckKind::EveryEvent(_)
            | CheckKind::TextAbsent(_)
    )
}

fn primary(step: &StepRecord) -> Option<&ResponseRecord> {
    step.exchanges.last()?.response.as_ref()
}

/// The read stopped at one of the harness's bounds: what came after was never read.
fn read_cut(response: &ResponseRecord) -> Option<&str> {
    match &response.end {
        BodyEnd::TooLarge(why) => Some(why),
        _ => None,
    }
}

/// Completes the outcomes of a check that needs every frame with what the fold saw, or makes
/// them ERROR where it cannot ("judged on a prefix").
pub(in crate::checks) fn whole_stream(
    kind: &CheckKind,
    out: &Outcome<'_>,
    step: &StepRecord,
    outcomes: Vec<CheckOutcome>,
) -> Vec<CheckOutcome> {
    if !needs_every_frame(kind) {
        return outcomes;
    }
    let Some(response) = primary(step) else {
        return outcomes;
    };
    // A check comparing with another step's stream needs that one whole too.
    let compared = match kind {
        CheckKind::ExclusiveAfter(expect) => out.ctx.steps.get(&expect.full),
        CheckKind::EventsEqual(other) => out.ctx.steps.get(other),
        _ => None,
    }
    .and_then(primary)
    .filter(|other| other.folded.is_some() || read_cut(other).is_some());
    let mut outcomes = match &response.folded {
        Some(fold) if compared.is_none() => fold_into(kind, out, step, response, fold, outcomes),
        Some(fold) => vec![not_folded(out, response, fold)],
        None => outcomes,
    };
    let cut = read_cut(response).or_else(|| compared.and_then(read_cut));
    if let Some(why) = cut {
        for outcome in &mut outcomes {
            let stands = match outcome.verdict {
                // Types seen (kept or folded) were sent, whatever came after.
                Verdict::Pass => matches!(kind, CheckKind::EventsInclude(_)),
                Verdict::Error | Verdict::Blocked | Verdict::Skip => true,
                _ => prefix_failure_stands(kind),
            };
            if !stands {
                *outcome = out.not_judged(
                    format!(
                        "the stream exceeded the harness's read bound ({why}), and `{}` needs every frame: what was read is a prefix of what the host sent, so it is judged on a prefix",
                        out.kind
                    ),
                    format!("{} ({})", outcome.message, verdict_name(outcome.verdict)),
                );
            }
        }
    }
    outcomes
}

fn verdict_name(verdict: Verdict) -> String {
    serde_json::to_value(verdict)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_else(|| format!("{verdict:?}"))
}

fn not_folded(out: &Outcome<'_>, response: &ResponseRecord, fold: &StreamFold) -> CheckOutcome {
    out.not_judged(
        format!(
            "the stream exceeded what the harness keeps for its checks: it kept the first {} frame(s) and folded {} more as they arrived, and `{}` needs every frame and does not fold, so it is judged on a prefix",
            response.frames.len(),
            fold.frames,
            out.kind
        ),
        format!("{} frame(s) read", response.frames.len() as u64 + fold.frames),
    )
}

fn fold_into(
    kind: &CheckKind,
    out: &Outcome<'_>,
    step: &StepRecord,
    response: &ResponseRecord,
    fold: &StreamFold,
    outcomes: Vec<CheckOutcome>,
) -> Vec<CheckOutcome> {
    let [outcome] = <[CheckOutcome; 1]>::try_from(outcomes).unwrap_or_else(|many| {
        // Several outcomes (terminal rules): none folds.
        let first = many.into_iter().next();
        [first.unwrap_or_else(|| out.pass("nothing to judge"))]
    });
    let failed = !matches!(outcome.verdict, Verdict::Pass);
    let folded = match kind {
        CheckKind::Sequence(_) if failed => outcome,
        CheckKind::Sequence(expect) => sequence(out, fold, expect).unwrap_or(outcome),
        CheckKind::Keepalive(expect) => keepalive(out, response, fold, expect),
        CheckKind::Frames(expect) => frames(out, step, response, fold, expect),
        CheckKind::EventsInclude(types) if failed => {
            include(out, response, fold, types).unwrap_or(outcome)
        }
        CheckKind::EventsInclude(_) => outcome,
        CheckKind::EventsExclude(_) if failed => outcome,
        CheckKind::EventsExclude(types) => exclude(out, fold, types).unwrap_or(outcome),
        CheckKind::EventsValid(_) if failed => outcome,
        CheckKind::EventsValid(_) => match fold.first_unparsable {
            Some(index) => out.fail(
                format!(
                    "{} event frame(s) past the kept ones, the first at frame {index}, are not JSON",
                    fold.unparsable
                ),
                "every event valid against the published schemas",
                format!("frame {index}: data is not JSON"),
            ),
            None => not_folded(out, response, fold),
        },
        // A violation in the kept frames (a prefix) is one of the whole stream.
        _ if failed && prefix_failure_stands(kind) => outcome,
        _ => not_folded(out, response, fold),
    };
    vec![folded]
}

fn is_type(kind: &str, wanted: &str) -> bool {
    if wanted == "vendor" {
        orgs().classify_type(kind) == TypeNameVerdict::Vendor
    } else {
        kind == wanted
    }
}

fn include(
    out: &Outcome<'_>,
    response: &ResponseRecord,
    fold: &StreamFold,
    types: &[String],
) -> Option<CheckOutcome> {
    let observed = observe(response);
    let missing: Vec<&String> = types
        .iter()
        .filter(|t| {
            !observed
                .events
                .iter()
                .any(|e| is_type(e.event_type.as_deref().unwrap_or_default(), t))
                && !fold.types.keys().any(|k| is_type(k, t))
        })
        .collect();
    if missing.is_empty() {
        return Some(out.pass(format!(
            "every expected type occurs (read past the kept frames: {} more event(s), folded as they arrived)",
            fold.events
        )));
    }
    if fold.types_overflow {
        return Some(out.not_judged(
            format!(
                "the stream exceeded what the harness keeps, and its folded part held more than {} event types",
                crate::stream_fold::FOLD_TYPES
            ),
            format!("missing: {missing:?}"),
        ));
    }
    None
}

fn exclude(out: &Outcome<'_>, fold: &StreamFold, types: &[String]) -> Option<CheckOutcome> {
    let present: Vec<&String> = types
        .iter()
        .filter(|t| fold.types.keys().any(|k| is_type(k, t)))
        .collect();
    if !present.is_empty() {
        return Some(
            out.fail(
                format!("present past the kept frames: {present:?}"),
                format!("no events of types {types:?}"),
                fold.types
                    .iter()
                    .map(|(k, n)| format!("{n} × {k}"))
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
        );
    }
    fold.types_overflow.then(|| {
        out.not_judged(
            format!(
                "the stream's folded part held more than {} event types",
                crate::stream_fold::FOLD_TYPES
            ),
            format!("{} event(s) folded", fold.events),
        )
    })
}

/// The sequence rules over the folded events (the kept ones passed): `None` when they hold.
fn sequence(out: &Outcome<'_>, fold: &StreamFold, expect: &SequenceExpect) -> Option<CheckOutcome> {
    let past = " past the kept frames (folded as they arrived)";
    if fold.without_sequence > 0 {
        return Some(out.fail(
            format!(
                "{} event(s) without a sequence{past}",
                fold.without_sequence
            ),
            "a sequence on every event",
            format!("{} event(s) without one", fold.without_sequence),
        ));
    }
    let pair = |p: [u64; 2]| format!("… {}, {} …", p[0], p[1]);
    if expect.non_decreasing == Some(true)
        && let Some(p) = fold.first_decrease
    {
        return Some(out.fail(
            format!("sequences decrease{past}"),
            "non-decreasing sequences",
            pair(p),
        ));
    }
    let strict_by_default = expect.non_decreasing != Some(true);
    if expect.strictly_increasing.unwrap_or(strict_by_default)
        && let Some(p) = fold.first_not_increasing
    {
        return Some(out.fail(
            format!("sequences are not strictly increasing{past}"),
            "strictly increasing sequences",
            pair(p),
        ));
    }
    if expect.contiguous == Some(true)
        && let Some(p) = fold.first_gap
    {
        return Some(out.fail(
            format!("sequences have gaps{past}"),
            "sequences increasing by exactly 1",
            pair(p),
        ));
    }
    if expect.ids_match == Some(true)
        && let Some(sequence) = fold.first_id_mismatch
    {
        return Some(out.fail(
            format!("a frame's id is not its event's sequence{past}"),
            format!("id: {sequence}"),
            "another id",
        ));
    }
    Some(out.pass(format!(
        "sequences as expected, including {} event(s) past the kept frames, folded as they arrived",
        fold.events
    )))
}

/// Keep-alive over every frame read: the kept ones' comments and silences, and the fold's.
fn keepalive(
    out: &Outcome<'_>,
    response: &ResponseRecord,
    fold: &StreamFold,
    expect: &KeepaliveExpect,
) -> CheckOutcome {
    let kept = KeepaliveSeen::of_frames(&response.frames);
    let seen = KeepaliveSeen {
        comments: kept.comments + fold.comments,
        longest_silence_ms: kept.longest_silence_ms.max(fold.max_silence_ms),
    }
    .with_silence(response.end_at_ms.saturating_sub(fold.last_at_ms));
    let passed = format!(
        "{} keep-alive comment(s) over {} frame(s) read, {} of them folded as they arrived; longest silence {} ms",
        seen.comments,
        response.frames.len() as u64 + fold.frames,
        fold.frames,
        seen.longest_silence_ms
    );
    seen.verdict(out, expect, response.end_at_ms, passed)
}

/// The frame rules: counts over every frame read; the per-frame rules are not folded.
fn frames(
    out: &Outcome<'_>,
    step: &StepRecord,
    response: &ResponseRecord,
    fold: &StreamFold,
    expect: &FramesExpect,
) -> CheckOutcome {
    let per_frame = expect.event_in.is_some()
        || expect.ids_numeric == Some(true)
        || expect.batch_id_highest == Some(true)
        || expect.event_names_admitting_mode.is_some()
        || expect.event_is_type == Some(true);
    // The rules other than the counts, on the kept frames (a prefix: a violation there is one
    // of the stream).
    let rest = FramesExpect {
        count: None,
        min: None,
        ..expect.clone()
    };
    let kept = super::frames::frames(out, step, &rest);
    if kept.verdict != Verdict::Pass {
        return kept;
    }
    if per_frame {
        return not_folded(out, response, fold);
    }
    let total = response
        .frames
        .iter()
        .filter(|f| matches!(f.kind, FrameKind::Event { .. }))
        .count() as u64
        + fold.event_frames;
    if let Some(count) = &expect.count {
        let count = match out.ctx.scope.expand(count) {
            Ok(v) => v.as_u64(),
            Err(e) => return out.template(&e),
        };
        if count != Some(total) {
            return out.fail(
                format!("{total} frame(s), {} of them folded", fold.event_frames),
                format!("{} frame(s)", count.map_or("?".into(), |c| c.to_string())),
                format!("{total} frame(s)"),
            );
        }
    }
    if let Some(min) = expect.min
        && total < min
    {
        return out.fail(
            format!("only {total} frame(s)"),
            format!("at least {min}"),
            format!("{total} frame(s)"),
        );
    }
    out.pass(format!(
        "{total} frame(s) as expected, {} of them folded as they arrived",
        fold.event_frames
    ))
}
