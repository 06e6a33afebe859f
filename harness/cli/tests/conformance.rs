//! The case corpus as libtest-mimic trials: `cargo test` certifies the built-in reference
//! runtime, with the usual filters (`cargo test -p conformance-cli --test conformance -- x.cursors`,
//! `-- --list`, `-- MUST` since the level is each trial's kind).
//!
//! The built-in target (runtime + fake providers) starts once, on first use. A trial passes
//! only on PASS: the reference runtime must also honour every contract decision, so INFO is a
//! failure here; SKIP is reported as ignored, with the reason.

use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use conformance_cli::launch::{BuiltIn, BuiltInOptions, start_built_in};
use harness::case::{LoadedCase, load_corpus};
use harness::run::{CaseRunner, ClientOptions, HttpDriver, Limits};
use harness::verdict::Verdict;
use libtest_mimic::{Arguments, Completion, Failed, Trial};

struct Shared {
    runtime: tokio::runtime::Runtime,
    target: OnceLock<Result<(CaseRunner, BuiltIn), String>>,
}

impl Shared {
    fn runner(&self) -> Result<&CaseRunner, Failed> {
        let started = self.target.get_or_init(|| {
            self.runtime.block_on(async {
                let built_in = start_built_in(&BuiltInOptions::default())
                    .await
                    .map_err(|e| e.to_string())?;
                let driver = HttpDriver::new(&ClientOptions::default(), Limits::default())
                    .map_err(|e| e.to_string())?;
                let mut target = built_in.target.clone();
                harness::target::probe(&driver, &target, Duration::from_secs(10))
                    .await
                    .apply_to(&mut target);
                let runner = CaseRunner {
                    driver,
                    target: Arc::new(target),
                    time_scale: std::env::var("CONFORMANCE_TIME_SCALE")
                        .ok()
                        .and_then(|s| s.parse().ok())
                        .unwrap_or(1.0),
                    proptest_seed: std::env::var("CONFORMANCE_PROPTEST_SEED")
                        .ok()
                        .and_then(|s| s.parse().ok())
                        .unwrap_or(1),
                    regressions_dir: Some(
                        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../cases/regressions"),
                    ),
                };
                Ok((runner, built_in))
            })
        });
        started
            .as_ref()
            .map(|(runner, _)| runner)
            .map_err(|e| Failed::from(format!("the built-in target did not start: {e}")))
    }

    fn run(&self, loaded: LoadedCase) -> Result<Completion, Failed> {
        let runner = self.runner()?.clone();
        let result = self
            .runtime
            .block_on(async move { tokio::spawn(harness::run::run_one(runner, loaded)).await })
            .map_err(|e| Failed::from(format!("the case panicked: {e}")))?;
        match result.verdict {
            Verdict::Pass => Ok(Completion::Completed),
            Verdict::Skip => Ok(Completion::ignored_with(result.reason.unwrap_or_default())),
            verdict => {
                let failures: Vec<String> = result
                    .checks
                    .iter()
                    .filter(|c| !c.passed())
                    .map(|c| {
                        format!(
                            "{} {} at {}: {}\n    expected: {}\n    actual:   {}",
                            c.verdict,
                            c.check,
                            c.location,
                            c.message,
                            c.expected.as_deref().unwrap_or("-"),
                            c.actual
                                .as_deref()
                                .unwrap_or("-")
                                .replace('\n', "\n              ")
                        )
                    })
                    .collect();
                Err(Failed::from(format!(
                    "{verdict}: {}\n{}",
                    result.reason.unwrap_or_default(),
                    failures.join("\n")
                )))
            }
        }
    }
}

fn main() -> std::process::ExitCode {
    let arguments = Arguments::from_args();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../cases");
    let corpus = match load_corpus(&dir) {
        Ok(corpus) => corpus,
        Err(error) => {
            eprintln!("failed to load the cases: {error}");
            return std::process::ExitCode::FAILURE;
        }
    };
    if !corpus.problems.is_empty() {
        for problem in &corpus.problems {
            eprintln!("{problem}");
        }
        eprintln!("the corpus has {} lint problem(s)", corpus.problems.len());
        return std::process::ExitCode::FAILURE;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let shared = Arc::new(Shared {
        runtime,
        target: OnceLock::new(),
    });
    let trials = corpus
        .cases
        .into_iter()
        .map(|loaded| {
            let shared = Arc::clone(&shared);
            let name = loaded.case.id.clone();
            let kind = loaded.case.level.as_str();
            Trial::ignorable_test(name, move || shared.run(loaded)).with_kind(kind)
        })
        .collect();
    libtest_mimic::run(&arguments, trials).exit_code()
}
