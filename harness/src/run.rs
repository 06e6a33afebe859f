//! Running cases against a target: the entry point a program embedding the harness uses, and
//! the pieces `conformance run` assembles it from.
//!
//! ```no_run
//! # async fn example(cases: Vec<harness::case::LoadedCase>) -> Result<(), Box<dyn std::error::Error>> {
//! use harness::run::{ClientOptions, HttpDriver, Limits, Quiet, RunOptions, Session};
//! use harness::target::{TargetOptions, external, parse_header};
//!
//! let options = TargetOptions {
//!     headers: vec![parse_header("Authorization: Bearer test-key")?],
//!     ..TargetOptions::default()
//! };
//! let target = external("http://127.0.0.1:8080", options).await?;
//! let driver = HttpDriver::new(&ClientOptions::default(), Limits::default())?;
//! let session = Session::open(driver, target, RunOptions::default()).await;
//! let report = session.run(&cases, &Quiet).await;
//! println!("{:?}", report.verdict);
//! # Ok(())
//! # }
//! ```
//!
//! [`Session::open`] probes the host (its discovery documents, capabilities and facts), applies
//! the operator's [`HostOverrides`], and [`Session::run`] runs the selected cases and returns
//! the [`RunReport`](crate::report::RunReport) every format renders. The lower-level pieces
//! ([`CaseRunner`], [`run_cases`], [`judge`], …) are re-exported for the command line's kill
//! and tolerance matrices.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::capability::{CapabilityError, HostCapability};
use crate::case::LoadedCase;
use crate::case::needs::Need;
use crate::host::{Target, Unestablished};
use crate::report::{CaseResult, RunReport};

pub use crate::baseline::{
    BASELINE_FORMAT_VERSION, Baseline, BaselineError, ExpectedFailure, apply as apply_baseline,
};
pub use crate::driver::{
    CaseExecution, CaseRunner, ClientOptions, HttpDriver, Limits, STEP_COMPLETED,
};
pub use crate::partition::{ParsePartitionError, Partition, PartitionStrategy};
pub use crate::plan::{
    Disposition, FactToSupply, FixtureToSeed, PlannedCase, ProviderToConfigure, RunPlan, plan,
};
pub use crate::runner::{
    Adjust, Filters, Quiet, RunObserver, RunSettings, SILENT_CASES_BEFORE_STOP, judge, not_judged,
    not_run_on, refresh, run as run_cases, run_one, run_verdict,
};
pub use crate::suggest::ranked;

/// A stop from outside (a signal, a caller's timeout): once sent, the run ends with every case
/// not yet judged ERROR and the reason in the report.
#[derive(Debug, Clone)]
pub struct Stop(Arc<tokio::sync::watch::Sender<Option<String>>>);

impl Default for Stop {
    fn default() -> Self {
        Stop(Arc::new(tokio::sync::watch::channel(None).0))
    }
}

impl Stop {
    /// Stops the run with `reason` (the first reason sent is kept by the run).
    pub fn send(&self, reason: impl Into<String>) {
        self.0.send_replace(Some(reason.into()));
    }

    fn subscribe(&self) -> tokio::sync::watch::Receiver<Option<String>> {
        self.0.subscribe()
    }
}

/// What the operator states about the host beyond what its discovery says: applied after the
/// probe, in this order (facts, capability additions and removals, required fixtures).
#[derive(Debug, Clone, Default)]
pub struct HostOverrides {
    /// Facts cases read as `${target.<name>}` (`--facts-file`, then `--fact`).
    pub facts: BTreeMap<String, Value>,
    /// Capabilities added.
    pub add_capabilities: Vec<HostCapability>,
    /// Capabilities removed.
    pub remove_capabilities: Vec<HostCapability>,
    /// Fixtures the host must list (a case needing one it lacks is then BLOCKED, not SKIP).
    pub require_fixtures: Vec<String>,
    /// Every fixture a case needs must be listed.
    pub require_all_fixtures: bool,
}

impl HostOverrides {
    /// Adds one `name=value` fact (the value JSON, else a string).
    pub fn add_fact(&mut self, pair: &str) -> Result<(), String> {
        let (name, value) = pair
            .split_once('=')
            .ok_or_else(|| format!("--fact is `name=value`, got `{pair}`"))?;
        let value: Value =
            serde_json::from_str(value).unwrap_or_else(|_| Value::String(value.to_string()));
        self.facts.insert(name.to_string(), value);
        Ok(())
    }

    /// Adds a capabilities document's `add` and `remove` lists (strings, each a capability
    /// as written: [`HostCapability::parse`]); the error names the first that is none.
    pub fn add_capabilities_doc(&mut self, doc: &Value) -> Result<(), CapabilityError> {
        let listed = |key: &str| -> Result<Vec<HostCapability>, CapabilityError> {
            doc.get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|entry| match entry {
                    Value::String(text) => HostCapability::parse(text),
                    other => Err(CapabilityError {
                        text: other.to_string(),
                        reason: "not a string".into(),
                    }),
                })
                .collect()
        };
        let (add, remove) = (listed("add")?, listed("remove")?);
        self.add_capabilities.extend(add);
        self.remove_capabilities.extend(remove);
        Ok(())
    }

    /// `target` with the operator's facts, for the probe: it does not go looking for what the
    /// operator already said (the heartbeat interval it would read the host channel for).
    pub fn as_told(&self, target: &Target) -> Target {
        let mut told = target.clone();
        told.facts
            .extend(self.facts.iter().map(|(k, v)| (k.clone(), v.clone())));
        told
    }

    /// Applies the overrides to a probed target.
    pub fn apply(&self, target: &mut Target) {
        if target.kind == crate::host::TargetKind::External {
            // Without knowing the host's keep-alive interval, watch longer than the 30 s bound.
            target
                .facts
                .entry("keepalive_window_ms".into())
                .or_insert(Value::from(31_000));
        }
        target
            .facts
            .extend(self.facts.iter().map(|(k, v)| (k.clone(), v.clone())));
        // The operator's word on a fact wins over what the probe could not establish: a value
        // is used, `null` says the host has none of the kind (SKIP, not BLOCKED).
        for name in self.facts.keys() {
            target
                .unjudgeable
                .remove(&Unestablished::Need(Need::Fact(name.clone())));
        }
        // As the probe does for the built-in runtime's own facts.
        if target.facts.contains_key("subscriber_limit") {
            target.capabilities.insert(Need::SubscriberLimit.into());
        }
        for capability in &self.add_capabilities {
            target.capabilities.insert(capability.clone());
        }
        for capability in &self.remove_capabilities {
            target.capabilities.remove(capability);
        }
        // Last: what the host lists is known only after the capability overrides.
        crate::host::require_fixtures(target, &self.require_fixtures, self.require_all_fixtures);
    }
}

/// How a run goes.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Multiplies every timing budget (a slow machine: above 1).
    pub time_scale: f64,
    /// Parallel cases (at least 1).
    pub jobs: usize,
    /// Which cases run.
    pub filters: Filters,
    /// A stable slice of the selected cases (`k/n`), for runs merged afterwards.
    pub partition: Option<Partition>,
    /// Shuffle the order with this seed.
    pub shuffle_seed: Option<u64>,
    /// The seed of the generated (property) cases.
    pub proptest_seed: u64,
    /// Start the cases with the longest waits first.
    pub longest_first: bool,
    /// The run's deadline from [`Session::open`] (scaled by `time_scale`).
    pub deadline: Option<Duration>,
    /// Expected failures (XFAIL, STALE) and the baseline file's path, for the report.
    pub baseline: Option<(Baseline, String)>,
    /// What the operator states about the host.
    pub overrides: HostOverrides,
    /// Counterexamples replayed before generated values.
    pub regressions_dir: Option<PathBuf>,
    /// A stop from outside; a refused host sends it too.
    pub stop: Stop,
    /// How long the probe waits for each discovery request (scaled by `time_scale`).
    pub probe_timeout: Duration,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            time_scale: 1.0,
            jobs: 16,
            filters: Filters::default(),
            partition: None,
            shuffle_seed: None,
            proptest_seed: 0,
            longest_first: true,
            deadline: None,
            baseline: None,
            overrides: HostOverrides::default(),
            regressions_dir: None,
            stop: Stop::default(),
            probe_timeout: Duration::from_secs(10),
        }
    }
}

impl RunOptions {
    /// The cases a run gives [`Session::run`]: the partition's slice of the selected ones, else
    /// all (the filters then keep the selected).
    pub fn slice(&self, cases: &[LoadedCase]) -> Vec<LoadedCase> {
        match &self.partition {
            Some(partition) => partition.select(
                cases
                    .iter()
                    .filter(|c| self.filters.selects(&c.case))
                    .cloned()
                    .collect(),
                |c| c.case.id.as_str(),
            ),
            None => cases.to_vec(),
        }
    }
}

/// A probed target, ready to run cases.
pub struct Session {
    runner: CaseRunner,
    settings: RunSettings,
    filters: Filters,
    baseline: Option<Baseline>,
    refusal: Option<String>,
    notes: Vec<String>,
    discovery: BTreeMap<String, String>,
}

impl Session {
    /// Probes `target` and applies the overrides. A host that gives no discovery document is
    /// refused: the run then still reports every selected case ERROR with the cause
    /// ([`Session::refusal`]).
    pub async fn open(driver: HttpDriver, mut target: Target, options: RunOptions) -> Session {
        // The deadline counts from here, the probe included.
        let deadline = options
            .deadline
            .map(|d| tokio::time::Instant::now() + d.mul_f64(options.time_scale));
        let findings = crate::probe::probe(
            &driver,
            &options.overrides.as_told(&target),
            options.probe_timeout.mul_f64(options.time_scale),
        )
        .await;
        let mut notes: Vec<String> = findings
            .unjudgeable
            .iter()
            .filter(|(need, _)| matches!(need, Unestablished::Need(Need::Surface(_))))
            .map(|(_, why)| why.clone())
            .collect();
        let refusal = findings.refusal(&target.base_url);
        if let Some(why) = &refusal {
            options.stop.send(why.clone());
        }
        findings.apply_to(&mut target);
        notes.extend(findings.notes.iter().cloned());
        options.overrides.apply(&mut target);
        let (baseline, baseline_path) = match options.baseline {
            Some((baseline, path)) => (Some(baseline), Some(path)),
            None => (None, None),
        };
        Session {
            runner: CaseRunner {
                driver,
                target: Arc::new(target),
                time_scale: options.time_scale,
                proptest_seed: options.proptest_seed,
                regressions_dir: options.regressions_dir,
            },
            settings: RunSettings {
                jobs: options.jobs,
                shuffle_seed: options.shuffle_seed,
                baseline_path,
                longest_first: options.longest_first,
                deadline,
                stop_after_silent_cases: Some(SILENT_CASES_BEFORE_STOP),
                stop: Some(options.stop.subscribe()),
            },
            filters: options.filters,
            baseline,
            refusal,
            notes,
            discovery: findings.documents,
        }
    }

    /// The probed target and how cases run against it.
    pub fn runner(&self) -> &CaseRunner {
        &self.runner
    }

    /// The run's settings (for a second run with the same seeds and order).
    pub fn settings(&self) -> &RunSettings {
        &self.settings
    }

    /// Why the host was refused (no discovery document), if it was.
    pub fn refusal(&self) -> Option<&str> {
        self.refusal.as_deref()
    }

    /// What the probe noted (documents it could not read, stream modes it could not probe).
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// The discovery documents as the host served them (path → body), for a signed claim.
    pub fn discovery_documents(&self) -> &BTreeMap<String, String> {
        &self.discovery
    }

    /// Runs the cases the filters select (of `cases`, see [`RunOptions::slice`]), applies the
    /// baseline (its entries for cases not in `known` become results of their own), and
    /// returns the report.
    pub async fn run_with(
        &self,
        cases: &[LoadedCase],
        known: &[LoadedCase],
        observer: &dyn RunObserver,
    ) -> RunReport {
        let baseline = self.baseline.as_ref();
        let adjust = |result: CaseResult| match baseline {
            Some(baseline) => apply_baseline(baseline, result),
            None => result,
        };
        let mut report = run_cases(
            &self.runner,
            cases,
            &self.filters,
            &self.settings,
            &adjust,
            observer,
        )
        .await;
        if let Some(baseline) = baseline {
            let known: Vec<&str> = known.iter().map(|c| c.case.id.as_str()).collect();
            report.cases.extend(baseline.unknown_case_results(known));
            refresh(&mut report);
        }
        report
    }

    /// Runs the cases the filters select and returns the report.
    pub async fn run(&self, cases: &[LoadedCase], observer: &dyn RunObserver) -> RunReport {
        self.run_with(cases, cases, observer).await
    }
}
