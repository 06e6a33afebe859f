//! The runner: selects cases, skips what the target cannot do (always with the reason), runs
//! the rest in parallel, and assembles the one report model every format renders.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use futures::StreamExt;
use sha2::{Digest, Sha256};

use crate::case::{CaseSurface, LoadedCase};
use crate::driver::{CaseExecution, CaseRunner};
use crate::report::{
    CaseResult, REPORT_FORMAT_VERSION, RequirementResult, RunOptionsSummary, RunReport, Summary,
    TargetSummary,
};
use crate::transcript::{FrameKind, StepRecord};
use crate::verdict::{CheckOutcome, Verdict};

/// Which cases run.
#[derive(Debug, Clone, Default)]
pub struct Filters {
    /// Case ids or id prefixes (`x.idempotency.` selects a group); empty selects all.
    pub ids: Vec<String>,
    /// Levels (`MUST`, …); empty selects all.
    pub levels: Vec<String>,
    /// Tags; a case runs when it has any of them; empty selects all.
    pub tags: Vec<String>,
    /// Surfaces; empty selects both.
    pub surfaces: Vec<CaseSurface>,
}

impl Filters {
    /// Whether a case is selected.
    pub fn selects(&self, case: &crate::case::Case) -> bool {
        (self.ids.is_empty()
            || self
                .ids
                .iter()
                .any(|f| case.id == *f || case.id.starts_with(f.as_str())))
            && (self.levels.is_empty()
                || self
                    .levels
                    .iter()
                    .any(|l| l.eq_ignore_ascii_case(case.level.as_str())))
            && (self.tags.is_empty() || case.tags.iter().any(|t| self.tags.contains(t)))
            && (self.surfaces.is_empty() || self.surfaces.contains(&case.surface))
    }

    /// A description for the report.
    pub fn describe(&self) -> Vec<String> {
        let mut out = Vec::new();
        out.extend(self.ids.iter().map(|i| format!("id:{i}")));
        out.extend(self.levels.iter().map(|l| format!("level:{l}")));
        out.extend(self.tags.iter().map(|t| format!("tag:{t}")));
        out.extend(
            self.surfaces
                .iter()
                .map(|s| format!("surface:{s:?}").to_lowercase()),
        );
        out
    }
}

/// How a run goes.
#[derive(Debug, Clone)]
pub struct RunSettings {
    /// Parallel cases.
    pub jobs: usize,
    /// Shuffle the order with this seed.
    pub shuffle_seed: Option<u64>,
    /// The baseline file's path, for the report.
    pub baseline_path: Option<String>,
}

/// Hooks the runner calls as cases start and finish (the console reporter implements them).
pub trait RunObserver: Send + Sync {
    /// A run of `total` cases begins.
    fn run_started(&self, _total: usize) {}
    /// A case begins.
    fn case_started(&self, _id: &str) {}
    /// A case is judged.
    fn case_finished(&self, _result: &CaseResult) {}
}

/// An observer that does nothing.
pub struct Quiet;

impl RunObserver for Quiet {}

/// Adjusts a case result after judging (the baseline).
pub type Adjust<'a> = &'a (dyn Fn(CaseResult) -> CaseResult + Send + Sync);

/// Runs the selected cases and builds the report.
pub async fn run(
    runner: &CaseRunner,
    cases: &[LoadedCase],
    filters: &Filters,
    settings: &RunSettings,
    adjust: Adjust<'_>,
    observer: &dyn RunObserver,
) -> RunReport {
    let started_at = chrono::Utc::now();
    let clock = Instant::now();
    let mut selected: Vec<&LoadedCase> =
        cases.iter().filter(|c| filters.selects(&c.case)).collect();
    if let Some(seed) = settings.shuffle_seed {
        shuffle(&mut selected, seed);
    }
    observer.run_started(selected.len());
    let mut results: Vec<(usize, CaseResult)> = futures::stream::iter(selected.iter().enumerate())
        .map(|(index, loaded)| async move {
            observer.case_started(&loaded.case.id);
            // Each case runs as its own task: on a worker thread (property-based steps need
            // one), and a harness panic becomes that case's ERROR instead of ending the run.
            let task = tokio::spawn(run_one(runner.clone(), (*loaded).clone()));
            let result = match task.await {
                Ok(result) => result,
                Err(error) => errored(
                    loaded,
                    format!("the harness failed while running the case: {error}"),
                ),
            };
            let result = adjust(result);
            observer.case_finished(&result);
            (index, result)
        })
        .buffer_unordered(settings.jobs.max(1))
        .collect()
        .await;
    results.sort_by_key(|(index, _)| *index);
    let results: Vec<CaseResult> = results.into_iter().map(|(_, r)| r).collect();

    let run_errors = sanity_errors(&results);
    let summary = summarise(&results);
    let verdict = run_verdict(&results, &run_errors);
    let target = &runner.target;
    let digest = {
        let mut hasher = Sha256::new();
        for loaded in &selected {
            hasher.update(loaded.case.id.as_bytes());
            hasher.update(loaded.digest.as_bytes());
        }
        hex::encode(hasher.finalize())
    };
    RunReport {
        format_version: REPORT_FORMAT_VERSION,
        run_id: format!(
            "{}-{}",
            started_at.format("%Y%m%dT%H%M%SZ"),
            &uuid::Uuid::new_v4().simple().to_string()[..6]
        ),
        harness_version: env!("CARGO_PKG_VERSION").to_string(),
        started_at: started_at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        finished_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        duration_ms: clock.elapsed().as_millis() as u64,
        target: TargetSummary {
            kind: target.kind.clone(),
            base_url: target.base_url.clone(),
            capabilities: target.capabilities.iter().cloned().collect(),
            header_names: target.headers.iter().map(|h| h.name.clone()).collect(),
            implementation: target.implementation.clone(),
        },
        options: RunOptionsSummary {
            time_scale: runner.time_scale,
            jobs: settings.jobs as u32,
            shuffle_seed: settings.shuffle_seed,
            proptest_seed: runner.proptest_seed,
            baseline: settings.baseline_path.clone(),
            filters: filters.describe(),
            case_set_digest: digest,
        },
        verdict,
        run_errors,
        summary,
        requirements: requirement_results(&results),
        cases: results,
    }
}

/// A case that could not be run at all.
fn errored(loaded: &LoadedCase, reason: String) -> CaseResult {
    let case = &loaded.case;
    CaseResult {
        id: case.id.clone(),
        title: case.title.clone(),
        file: loaded.file.clone(),
        level: case.level,
        surface: surface_name(case.surface),
        tags: case.tags.clone(),
        requirements: case.requirements.clone(),
        verdict: Verdict::Error,
        raw_verdict: Verdict::Error,
        reason: Some(reason),
        duration_ms: 0,
        checks: Vec::new(),
        transcript: Vec::new(),
        counterexample: None,
        provider_scripts: Vec::new(),
    }
}

fn surface_name(surface: CaseSurface) -> String {
    match surface {
        CaseSurface::Execution => "execution".into(),
        CaseSurface::Openwop => "openwop".into(),
    }
}

/// Runs one case (or skips it) and judges it.
pub async fn run_one(runner: CaseRunner, loaded: LoadedCase) -> CaseResult {
    let runner = &runner;
    let case = &loaded.case;
    let started = Instant::now();
    let missing: Vec<&String> = case
        .needs
        .iter()
        .filter(|n| match n.strip_prefix('!') {
            // `!name`: the case is about hosts that do not have `name`.
            Some(absent) => runner.target.has(absent),
            None => !runner.target.has(n),
        })
        .collect();
    let (verdict, reason, execution) = if !missing.is_empty() {
        let reasons: Vec<String> = missing
            .iter()
            .map(|need| match need.strip_prefix('!') {
                Some(present) => {
                    format!("the target has {present} (the case is for hosts without it)")
                }
                None => format!("the target does not have {need}"),
            })
            .collect();
        (Verdict::Skip, Some(reasons.join("; ")), None)
    } else {
        let execution = runner.run(case).await;
        let (verdict, reason) = judge(&execution);
        (verdict, reason, Some(execution))
    };
    let execution = execution.map(|e| scrub(e, &runner.target.secrets()));
    let execution = execution.unwrap_or_default();
    CaseResult {
        id: case.id.clone(),
        title: case.title.clone(),
        file: loaded.file.clone(),
        level: case.level,
        surface: surface_name(case.surface),
        tags: case.tags.clone(),
        requirements: case.requirements.clone(),
        verdict,
        raw_verdict: verdict,
        reason,
        duration_ms: started.elapsed().as_millis() as u64,
        checks: execution.checks,
        transcript: execution.transcript,
        counterexample: execution.counterexample,
        provider_scripts: execution.provider_scripts,
    }
}

/// The case verdict: ERROR when the harness or environment broke, else the worst check.
pub fn judge(execution: &CaseExecution) -> (Verdict, Option<String>) {
    if let Some(error) = &execution.error {
        return (Verdict::Error, Some(error.clone()));
    }
    if execution.checks.iter().any(|c| c.verdict == Verdict::Error) {
        let message = execution
            .checks
            .iter()
            .find(|c| c.verdict == Verdict::Error)
            .map(|c| c.message.clone());
        return (Verdict::Error, message);
    }
    let verdict = execution
        .checks
        .iter()
        .map(|c| c.verdict)
        .fold(Verdict::Pass, Verdict::worst);
    let reason = execution
        .checks
        .iter()
        .find(|c| c.verdict == verdict && verdict != Verdict::Pass)
        .map(|c| format!("{}: {}", c.check, c.message));
    (verdict, reason)
}

/// Replaces every secret the harness holds (and the canary) in the recorded text.
fn scrub(mut execution: CaseExecution, secrets: &[String]) -> CaseExecution {
    if secrets.is_empty() {
        return execution;
    }
    let clean = |text: &mut String| {
        for secret in secrets {
            if text.contains(secret.as_str()) {
                *text = text.replace(secret.as_str(), "[REDACTED]");
            }
        }
    };
    for record in &mut execution.transcript {
        scrub_record(record, &clean);
    }
    for check in &mut execution.checks {
        clean(&mut check.message);
        check.expected.as_mut().map(&clean);
        check.actual.as_mut().map(&clean);
    }
    execution
}

fn scrub_record(record: &mut StepRecord, clean: &dyn Fn(&mut String)) {
    for exchange in &mut record.exchanges {
        clean(&mut exchange.request.url);
        exchange.request.body.as_mut().map(clean);
        for header in &mut exchange.request.headers {
            clean(&mut header.value);
        }
        if let Some(response) = &mut exchange.response {
            clean(&mut response.body);
            for header in &mut response.headers {
                clean(&mut header.value);
            }
            if let Some(json) = &mut response.json {
                let mut text = json.to_string();
                clean(&mut text);
                *json = serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text));
            }
            response.trailing_partial_frame.as_mut().map(clean);
            for frame in &mut response.frames {
                match &mut frame.kind {
                    FrameKind::Event {
                        data,
                        json,
                        id,
                        event,
                        ..
                    } => {
                        clean(data);
                        id.as_mut().map(clean);
                        event.as_mut().map(clean);
                        if json.is_some() {
                            *json = serde_json::from_str(data).ok();
                        }
                    }
                    FrameKind::Comment { text } => clean(text),
                }
            }
        }
    }
}

/// Run-level sanity: a run whose every request was refused as unauthenticated, or that never
/// saw an event, proves nothing about the host and ends in ERROR.
fn sanity_errors(results: &[CaseResult]) -> Vec<String> {
    let mut errors = Vec::new();
    let statuses: Vec<u16> = results
        .iter()
        .flat_map(|r| &r.transcript)
        .flat_map(|s| &s.exchanges)
        .filter_map(|e| e.response.as_ref().map(|r| r.status))
        .collect();
    let ran = results
        .iter()
        .filter(|r| r.verdict != Verdict::Skip)
        .count();
    if !statuses.is_empty() && statuses.iter().all(|s| *s == 401) {
        errors.push(
            "every request got 401: the target refused the harness's credentials (see --header)"
                .into(),
        );
    }
    let streams: Vec<&StepRecord> = results
        .iter()
        .flat_map(|r| &r.transcript)
        .filter(|s| s.action == "stream")
        .collect();
    let events_seen = streams
        .iter()
        .flat_map(|s| &s.exchanges)
        .filter_map(|e| e.response.as_ref())
        .any(|r| {
            r.frames
                .iter()
                .any(|f| matches!(f.kind, FrameKind::Event { .. }))
        });
    if streams.len() >= 3 && !events_seen {
        errors.push(format!(
            "{} stream(s) were read and no event was ever seen: the target does not stream events",
            streams.len()
        ));
    }
    if ran > 0
        && results
            .iter()
            .filter(|r| r.verdict != Verdict::Skip)
            .all(|r| r.verdict == Verdict::Error)
    {
        errors.push("every case that ran ended in ERROR".into());
    }
    errors
}

/// Recomputes the summary, requirement results and verdict after cases were added or adjusted
/// (e.g. STALE rows for baseline entries naming unknown cases).
pub fn refresh(report: &mut RunReport) {
    report.summary = summarise(&report.cases);
    report.requirements = requirement_results(&report.cases);
    report.verdict = run_verdict(&report.cases, &report.run_errors);
}

fn summarise(results: &[CaseResult]) -> Summary {
    let mut by_verdict = BTreeMap::new();
    for result in results {
        *by_verdict
            .entry(result.verdict.as_str().to_string())
            .or_insert(0) += 1;
    }
    Summary {
        total: results.len() as u32,
        by_verdict,
    }
}

/// The run's verdict, which sets the exit code: ERROR for run-level trouble, FAIL when any case
/// failed or a baseline entry is stale, ERROR when a case errored, else WARN/INFO/PASS.
pub fn run_verdict(results: &[CaseResult], run_errors: &[String]) -> Verdict {
    if !run_errors.is_empty() {
        return Verdict::Error;
    }
    if results.iter().any(|r| r.verdict.is_conformance_failure()) {
        return Verdict::Fail;
    }
    if results.iter().any(|r| r.verdict == Verdict::Error) {
        return Verdict::Error;
    }
    if results.iter().any(|r| r.verdict == Verdict::Warn) {
        return Verdict::Warn;
    }
    Verdict::Pass
}

fn requirement_results(results: &[CaseResult]) -> Vec<RequirementResult> {
    let registry = spec::requirements::registry();
    let mut by_id: BTreeMap<String, (Verdict, BTreeSet<String>)> = BTreeMap::new();
    for result in results {
        for id in &result.requirements {
            let entry = by_id
                .entry(id.clone())
                .or_insert((Verdict::Pass, BTreeSet::new()));
            entry.1.insert(result.id.clone());
            if matches!(result.verdict, Verdict::Skip | Verdict::Error) && result.checks.is_empty()
            {
                entry.0 = entry.0.worst(result.verdict);
            }
        }
        for check in &result.checks {
            for id in &check.requirements {
                let entry = by_id
                    .entry(id.clone())
                    .or_insert((Verdict::Pass, BTreeSet::new()));
                entry.1.insert(result.id.clone());
                entry.0 = entry.0.worst(adjusted(check, result));
            }
        }
    }
    by_id
        .into_iter()
        .map(|(id, (verdict, cases))| {
            let record = registry.get(&id);
            RequirementResult {
                level: record
                    .map(|r| r.level.as_str().to_string())
                    .unwrap_or_default(),
                document: record
                    .map(|r| r.document.as_str().to_string())
                    .unwrap_or_default(),
                section: record.map(|r| r.section.clone()).unwrap_or_default(),
                quote: record.map(|r| r.quote.clone()).unwrap_or_default(),
                id,
                verdict,
                cases: cases.into_iter().collect(),
            }
        })
        .collect()
}

/// A check's verdict as it counts for its requirement, given the case's baseline outcome.
fn adjusted(check: &CheckOutcome, result: &CaseResult) -> Verdict {
    match result.verdict {
        Verdict::Xfail | Verdict::Stale if !check.passed() => result.verdict,
        _ => check.verdict,
    }
}

fn shuffle<T>(items: &mut [T], seed: u64) {
    use rand::SeedableRng;
    use rand::seq::SliceRandom;
    items.shuffle(&mut rand::rngs::StdRng::seed_from_u64(seed));
}
