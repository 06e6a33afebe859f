//! Verdicts: what a check, a case and a run conclude.
//!
//! A host failure is a verdict (data), never an `Err`: `Err` means the harness broke, and is
//! reported as [`Verdict::Error`], never counted against the host.

use serde::{Deserialize, Serialize};

/// The normative level of an assertion, which sets the verdict when it fails.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
pub enum Level {
    /// A MUST or MUST NOT: failing it is [`Verdict::Fail`].
    #[serde(rename = "MUST")]
    Must,
    /// A SHOULD or SHOULD NOT: failing it is [`Verdict::Warn`].
    #[serde(rename = "SHOULD")]
    Should,
    /// A MAY: an observation, [`Verdict::Info`].
    #[serde(rename = "MAY")]
    May,
    /// A decision of CONTRACT.md the documents leave open: binds the reference runtime, reported
    /// as [`Verdict::Info`] for any other host.
    #[serde(rename = "CONTRACT")]
    Contract,
}

impl Level {
    /// The verdict when an assertion at this level fails.
    pub fn failure_verdict(self) -> Verdict {
        match self {
            Level::Must => Verdict::Fail,
            Level::Should => Verdict::Warn,
            Level::May | Level::Contract => Verdict::Info,
        }
    }

    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Must => "MUST",
            Level::Should => "SHOULD",
            Level::May => "MAY",
            Level::Contract => "CONTRACT",
        }
    }

    /// The level of a requirement-registry level (`MUST NOT` is `MUST`, …).
    pub fn of_requirement(level: spec::requirements::Level) -> Level {
        use spec::requirements::Level as R;
        match level {
            R::Must | R::MustNot => Level::Must,
            R::Should | R::ShouldNot => Level::Should,
            R::May => Level::May,
        }
    }
}

/// The verdict of a check, a case, a requirement or a run.
///
/// Ordered from best to worst for aggregation, except that [`Verdict::Error`],
/// [`Verdict::Skip`] and [`Verdict::Blocked`] are never a host's failure; see
/// [`Verdict::worst`].
///
/// SKIP and BLOCKED differ in whose fact the reason is: SKIP is a fact about the host (it lacks
/// an optional capability it does not advertise); BLOCKED is a fact about the harness (it could
/// not judge: a discovery document unreadable, a fixture the host does not list, no fake
/// provider bound for a role, a fact the operator did not give, a precondition that failed).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "UPPERCASE")]
pub enum Verdict {
    /// Every assertion held.
    Pass,
    /// A MAY observation or a contract decision differed (not a failure).
    Info,
    /// The case needs an optional capability the host does not have (with the reason).
    Skip,
    /// The harness could not judge the case (with the reason); never the host's failure, but a
    /// BLOCKED case of level MUST means the run does not conform.
    Blocked,
    /// Failed, but the baseline expects it to fail.
    Xfail,
    /// A SHOULD was broken.
    Warn,
    /// A MUST was broken.
    Fail,
    /// The baseline expects a failure that no longer happens: the baseline is stale.
    Stale,
    /// The harness or the environment broke; never counted as the host's failure.
    Error,
}

impl Verdict {
    /// The worse of two verdicts for aggregation (ERROR dominates: a broken harness invalidates
    /// the run's conclusion).
    pub fn worst(self, other: Verdict) -> Verdict {
        self.max(other)
    }

    /// Whether this verdict makes the run non-conforming (exit code 1).
    pub fn is_conformance_failure(self) -> bool {
        matches!(self, Verdict::Fail | Verdict::Stale)
    }

    /// Whether a case with this verdict was judged: its checks ran against the host and say
    /// something about it (not SKIP, BLOCKED or ERROR).
    pub fn is_judged(self) -> bool {
        !matches!(self, Verdict::Skip | Verdict::Blocked | Verdict::Error)
    }

    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Info => "INFO",
            Verdict::Skip => "SKIP",
            Verdict::Blocked => "BLOCKED",
            Verdict::Xfail => "XFAIL",
            Verdict::Warn => "WARN",
            Verdict::Fail => "FAIL",
            Verdict::Stale => "STALE",
            Verdict::Error => "ERROR",
        }
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The outcome of one check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CheckOutcome {
    /// The check's kind (`status`, `exclusive_after`, …), from the closed vocabulary.
    pub check: String,
    /// Where in the case file the check is (JSON pointer), or `implicit:<name>` for the
    /// harness's own checks.
    pub location: String,
    /// The step it judged, when any.
    pub step: Option<String>,
    /// The level it was asserted at.
    pub level: Level,
    /// The requirement ids it proves.
    pub requirements: Vec<String>,
    /// PASS, or the failure verdict of its level.
    pub verdict: Verdict,
    /// One line saying what held or what broke.
    pub message: String,
    /// What was expected, rendered for a diff (when failed).
    pub expected: Option<String>,
    /// What came, rendered for a diff (when failed).
    pub actual: Option<String>,
}

impl CheckOutcome {
    /// Whether the check held.
    pub fn passed(&self) -> bool {
        self.verdict == Verdict::Pass
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aggregation_orders_verdicts() {
        assert_eq!(Verdict::Pass.worst(Verdict::Warn), Verdict::Warn);
        assert_eq!(Verdict::Fail.worst(Verdict::Warn), Verdict::Fail);
        assert_eq!(Verdict::Fail.worst(Verdict::Error), Verdict::Error);
        assert_eq!(Verdict::Info.worst(Verdict::Pass), Verdict::Info);
        assert_eq!(Level::Should.failure_verdict(), Verdict::Warn);
        assert_eq!(Level::Contract.failure_verdict(), Verdict::Info);
        assert_eq!(Verdict::Skip.worst(Verdict::Blocked), Verdict::Blocked);
        assert_eq!(Verdict::Blocked.worst(Verdict::Fail), Verdict::Fail);
        assert!(!Verdict::Blocked.is_judged());
        assert!(Verdict::Xfail.is_judged());
        assert_eq!(
            serde_json::to_string(&Verdict::Blocked).unwrap(),
            "\"BLOCKED\""
        );
    }
}
