//! What every reporter reads off a run the same way: its exit code and what it means, the check
//! a report shows first for a case, and one surface's judgement in a line.

use super::model::{CaseResult, SurfaceJudgement};
use crate::verdict::{CheckOutcome, Verdict};

/// The process exit code a run with this overall verdict ends with: 0 conforms (PASS, INFO,
/// WARN, SKIP, XFAIL), 1 a conformance failure (FAIL, STALE), 3 a harness or environment error
/// (ERROR), 4 not judged (BLOCKED: a MUST case the harness could not judge, or a served or
/// requested surface with no judged case). Code 2 (usage or configuration error) is decided
/// before any report exists.
pub fn exit_code(run_verdict: Verdict) -> u8 {
    match run_verdict {
        Verdict::Pass | Verdict::Info | Verdict::Warn | Verdict::Skip | Verdict::Xfail => 0,
        Verdict::Fail | Verdict::Stale => 1,
        Verdict::Error => 3,
        Verdict::Blocked => NOT_JUDGED_EXIT_CODE,
    }
}

/// The exit code of a run that could not judge what conformance needs (see [`exit_code`]).
pub const NOT_JUDGED_EXIT_CODE: u8 = 4;

/// What an exit code means, in one sentence.
pub fn exit_code_meaning(code: u8) -> &'static str {
    match code {
        0 => {
            "the host conforms (no MUST broken; warnings, skips and baselined failures do not fail the run)"
        }
        1 => "a conformance failure (a MUST broken, or a stale baseline entry)",
        2 => "a usage or configuration error",
        NOT_JUDGED_EXIT_CODE => {
            "not judged: the harness could not judge a MUST case, or a surface the host serves or the operator asked for (the host does not conform until it is judged)"
        }
        _ => "a harness or environment error (the run cannot conclude anything about the host)",
    }
}

/// The check a report shows first for a case: the first FAIL, else the first check that did
/// not hold.
pub fn first_failing_check(case: &CaseResult) -> Option<&CheckOutcome> {
    case.checks
        .iter()
        .find(|c| c.verdict == Verdict::Fail)
        .or_else(|| case.checks.iter().find(|c| !c.passed()))
}

/// One surface's judgement in a line: `openwop (served): 40 of 52 case(s) judged, 31 of 38 MUST
/// requirement(s) judged`.
pub fn surface_line(surface: &SurfaceJudgement) -> String {
    format!(
        "{} ({}): {} of {} case(s) judged, {} of {} MUST requirement(s) judged",
        surface.surface,
        match (surface.served, surface.requested) {
            (true, true) => "served, requested",
            (true, false) => "served",
            (false, true) => "not served, requested",
            (false, false) => "not served",
        },
        surface.cases_judged,
        surface.cases,
        surface.must_requirements_judged,
        surface.must_requirements
    )
}
