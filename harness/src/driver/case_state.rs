//! The mutable state of one case run, shared by the step runner and the `generate` step.

use std::collections::BTreeMap;

use tokio::time::Instant;

use crate::case::Case;
use crate::driver::http::HttpDriver;
use crate::driver::run_ends::RunEnds;
use crate::report::{Counterexample, ServedScript};
use crate::template::Scope;
use crate::transcript::StepRecord;
use crate::verdict::CheckOutcome;

/// The mutable state of one case run.
pub(crate) struct CaseState<'a> {
    pub(crate) case: &'a Case,
    /// The case's own driver (its own connections).
    pub(crate) driver: HttpDriver,
    pub(crate) scope: Scope,
    pub(crate) transcript: Vec<StepRecord>,
    pub(crate) by_id: BTreeMap<String, StepRecord>,
    pub(crate) checks: Vec<CheckOutcome>,
    pub(crate) error: Option<String>,
    pub(crate) stopped: bool,
    /// Local script name → registered script id.
    pub(crate) scripts: BTreeMap<String, String>,
    pub(crate) deadline: Instant,
    pub(crate) started: Instant,
    pub(crate) counterexample: Option<Counterexample>,
    /// Every script registered for this case, as served.
    pub(crate) served: Vec<ServedScript>,
    /// Where the canary was found in a record since cut to an excerpt (the implicit check
    /// reads it with the records still whole).
    pub(crate) canary_leak: Option<String>,
    /// How many outcomes the case's own checks gave, preconditions aside: none means no rule of
    /// the case was exercised (every check's `when` premise failed on the host's path).
    pub(crate) rule_outcomes: usize,
    /// Whether a `generate` step is running its inputs: as many are judged as the case's budget
    /// allows, so the time a host takes to close a stream is not added to it there.
    pub(crate) generating: bool,
    /// When the runs the case's streams follow ended, as its streams saw them.
    pub(crate) run_ends: RunEnds,
}
