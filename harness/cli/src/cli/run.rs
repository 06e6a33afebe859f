//! `conformance run`, `serve`, `mock-provider` and `selftest`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use anyhow::Context;
use conformance_cli::corpus::{CORPUS_VERSION, CorpusSource, corpus_digest, regressions_dir};
use conformance_cli::launch::{BuiltIn, BuiltInOptions, start_built_in};
use harness::case::{CaseSurface, LoadedCase, Principal};
use harness::report::console::ConsoleReporter;
use harness::report::differential::Differential;
use harness::report::{CorpusSummary, RunReport, exit_code, write_all};
use harness::run::{
    Baseline, CaseRunner, ClientOptions, Filters, HostOverrides, HttpDriver, Limits, RunObserver,
    RunOptions, RunSettings, Session, Stop,
};
use harness::target::{
    FakeProvidersOptions, ProvidersFile, RoleBinding, Target, TargetError, TargetOptions,
    parse_header, parse_header_lines,
};
use serde_json::Value;

use super::args::{
    ExternalTargetArgs, FactArgs, MockProviderArgs, ProfileArg, RunArgs, SelftestArgs, ServeArgs,
};
use super::corpus::{files, load, load_files};
use super::exit::{environment, usage};

/// The console reporter, created when the run knows how many cases it has, and the watchdog
/// that hears every case start and finish.
struct Console {
    quiet: bool,
    inner: OnceLock<ConsoleReporter>,
    watchdog: std::sync::Mutex<Option<conformance_cli::watchdog::Watchdog>>,
}

impl Console {
    fn new(quiet: bool) -> Console {
        Console {
            quiet,
            inner: OnceLock::new(),
            watchdog: std::sync::Mutex::new(None),
        }
    }

    /// Watches the run: no case starting or finishing for longer than the longest case budget
    /// (and a margin for starting and probing) ends it with a diagnostic instead of a hang.
    fn watch(&self, cases: &[LoadedCase], time_scale: f64) {
        let limit = conformance_cli::watchdog::limit_for(cases, time_scale);
        if let Ok(mut slot) = self.watchdog.lock() {
            *slot = Some(conformance_cli::watchdog::Watchdog::start("run", limit));
        }
    }

    fn progress(&self, what: &str) {
        if let Ok(slot) = self.watchdog.lock()
            && let Some(watchdog) = slot.as_ref()
        {
            watchdog.progress(what);
        }
    }

    fn stop_watching(&self) {
        if let Ok(mut slot) = self.watchdog.lock() {
            slot.take();
        }
    }
}

impl RunObserver for Console {
    fn run_started(&self, total: usize) {
        let reporter = if self.quiet {
            ConsoleReporter::plain(Box::new(std::io::sink()))
        } else {
            ConsoleReporter::stderr(total as u64)
        };
        let _ = self.inner.set(reporter);
    }

    fn case_started(&self, id: &str) {
        self.progress(&format!("{id} started"));
        if let Some(reporter) = self.inner.get() {
            reporter.case_started(id);
        }
    }

    fn case_finished(&self, result: &harness::report::CaseResult) {
        self.progress(&format!("{} finished", result.id));
        if let Some(reporter) = self.inner.get() {
            reporter.case_finished(result);
        }
    }
}

/// A target error as the command reports it: the operator's input (exit 2) or the environment
/// (exit 3), named by the flags.
fn target_error(error: TargetError) -> anyhow::Error {
    match error {
        TargetError::Url(e) => usage(format!("--target is not a URL: {e}")),
        TargetError::CredentialsInUrl => {
            usage("--target must not carry credentials; use --header-file or CONFORMANCE_AUTH_A")
        }
        TargetError::FakeProviders(e) => environment(e),
        other => usage(other.to_string()),
    }
}

/// The role bindings the flags give: the defaults, then `--providers-file`, then
/// `--provider-role` (provider id only), then `--bind`.
pub(crate) fn bindings_from(args: &ExternalTargetArgs) -> anyhow::Result<Vec<RoleBinding>> {
    let file = match &args.providers_file {
        Some(file) => Some(
            ProvidersFile::parse(&read_text(file)?)
                .map_err(|e| usage(format!("{}: {e}", file.display())))?,
        ),
        None => None,
    };
    harness::target::bindings_from(file.as_ref(), &args.provider_roles, &args.bindings)
        .map_err(target_error)
}

/// The built-in providers setup the flags name.
pub(crate) fn built_in_providers(
    args: &RunArgs,
) -> anyhow::Result<conformance_cli::launch::BuiltInProviders> {
    conformance_cli::launch::BuiltInProviders::parse(&args.built_in_providers).ok_or_else(|| {
        usage(format!(
            "--built-in-providers: unknown setup `{}` (standard, anthropic-and-media, responses-and-media, one-provider-two-models)",
            args.built_in_providers
        ))
    })
}

/// The fixtures the flags have the built-in runtime seed (`None`: every shipped one).
fn built_in_fixtures(args: &RunArgs) -> anyhow::Result<Option<Vec<String>>> {
    let table = || spec::fixtures::CONTRACT_FIXTURES.map(String::from).to_vec();
    match args.built_in_fixtures.as_str() {
        "shipped" => Ok(None),
        "upstream" => Ok(Some(
            spec::fixtures::ids_of(spec::fixtures::Catalogue::Upstream)
                .into_iter()
                .map(String::from)
                .collect(),
        )),
        "contract-table" => Ok(Some(table())),
        "contract" => Ok(Some(
            table()
                .into_iter()
                .chain(spec::fixtures::ENVELOPE_FIXTURES.map(String::from))
                .collect(),
        )),
        other => Err(usage(format!(
            "--built-in-fixtures: unknown set `{other}` (shipped, upstream, contract-table, contract)"
        ))),
    }
}

/// The external target from the flags (the fake providers started when `start_fakes`), through
/// the library's [`harness::target::external`].
pub(crate) async fn external_target(
    args: &ExternalTargetArgs,
    url: &str,
    start_fakes: bool,
) -> anyhow::Result<Target> {
    harness::target::check_url(url).map_err(target_error)?;
    let mut headers = Vec::new();
    for header in &args.headers {
        headers.push(parse_header(header).map_err(target_error)?);
    }
    if let Some(file) = &args.header_file {
        headers.extend(parse_header_lines(&read_text(file)?).map_err(target_error)?);
    }
    let mut principals = BTreeMap::new();
    if let Some(a) = &args.auth_a {
        principals.insert(Principal::A, vec![parse_header(a).map_err(target_error)?]);
    }
    if let Some(b) = &args.auth_b {
        principals.insert(Principal::B, vec![parse_header(b).map_err(target_error)?]);
    }
    let bindings = bindings_from(args)?;
    let fake_providers = match args.providers_listen.filter(|_| start_fakes) {
        Some(listen) => Some(FakeProvidersOptions {
            canary: std::env::var(&args.canary_env).map_err(|_| {
                usage(format!(
                    "--providers-listen needs the canary credential in ${}",
                    args.canary_env
                ))
            })?,
            listen,
            streaming_listen: args.providers_streaming_listen,
        }),
        None => None,
    };
    let options = TargetOptions {
        headers,
        principals,
        bindings,
        fake_providers,
    };
    let target = harness::target::external(url, options)
        .await
        .map_err(target_error)?;
    if let Some(fakes) = &target.upstream {
        for binding in fakes.bindings() {
            eprintln!(
                "fake provider for {} ({}, {}): {}",
                binding.role,
                binding.provider,
                binding.wire_format,
                fakes
                    .role_endpoint(binding.role.as_str())
                    .map(|endpoint| endpoint.base_url)
                    .unwrap_or_default()
            );
        }
    }
    Ok(target)
}

/// A file named on the command line, as text (a usage error when unreadable).
fn read_text(file: &Path) -> anyhow::Result<String> {
    std::fs::read_to_string(file)
        .map_err(|e| usage(format!("failed to read {}: {e}", file.display())))
}

/// A JSON file named on the command line; `what` says what it should hold.
fn read_json<T: serde::de::DeserializeOwned>(file: &Path, what: &str) -> anyhow::Result<T> {
    serde_json::from_str(&read_text(file)?)
        .map_err(|e| usage(format!("{} is not {what}: {e}", file.display())))
}

/// What `--facts-file` and `--fact` state about the host (`run`, `load`).
pub(super) fn facts_of(args: &FactArgs) -> anyhow::Result<HostOverrides> {
    let mut overrides = HostOverrides::default();
    if let Some(file) = &args.facts_file {
        overrides.facts = read_json(file, "a JSON object of facts")?;
    }
    for pair in &args.facts {
        overrides.add_fact(pair).map_err(usage)?;
    }
    Ok(overrides)
}

/// What `--facts-file`, `--fact`, `--capabilities` and `--require-fixture(s)` state about the
/// host, applied after its discovery.
fn overrides_of(args: &RunArgs) -> anyhow::Result<HostOverrides> {
    let mut overrides = facts_of(&args.host_facts)?;
    if let Some(file) = &args.capabilities {
        overrides
            .add_capabilities_doc(&read_json(file, "JSON")?)
            .map_err(|e| usage(format!("--capabilities {}: {e}", file.display())))?;
    }
    overrides.require_fixtures = args.require_fixtures.clone();
    overrides.require_all_fixtures = args.require_all_fixtures;
    Ok(overrides)
}

/// `conformance run`: the flags turned into a target and run options, then the library's
/// [`Session`]; the built-in target, differential mode, claims and report files around it.
pub async fn run(args: RunArgs) -> anyhow::Result<u8> {
    if !(args.time_scale > 0.0 && args.time_scale.is_finite()) {
        return Err(usage("--time-scale must be a positive number"));
    }
    let source = super::corpus::source(&args.corpus);
    eprintln!("{}", super::corpus::first_line(&args.corpus, &source));
    let corpus_files = files(&source)?;
    let corpus = load_files(&source, &corpus_files)?;
    if args.write_regressions && source == CorpusSource::Embedded {
        return Err(usage(
            "--write-regressions writes into a cases directory: give it with --cases DIR (the embedded corpus is read-only)",
        ));
    }
    // The claim's key first: a run whose claim cannot be signed is not started.
    let claim_key = match &args.claim {
        Some(_) => Some(super::claim::secret_key(args.claim_key_file.as_deref())?),
        None => None,
    };
    let baseline = match &args.baseline {
        Some(path) => Some((
            Baseline::load(path).map_err(|e| usage(format!("{e:#}")))?,
            path.display().to_string(),
        )),
        None => None,
    };
    let filters = filters_of(&args)?;
    let driver = driver_of(&args)?;
    let overrides = overrides_of(&args)?;

    let mut built_in: Option<BuiltIn> = None;
    let target = match &args.target {
        Some(url) => {
            if !args.defects.is_empty() {
                return Err(usage("--defect applies to the built-in target only"));
            }
            if args.built_in_profile != ProfileArg::Standard {
                return Err(usage(
                    "--built-in-profile applies to the built-in target only",
                ));
            }
            if args.built_in_providers != "standard" || args.built_in_fixtures != "shipped" {
                return Err(usage(
                    "--built-in-providers and --built-in-fixtures apply to the built-in target only",
                ));
            }
            external_target(&args.external, url, true).await?
        }
        None => {
            let options = BuiltInOptions {
                defects: args.defects.clone(),
                profile: args.built_in_profile.into(),
                providers: built_in_providers(&args)?,
                fixtures: built_in_fixtures(&args)?,
                ..BuiltInOptions::default()
            };
            let running = start_built_in(&options)
                .await
                .map_err(|e| environment(e.to_string()))?;
            let target = running.target.clone();
            built_in = Some(running);
            target
        }
    };
    // The run's one stop: its deadline (from the session's opening, the probe included),
    // SIGTERM or Ctrl-C, or a refusal at discovery; whichever comes, the run ends with its
    // reports written.
    let stop = Stop::default();
    let signals = tokio::spawn(stop_on_signal(stop.clone()));
    let shuffle_seed = if args.shuffle {
        Some(args.seed.unwrap_or_else(rand::random))
    } else {
        None
    };
    let (regressions_dir, _regressions_copy) = regressions_dir(&source, &corpus_files)
        .map_err(|e| environment(format!("failed to copy the embedded regressions: {e}")))?;
    let options = RunOptions {
        time_scale: args.time_scale,
        jobs: args.jobs(),
        filters: filters.clone(),
        partition: args.partition,
        shuffle_seed,
        proptest_seed: args.proptest_seed.unwrap_or_else(rand::random),
        longest_first: !args.corpus_order,
        deadline: (args.deadline > 0).then(|| Duration::from_secs(args.deadline)),
        baseline,
        overrides,
        regressions_dir: Some(regressions_dir),
        stop,
        probe_timeout: Duration::from_secs(10),
    };
    let proptest_seed = options.proptest_seed;
    // The partition slices the selected cases; the session's filters then keep them all.
    let cases: Vec<LoadedCase> = options.slice(&corpus.cases);
    // A host that gives no discovery document is refused, and the run still leaves its
    // reports (every selected case ERROR, not run, with the cause named). A document that
    // answered but could not be read is a note: every case that needs it is BLOCKED.
    let session = Session::open(driver, target, options).await;
    for note in session.notes() {
        eprintln!("note: {note}");
    }
    let target = &session.runner().target;
    eprintln!(
        "certifying {} ({}) with {} case(s) of {}{}; proptest seed {proptest_seed}{}",
        target.base_url,
        target.kind,
        cases.iter().filter(|c| filters.selects(&c.case)).count(),
        source.describe(),
        args.partition
            .map(|p| format!(", partition {p}"))
            .unwrap_or_default(),
        shuffle_seed
            .map(|s| format!("; shuffle seed {s}"))
            .unwrap_or_default()
    );
    let console = Console::new(args.quiet);
    console.watch(&cases, args.time_scale);
    let mut report = session.run_with(&cases, &corpus.cases, &console).await;
    signals.abort();
    console.stop_watching();
    if let Some(running) = built_in {
        running.shutdown().await;
    }
    if args.differential && session.refusal().is_none() {
        let reference = run_reference(&args, &session, &cases, &filters).await?;
        let differential = Differential::compare(&report, &reference, "built-in");
        eprintln!(
            "differential: {} of {} case(s) differ from the built-in reference runtime (INFO, never a verdict; see report.html)",
            differential.cases.len(),
            differential.cases_compared
        );
        report.differential = Some(differential);
    }
    report.corpus = CorpusSummary {
        version: CORPUS_VERSION.to_string(),
        digest: corpus_digest(&corpus_files),
        source: match &source {
            CorpusSource::Embedded => "embedded".to_string(),
            CorpusSource::Directory(dir) => dir.display().to_string(),
        },
    };
    if let Some(partition) = &args.partition {
        report.options.filters.push(partition.as_filter());
    }
    let claim = match (&args.claim, &claim_key) {
        (Some(file), Some(key)) => Some(ClaimToWrite {
            file,
            key,
            corpus: &corpus_files,
            discovery: session.discovery_documents(),
        }),
        _ => None,
    };
    let code = finish_report(&args, &report, &source, &console, claim)?;
    if let Some(why) = session.refusal() {
        eprintln!("error: {why}");
    }
    Ok(code)
}

/// Sends the run's stop on SIGTERM or Ctrl-C, so that a run a CI job stops still writes its
/// reports with what was judged.
async fn stop_on_signal(stop: Stop) {
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    let reason = tokio::select! {
        _ = terminate => "the run was stopped by SIGTERM",
        _ = tokio::signal::ctrl_c() => "the run was interrupted (Ctrl-C)",
    };
    stop.send(reason);
}

/// Differential mode: the same cases, with the same seeds, against a fresh built-in reference
/// runtime (standard profile, no defect).
async fn run_reference(
    args: &RunArgs,
    session: &Session,
    cases: &[LoadedCase],
    filters: &Filters,
) -> anyhow::Result<RunReport> {
    let target_runner = session.runner();
    let running = start_built_in(&BuiltInOptions::default())
        .await
        .map_err(|e| environment(format!("the reference runtime did not start: {e}")))?;
    let mut target = running.target.clone();
    let findings = harness::target::probe(
        &target_runner.driver,
        &target,
        Duration::from_secs(10).mul_f64(args.time_scale),
    )
    .await;
    findings.apply_to(&mut target);
    let runner = CaseRunner {
        driver: (target_runner.driver.clone()).watching_canary(target.canary.as_deref()),
        target: Arc::new(target),
        ..target_runner.clone()
    };
    let settings = RunSettings {
        baseline_path: None,
        ..session.settings().clone()
    };
    let report = harness::run::run_cases(
        &runner,
        cases,
        filters,
        &settings,
        &|result| result,
        &harness::run::Quiet,
    )
    .await;
    running.shutdown().await;
    Ok(report)
}

/// What `--claim` needs once the report exists.
struct ClaimToWrite<'a> {
    file: &'a Path,
    key: &'a [u8; 32],
    corpus: &'a harness::case::CorpusFiles,
    discovery: &'a BTreeMap<String, String>,
}

fn finish_report(
    args: &RunArgs,
    report: &RunReport,
    source: &CorpusSource,
    console: &Console,
    claim: Option<ClaimToWrite<'_>>,
) -> anyhow::Result<u8> {
    let dir = args
        .report_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from("reports").join(&report.run_id));
    let written = write_all(report, &dir).map_err(|e| environment(format!("{e:#}")))?;
    if let Some(claim) = claim {
        super::claim::write_claim(
            report,
            claim.corpus,
            claim.discovery,
            claim.file,
            claim.key,
            &dir,
        )?;
    }
    if let Some(path) = &args.write_baseline {
        std::fs::write(path, Baseline::from_failures(report).to_json_string())
            .with_context(|| format!("write {}", path.display()))?;
        eprintln!("wrote the baseline {}", path.display());
    }
    if let (true, CorpusSource::Directory(dir)) = (args.write_regressions, source) {
        write_regressions(report, &dir.join("regressions"))?;
    }
    // Progress went to stderr; the summary is the command's output (stdout), one line under
    // --quiet.
    if let Some(reporter) = console.inner.get() {
        reporter.clear();
    }
    if console.quiet {
        crate::outln!(
            "{}",
            harness::report::console::summary_line(report, Some(&written))
        );
    } else {
        crate::outln!(
            "{}",
            harness::report::console::summary_text(report, Some(&written))
                .trim_start_matches('\n')
                .trim_end()
        );
    }
    Ok(exit_code(report.verdict))
}

fn write_regressions(report: &RunReport, dir: &Path) -> anyhow::Result<()> {
    for case in &report.cases {
        let Some(counterexample) = &case.counterexample else {
            continue;
        };
        std::fs::create_dir_all(dir)?;
        let path = dir.join(format!("{}.json", case.id));
        let mut doc: Value = std::fs::read(&path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_else(|| serde_json::json!({"values": []}));
        let values = doc["values"]
            .as_array_mut()
            .ok_or_else(|| usage(format!("{} has no `values` array", path.display())))?;
        if !values.contains(&counterexample.value) {
            values.push(counterexample.value.clone());
        }
        std::fs::write(&path, spec::schema::to_file_text(&doc))?;
        eprintln!("wrote a counterexample to {}", path.display());
    }
    Ok(())
}

/// A line of `serve`'s banner after its first: a reader that took only the first line (the
/// URL) and closed the pipe must not end the server, so a write error is ignored.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, $($arg)*);
        let _ = out.flush();
    }};
}

/// `conformance serve`: the built-in runtime and its fake providers, until interrupted.
///
/// Its first line is `listening on <URL>`; then, when it calls fake providers served elsewhere
/// (`--providers-at`), the one `conformance run --target` command line that certifies it (the
/// test keys, canary and facts it was started with), else how to start it for that.
pub async fn serve(args: ServeArgs) -> anyhow::Result<u8> {
    // The canary credential the fake providers require: $CONFORMANCE_CANARY, else a fresh
    // one, printed in the run command (a test value of this process only).
    let mut generated_canary = None;
    let external_providers = match (args.providers_at, args.providers_streaming_at) {
        (Some(address), Some(streaming_address)) => {
            let canary = std::env::var(&args.canary_env).unwrap_or_else(|_| {
                let fresh = format!("sk-canary-{}", uuid::Uuid::new_v4().simple());
                generated_canary = Some(fresh.clone());
                fresh
            });
            Some(conformance_cli::launch::ExternalProviders {
                address,
                streaming_address,
                canary,
            })
        }
        _ => None,
    };
    // The test keys: from CONFORMANCE_AUTH_A/B (`Authorization: Bearer <key>`, the variables a
    // `conformance run --target` against this server reads), else fresh random ones.
    let key_of = |name: &str| {
        std::env::var(name).ok().and_then(|header| {
            header
                .split_once(':')
                .map(|(_, v)| v.trim().trim_start_matches("Bearer ").trim().to_string())
        })
    };
    let principal_keys = match (key_of("CONFORMANCE_AUTH_A"), key_of("CONFORMANCE_AUTH_B")) {
        (Some(a), Some(b)) => Some((a, b)),
        _ => None,
    };
    let generated_keys = principal_keys.is_none();
    let options = BuiltInOptions {
        defects: args.defects,
        keep_alive_ms: args.keep_alive_ms,
        listen: args.listen,
        external_providers: external_providers.clone(),
        principal_keys,
        profile: args.built_in_profile.into(),
        max_subscribers_per_run: None,
        providers: Default::default(),
        fixtures: None,
        store: args.store.clone(),
        max_connections: args.max_connections,
        header_read_timeout_ms: args.header_read_timeout_ms,
        body_read_timeout_ms: args.body_read_timeout_ms,
        write_stall_timeout_ms: args.write_stall_timeout_ms,
    };
    let stop = stop_signal()
        .map_err(|e| environment(format!("failed to wait for Ctrl-C or SIGTERM: {e}")))?;
    let running = start_built_in(&options)
        .await
        .map_err(|e| environment(e.to_string()))?;
    if let Some(file) = &args.write_facts {
        let facts = serde_json::to_string_pretty(&running.target.facts)?;
        std::fs::write(file, facts + "\n")
            .map_err(|e| environment(format!("failed to write {}: {e}", file.display())))?;
    }
    crate::outln!("listening on {}", running.base_url());
    // The variables the run command needs that the operator did not set.
    let mut env: Vec<(String, String)> = Vec::new();
    if let Some(canary) = &generated_canary {
        env.push((args.canary_env.clone(), canary.clone()));
    }
    if generated_keys {
        for (principal, variable) in [
            (Principal::A, "CONFORMANCE_AUTH_A"),
            (Principal::B, "CONFORMANCE_AUTH_B"),
        ] {
            if let Some(header) = running
                .target
                .principals
                .get(&principal)
                .and_then(|headers| headers.first())
            {
                env.push((variable.into(), format!("Authorization: {}", header.value)));
            }
        }
    }
    match &external_providers {
        Some(external) => {
            say!(
                "certify it with (in another shell; the run serves the fake providers this server calls):"
            );
            say!(
                "  {}",
                run_command_for(
                    &running.base_url(),
                    external,
                    &args.canary_env,
                    &env,
                    args.write_facts.as_deref(),
                    &running.target.facts,
                )
            );
        }
        None => {
            if !env.is_empty() {
                // Keys this server made up: a person calling it by hand needs them, and they
                // are test keys of this process only (set CONFORMANCE_AUTH_A/B to choose them).
                say!("fresh test keys (surface W), for curl:");
                for (variable, value) in &env {
                    say!("  export {variable}={}", shell_word(value));
                }
            }
            say!(
                "to certify it with `conformance run --target`, start it with --providers-at ADDR --providers-streaming-at ADDR2 (fake providers the run serves, so it can script them) and --write-facts FILE: it then prints the run command"
            );
        }
    }
    stop.await;
    // Stopping drops the target, and with it a temporary store's directory.
    running.shutdown().await;
    Ok(0)
}

/// Ctrl-C, or (Unix) SIGTERM: what ends `serve` with its shutdown (a temporary store removed).
/// Both are registered when this is called, before the address is printed, so a supervisor
/// that signals as soon as it reads the address is honoured.
fn stop_signal() -> std::io::Result<impl std::future::Future<Output = ()>> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut interrupt = signal(SignalKind::interrupt())?;
        let mut terminate = signal(SignalKind::terminate())?;
        Ok(async move {
            tokio::select! {
                _ = interrupt.recv() => {}
                _ = terminate.recv() => {}
            }
        })
    }
    #[cfg(not(unix))]
    {
        Ok(async {
            let _ = tokio::signal::ctrl_c().await;
        })
    }
}

/// The `conformance run --target` command line that certifies a `serve`d runtime calling the
/// fake providers at `external`: the variables it needs that the operator did not set, the
/// provider addresses, and its facts (the file `--write-facts` wrote, else each as `--fact`).
fn run_command_for(
    url: &str,
    external: &conformance_cli::launch::ExternalProviders,
    canary_env: &str,
    env: &[(String, String)],
    facts_file: Option<&Path>,
    facts: &BTreeMap<String, Value>,
) -> String {
    let mut words: Vec<String> = env
        .iter()
        .map(|(name, value)| format!("{name}={}", shell_word(value)))
        .collect();
    words.extend(
        [
            "conformance",
            "run",
            "--target",
            url,
            "--providers-listen",
            &external.address.to_string(),
            "--providers-streaming-listen",
            &external.streaming_address.to_string(),
        ]
        .map(String::from),
    );
    if canary_env != "CONFORMANCE_CANARY" {
        words.push(format!("--canary-env {}", shell_word(canary_env)));
    }
    match facts_file {
        Some(file) => {
            words.push("--facts-file".into());
            words.push(shell_word(&file.display().to_string()));
        }
        None => {
            for (name, value) in facts {
                let text = match value {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                words.push(format!("--fact {}", shell_word(&format!("{name}={text}"))));
            }
        }
    }
    words.join(" ")
}

/// A word for a POSIX shell: as is when it needs no quoting, else single-quoted.
fn shell_word(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-.,:/=@+%".contains(&b));
    if plain {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// `conformance mock-provider`: fake providers serving script files.
pub async fn mock_provider(args: MockProviderArgs) -> anyhow::Result<u8> {
    let canary = std::env::var(&args.canary_env)
        .map_err(|_| usage(format!("set the canary credential in ${}", args.canary_env)))?;
    let options = mock_provider::ServeOptions {
        listen: args.listen,
        streaming_listen: args.streaming_listen,
        scripts_dir: args.scripts,
        canary,
        instances: Vec::new(),
    };
    let running = mock_provider::serve_from_files(options)
        .await
        .map_err(|e| usage(format!("{e:#}")))?;
    crate::outln!("{}", running.startup_report());
    tokio::signal::ctrl_c()
        .await
        .map_err(|e| environment(format!("failed to wait for Ctrl-C: {e}")))?;
    running.shutdown().await;
    Ok(0)
}

/// `conformance selftest`: the kill matrix.
pub async fn selftest(args: SelftestArgs) -> anyhow::Result<u8> {
    let corpus = load(&args.corpus)?;
    let cases: Vec<LoadedCase> = corpus.cases;
    let dir = args
        .report_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from("reports").join("selftest"));
    // Every case of every run is progress: a run making none for longer than the longest case
    // budget (and a margin) ends with a diagnostic rather than hanging.
    let watchdog = conformance_cli::watchdog::Watchdog::start(
        "selftest",
        conformance_cli::watchdog::limit_for(&cases, args.time_scale),
    );
    conformance_cli::selftest::run_selftest(
        &cases,
        &args.defects,
        args.jobs,
        args.time_scale,
        &dir,
        &watchdog,
    )
    .await
    .map_err(|e| environment(format!("{e:#}")))
}

/// `conformance plan`: what a run against `--target` would do, from the host's discovery and
/// the role bindings, before anything runs.
pub async fn plan(args: RunArgs, json: bool) -> anyhow::Result<u8> {
    let source = super::corpus::source(&args.corpus);
    eprintln!("{}", super::corpus::first_line(&args.corpus, &source));
    let corpus = load(&args.corpus)?;
    let filters = filters_of(&args)?;
    let driver = driver_of(&args)?;
    // Without --target, the built-in runtime (as `run` would start it) is planned: started to
    // be probed, then stopped; no case runs.
    let mut built_in: Option<BuiltIn> = None;
    let (mut target, bindings) = match args.target.clone() {
        // Nothing runs: the fake providers are not started, only their addresses foreseen.
        Some(url) => (
            external_target(&args.external, &url, false).await?,
            bindings_from(&args.external)?,
        ),
        None => {
            let providers = built_in_providers(&args)?;
            let options = BuiltInOptions {
                defects: args.defects.clone(),
                profile: args.built_in_profile.into(),
                providers,
                fixtures: built_in_fixtures(&args)?,
                ..BuiltInOptions::default()
            };
            let running = start_built_in(&options)
                .await
                .map_err(|e| environment(e.to_string()))?;
            eprintln!("planning the built-in runtime (no --target)");
            let target = running.target.clone();
            built_in = Some(running);
            (target, providers.bindings())
        }
    };
    let fakes_running = built_in.is_some() || args.external.providers_listen.is_some();
    let overrides = overrides_of(&args)?;
    let mut findings = harness::target::probe(
        &driver,
        &overrides.as_told(&target),
        Duration::from_secs(10).mul_f64(args.time_scale),
    )
    .await;
    if let Some(why) = findings.refusal(&target.base_url) {
        return Err(environment(why));
    }
    // The same scoping of shared providers a run applies once its fakes learned the models.
    findings.scope_roles(&bindings);
    findings.apply_to(&mut target);
    overrides.apply(&mut target);
    let names = harness::target::instances_for(&bindings)
        .map(|(_, names)| names)
        .map_err(|e| usage(e.to_string()))?;
    let listen = args.external.providers_listen;
    let base_url = |provider: &str| {
        let address = listen?;
        Some(format!("http://{address}/{}", names.get(provider)?))
    };
    let listed: std::collections::BTreeSet<String> = bindings
        .iter()
        .filter(|b| target.has_need(&harness::case::needs::Need::Provider(b.role)))
        .map(|b| b.provider.clone())
        .collect();
    let cases: Vec<&harness::case::Case> = corpus
        .cases
        .iter()
        .map(|c| &c.case)
        .filter(|c| filters.selects(c))
        .collect();
    let plan = harness::run::plan(
        &target,
        &cases,
        &bindings,
        fakes_running,
        &base_url,
        &listed,
    );
    if let Some(running) = built_in {
        running.shutdown().await;
    }
    if json {
        crate::outln!("{}", serde_json::to_string_pretty(&plan)?);
    } else {
        crate::outln!("{}", plan.to_text().trim_end());
    }
    Ok(0)
}

/// The case selection `--id`, `--level`, `--tag` and `--surface` make.
fn filters_of(args: &RunArgs) -> anyhow::Result<Filters> {
    let surfaces = args
        .surfaces
        .iter()
        .map(|s| match s.as_str() {
            "execution" => Ok(CaseSurface::Execution),
            "openwop" => Ok(CaseSurface::Openwop),
            other => Err(usage(format!(
                "unknown surface `{other}` (execution, openwop)"
            ))),
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok(Filters {
        ids: args.ids.clone(),
        levels: args.levels.clone(),
        tags: args.tags.clone(),
        surfaces,
    })
}

/// The HTTP driver `--proxy`, `--ca-cert` and `--insecure` configure.
fn driver_of(args: &RunArgs) -> anyhow::Result<HttpDriver> {
    HttpDriver::new(
        &ClientOptions {
            proxy: args.proxy.clone(),
            ca_cert: args.ca_cert.clone(),
            insecure: args.insecure,
            max_requests_per_minute: args.max_requests_per_minute,
        },
        Limits::default(),
    )
    .map_err(|e| usage(e.to_string()))
}
