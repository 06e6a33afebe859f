//! [`probed_runner`]: a case runner over a target once the harness's probe has read what the
//! host advertises, as `conformance run` builds one (the tests that drive cases in-process).

use std::sync::Arc;
use std::time::Duration;

use harness::run::{CaseRunner, ClientOptions, HttpDriver, Limits};
use harness::target::Target;

/// A runner over `target`, its capabilities read by the probe, at time scale 1 and proptest
/// seed 1, keeping no regressions.
pub(crate) async fn probed_runner(mut target: Target) -> CaseRunner {
    let driver = HttpDriver::new(&ClientOptions::default(), Limits::default()).unwrap();
    harness::target::probe(&driver, &target, Duration::from_secs(10))
        .await
        .apply_to(&mut target);
    CaseRunner {
        driver,
        target: Arc::new(target),
        time_scale: 1.0,
        proptest_seed: 1,
        regressions_dir: None,
    }
}

/// The corpus of this checkout's `cases/`, which must load without a problem.
pub(crate) fn corpus() -> Vec<harness::case::LoadedCase> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let corpus = harness::case::load_corpus(&root.join("cases")).unwrap();
    assert!(corpus.problems.is_empty(), "{:#?}", corpus.problems);
    corpus.cases
}

/// `cases` against `target` once the probe has read it, `jobs` at a time, in file order, with
/// no baseline: the run's report.
pub(crate) async fn run_probed(
    target: Target,
    cases: &[harness::case::LoadedCase],
    jobs: usize,
) -> harness::report::RunReport {
    run_probed_at(target, cases, jobs, 1.0).await
}

/// [`run_probed`] at `time_scale` (every case's budget and wait that many times its own).
pub(crate) async fn run_probed_at(
    target: Target,
    cases: &[harness::case::LoadedCase],
    jobs: usize,
    time_scale: f64,
) -> harness::report::RunReport {
    let mut runner = probed_runner(target).await;
    runner.time_scale = time_scale;
    let settings = harness::run::RunSettings {
        jobs,
        shuffle_seed: None,
        baseline_path: None,
        ..harness::run::RunSettings::default()
    };
    harness::run::run_cases(
        &runner,
        cases,
        &harness::run::Filters::default(),
        &settings,
        &|r| r,
        &harness::run::Quiet,
    )
    .await
}
