//! The tolerance matrix: proof that no case fails a host for taking an option the seeds leave
//! open. The corpus runs against each non-standard built-in profile of the reference runtime
//! (each takes, at some open point of `spec/open-points.json`, an option the standard profile
//! does not, and keeps every MUST and SHOULD). Against each, the corpus must give no FAIL, no
//! WARN, no ERROR, and INFO only from checks of level CONTRACT; every open point must be
//! exercised (a case bordering it runs, not SKIPped, against a profile taking another option).
//!
//! The kill matrix proves every check can fail; this proves none fails a host that is allowed to
//! behave differently. Both write their results the same way (`*.json`, `*.md`, `*.html`).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use spec::open_points::{OpenPointRegistry, STANDARD_PROFILE};

use crate::launch::BuiltInProfile;
use crate::selftest::{SelftestError, run_observed};
use harness::case::LoadedCase;
use harness::report::{CaseResult, RunReport};
use harness::run::{Quiet, RunObserver};
use harness::verdict::{CheckOutcome, Level, Verdict};

/// One case that did not tolerate a profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Intolerance {
    /// The profile.
    pub profile: BuiltInProfile,
    /// The case.
    pub case: String,
    /// The case's level.
    pub level: Level,
    /// Its verdict.
    pub verdict: Verdict,
    /// Why it is not tolerance: the first offending check, or the case's reason.
    pub message: String,
    /// The open points its requirements border.
    pub open_points: Vec<String>,
}

/// The corpus against one profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfileRun {
    /// The profile.
    pub profile: BuiltInProfile,
    /// The open points where it takes an option other than the standard profile's.
    pub diverges_at: Vec<String>,
    /// The SHOULD requirements it departs from on purpose (a WARN is tolerated there only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub departs_from: Vec<String>,
    /// The cases whose WARN those departures account for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub departures: Vec<String>,
    /// Verdict counts.
    pub counts: BTreeMap<Verdict, u32>,
    /// Every case's verdict.
    pub cases: BTreeMap<String, Verdict>,
}

/// One open point: who takes which option, and which cases exercised the other options.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointRow {
    /// The point.
    pub point: String,
    /// The standard profile's option.
    pub standard_option: String,
    /// Profile → its option, for every run profile off the standard option.
    pub divergent_options: BTreeMap<String, String>,
    /// `profile: case` for every bordering case that ran (not SKIP) against such a profile.
    pub exercised_by: Vec<String>,
    /// Verdict counts of those runs.
    pub verdicts: BTreeMap<Verdict, u32>,
}

impl PointRow {
    /// Whether some bordering case ran against a profile taking another option.
    pub fn exercised(&self) -> bool {
        !self.exercised_by.is_empty()
    }
}

/// The whole matrix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToleranceMatrix {
    /// Format version.
    pub format_version: u32,
    /// One run per profile.
    pub profiles: Vec<ProfileRun>,
    /// Every case that did not tolerate a profile (must be empty).
    pub intolerances: Vec<Intolerance>,
    /// One row per open point.
    pub points: Vec<PointRow>,
    /// Wall time in milliseconds.
    pub duration_ms: u64,
}

impl ToleranceMatrix {
    /// The open points no run exercised.
    pub fn unexercised(&self) -> Vec<&str> {
        self.points
            .iter()
            .filter(|p| !p.exercised())
            .map(|p| p.point.as_str())
            .collect()
    }

    /// Whether every case tolerated every profile and every open point was exercised.
    pub fn passes(&self) -> bool {
        self.intolerances.is_empty() && self.unexercised().is_empty()
    }
}

/// Why a case result is not tolerance, if it is not: FAIL, WARN, ERROR, STALE, XFAIL, or an
/// INFO from a check whose level is not CONTRACT. A WARN is tolerated only when every check
/// that warned proves requirements among `departs_from` alone (the SHOULDs the profile departs
/// from on purpose: [`BuiltInProfile::departs_from`]) and no other check failed.
pub fn intolerance_of(result: &CaseResult, departs_from: &[&str]) -> Option<String> {
    match result.verdict {
        Verdict::Pass | Verdict::Skip => None,
        Verdict::Warn if !departs_from.is_empty() => departure_intolerance(result, departs_from),
        Verdict::Info => result
            .checks
            .iter()
            .find(|c| c.verdict == Verdict::Info && c.level != Level::Contract)
            .map(|c| {
                format!(
                    "INFO from a {} check: {}: {}",
                    c.level.as_str(),
                    c.check,
                    c.message
                )
            }),
        _ => Some(
            harness::report::first_failing_check(result)
                .map(|k| format!("{}: {}", k.check, k.message))
                .or_else(|| result.reason.clone())
                .unwrap_or_else(|| result.verdict.to_string()),
        ),
    }
}

/// Whether a check is a WARN at the departed SHOULDs alone.
fn is_departure(check: &CheckOutcome, departs_from: &[&str]) -> bool {
    check.verdict == Verdict::Warn
        && !check.requirements.is_empty()
        && check
            .requirements
            .iter()
            .all(|r| departs_from.contains(&r.as_str()))
}

/// Why a WARN case is not tolerance for a profile departing from `departs_from`: a check that
/// failed otherwise (a WARN elsewhere, an INFO from a non-CONTRACT check, anything worse), or
/// no check at all that accounts for the WARN.
fn departure_intolerance(result: &CaseResult, departs_from: &[&str]) -> Option<String> {
    let offending = result.checks.iter().find(|c| match c.verdict {
        Verdict::Pass => false,
        Verdict::Info => c.level != Level::Contract,
        _ => !is_departure(c, departs_from),
    });
    if let Some(check) = offending {
        return Some(format!(
            "{} ({}): {}",
            check.check,
            check.requirements.join(", "),
            check.message
        ));
    }
    if result.checks.iter().any(|c| is_departure(c, departs_from)) {
        None
    } else {
        Some(
            result
                .reason
                .clone()
                .unwrap_or_else(|| "WARN with no check at a departed SHOULD".into()),
        )
    }
}

/// The case ids whose WARN the profile's departures account for (tolerated).
fn departures_of(report: &RunReport, departs_from: &[&str]) -> Vec<String> {
    report
        .cases
        .iter()
        .filter(|c| c.verdict == Verdict::Warn && intolerance_of(c, departs_from).is_none())
        .map(|c| c.id.clone())
        .collect()
}

/// The open points each requirement borders.
fn bordered_points<'a>(registry: &'a OpenPointRegistry, result: &CaseResult) -> Vec<&'a str> {
    registry
        .points
        .iter()
        .filter(|p| result.requirements.iter().any(|r| p.borders.contains(r)))
        .map(|p| p.id.as_str())
        .collect()
}

/// Builds the matrix from one report per profile.
pub fn matrix_from_reports(
    registry: &OpenPointRegistry,
    reports: &[(BuiltInProfile, RunReport)],
) -> ToleranceMatrix {
    let mut profiles = Vec::new();
    let mut intolerances = Vec::new();
    for (profile, report) in reports {
        let name = profile.as_str();
        let diverges_at = registry
            .points
            .iter()
            .filter(|p| p.divergent_profiles().contains(&name))
            .map(|p| p.id.clone())
            .collect();
        let departs_from = profile.departs_from();
        for result in &report.cases {
            if let Some(message) = intolerance_of(result, departs_from) {
                intolerances.push(Intolerance {
                    profile: *profile,
                    case: result.id.clone(),
                    level: result.level,
                    verdict: result.verdict,
                    message,
                    open_points: bordered_points(registry, result)
                        .into_iter()
                        .map(str::to_string)
                        .collect(),
                });
            }
        }
        profiles.push(ProfileRun {
            profile: *profile,
            diverges_at,
            departs_from: departs_from.iter().map(|r| r.to_string()).collect(),
            departures: departures_of(report, departs_from),
            counts: report.summary.by_verdict.clone(),
            cases: report
                .cases
                .iter()
                .map(|c| (c.id.clone(), c.verdict))
                .collect(),
        });
    }
    let points = registry
        .points
        .iter()
        .map(|point| {
            let standard_option = point
                .option_of(STANDARD_PROFILE)
                .map(|o| o.id.clone())
                .unwrap_or_default();
            let mut divergent_options = BTreeMap::new();
            let mut exercised_by = Vec::new();
            let mut verdicts: BTreeMap<Verdict, u32> = BTreeMap::new();
            for (profile, report) in reports {
                let Some(option) = point.option_of(profile.as_str()) else {
                    continue;
                };
                if option.id == standard_option {
                    continue;
                }
                divergent_options.insert(profile.to_string(), option.id.clone());
                for result in report.cases.iter().filter(|c| {
                    c.verdict != Verdict::Skip
                        && c.requirements.iter().any(|r| point.borders.contains(r))
                }) {
                    exercised_by.push(format!("{profile}: {}", result.id));
                    *verdicts.entry(result.verdict).or_default() += 1;
                }
            }
            PointRow {
                point: point.id.clone(),
                standard_option,
                divergent_options,
                exercised_by,
                verdicts,
            }
        })
        .collect();
    ToleranceMatrix {
        format_version: 1,
        profiles,
        intolerances,
        points,
        duration_ms: 0,
    }
}

/// Runs the corpus against each profile (clean runtime): one report per profile.
pub async fn profile_reports(
    cases: &[LoadedCase],
    profiles: &[BuiltInProfile],
    jobs: usize,
    time_scale: f64,
) -> Result<Vec<(BuiltInProfile, RunReport)>, SelftestError> {
    profile_reports_observed(cases, profiles, jobs, time_scale, &Quiet).await
}

/// As [`profile_reports`], telling `observer` of every case starting and finishing.
async fn profile_reports_observed(
    cases: &[LoadedCase],
    profiles: &[BuiltInProfile],
    jobs: usize,
    time_scale: f64,
    observer: &dyn RunObserver,
) -> Result<Vec<(BuiltInProfile, RunReport)>, SelftestError> {
    let mut reports = Vec::new();
    for profile in profiles {
        let report = run_observed(
            cases,
            Vec::new(),
            *profile,
            None,
            jobs,
            time_scale,
            observer,
        )
        .await?;
        eprintln!("{profile:<16} {} case(s) judged", report.cases.len());
        reports.push((*profile, report));
    }
    Ok(reports)
}

/// Runs the corpus against each profile (clean runtime) and builds the matrix.
pub async fn tolerance_matrix(
    cases: &[LoadedCase],
    profiles: &[BuiltInProfile],
    jobs: usize,
    time_scale: f64,
) -> Result<ToleranceMatrix, SelftestError> {
    tolerance_matrix_observed(cases, profiles, jobs, time_scale, &Quiet).await
}

/// As [`tolerance_matrix`], telling `observer` of every case of every run starting and
/// finishing (the command's watchdog).
pub async fn tolerance_matrix_observed(
    cases: &[LoadedCase],
    profiles: &[BuiltInProfile],
    jobs: usize,
    time_scale: f64,
    observer: &dyn RunObserver,
) -> Result<ToleranceMatrix, SelftestError> {
    let started = std::time::Instant::now();
    let reports = profile_reports_observed(cases, profiles, jobs, time_scale, observer).await?;
    let mut matrix = matrix_from_reports(spec::open_points::open_points(), &reports);
    matrix.duration_ms = started.elapsed().as_millis() as u64;
    Ok(matrix)
}

/// The profiles the full matrix runs: every non-standard one.
pub fn matrix_profiles() -> Vec<BuiltInProfile> {
    BuiltInProfile::ALL
        .into_iter()
        .filter(|p| !p.is_standard())
        .collect()
}

/// Writes `tolerance-matrix.{json,md,html}` into `dir`.
pub fn write_matrix(matrix: &ToleranceMatrix, dir: &Path) -> Result<(), SelftestError> {
    crate::selftest::write_matrix_files(
        dir,
        "tolerance-matrix",
        serde_json::to_string_pretty(matrix).unwrap_or_default(),
        render_markdown(matrix),
        render_html(matrix),
    )
}

fn counts(counts: &BTreeMap<Verdict, u32>) -> String {
    counts
        .iter()
        .map(|(v, n)| format!("{n} {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The tolerance matrix as Markdown.
pub fn render_markdown(matrix: &ToleranceMatrix) -> String {
    let exercised = matrix.points.iter().filter(|p| p.exercised()).count();
    let mut out = format!(
        "# Tolerance matrix\n\n{} intolerance(s); {exercised}/{} open points exercised.\n\n\
         | profile | diverges at | verdicts |\n|---|---|---|\n",
        matrix.intolerances.len(),
        matrix.points.len()
    );
    for run in &matrix.profiles {
        out.push_str(&format!(
            "| `{}` | {} point(s) | {} |\n",
            run.profile,
            run.diverges_at.len(),
            counts(&run.counts)
        ));
    }
    for run in matrix
        .profiles
        .iter()
        .filter(|r| !r.departs_from.is_empty())
    {
        out.push_str(&format!(
            "\n`{}` departs on purpose from {}: WARN tolerated there only ({} case(s): {}).\n",
            run.profile,
            run.departs_from.join(", "),
            run.departures.len(),
            run.departures.join(", ")
        ));
    }
    if !matrix.intolerances.is_empty() {
        out.push_str("\n## Cases that did not tolerate a profile\n\n");
        for i in &matrix.intolerances {
            out.push_str(&format!(
                "- [{}] `{}` ({}, {}): {} — open points: {}\n",
                i.profile,
                i.case,
                i.level.as_str(),
                i.verdict,
                i.message,
                if i.open_points.is_empty() {
                    "none bordered".to_string()
                } else {
                    i.open_points.join(", ")
                }
            ));
        }
    }
    out.push_str(
        "\n## Open points\n\n| point | standard | other options run | cases run | verdicts |\n|---|---|---|---|---|\n",
    );
    for p in &matrix.points {
        let options = if p.divergent_options.is_empty() {
            "**none**".to_string()
        } else {
            p.divergent_options
                .iter()
                .map(|(profile, option)| format!("`{option}` ({profile})"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        out.push_str(&format!(
            "| `{}` | `{}` | {options} | {} | {} |\n",
            p.point,
            p.standard_option,
            p.exercised_by.len(),
            counts(&p.verdicts)
        ));
    }
    out
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The tolerance matrix as one self-contained HTML page.
pub fn render_html(matrix: &ToleranceMatrix) -> String {
    let mut profiles = String::new();
    for run in &matrix.profiles {
        profiles.push_str(&format!(
            "<tr><td><code>{}</code></td><td>{}</td><td>{}</td></tr>\n",
            run.profile,
            escape(&run.diverges_at.join(", ")),
            escape(&counts(&run.counts))
        ));
    }
    let mut intolerances = String::new();
    for i in &matrix.intolerances {
        intolerances.push_str(&format!(
            "<tr><td>{}</td><td><code>{}</code></td><td class=\"bad\">{}</td><td>{}</td><td>{}</td></tr>\n",
            i.profile,
            escape(&i.case),
            i.verdict,
            escape(&i.message),
            escape(&i.open_points.join(", "))
        ));
    }
    let mut points = String::new();
    for p in &matrix.points {
        points.push_str(&format!(
            "<tr><td><code>{}</code></td><td><code>{}</code></td><td>{}</td><td{}>{}</td><td>{}</td></tr>\n",
            escape(&p.point),
            escape(&p.standard_option),
            escape(
                &p.divergent_options
                    .iter()
                    .map(|(profile, option)| format!("{option} ({profile})"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            if p.exercised() { "" } else { " class=\"bad\"" },
            p.exercised_by.len(),
            escape(&counts(&p.verdicts))
        ));
    }
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Tolerance matrix</title><style>\
body{{font-family:system-ui,sans-serif;margin:2rem}}table{{border-collapse:collapse;margin-bottom:1.5rem}}td,th{{border:1px solid #ccc;padding:.4rem;vertical-align:top}}\
.bad{{color:#b00020}}</style></head><body><h1>Tolerance matrix</h1>\
<p>{} intolerance(s); {}/{} open points exercised.</p>\
<table><tr><th>profile</th><th>diverges at</th><th>verdicts</th></tr>{profiles}</table>\
<table><tr><th>profile</th><th>case</th><th>verdict</th><th>why</th><th>open points</th></tr>{intolerances}</table>\
<table><tr><th>point</th><th>standard</th><th>other options run</th><th>cases run</th><th>verdicts</th></tr>{points}</table></body></html>\n",
        matrix.intolerances.len(),
        matrix.points.iter().filter(|p| p.exercised()).count(),
        matrix.points.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEPARTED: &[&str] = &["events.stream-mode.should-implement-debug"];

    fn check(verdict: &str, level: &str, requirements: &[&str]) -> serde_json::Value {
        serde_json::json!({
            "check": "status", "location": "/steps/0/expect/0", "step": "debug",
            "level": level, "requirements": requirements, "verdict": verdict,
            "message": "m", "expected": null, "actual": null
        })
    }

    fn result(verdict: &str, checks: Vec<serde_json::Value>) -> CaseResult {
        serde_json::from_value(serde_json::json!({
            "id": "w.case", "title": "t", "file": "openwop/case.json", "level": "SHOULD",
            "surface": "openwop", "tags": [], "requirements": [], "verdict": verdict,
            "raw_verdict": verdict, "reason": null, "duration_ms": 1, "checks": checks,
            "transcript": [], "counterexample": null
        }))
        .unwrap()
    }

    #[test]
    fn a_warn_is_tolerated_only_at_the_departed_shoulds() {
        let departed = check("WARN", "SHOULD", DEPARTED);
        let elsewhere = check(
            "WARN",
            "SHOULD",
            &["events.stream-mode.should-implement-values"],
        );
        let mixed = check(
            "WARN",
            "SHOULD",
            &[DEPARTED[0], "events.stream-mode.should-implement-values"],
        );
        let contract_info = check("INFO", "CONTRACT", &[]);
        let passed = check(
            "PASS",
            "MUST",
            &["events.stream-mode.unimplemented-mode-400"],
        );
        let warn = |checks| result("WARN", checks);
        // At the departed SHOULD alone (beside passes and CONTRACT INFO): tolerated.
        let ok = warn(vec![
            departed.clone(),
            contract_info.clone(),
            passed.clone(),
        ]);
        assert_eq!(intolerance_of(&ok, DEPARTED), None);
        // Not for a profile that departs from nothing.
        assert!(intolerance_of(&ok, &[]).is_some());
        // Not beside a WARN elsewhere, nor for a check proving another requirement too.
        assert!(intolerance_of(&warn(vec![departed.clone(), elsewhere]), DEPARTED).is_some());
        assert!(intolerance_of(&warn(vec![mixed]), DEPARTED).is_some());
        // Not beside a failed MUST, nor an INFO from a check not of level CONTRACT.
        let failed = check(
            "FAIL",
            "MUST",
            &["events.stream-mode.unimplemented-mode-400"],
        );
        assert!(intolerance_of(&warn(vec![departed.clone(), failed]), DEPARTED).is_some());
        let may_info = check("INFO", "MAY", &[]);
        assert!(intolerance_of(&warn(vec![departed.clone(), may_info]), DEPARTED).is_some());
        // Not a WARN no check accounts for.
        assert!(intolerance_of(&warn(vec![passed]), DEPARTED).is_some());
        // A FAIL stays intolerance whatever the profile departs from.
        assert!(intolerance_of(&result("FAIL", vec![departed]), DEPARTED).is_some());
    }
}
