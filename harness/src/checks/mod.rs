//! Checks: pure functions from a recorded transcript to verdicts.
//!
//! [`evaluate`] judges one check of a case against what a step recorded; it does no I/O. The
//! vocabulary is closed (the variants of [`CheckKind`]); each kind is documented on its variant
//! and in `cases/README.md`.

mod events;
mod json_match;
#[cfg(test)]
mod open_point_tests;
mod response;
mod stream;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

pub use events::{Observed, ObservedEvent, field, observe};
pub use json_match::{Mismatch, json_condition, json_equal};
pub use response::find_text;

use crate::case::{CaseSurface, Check, CheckKind};
use crate::template::{Scope, TemplateError};
use crate::transcript::{ResponseRecord, StepRecord};
use crate::verdict::{CheckOutcome, Level, Verdict};

/// What a check is judged against.
pub struct EvalContext<'a> {
    /// The case's surface.
    pub surface: CaseSurface,
    /// The case's level.
    pub case_level: Level,
    /// The case's requirements.
    pub case_requirements: &'a [String],
    /// The step being judged.
    pub step: &'a StepRecord,
    /// Earlier (and this) steps' records by id.
    pub steps: &'a BTreeMap<String, StepRecord>,
    /// Values for `${…}` expansion.
    pub scope: &'a Scope,
    /// The check's JSON pointer in the case file.
    pub location: String,
}

/// Builds outcomes with the check's level and requirements.
pub(crate) struct Outcome<'a> {
    kind: &'static str,
    level: Level,
    requirements: Vec<String>,
    ctx: &'a EvalContext<'a>,
}

impl Outcome<'_> {
    fn make(
        &self,
        verdict: Verdict,
        message: String,
        expected: Option<String>,
        actual: Option<String>,
    ) -> CheckOutcome {
        CheckOutcome {
            check: self.kind.to_string(),
            location: self.ctx.location.clone(),
            step: Some(self.ctx.step.step.clone()),
            level: self.level,
            requirements: self.requirements.clone(),
            verdict,
            message,
            expected,
            actual,
        }
    }

    /// The check held.
    pub(crate) fn pass(&self, message: impl Into<String>) -> CheckOutcome {
        self.make(Verdict::Pass, message.into(), None, None)
    }

    /// The check failed at its level.
    pub(crate) fn fail(
        &self,
        message: impl Into<String>,
        expected: impl Into<String>,
        actual: impl Into<String>,
    ) -> CheckOutcome {
        self.make(
            self.level.failure_verdict(),
            message.into(),
            Some(expected.into()),
            Some(actual.into()),
        )
    }

    /// A failure at a different level than the check's (e.g. INFO for what the chapter leaves
    /// unconstrained).
    pub(crate) fn fail_at(
        &self,
        level: Level,
        message: impl Into<String>,
        actual: impl Into<String>,
    ) -> CheckOutcome {
        let mut outcome = self.make(
            level.failure_verdict(),
            message.into(),
            None,
            Some(actual.into()),
        );
        outcome.level = level;
        outcome
    }

    /// The check could not be evaluated because a value it needs is missing.
    pub(crate) fn template(&self, error: &TemplateError) -> CheckOutcome {
        match error {
            TemplateError::Syntax(..) => self.make(
                Verdict::Error,
                format!("the check is malformed: {error}"),
                None,
                None,
            ),
            TemplateError::Missing(..) => self.fail(
                "a value this check compares is missing",
                "a value",
                error.to_string(),
            ),
        }
    }

    /// The primary response of the step, or a failure saying why there is none.
    pub(crate) fn response<'r>(
        &self,
        step: &'r StepRecord,
    ) -> Result<&'r ResponseRecord, Box<CheckOutcome>> {
        let exchange = step.exchanges.last().ok_or_else(|| {
            Box::new(self.fail("the step sent no request", "a response", "nothing"))
        })?;
        match (&exchange.response, &exchange.transport_error) {
            (Some(response), _) => Ok(response),
            (None, Some(error)) => Err(Box::new(self.fail(
                "the host sent no response",
                "a response",
                error.message.clone(),
            ))),
            (None, None) => Err(Box::new(self.fail(
                "the host sent no response",
                "a response",
                "nothing",
            ))),
        }
    }
}

/// Judges one check against a step's record. The match is over the closed vocabulary
/// [`CheckKind`]: a new kind is a variant there and an arm here.
pub fn evaluate(check: &Check, ctx: &EvalContext<'_>) -> Vec<CheckOutcome> {
    let out = Outcome {
        kind: check.name(),
        level: check.level.unwrap_or(ctx.case_level),
        requirements: check
            .requirements
            .clone()
            .unwrap_or_else(|| ctx.case_requirements.to_vec()),
        ctx,
    };
    let step = ctx.step;
    let one = |outcome: CheckOutcome| vec![outcome];
    match &check.kind {
        CheckKind::Status(status) => {
            one(response::status(&out, step, std::slice::from_ref(status)))
        }
        CheckKind::StatusIn(statuses) => one(response::status(&out, step, statuses)),
        CheckKind::Header(header) => one(response::header(&out, step, header)),
        CheckKind::Json(json) => one(response::json(&out, step, json)),
        CheckKind::Error(error) => one(response::error_envelope(&out, step, error)),
        CheckKind::Schema(schema) => one(response::schema(&out, step, schema)),
        CheckKind::Same(values) => one(response::same(&out, values, true)),
        CheckKind::Distinct(values) => one(response::same(&out, values, false)),
        CheckKind::TextAbsent(needles) => one(response::text_absent(&out, step, needles)),
        CheckKind::Each(checks) => response::each(&out, step, checks, ctx),
        CheckKind::Responses(expect) => one(response::responses(&out, step, expect)),
        CheckKind::EachWithStatus(expect) => response::each_with_status(&out, step, expect, ctx),
        CheckKind::EventGaps(expect) => one(stream::event_gaps(&out, step, expect)),
        CheckKind::ProviderCalls(expect) => one(provider_calls(&out, step, expect)),
        CheckKind::EventsValid(_) => one(stream::events_valid(&out, step)),
        CheckKind::Sequence(expect) => one(stream::sequence(&out, step, expect)),
        CheckKind::ExclusiveAfter(expect) => one(stream::exclusive_after(&out, step, expect)),
        CheckKind::Terminal(expect) => stream::terminal(&out, step, expect),
        CheckKind::Order(expect) => one(stream::order(&out, step, expect)),
        CheckKind::ClosedByServer(want) => one(stream::closed_by_server(&out, step, *want)),
        CheckKind::Frames(expect) => one(stream::frames(&out, step, expect)),
        CheckKind::Keepalive(expect) => one(stream::keepalive(&out, step, expect)),
        CheckKind::FoldEquals(result) => one(stream::fold_equals(&out, step, result)),
        CheckKind::EventsInclude(types) => one(stream::events_include(&out, step, types, true)),
        CheckKind::EventsExclude(types) => one(stream::events_include(&out, step, types, false)),
        CheckKind::EveryEvent(expect) => one(stream::every_event(&out, step, expect)),
        CheckKind::EventsEqual(other) => one(stream::events_equal(&out, step, other)),
        CheckKind::ListedTypesObserved(expect) => {
            one(stream::listed_types_observed(&out, step, expect))
        }
    }
}

fn provider_calls(
    out: &Outcome<'_>,
    step: &StepRecord,
    expect: &crate::case::ProviderCallsExpect,
) -> CheckOutcome {
    let calls: u32 = step
        .provider_calls
        .iter()
        .filter(|c| {
            c.script == expect.script
                && expect
                    .role
                    .as_ref()
                    .is_none_or(|r| c.role.as_ref() == Some(r))
        })
        .map(|c| c.count)
        .sum();
    let whom = expect.role.as_ref().map_or_else(
        || "the fake providers".to_string(),
        |r| format!("the `{r}` provider"),
    );
    if let Some(count) = expect.count
        && calls != count
    {
        return out.fail(
            format!(
                "{whom} received {calls} call(s) for script `{}`",
                expect.script
            ),
            format!("{count} call(s)"),
            format!("{calls} call(s)"),
        );
    }
    if let Some(max) = expect.max
        && calls > max
    {
        return out.fail(
            format!(
                "{whom} received {calls} call(s) for script `{}`",
                expect.script
            ),
            format!("at most {max} call(s)"),
            format!("{calls} call(s)"),
        );
    }
    out.pass(format!(
        "{whom} received {calls} call(s) for script `{}`",
        expect.script
    ))
}
