//! The runner: selects cases, skips what the host lacks and blocks what the harness cannot
//! judge (always with the reason), runs the rest in parallel, and assembles the one report model
//! every format renders.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use futures::StreamExt;
use sha2::{Digest, Sha256};

use crate::capability::HostCapability;
use crate::case::needs::Need;
use crate::case::{CaseSurface, LoadedCase};
use crate::driver::{CaseExecution, CaseRunner};
use crate::host::{NeedStatus, Target};
use crate::report::{
    CaseResult, REPORT_FORMAT_VERSION, RequirementResult, RunOptionsSummary, RunReport, Summary,
    SurfaceJudgement, TargetSummary,
};
use crate::transcript::{FrameKind, StepRecord};
use crate::verdict::{CheckOutcome, Level, Verdict};

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
                .map(|surface| format!("surface:{surface}")),
        );
        out
    }
}

/// How a run goes.
#[derive(Debug, Clone, Default)]
pub struct RunSettings {
    /// Parallel cases (at least 1).
    pub jobs: usize,
    /// Shuffle the order with this seed (the cases then also start in that order).
    pub shuffle_seed: Option<u64>,
    /// Start the cases with the longest waits first ([`wait_estimate_ms`]) instead of in the
    /// selection's order (ignored when shuffled); the CLI's default (`--corpus-order` turns it
    /// off). The run then takes about its longest wait, not the sum of its waits.
    pub longest_first: bool,
    /// The baseline file's path, for the report.
    pub baseline_path: Option<String>,
    /// When the run stops: every case not judged by then is ERROR, and the run names why.
    pub deadline: Option<tokio::time::Instant>,
    /// Stop the run once this many cases in a row (in the order they end) got no response at
    /// all: the host stopped answering, and every case left is ERROR at once instead of
    /// waiting out its budget. `None` runs every case whatever the host does (the kill matrix).
    pub stop_after_silent_cases: Option<usize>,
    /// A stop from outside (a signal): the reason, once sent, stops the run as the deadline
    /// does.
    pub stop: Option<tokio::sync::watch::Receiver<Option<String>>>,
}

/// How many cases in a row without any response stop a run by default
/// ([`RunSettings::stop_after_silent_cases`]).
pub const SILENT_CASES_BEFORE_STOP: usize = 6;

/// A watch channel for [`RunSettings::stop`]: send `Some(reason)` to stop the run.
pub(crate) fn stop_channel() -> (
    tokio::sync::watch::Sender<Option<String>>,
    tokio::sync::watch::Receiver<Option<String>>,
) {
    tokio::sync::watch::channel(None)
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
    // The schema validators compile on first use, for seconds in a debug build: compiled here,
    // on a blocking thread, a case judging first does not hold the async workers (and every
    // worker waiting on the same compile) while other cases' hosts and streams wait on them. An
    // in-process host shares those workers: its timers (keep-alives, heartbeat ticks) stalled
    // for seconds at the start of a run, which failed timing cases started first.
    let _ = tokio::task::spawn_blocking(spec::schema::warm).await;
    let started_at = chrono::Utc::now();
    let clock = Instant::now();
    let mut selected: Vec<&LoadedCase> =
        cases.iter().filter(|c| filters.selects(&c.case)).collect();
    if let Some(seed) = settings.shuffle_seed {
        shuffle(&mut selected, seed);
    }
    observer.run_started(selected.len());
    // The order cases start in: the selection's, or the longest waits first (a run then takes
    // about its longest wait, not the sum of waits); results keep `selected`'s order.
    let mut order: Vec<usize> = (0..selected.len()).collect();
    if settings.longest_first && settings.shuffle_seed.is_none() {
        let waits: Vec<u64> = selected
            .iter()
            .map(|c| wait_estimate_ms(&c.case, &runner.target))
            .collect();
        order.sort_by_key(|&i| std::cmp::Reverse(waits[i]));
    }
    // One stop for the run: its deadline, the host falling silent, or a stop from outside.
    let (stop_tx, stop_rx) = stop_channel();
    // A stop already sent (a run refused before it began) or a deadline already past holds
    // before the first case starts.
    if let Some(reason) = settings.stop.as_ref().and_then(|rx| rx.borrow().clone()) {
        stop_tx.send_replace(Some(reason));
    } else if settings
        .deadline
        .is_some_and(|at| at <= tokio::time::Instant::now())
    {
        stop_tx.send_replace(Some(
            "the run's deadline passed before the cases began (--deadline)".into(),
        ));
    }
    let stop_tx = std::sync::Arc::new(stop_tx);
    let watcher = {
        let stop_tx = stop_tx.clone();
        let deadline = settings.deadline;
        let outside = settings.stop.clone();
        let started = tokio::time::Instant::now();
        tokio::spawn(async move {
            let timer = async {
                match deadline {
                    Some(at) => {
                        tokio::time::sleep_until(at).await;
                        format!(
                            "the run's deadline passed (--deadline; {:.1} s into the cases)",
                            started.elapsed().as_secs_f64()
                        )
                    }
                    None => std::future::pending().await,
                }
            };
            let signal = async {
                let reason = match outside {
                    Some(mut rx) => rx
                        .wait_for(Option::is_some)
                        .await
                        .ok()
                        .and_then(|reason| reason.clone()),
                    None => None,
                };
                match reason {
                    Some(reason) => reason,
                    // The sender went away without a stop: nothing from outside will come.
                    None => std::future::pending().await,
                }
            };
            let reason = tokio::select! {
                reason = timer => reason,
                reason = signal => reason,
            };
            stop_tx.send_if_modified(|current| {
                current.is_none().then(|| *current = Some(reason)).is_some()
            });
        })
    };
    let silent_run = std::sync::Mutex::new(0usize);
    let silent_run = &silent_run;
    let stop_tx = &stop_tx;
    let stop_rx = &stop_rx;
    let selected_ref = &selected;
    let run_case = move |index: usize| async move {
        let loaded = selected_ref[index];
        if let Some(reason) = stop_rx.borrow().clone() {
            let result = adjust(errored(loaded, format!("not run: {reason}")));
            observer.case_finished(&result);
            return (index, result);
        }
        observer.case_started(&loaded.case.id);
        // Each case runs as its own task: on a worker thread (property-based steps need
        // one), and a harness panic becomes that case's ERROR instead of ending the run.
        let task = tokio::spawn(run_one(runner.clone(), (*loaded).clone()));
        let abort = task.abort_handle();
        let mut stopped = stop_rx.clone();
        let result = tokio::select! {
            biased;
            joined = task => match joined {
                Ok(result) => result,
                Err(error) => errored(
                    loaded,
                    format!("the harness failed while running the case: {error}"),
                ),
            },
            reason = stopped.wait_for(Option::is_some) => {
                abort.abort();
                let reason = reason.ok().and_then(|r| r.clone()).unwrap_or_default();
                errored(loaded, format!("cut short: {reason}"))
            }
        };
        if let Some(limit) = settings.stop_after_silent_cases {
            let mut run = silent_run.lock().unwrap_or_else(|e| e.into_inner());
            match silence(&result) {
                Some(Some(why)) => {
                    *run += 1;
                    if *run >= limit.max(1) {
                        let reason = format!(
                            "the host stopped answering: {} case(s) in a row got no response at all (the last: {why})",
                            *run
                        );
                        stop_tx.send_if_modified(|current| {
                            current.is_none().then(|| *current = Some(reason)).is_some()
                        });
                    }
                }
                Some(None) => *run = 0,
                None => {}
            }
        }
        let result = adjust(result);
        observer.case_finished(&result);
        (index, result)
    };
    let run_case = &run_case;
    // Cases writing the same global seam of the host run one after another in one slot, at
    // the place of the first of them, so none holds a slot waiting for another
    // (`run_one` holds the seam too, for every other caller).
    let units = serial_units(order, |index| &selected[index].case.exclusive);
    let mut results: Vec<(usize, CaseResult)> = futures::stream::iter(units)
        .map(|unit| async move {
            let mut results = Vec::with_capacity(unit.len());
            for index in unit {
                results.push(run_case(index).await);
            }
            results
        })
        .buffer_unordered(settings.jobs.max(1))
        .flat_map(futures::stream::iter)
        .collect()
        .await;
    watcher.abort();
    results.sort_by_key(|(index, _)| *index);
    let results: Vec<CaseResult> = results.into_iter().map(|(_, r)| r).collect();

    let mut run_errors = sanity_errors(&results);
    if let Some(reason) = stop_rx.borrow().clone() {
        let not_judged = results
            .iter()
            .filter(|r| {
                r.reason.as_deref().is_some_and(|why| {
                    why.starts_with("not run: ") || why.starts_with("cut short: ")
                })
            })
            .count();
        run_errors.insert(
            0,
            format!("the run stopped early: {reason}; {not_judged} case(s) were not judged"),
        );
    }
    let surfaces = judge_surfaces(
        &results,
        |surface| runner.target.has_need(&Need::Surface(surface)),
        |surface| filters.surfaces.contains(&surface),
    );
    let not_judged = not_judged(&results, &surfaces);
    let summary = Summary::of(&results);
    let verdict = run_verdict(&results, &run_errors, &not_judged);
    let target = &runner.target;
    let digest = case_set_digest(selected.iter().copied());
    RunReport {
        format_version: REPORT_FORMAT_VERSION,
        run_id: format!(
            "{}-{}",
            started_at.format("%Y%m%dT%H%M%SZ"),
            &uuid::Uuid::new_v4().simple().to_string()[..6]
        ),
        harness_version: env!("CARGO_PKG_VERSION").to_string(),
        corpus: Default::default(),
        started_at: started_at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        finished_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        duration_ms: clock.elapsed().as_millis() as u64,
        target: TargetSummary {
            kind: target.kind.to_string(),
            base_url: target.base_url.clone(),
            capabilities: HostCapability::in_written_order(target.capabilities.iter().cloned()),
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
        not_judged,
        surfaces,
        unmatched_provider_requests: unmatched_provider_requests(target),
        requirements: requirement_results(&results),
        streaming: crate::report::streaming::streaming_metrics(
            results
                .iter()
                .map(|c| (c.id.as_str(), c.transcript.as_slice())),
        ),
        cases: results,
        differential: None,
    }
}

/// Most distinct unmatched provider requests a report lists.
const UNMATCHED_SHOWN: usize = 20;

/// The requests that reached the fake providers' listener and matched no fake, grouped (`METHOD
/// /path → status (×n)`, first arrival first), secrets scrubbed.
fn unmatched_provider_requests(target: &Target) -> Vec<String> {
    let Some(upstream) = &target.upstream else {
        return Vec::new();
    };
    let mut grouped: Vec<(String, usize)> = Vec::new();
    for line in upstream.unmatched_requests() {
        match grouped.iter_mut().find(|(known, _)| *known == line) {
            Some((_, count)) => *count += 1,
            None => grouped.push((line, 1)),
        }
    }
    let more = grouped.len().saturating_sub(UNMATCHED_SHOWN);
    let secrets = target.secrets();
    let mut out: Vec<String> = grouped
        .into_iter()
        .take(UNMATCHED_SHOWN)
        .map(|(line, count)| {
            let mut line = if count > 1 {
                format!("{line} (×{count})")
            } else {
                line
            };
            for secret in &secrets {
                line = line.replace(secret.as_str(), "[REDACTED]");
            }
            line
        })
        .collect();
    if more > 0 {
        out.push(format!("… and {more} more distinct request(s)"));
    }
    out
}

/// Whether a judged case heard from the host: `None` when it sent nothing (SKIP, BLOCKED, not
/// run), `Some(None)` when some request got a response, `Some(Some(why))` when requests were
/// sent and none got any response (`why`: the last transport failure).
fn silence(result: &CaseResult) -> Option<Option<String>> {
    let exchanges: Vec<&crate::transcript::Exchange> = result
        .transcript
        .iter()
        .flat_map(|s| &s.exchanges)
        .collect();
    if exchanges.is_empty() {
        return None;
    }
    if exchanges.iter().any(|e| e.response.is_some()) {
        return Some(None);
    }
    let why = exchanges
        .iter()
        .rev()
        .find_map(|e| e.transport_error.as_ref().map(|t| t.message.clone()))
        .unwrap_or_else(|| "no response".into());
    Some(Some(why))
}

/// The order cases start in, as units run one after another: a case writing no shared seam is
/// a unit of its own; the cases writing a seam join the unit of the first case (in `order`)
/// that writes one of their seams.
fn serial_units<'a>(
    order: Vec<usize>,
    seams_of: impl Fn(usize) -> &'a std::collections::BTreeSet<crate::case::shared_seam::SharedSeam>,
) -> Vec<Vec<usize>> {
    let mut units: Vec<Vec<usize>> = Vec::with_capacity(order.len());
    let mut unit_of: std::collections::BTreeMap<crate::case::shared_seam::SharedSeam, usize> =
        std::collections::BTreeMap::new();
    for index in order {
        let seams = seams_of(index);
        match seams.iter().find_map(|seam| unit_of.get(seam).copied()) {
            Some(unit) => {
                units[unit].push(index);
                for seam in seams {
                    unit_of.entry(*seam).or_insert(unit);
                }
            }
            None => {
                for seam in seams {
                    unit_of.insert(*seam, units.len());
                }
                units.push(vec![index]);
            }
        }
    }
    units
}

/// How long a case is expected to wait, in milliseconds before `--time-scale`: its stream
/// windows (literal and taken from facts) and the delays its fake-provider scripts play
/// (`*_ms` numbers under `scripts`). A case with a `generate` step computes rather than waits
/// (its property-based inputs run synchronously, `block_in_place`): 0, so such cases start
/// last instead of together with the cases whose timing they would disturb. Only the order
/// cases start in depends on it.
pub(crate) fn wait_estimate_ms(case: &crate::case::Case, target: &Target) -> u64 {
    fn generates(steps: &[crate::case::Step]) -> bool {
        steps.iter().any(|step| {
            matches!(step.action, crate::case::StepAction::Generate(_))
                || generates(step.action.nested_steps())
        })
    }
    if generates(&case.steps) {
        return 0;
    }
    let scope = crate::template::Scope {
        target: target.facts.clone(),
        ..crate::template::Scope::default()
    };
    fn script_delays(value: &serde_json::Value) -> u64 {
        match value {
            serde_json::Value::Object(map) => map
                .iter()
                .map(|(key, value)| match value.as_u64() {
                    Some(ms) if key.ends_with("_ms") => ms,
                    _ => script_delays(value),
                })
                .sum(),
            serde_json::Value::Array(items) => items.iter().map(script_delays).sum(),
            _ => 0,
        }
    }
    crate::case::robustness::literal_waits_ms(&case.steps)
        + crate::case::robustness::fact_waits_ms(&case.steps, &scope)
        + case.scripts.values().map(script_delays).sum::<u64>()
}

/// SHA-256 of a case set, in the order given: each case's id and file digest (the report's
/// `options.case_set_digest`).
pub(crate) fn case_set_digest<'a>(cases: impl IntoIterator<Item = &'a LoadedCase>) -> String {
    let mut hasher = Sha256::new();
    for loaded in cases {
        hasher.update(loaded.case.id.as_bytes());
        hasher.update(loaded.digest.as_bytes());
    }
    hex::encode(hasher.finalize())
}

/// A case that could not be run at all.
fn errored(loaded: &LoadedCase, reason: String) -> CaseResult {
    case_result(
        loaded,
        Verdict::Error,
        Some(reason),
        0,
        CaseExecution::default(),
    )
}

/// The one place a case's result is assembled.
fn case_result(
    loaded: &LoadedCase,
    verdict: Verdict,
    reason: Option<String>,
    duration_ms: u64,
    execution: CaseExecution,
) -> CaseResult {
    let case = &loaded.case;
    CaseResult {
        id: case.id.clone(),
        title: case.title.clone(),
        file: loaded.file.clone(),
        level: case.level,
        surface: case.surface.into(),
        tags: case.tags.clone(),
        requirements: case.requirements.clone(),
        verdict,
        raw_verdict: verdict,
        reason,
        duration_ms,
        checks: execution.checks,
        transcript: execution.transcript,
        counterexample: execution.counterexample,
        provider_scripts: execution.provider_scripts,
    }
}

/// Why a case is not run: SKIP when the host lacks an optional capability it does not advertise
/// (any such need decides: the case does not apply), BLOCKED when the harness could not
/// establish what the case needs or cannot set it up; `None` when it can run.
fn not_run(runner: &CaseRunner, case: &crate::case::Case) -> Option<(Verdict, String)> {
    not_run_on(&runner.target, case, runner.target.upstream.is_some())
}

/// [`not_run`] for a target described but not driven: `fakes` says whether fake providers
/// will serve the case's scripts (what `conformance plan` foresees).
pub fn not_run_on(
    target: &Target,
    case: &crate::case::Case,
    fakes: bool,
) -> Option<(Verdict, String)> {
    // The surface first: when its discovery document could not be read, nothing the case
    // needs is known either way.
    let surface = crate::case::needs::CaseNeed {
        negated: false,
        need: crate::case::needs::Need::Surface(case.surface),
    };
    match target.need_status(&surface) {
        NeedStatus::Met => {}
        NeedStatus::Lacking(reason) => return Some((Verdict::Skip, reason)),
        NeedStatus::Unjudgeable(reason) => return Some((Verdict::Blocked, reason)),
    }
    let mut lacking = Vec::new();
    let mut unjudgeable = Vec::new();
    // A fact not given does not block a case whose rules other cases judge on this host.
    let through = case
        .judged_through
        .iter()
        .find(|need| matches!(target.need_status(need), NeedStatus::Met));
    let mut facts_not_given = Vec::new();
    for need in &case.needs {
        match target.need_status(need) {
            NeedStatus::Met => {}
            NeedStatus::Lacking(reason) => lacking.push(reason),
            NeedStatus::Unjudgeable(reason) => match (through, need.wanted()) {
                (Some(_), Some(crate::case::needs::Need::Fact(_))) => facts_not_given.push(reason),
                _ => unjudgeable.push(reason),
            },
        }
    }
    if let (Some(through), false) = (through, facts_not_given.is_empty()) {
        lacking.push(format!(
            "{}; its rules are judged through `{through}`, which the host serves, by the cases that drive it",
            facts_not_given.join("; ")
        ));
    }
    if !lacking.is_empty() {
        return Some((Verdict::Skip, lacking.join("; ")));
    }
    if !case.scripts.is_empty() && !fakes {
        unjudgeable.push(
            "the case scripts fake providers and none is running for this target (--providers-listen)"
                .into(),
        );
    }
    (!unjudgeable.is_empty()).then(|| (Verdict::Blocked, unjudgeable.join("; ")))
}

/// Runs one case (or skips or blocks it) and judges it.
pub async fn run_one(runner: CaseRunner, loaded: LoadedCase) -> CaseResult {
    let started = Instant::now();
    let (verdict, reason, execution) = match not_run(&runner, &loaded.case) {
        Some((verdict, reason)) => (verdict, Some(reason), CaseExecution::default()),
        None => {
            // Cases writing the same global seam of this host run one at a time; the case's
            // budget starts once it holds them.
            let _seams =
                crate::case::shared_seam::hold(&runner.target.base_url, &loaded.case.exclusive)
                    .await;
            let execution = runner.run(&loaded.case).await;
            let (verdict, reason) = judge(&execution);
            let mut execution = scrub(execution, &runner.target.secrets());
            // Judged: from here the transcript only serves the report.
            crate::excerpt::excerpt_case(&mut execution.transcript);
            (verdict, reason, execution)
        }
    };
    case_result(
        &loaded,
        verdict,
        reason,
        started.elapsed().as_millis() as u64,
        execution,
    )
}

/// The case verdict: ERROR when the harness or environment broke, else the worst check. The
/// case's budget running out is ERROR too, unless a step judged before it had already found the
/// host failing a rule: that FAIL stands (the rest of the case was not judged).
pub fn judge(execution: &CaseExecution) -> (Verdict, Option<String>) {
    if let Some(error) = &execution.error {
        return (Verdict::Error, Some(error.clone()));
    }
    let cut_steps: Vec<String> = execution
        .checks
        .iter()
        .filter(|c| c.check == crate::driver::STEP_COMPLETED)
        .map(|c| format!("{}/expect/", c.location))
        .collect();
    // A check not judged because its step's budget ran out, or because its stream exceeded
    // what the harness keeps or reads (judged on a prefix), does not hide a failure the host's
    // answers established.
    let from_the_budget = |c: &CheckOutcome| {
        c.check == crate::driver::STEP_COMPLETED
            || cut_steps.iter().any(|l| c.location.starts_with(l.as_str()))
            || c.message
                .starts_with(crate::stream_fold::JUDGED_ON_A_PREFIX)
    };
    let errors: Vec<&CheckOutcome> = execution
        .checks
        .iter()
        .filter(|c| c.verdict == Verdict::Error)
        .collect();
    let established = execution
        .checks
        .iter()
        .find(|c| c.verdict == Verdict::Fail && !from_the_budget(c));
    if let Some(first) = errors.first() {
        if let (true, Some(failure)) = (errors.iter().all(|c| from_the_budget(c)), established) {
            return (
                Verdict::Fail,
                Some(format!(
                    "{}: {} (then: {})",
                    failure.check, failure.message, first.message
                )),
            );
        }
        return (Verdict::Error, Some(first.message.clone()));
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
    for record in &mut execution.transcript {
        crate::excerpt::scrub_record(record, secrets);
    }
    for check in &mut execution.checks {
        for text in [&mut check.expected, &mut check.actual]
            .into_iter()
            .flatten()
            .chain([&mut check.message])
        {
            crate::excerpt::scrub_text(text, secrets);
        }
    }
    execution
}

/// Run-level sanity: a run whose every request was refused as unauthenticated, or that never
/// saw an event, proves nothing about the host and ends in ERROR.
pub(crate) fn sanity_errors(results: &[CaseResult]) -> Vec<String> {
    let mut errors = Vec::new();
    let statuses: Vec<u16> = results
        .iter()
        .flat_map(|r| &r.transcript)
        .flat_map(|s| &s.exchanges)
        .filter_map(|e| e.response.as_ref().map(|r| r.status))
        .collect();
    let ran = results
        .iter()
        .filter(|r| !matches!(r.verdict, Verdict::Skip | Verdict::Blocked))
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
            .filter(|r| !matches!(r.verdict, Verdict::Skip | Verdict::Blocked))
            .all(|r| r.verdict == Verdict::Error)
    {
        errors.push("every case that ran ended in ERROR".into());
    }
    errors
}

/// Recomputes the summary, surface judgements, requirement results and verdict after cases were
/// added or adjusted (e.g. STALE rows for baseline entries naming unknown cases).
pub fn refresh(report: &mut RunReport) {
    let previous = report.surfaces.clone();
    let flag = |surface: CaseSurface, of: fn(&SurfaceJudgement) -> bool| {
        previous.iter().any(|s| s.surface == surface && of(s))
    };
    report.surfaces = judge_surfaces(
        &report.cases,
        |surface| flag(surface, |s| s.served),
        |surface| flag(surface, |s| s.requested),
    );
    report.not_judged = not_judged(&report.cases, &report.surfaces);
    report.summary = Summary::of(&report.cases);
    report.requirements = requirement_results(&report.cases);
    report.verdict = run_verdict(&report.cases, &report.run_errors, &report.not_judged);
}

/// Per surface: whether it is served and requested, and how much of it was judged.
fn judge_surfaces(
    results: &[CaseResult],
    served: impl Fn(CaseSurface) -> bool,
    requested: impl Fn(CaseSurface) -> bool,
) -> Vec<SurfaceJudgement> {
    let registry = spec::requirements::registry();
    let is_must = |id: &String| {
        registry
            .get(id)
            .is_some_and(|r| Level::of_requirement(r.level) == Level::Must)
    };
    [CaseSurface::Execution, CaseSurface::Openwop]
        .into_iter()
        .map(|surface| {
            let cases: Vec<&CaseResult> = results.iter().filter(|r| r.surface == surface).collect();
            let proved = |case: &&CaseResult| -> BTreeSet<String> {
                case.requirements
                    .iter()
                    .chain(case.checks.iter().flat_map(|c| &c.requirements))
                    .filter(|id| is_must(id))
                    .cloned()
                    .collect()
            };
            let judged_cases: Vec<&&CaseResult> = cases
                .iter()
                .filter(|c| c.verdict.is_judged() && !c.checks.is_empty())
                .collect();
            let must: BTreeSet<String> = cases.iter().flat_map(proved).collect();
            let must_judged: BTreeSet<String> =
                judged_cases.iter().flat_map(|c| proved(c)).collect();
            SurfaceJudgement {
                surface,
                served: served(surface),
                requested: requested(surface),
                cases: cases.len() as u32,
                cases_judged: judged_cases.len() as u32,
                must_requirements: must.len() as u32,
                must_requirements_judged: must_judged.len() as u32,
            }
        })
        .collect()
}

/// What the run could not judge that conformance needs, and why: each distinct reason MUST
/// cases were BLOCKED for, each served (with selected cases) or requested surface no case of
/// which was judged, and a run that judged no case at all (nothing selected, or every selected
/// case SKIP, BLOCKED or ERROR). Empty when the run judged what it had to.
pub fn not_judged(results: &[CaseResult], surfaces: &[SurfaceJudgement]) -> Vec<String> {
    let mut out = Vec::new();
    let mut blocked: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for case in results
        .iter()
        .filter(|c| c.verdict == Verdict::Blocked && c.level == Level::Must)
    {
        blocked
            .entry(case.reason.as_deref().unwrap_or("no reason recorded"))
            .or_default()
            .push(&case.id);
    }
    for (reason, ids) in blocked {
        let shown: Vec<&str> = ids.iter().take(3).copied().collect();
        let more = if ids.len() > shown.len() {
            format!(", and {} more", ids.len() - shown.len())
        } else {
            String::new()
        };
        out.push(format!(
            "{} MUST case(s) BLOCKED ({}{more}): {reason}",
            ids.len(),
            shown.join(", ")
        ));
    }
    for surface in surfaces {
        let needs_judging = surface.requested || (surface.served && surface.cases > 0);
        if !needs_judging || surface.cases_judged > 0 {
            continue;
        }
        let why = if surface.cases == 0 {
            "no case of it was selected".to_string()
        } else {
            let of = |verdict: Verdict| {
                results
                    .iter()
                    .filter(|c| c.surface == surface.surface && c.verdict == verdict)
                    .count()
            };
            format!(
                "none of its {} case(s) was judged ({} SKIP, {} BLOCKED, {} ERROR)",
                surface.cases,
                of(Verdict::Skip),
                of(Verdict::Blocked),
                of(Verdict::Error)
            )
        };
        let whose = match (surface.requested, surface.served) {
            (true, false) => "requested with --surface, not served by the host",
            (true, true) => "requested with --surface and served by the host",
            _ => "served by the host",
        };
        out.push(format!("surface {} ({whose}): {why}", surface.surface));
    }
    // A run that judged nothing (a filter selecting no case, or only cases of a surface the
    // host does not serve, all SKIP) claims nothing about the host, least of all conformance.
    if out.is_empty() && !results.iter().any(|c| c.verdict.is_judged()) {
        if results.is_empty() {
            out.push("no case was selected (the filters match none)".to_string());
        } else {
            let of = |verdict: Verdict| results.iter().filter(|c| c.verdict == verdict).count();
            out.push(format!(
                "none of the {} selected case(s) was judged ({} SKIP, {} BLOCKED, {} ERROR)",
                results.len(),
                of(Verdict::Skip),
                of(Verdict::Blocked),
                of(Verdict::Error)
            ));
        }
    }
    out
}

/// The run's verdict, which sets the exit code: ERROR for run-level trouble, FAIL when any case
/// failed or a baseline entry is stale, ERROR when a case errored, BLOCKED when the run could not
/// judge what conformance needs (`not_judged`), else WARN/PASS.
pub fn run_verdict(
    results: &[CaseResult],
    run_errors: &[String],
    not_judged: &[String],
) -> Verdict {
    if !run_errors.is_empty() {
        return Verdict::Error;
    }
    if results.iter().any(|r| r.verdict.is_conformance_failure()) {
        return Verdict::Fail;
    }
    if results.iter().any(|r| r.verdict == Verdict::Error) {
        return Verdict::Error;
    }
    if !not_judged.is_empty() {
        return Verdict::Blocked;
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
            if matches!(
                result.verdict,
                Verdict::Skip | Verdict::Blocked | Verdict::Error
            ) && result.checks.is_empty()
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
                level: record.map(|r| r.level),
                document: record.map(|r| r.document),
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

#[cfg(test)]
mod tests {
    use super::judge;
    use crate::driver::{CaseExecution, STEP_COMPLETED};
    use crate::verdict::{CheckOutcome, Level, Verdict};

    #[test]
    fn cases_writing_one_seam_run_in_one_unit_at_the_first_one_s_place() {
        use crate::case::shared_seam::SharedSeam;
        use std::collections::BTreeSet;
        let none = BTreeSet::new();
        let program: BTreeSet<SharedSeam> = [SharedSeam::MockAiProgram].into();
        // Cases 1, 3 and 4 program the mock-AI seam; 0, 2 and 5 write nothing shared.
        let seams = [&none, &program, &none, &program, &program, &none];
        let units = super::serial_units(vec![5, 3, 0, 1, 2, 4], |i| seams[i]);
        assert_eq!(units, vec![vec![5], vec![3, 1, 4], vec![0], vec![2]]);
    }

    fn outcome(check: &str, location: &str, verdict: Verdict) -> CheckOutcome {
        CheckOutcome {
            check: check.into(),
            location: location.into(),
            step: None,
            level: Level::Must,
            requirements: Vec::new(),
            verdict,
            message: format!("{check} at {location}"),
            expected: None,
            actual: None,
        }
    }

    fn execution(checks: Vec<CheckOutcome>) -> CaseExecution {
        CaseExecution {
            checks,
            transcript: Vec::new(),
            error: None,
            counterexample: None,
            provider_scripts: Vec::new(),
        }
    }

    #[test]
    fn the_budget_running_out_is_an_error() {
        let checks = vec![
            outcome("status", "/steps/0/expect/0", Verdict::Pass),
            outcome(STEP_COMPLETED, "/steps/1", Verdict::Error),
            outcome("terminal", "/steps/1/expect/0", Verdict::Error),
        ];
        assert_eq!(judge(&execution(checks)).0, Verdict::Error);
    }

    #[test]
    fn a_failure_found_before_the_budget_ran_out_stands() {
        let checks = vec![
            outcome("closed_by_server", "/steps/0/expect/0", Verdict::Fail),
            outcome(STEP_COMPLETED, "/steps/1", Verdict::Error),
            outcome("status", "/steps/1/expect/0", Verdict::Error),
        ];
        let (verdict, reason) = judge(&execution(checks));
        assert_eq!(verdict, Verdict::Fail);
        assert!(reason.unwrap().starts_with("closed_by_server"));
    }

    #[test]
    fn any_other_error_outranks_a_failure() {
        let checks = vec![
            outcome("closed_by_server", "/steps/0/expect/0", Verdict::Fail),
            outcome("template", "/steps/1/expect/0", Verdict::Error),
        ];
        assert_eq!(judge(&execution(checks)).0, Verdict::Error);
    }
}
