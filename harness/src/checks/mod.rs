//! Checks: pure functions from a recorded transcript to verdicts.
//!
//! [`evaluate`] judges one check of a case against what a step recorded; it does no I/O. The
//! vocabulary is closed (the fields of [`Check`]); each kind is documented on its field and in
//! `cases/README.md`.

mod events;
mod json_match;
mod response;
mod stream;

use std::collections::BTreeMap;

pub use events::{Observed, ObservedEvent, field, observe};
pub use json_match::{Mismatch, json_condition, json_equal};
pub use response::find_text;

use crate::case::{CaseSurface, Check};
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

/// Judges one check against a step's record.
pub fn evaluate(check: &Check, ctx: &EvalContext<'_>) -> Vec<CheckOutcome> {
    let out = Outcome {
        kind: check.kind(),
        level: check.level.unwrap_or(ctx.case_level),
        requirements: check
            .requirements
            .clone()
            .unwrap_or_else(|| ctx.case_requirements.to_vec()),
        ctx,
    };
    let step = ctx.step;
    let one = |outcome: CheckOutcome| vec![outcome];
    if let Some(status) = check.status {
        return one(response::status(&out, step, &[status]));
    }
    if let Some(statuses) = &check.status_in {
        return one(response::status(&out, step, statuses));
    }
    if let Some(header) = &check.header {
        return one(response::header(&out, step, header));
    }
    if let Some(json) = &check.json {
        return one(response::json(&out, step, json));
    }
    if let Some(error) = &check.error {
        return one(response::error_envelope(&out, step, error));
    }
    if let Some(schema) = &check.schema {
        return one(response::schema(&out, step, schema));
    }
    if let Some(values) = &check.same {
        return one(response::same(&out, values, true));
    }
    if let Some(values) = &check.distinct {
        return one(response::same(&out, values, false));
    }
    if let Some(needles) = &check.text_absent {
        return one(response::text_absent(&out, step, needles));
    }
    if let Some(checks) = &check.each {
        return response::each(&out, step, checks, ctx);
    }
    if let Some(expect) = &check.responses {
        return one(response::responses(&out, step, expect));
    }
    if let Some(expect) = &check.each_with_status {
        return response::each_with_status(&out, step, expect, ctx);
    }
    if let Some(expect) = &check.event_gaps {
        return one(stream::event_gaps(&out, step, expect));
    }
    if let Some(expect) = &check.provider_calls {
        return one(provider_calls(&out, step, expect));
    }
    if check.events_valid.is_some() {
        return one(stream::events_valid(&out, step));
    }
    if let Some(expect) = &check.sequence {
        return one(stream::sequence(&out, step, expect));
    }
    if let Some(expect) = &check.exclusive_after {
        return one(stream::exclusive_after(&out, step, expect));
    }
    if let Some(expect) = &check.terminal {
        return stream::terminal(&out, step, expect);
    }
    if let Some(expect) = &check.order {
        return one(stream::order(&out, step, expect));
    }
    if let Some(want) = check.closed_by_server {
        return one(stream::closed_by_server(&out, step, want));
    }
    if let Some(expect) = &check.frames {
        return one(stream::frames(&out, step, expect));
    }
    if let Some(expect) = &check.keepalive {
        return one(stream::keepalive(&out, step, expect));
    }
    if let Some(result) = &check.fold_equals {
        return one(stream::fold_equals(&out, step, result));
    }
    if let Some(types) = &check.events_include {
        return one(stream::events_include(&out, step, types, true));
    }
    if let Some(types) = &check.events_exclude {
        return one(stream::events_include(&out, step, types, false));
    }
    if let Some(expect) = &check.every_event {
        return one(stream::every_event(&out, step, expect));
    }
    if let Some(other) = &check.events_equal {
        return one(stream::events_equal(&out, step, other));
    }
    if let Some(expect) = &check.listed_types_observed {
        return one(stream::listed_types_observed(&out, step, expect));
    }
    vec![out.make(
        Verdict::Error,
        "the check names no check kind".into(),
        None,
        None,
    )]
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
