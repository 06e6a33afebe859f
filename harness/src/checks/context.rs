//! What a check is judged against ([`EvalContext`]) and how a check reports ([`Outcome`]): the
//! vocabulary every check module shares.

use std::collections::BTreeMap;

use crate::case::CaseSurface;
use crate::template::{Scope, TemplateError};
use crate::transcript::{ResponseRecord, StepRecord};
use crate::verdict::{CheckOutcome, Level, Verdict};

/// What a check is judged against.
pub(crate) struct EvalContext<'a> {
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
    pub(crate) kind: &'static str,
    pub(crate) level: Level,
    pub(crate) requirements: Vec<String>,
    pub(crate) ctx: &'a EvalContext<'a>,
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

    /// The check could not be judged: what it reads never arrived (ERROR, never the host's
    /// failure nor a pass).
    pub(crate) fn not_judged(
        &self,
        message: impl Into<String>,
        actual: impl Into<String>,
    ) -> CheckOutcome {
        self.make(
            Verdict::Error,
            format!("not judged: {}", message.into()),
            None,
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

    /// The primary response of the step, or a failure saying why there is none. A stream the
    /// host held open through its window without sending its headers (it writes them with its
    /// first byte) has no status, headers or body to judge: the check is INFO, not judged,
    /// never the host's FAIL. What such a stream shows (no frame, not closed) is judged by the
    /// checks that read it as [`received`](Self::received).
    pub(crate) fn response<'r>(
        &self,
        step: &'r StepRecord,
    ) -> Result<&'r ResponseRecord, Box<CheckOutcome>> {
        let response = self.received(step)?;
        if !response.headers_received() {
            return Err(Box::new(self.make(
                Verdict::Info,
                "not judged: the host held the stream open through the step's window without sending its headers (it writes them with its first byte), so its status and headers are not known".into(),
                Some("the response's status and headers".into()),
                Some("no headers yet: the connection held open".into()),
            )));
        }
        Ok(response)
    }

    /// The primary response of the step, also one held open without headers, or a failure
    /// saying why there is none.
    pub(crate) fn received<'r>(
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
