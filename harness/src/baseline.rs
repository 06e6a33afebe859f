//! Baselines of expected failures (`--baseline FILE`, `--write-baseline FILE`).
//!
//! ```json
//! {"version": 1, "expected_failures": [
//!   {"case": "x.idempotency.same-key", "reason": "known: upstream called twice"},
//!   {"case": "w.stream.keepalive", "check": "/steps/1/expect/0", "reason": "no keep-alive yet"}
//! ]}
//! ```
//!
//! An entry names a case, and optionally one check of it by its location (JSON pointer, or
//! `implicit:<name>`) or by its kind (`status`, `keepalive`, …). [`apply`] then rules:
//!
//! - a baselined case, or every failing check of it baselined, that still fails → XFAIL, with
//!   the entry's reason;
//! - a failing check not covered by the baseline → the case keeps its failure;
//! - a baselined case, or a baselined check, that no longer fails → STALE (fails the run);
//! - an entry naming a case the corpus does not have → STALE too
//!   ([`Baseline::unknown_case_results`]).
//!
//! ERROR, SKIP and BLOCKED cases are left as they are: a broken harness, an absent capability or
//! a case the harness could not judge says nothing about whether the expected failure still
//! happens. A "failure" here is a FAIL or WARN
//! verdict (a broken MUST or SHOULD); INFO observations are never baselined.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::report::{CaseResult, RunReport};
use crate::verdict::{CheckOutcome, Level, Verdict};

/// The baseline format version.
pub const BASELINE_FORMAT_VERSION: u32 = 1;

/// A baseline file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Baseline {
    /// [`BASELINE_FORMAT_VERSION`].
    pub version: u32,
    /// The failures expected to happen.
    pub expected_failures: Vec<ExpectedFailure>,
}

/// One expected failure.
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct ExpectedFailure {
    /// The case id.
    pub case: String,
    /// One check of the case, by location or kind; the whole case when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<String>,
    /// Why the failure is expected (shown with the XFAIL).
    pub reason: String,
}

impl ExpectedFailure {
    /// Whether this entry covers a check outcome (a whole-case entry covers every check).
    pub fn covers(&self, check: &CheckOutcome) -> bool {
        self.check
            .as_deref()
            .is_none_or(|name| name == check.location || name == check.check)
    }

    fn describe(&self) -> String {
        match &self.check {
            Some(check) => format!("`{}` check `{check}`", self.case),
            None => format!("`{}`", self.case),
        }
    }
}

/// A baseline could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum BaselineError {
    /// The file could not be read.
    #[error("failed to read the baseline `{}`", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a baseline.
    #[error("the baseline `{}` does not parse", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// The JSON error (with line and column).
        #[source]
        source: serde_json::Error,
    },
    /// The file's version is not [`BASELINE_FORMAT_VERSION`].
    #[error("the baseline `{}` has version {version}; this harness reads version {BASELINE_FORMAT_VERSION}", path.display())]
    Version {
        /// The file.
        path: PathBuf,
        /// The version found.
        version: u32,
    },
    /// An entry is invalid (empty case id or reason, or listed twice).
    #[error("the baseline `{}` entry {index}: {problem}", path.display())]
    Entry {
        /// The file.
        path: PathBuf,
        /// The entry's index in `expected_failures`.
        index: usize,
        /// What is wrong.
        problem: String,
    },
}

impl Baseline {
    /// Reads and validates a baseline file.
    ///
    /// # Errors
    ///
    /// The file cannot be read, is not a baseline of this version, or has an entry with an
    /// empty case or reason, or a duplicate entry.
    pub fn load(path: &Path) -> Result<Self, BaselineError> {
        let text = std::fs::read_to_string(path).map_err(|source| BaselineError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Self::from_json_str(&text, path)
    }

    /// Parses and validates baseline text; `path` is only used in errors.
    ///
    /// # Errors
    ///
    /// As [`Baseline::load`], without the read.
    pub fn from_json_str(text: &str, path: &Path) -> Result<Self, BaselineError> {
        let baseline: Baseline =
            serde_json::from_str(text).map_err(|source| BaselineError::Parse {
                path: path.to_path_buf(),
                source,
            })?;
        if baseline.version != BASELINE_FORMAT_VERSION {
            return Err(BaselineError::Version {
                path: path.to_path_buf(),
                version: baseline.version,
            });
        }
        let mut seen = BTreeSet::new();
        for (index, entry) in baseline.expected_failures.iter().enumerate() {
            let problem = if entry.case.trim().is_empty() {
                Some("the case id is empty".to_string())
            } else if entry.reason.trim().is_empty() {
                Some(format!("{} has no reason", entry.describe()))
            } else if entry.check.as_deref().is_some_and(|c| c.trim().is_empty()) {
                Some(format!("`{}` names an empty check", entry.case))
            } else if !seen.insert((&entry.case, &entry.check)) {
                Some(format!("{} is listed twice", entry.describe()))
            } else {
                None
            };
            if let Some(problem) = problem {
                return Err(BaselineError::Entry {
                    path: path.to_path_buf(),
                    index,
                    problem,
                });
            }
        }
        Ok(baseline)
    }

    /// The baseline as its file text (pretty JSON, trailing newline).
    pub fn to_json_string(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_else(|_| {
            format!("{{\"version\": {BASELINE_FORMAT_VERSION}, \"expected_failures\": []}}")
        });
        text.push('\n');
        text
    }

    /// The baseline that expects exactly the failures of a run (`--write-baseline`): one entry
    /// per failing check (by location) of every FAIL, WARN or XFAIL case, or one whole-case
    /// entry when the case failed without a failing check. ERROR, SKIP, BLOCKED and STALE cases
    /// get no entry. Entries are sorted by case and check.
    pub fn from_failures(report: &RunReport) -> Baseline {
        let mut entries = BTreeSet::new();
        for case in &report.cases {
            let failed = matches!(case.verdict, Verdict::Fail | Verdict::Warn)
                || (case.verdict == Verdict::Xfail && is_failure(case.raw_verdict));
            if !failed {
                continue;
            }
            let failing: Vec<&CheckOutcome> = case
                .checks
                .iter()
                .filter(|c| is_failure(c.verdict))
                .collect();
            if failing.is_empty() {
                entries.insert(ExpectedFailure {
                    case: case.id.clone(),
                    check: None,
                    reason: recorded_reason(report, case.reason.as_deref().unwrap_or("failed")),
                });
            }
            for check in failing {
                entries.insert(ExpectedFailure {
                    case: case.id.clone(),
                    check: Some(check.location.clone()),
                    reason: recorded_reason(report, &check.message),
                });
            }
        }
        // One entry per (case, check): keep the first reason.
        let mut seen = BTreeSet::new();
        let expected_failures = entries
            .into_iter()
            .filter(|e| seen.insert((e.case.clone(), e.check.clone())))
            .collect();
        Baseline {
            version: BASELINE_FORMAT_VERSION,
            expected_failures,
        }
    }

    /// The entries naming a case not in `known_case_ids` (pass every case id of the corpus,
    /// before filters, so that filtered-out cases are not reported).
    pub fn unknown_entries<'a, 'b>(
        &'a self,
        known_case_ids: impl IntoIterator<Item = &'b str>,
    ) -> Vec<&'a ExpectedFailure> {
        let known: BTreeSet<&str> = known_case_ids.into_iter().collect();
        self.expected_failures
            .iter()
            .filter(|e| !known.contains(e.case.as_str()))
            .collect()
    }

    /// One STALE case result per case id the baseline names that the corpus lacks, so the
    /// run reports it (and fails, as for any stale entry).
    pub fn unknown_case_results<'b>(
        &self,
        known_case_ids: impl IntoIterator<Item = &'b str>,
    ) -> Vec<CaseResult> {
        let mut results: Vec<CaseResult> = Vec::new();
        for entry in self.unknown_entries(known_case_ids) {
            if results.iter().any(|r| r.id == entry.case) {
                continue;
            }
            results.push(CaseResult {
                id: entry.case.clone(),
                title: "baseline entry for a case that does not exist".to_string(),
                file: String::new(),
                level: Level::Must,
                surface: crate::report::ResultSurface::Baseline,
                tags: Vec::new(),
                requirements: Vec::new(),
                verdict: Verdict::Stale,
                raw_verdict: Verdict::Stale,
                reason: Some(format!(
                    "the baseline names case `{}`, which no case file defines (renamed or removed?); remove the entry ({})",
                    entry.case, entry.reason
                )),
                duration_ms: 0,
                checks: Vec::new(),
                transcript: Vec::new(),
                counterexample: None,
                provider_scripts: Vec::new(),
            });
        }
        results
    }

    /// The entries for one case.
    pub fn entries_for<'a>(
        &'a self,
        case_id: &'a str,
    ) -> impl Iterator<Item = &'a ExpectedFailure> {
        self.expected_failures
            .iter()
            .filter(move |e| e.case == case_id)
    }
}

fn recorded_reason(report: &RunReport, message: &str) -> String {
    let message: String = message.split_whitespace().collect::<Vec<_>>().join(" ");
    let message = if message.chars().count() > 200 {
        format!("{}…", message.chars().take(200).collect::<String>())
    } else {
        message
    };
    format!(
        "recorded by --write-baseline from run {}: {message}",
        report.run_id
    )
}

/// Whether a verdict is a failure a baseline can expect (FAIL or WARN).
fn is_failure(verdict: Verdict) -> bool {
    matches!(verdict, Verdict::Fail | Verdict::Warn)
}

/// Applies the baseline to one case result (see the module rules). `case.verdict` is read as
/// the verdict before the baseline (or `case.raw_verdict`, if the case was already baselined);
/// the result's `raw_verdict` holds it.
pub fn apply(baseline: &Baseline, mut case: CaseResult) -> CaseResult {
    let raw = if matches!(case.verdict, Verdict::Xfail | Verdict::Stale) {
        case.raw_verdict
    } else {
        case.verdict
    };
    case.raw_verdict = raw;
    case.verdict = raw;
    let entries: Vec<&ExpectedFailure> = baseline.entries_for(&case.id).collect();
    // A case that was not judged neither confirms nor contradicts its entries.
    if entries.is_empty() || matches!(raw, Verdict::Error | Verdict::Skip | Verdict::Blocked) {
        return case;
    }

    let failing: Vec<&CheckOutcome> = case
        .checks
        .iter()
        .filter(|c| is_failure(c.verdict))
        .collect();
    let case_failed = is_failure(raw);
    let whole_case = entries.iter().find(|e| e.check.is_none());

    // Entries that expect a failure which did not happen.
    let stale: Vec<&&ExpectedFailure> = entries
        .iter()
        .filter(|entry| match &entry.check {
            None => !case_failed,
            Some(_) => !failing.iter().any(|check| entry.covers(check)),
        })
        .collect();
    // Failures no entry expects.
    let uncovered: Vec<&CheckOutcome> = failing
        .iter()
        .copied()
        .filter(|check| !entries.iter().any(|e| e.covers(check)))
        .collect();
    let uncovered_case_failure = case_failed && failing.is_empty() && whole_case.is_none();
    let uncovered_verdict = uncovered
        .iter()
        .map(|c| c.verdict)
        .chain(uncovered_case_failure.then_some(raw))
        .max();

    let stale_text = || {
        stale
            .iter()
            .map(|e| format!("{} no longer fails (baseline: {})", e.describe(), e.reason))
            .collect::<Vec<_>>()
            .join("; ")
    };
    let uncovered_text = || {
        let mut parts: Vec<String> = uncovered
            .iter()
            .map(|c| {
                format!(
                    "`{}` at {} is not in the baseline: {}",
                    c.check, c.location, c.message
                )
            })
            .collect();
        if uncovered_case_failure {
            parts.push(
                "the case failed without a failing check, and only checks are baselined"
                    .to_string(),
            );
        }
        parts.join("; ")
    };

    match uncovered_verdict {
        Some(Verdict::Fail) => {
            case.verdict = Verdict::Fail;
            let mut reason = format!("new failure: {}", uncovered_text());
            if !stale.is_empty() {
                reason.push_str(&format!("; stale baseline: {}", stale_text()));
            }
            case.reason = Some(reason);
        }
        _ if !stale.is_empty() => {
            case.verdict = Verdict::Stale;
            let mut reason = format!("stale baseline: {}; remove the entry", stale_text());
            if uncovered_verdict.is_some() {
                reason.push_str(&format!("; also: {}", uncovered_text()));
            }
            case.reason = Some(reason);
        }
        Some(verdict) => {
            case.verdict = verdict;
            case.reason = Some(format!("new failure: {}", uncovered_text()));
        }
        None => {
            case.verdict = Verdict::Xfail;
            let mut reasons: Vec<&str> = Vec::new();
            for entry in &entries {
                if !reasons.contains(&entry.reason.as_str()) {
                    reasons.push(&entry.reason);
                }
            }
            case.reason = Some(format!("expected failure: {}", reasons.join("; ")));
        }
    }
    case
}
