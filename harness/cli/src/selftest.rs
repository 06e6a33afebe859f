//! The self-test: proof that every check can fail. The suite runs against the clean built-in
//! runtime under each built-in profile (which must pass or skip every case) and against the
//! runtime with each known defect switched on, under the profile that defect shows in (each
//! defect must be caught by at least one case with FAIL or WARN, which only a MUST or SHOULD
//! check gives, whatever the case's level). The result is
//! the kill matrix, with the mutation score.
//!
//! A MUST case that catches no defect needs a recorded reason in
//! `cases/selftest-exemptions.json` (`{"version": 1, "exemptions": {"<case id>": "<reason>"}}`).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;

use serde::{Deserialize, Serialize};

use crate::launch::{BuiltInOptions, BuiltInProfile, DefectInfo, defect_catalogue, start_built_in};
use harness::case::{CaseSurface, LoadedCase};
use harness::report::RunReport;
use harness::run::{CaseRunner, ClientOptions, HttpDriver, Limits};
use harness::run::{Filters, Quiet, RunObserver, RunSettings, run_cases as run};
use harness::verdict::{Level, Verdict};

/// One case that caught a defect.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Kill {
    /// The case.
    pub case: String,
    /// Its level.
    pub level: Level,
    /// Its verdict against the defective runtime.
    pub verdict: Verdict,
    /// Its first failing check's message.
    pub message: String,
}

/// One row of the kill matrix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DefectRow {
    /// The defect.
    pub defect: DefectInfo,
    /// The cases that caught it (FAIL or WARN).
    pub killed_by: Vec<Kill>,
    /// Whether a MUST or SHOULD check caught it (FAIL or WARN, in a case of any level).
    pub killed: bool,
    /// Cases that ended in ERROR against this runtime (never a kill).
    pub errors: Vec<String>,
}

/// The whole matrix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KillMatrix {
    /// Format version.
    pub format_version: u32,
    /// The clean runtime's verdict counts, per built-in profile (`standard`, `alternate`).
    pub clean: BTreeMap<String, BTreeMap<Verdict, u32>>,
    /// Clean-runtime cases that did not PASS or SKIP, under either profile, each prefixed with
    /// its profile (must be empty).
    pub clean_failures: Vec<String>,
    /// One row per defect.
    pub defects: Vec<DefectRow>,
    /// Killed defects / all defects.
    pub mutation_score: f64,
    /// MUST cases that caught no defect, with their recorded reason (or none).
    pub must_cases_without_kill: Vec<(String, Option<String>)>,
    /// Wall time in milliseconds.
    pub duration_ms: u64,
}

impl KillMatrix {
    /// Whether the self-test passes: clean runtime all PASS, every defect killed, every MUST
    /// case without a kill has a reason.
    pub fn passes(&self) -> bool {
        self.clean_failures.is_empty()
            && self.defects.iter().all(|d| d.killed)
            && self
                .must_cases_without_kill
                .iter()
                .all(|(_, reason)| reason.is_some())
    }
}

/// The self-test could not run.
#[derive(Debug, thiserror::Error)]
pub enum SelftestError {
    /// The built-in target did not start.
    #[error("the built-in target did not start: {0}")]
    Launch(String),
    /// The HTTP client could not be built.
    #[error("{0}")]
    Client(String),
    /// A report file could not be written.
    #[error("failed to write {path}: {source}")]
    Write {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
}

/// Runs `cases` against the built-in runtime with `defects` under `profile` (one surface, or
/// both) and returns the report.
pub(crate) async fn run_against(
    cases: &[LoadedCase],
    defects: Vec<String>,
    profile: BuiltInProfile,
    surface: Option<CaseSurface>,
    jobs: usize,
    time_scale: f64,
) -> Result<RunReport, SelftestError> {
    run_observed(cases, defects, profile, surface, jobs, time_scale, &Quiet).await
}

/// As [`run_against`], telling `observer` of every case starting and finishing (a watchdog).
pub(crate) async fn run_observed(
    cases: &[LoadedCase],
    defects: Vec<String>,
    profile: BuiltInProfile,
    surface: Option<CaseSurface>,
    jobs: usize,
    time_scale: f64,
    observer: &dyn RunObserver,
) -> Result<RunReport, SelftestError> {
    let running = start_built_in(&BuiltInOptions {
        defects,
        profile,
        ..BuiltInOptions::default()
    })
    .await
    .map_err(|e| SelftestError::Launch(e.to_string()))?;
    let driver = HttpDriver::new(&ClientOptions::default(), Limits::default())
        .map_err(|e| SelftestError::Client(e.to_string()))?;
    let mut target = running.target.clone();
    harness::target::probe(&driver, &target, Duration::from_secs(10))
        .await
        .apply_to(&mut target);
    let runner = CaseRunner {
        driver: driver.watching_canary(target.canary.as_deref()),
        target: Arc::new(target),
        time_scale,
        proptest_seed: 1,
        regressions_dir: None,
    };
    let filters = Filters {
        surfaces: surface.into_iter().collect(),
        ..Filters::default()
    };
    let settings = RunSettings {
        jobs,
        shuffle_seed: None,
        baseline_path: None,
        ..RunSettings::default()
    };
    let report = run(&runner, cases, &filters, &settings, &|r| r, observer).await;
    running.shutdown().await;
    Ok(report)
}

/// Runs the self-test and writes `kill-matrix.{md,json,html}` into `dir`; `observer` hears
/// every case of every run start and finish (the command's watchdog).
pub async fn run_selftest(
    cases: &[LoadedCase],
    only: &[String],
    jobs: usize,
    time_scale: f64,
    dir: &Path,
    observer: &dyn RunObserver,
) -> Result<u8, SelftestError> {
    let started = std::time::Instant::now();
    let matrix = kill_matrix_observed(cases, only, jobs, time_scale, observer).await?;
    let mut matrix = matrix;
    matrix.duration_ms = started.elapsed().as_millis() as u64;
    write_matrix(&matrix, dir)?;
    eprintln!("{}", render_markdown(&matrix));
    Ok(if matrix.passes() { 0 } else { 1 })
}

/// How many defective runtimes run at once.
const DEFECT_RUNS_AT_ONCE: usize = 4;

/// The kill-matrix row of one defect, from the run against the runtime that has it.
fn defect_row(info: DefectInfo, report: &RunReport) -> DefectRow {
    let killed_by: Vec<Kill> = report
        .cases
        .iter()
        .filter(|c| matches!(c.verdict, Verdict::Fail | Verdict::Warn))
        .map(|c| Kill {
            case: c.id.clone(),
            level: c.level,
            verdict: c.verdict,
            message: harness::report::first_failing_check(c)
                .map(|k| format!("{}: {}", k.check, k.message))
                .unwrap_or_default(),
        })
        .collect();
    // A FAIL or WARN comes only from a check of level MUST or SHOULD, whatever the case's own
    // level: a CONTRACT case whose MUST check judges the path the host took (a fallback rule
    // after a retried quota error) catches a defect as a MUST case does.
    let killed = !killed_by.is_empty();
    let errors = report
        .cases
        .iter()
        .filter(|c| c.verdict == Verdict::Error)
        .map(|c| c.id.clone())
        .collect();
    eprintln!(
        "{:<48} {}",
        match info.profile {
            BuiltInProfile::Standard => info.name.clone(),
            profile => format!("{} ({profile})", info.name),
        },
        if killed {
            format!("killed by {} case(s)", killed_by.len())
        } else {
            "SURVIVED".into()
        }
    );
    DefectRow {
        defect: info,
        killed_by,
        killed,
        errors,
    }
}

/// Computes the kill matrix.
pub async fn kill_matrix(
    cases: &[LoadedCase],
    only: &[String],
    jobs: usize,
    time_scale: f64,
) -> Result<KillMatrix, SelftestError> {
    kill_matrix_observed(cases, only, jobs, time_scale, &Quiet).await
}

/// Computes the kill matrix, telling `observer` of every case of every run starting and
/// finishing.
pub async fn kill_matrix_observed(
    cases: &[LoadedCase],
    only: &[String],
    jobs: usize,
    time_scale: f64,
    observer: &dyn RunObserver,
) -> Result<KillMatrix, SelftestError> {
    let mut clean = BTreeMap::new();
    let mut clean_failures: Vec<String> = Vec::new();
    // A divergent profile departs from CONTRACT.md's decisions by design (INFO from CONTRACT
    // checks is its expected result): the tolerance matrix judges it, not the clean run here.
    for profile in BuiltInProfile::ALL
        .into_iter()
        .filter(|p| !BuiltInProfile::DIVERGENT.contains(p))
    {
        let report =
            run_observed(cases, Vec::new(), profile, None, jobs, time_scale, observer).await?;
        eprintln!("clean runtime under {profile}: judged");
        clean_failures.extend(
            report
                .cases
                .iter()
                // A SKIP is a case for hosts this configuration is not (a need it lacks): fine.
                .filter(|c| !matches!(c.verdict, Verdict::Pass | Verdict::Skip))
                .map(|c| {
                    format!(
                        "[{profile}] {} {}{}",
                        c.verdict,
                        c.id,
                        c.reason
                            .as_ref()
                            .map(|r| format!(": {r}"))
                            .unwrap_or_default()
                    )
                }),
        );
        clean.insert(profile.to_string(), report.summary.by_verdict.clone());
    }
    // Defective runtimes are independent: run several at once (each case mostly waits on I/O).
    // Defects of the `load` area appear only with several subscribers on one live log: the
    // cases do not judge them, `conformance load` does (harness/cli/tests/it/load.rs).
    let selected: Vec<DefectInfo> = defect_catalogue()
        .into_iter()
        .filter(|d| d.area != "load")
        .filter(|d| only.is_empty() || only.contains(&d.name))
        .collect();
    let mut rows: Vec<DefectRow> = futures::stream::iter(selected)
        .map(|info| async move {
            let surface = if info.surface == "X" {
                CaseSurface::Execution
            } else {
                CaseSurface::Openwop
            };
            let report = run_observed(
                cases,
                vec![info.name.clone()],
                info.profile,
                Some(surface),
                jobs,
                time_scale,
                observer,
            )
            .await?;
            Ok::<DefectRow, SelftestError>(defect_row(info, &report))
        })
        .buffer_unordered(DEFECT_RUNS_AT_ONCE)
        .collect::<Vec<_>>()
        .await
        .into_iter()
        .collect::<Result<_, _>>()?;
    rows.sort_by(|a, b| a.defect.name.cmp(&b.defect.name));
    let exemptions = load_exemptions(cases);
    let mut killers: std::collections::BTreeSet<&str> = std::collections::BTreeSet::new();
    for row in &rows {
        killers.extend(row.killed_by.iter().map(|k| k.case.as_str()));
    }
    let must_cases_without_kill = if only.is_empty() {
        cases
            .iter()
            .filter(|c| c.case.level == Level::Must && !killers.contains(c.case.id.as_str()))
            .map(|c| (c.case.id.clone(), exemptions.get(&c.case.id).cloned()))
            .collect()
    } else {
        Vec::new()
    };
    let killed = rows.iter().filter(|r| r.killed).count();
    Ok(KillMatrix {
        format_version: 2,
        clean,
        clean_failures,
        mutation_score: if rows.is_empty() {
            1.0
        } else {
            killed as f64 / rows.len() as f64
        },
        defects: rows,
        must_cases_without_kill,
        duration_ms: 0,
    })
}

fn load_exemptions(cases: &[LoadedCase]) -> BTreeMap<String, String> {
    let _ = cases;
    crate::corpus::embedded_cases()
        .get("selftest-exemptions.json")
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(b).ok())
        .and_then(|doc| {
            doc.get("exemptions")
                .and_then(|e| serde_json::from_value(e.clone()).ok())
        })
        .unwrap_or_default()
}

fn write_matrix(matrix: &KillMatrix, dir: &Path) -> Result<(), SelftestError> {
    write_matrix_files(
        dir,
        "kill-matrix",
        serde_json::to_string_pretty(matrix).unwrap_or_default(),
        render_markdown(matrix),
        render_html(matrix),
    )
}

/// Writes a matrix's three renderings, `<stem>.json`, `<stem>.md` and `<stem>.html`, into
/// `dir` (created when missing).
pub(crate) fn write_matrix_files(
    dir: &Path,
    stem: &str,
    json: String,
    markdown: String,
    html: String,
) -> Result<(), SelftestError> {
    std::fs::create_dir_all(dir).map_err(|source| SelftestError::Write {
        path: dir.display().to_string(),
        source,
    })?;
    for (extension, text) in [("json", json), ("md", markdown), ("html", html)] {
        let path = dir.join(format!("{stem}.{extension}"));
        std::fs::write(&path, text).map_err(|source| SelftestError::Write {
            path: path.display().to_string(),
            source,
        })?;
    }
    Ok(())
}

/// The kill matrix as Markdown.
pub fn render_markdown(matrix: &KillMatrix) -> String {
    let killed = matrix.defects.iter().filter(|d| d.killed).count();
    let mut out = format!(
        "# Kill matrix\n\nMutation score: **{:.0}%** ({killed}/{} defects killed). Clean runtime: {}.\n\n",
        matrix.mutation_score * 100.0,
        matrix.defects.len(),
        clean_counts(matrix)
    );
    if !matrix.clean_failures.is_empty() {
        out.push_str("**The clean runtime did not pass every case:**\n\n");
        for failure in &matrix.clean_failures {
            out.push_str(&format!("- {failure}\n"));
        }
        out.push('\n');
    }
    out.push_str(
        "| defect | surface | area | breaks | killed by (verdict) |\n|---|---|---|---|---|\n",
    );
    for row in &matrix.defects {
        let killers = if row.killed_by.is_empty() {
            "**SURVIVED**".to_string()
        } else {
            row.killed_by
                .iter()
                .map(|k| format!("`{}` ({})", k.case, k.verdict))
                .collect::<Vec<_>>()
                .join(", ")
        };
        out.push_str(&format!(
            "| `{}`{} | {} | {} | `{}` | {} |\n",
            row.defect.name,
            profile_note(row.defect.profile),
            row.defect.surface,
            row.defect.area,
            row.defect.requirement,
            killers
        ));
    }
    if !matrix.must_cases_without_kill.is_empty() {
        out.push_str("\n## MUST cases that catch no defect\n\n");
        for (case, reason) in &matrix.must_cases_without_kill {
            out.push_str(&format!(
                "- `{case}`: {}\n",
                reason.as_deref().unwrap_or("**no recorded reason**")
            ));
        }
    }
    out
}

/// The clean runs' verdict counts, standard first: `standard: 200 PASS, 3 SKIP; alternate: …`.
fn clean_counts(matrix: &KillMatrix) -> String {
    let standard = BuiltInProfile::Standard.as_str();
    let mut runs: Vec<_> = matrix.clean.iter().collect();
    runs.sort_by_key(|(profile, _)| profile.as_str() != standard);
    runs.into_iter()
        .map(|(profile, counts)| {
            let counts = counts
                .iter()
                .map(|(v, n)| format!("{n} {v}"))
                .collect::<Vec<_>>()
                .join(", ");
            format!("{profile}: {counts}")
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Names a non-standard profile after the defect (the standard one goes without saying).
fn profile_note(profile: BuiltInProfile) -> String {
    match profile {
        BuiltInProfile::Standard => String::new(),
        profile => format!(" (profile: {profile})"),
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The kill matrix as one self-contained HTML page.
pub fn render_html(matrix: &KillMatrix) -> String {
    let mut rows = String::new();
    for row in &matrix.defects {
        let killers = if row.killed_by.is_empty() {
            "<strong class=\"bad\">SURVIVED</strong>".to_string()
        } else {
            row.killed_by
                .iter()
                .map(|k| {
                    format!(
                        "<code>{}</code> <span class=\"{}\">{}</span>",
                        escape(&k.case),
                        k.verdict.as_str().to_lowercase(),
                        k.verdict
                    )
                })
                .collect::<Vec<_>>()
                .join("<br>")
        };
        rows.push_str(&format!(
            "<tr><td><code>{}</code>{}<br><small>{}</small></td><td>{}</td><td>{}</td><td><code>{}</code></td><td>{}</td></tr>\n",
            escape(&row.defect.name),
            escape(&profile_note(row.defect.profile)),
            escape(&row.defect.description),
            escape(&row.defect.surface),
            escape(&row.defect.area),
            escape(&row.defect.requirement),
            killers
        ));
    }
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Kill matrix</title><style>\
body{{font-family:system-ui,sans-serif;margin:2rem}}table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:.4rem;vertical-align:top}}\
.fail,.bad{{color:#b00020}}.warn{{color:#a06000}}</style></head><body><h1>Kill matrix</h1>\
<p>Mutation score: <strong>{:.0}%</strong> ({}/{} defects killed). Clean runtime: {}.</p>\
<table><tr><th>defect</th><th>surface</th><th>area</th><th>breaks</th><th>killed by</th></tr>{rows}</table></body></html>\n",
        matrix.mutation_score * 100.0,
        matrix.defects.iter().filter(|d| d.killed).count(),
        matrix.defects.len(),
        escape(&clean_counts(matrix))
    )
}
