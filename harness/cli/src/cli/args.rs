//! Command-line arguments.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Certify hosts of the execution protocol and the OpenWOP v2 run events chapter.
#[derive(Debug, Parser)]
#[command(
    name = "conformance",
    version = conformance_cli::corpus::version_line(),
    about,
    long_about = None
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the cases against a target (the built-in reference runtime by default) and write reports.
    Run(Box<RunArgs>),
    /// Before a run: from the host's discovery and the role bindings, what each case would be
    /// (run, SKIP with the host's reason, BLOCKED with the harness's), the provider base URLs
    /// to configure per wire format, the fixtures to seed and the facts to supply. Takes
    /// `run`'s flags; nothing runs.
    Plan {
        /// Print the plan as JSON.
        #[arg(long)]
        json: bool,
        /// `run`'s flags (without `--target`, the built-in runtime is planned).
        #[command(flatten)]
        args: Box<RunArgs>,
    },
    /// Check every case file against the case format and the registries (or only the FILEs
    /// given); print every problem.
    Lint {
        /// Case files to lint instead of the whole corpus (each is read and checked; a file
        /// that cannot be read, or is no case file, is a problem, never clean).
        files: Vec<PathBuf>,
        /// The cases directory (for the whole corpus, and the ids the files must not reuse).
        #[command(flatten)]
        corpus: CorpusArgs,
    },
    /// Print a case with its requirements and their quoted normative sentences.
    Explain {
        /// The case id.
        case: String,
        /// The cases directory.
        #[command(flatten)]
        corpus: CorpusArgs,
    },
    /// List the requirement registry.
    Requirements {
        /// Output format.
        #[arg(long, value_enum, default_value_t = TableOrJson::Table)]
        format: TableOrJson,
    },
    /// Requirement → cases coverage, with totals per level and document.
    Coverage {
        /// Output format.
        #[arg(long, value_enum, default_value_t = MarkdownOrJson::Markdown)]
        format: MarkdownOrJson,
        /// The cases directory.
        #[command(flatten)]
        corpus: CorpusArgs,
    },
    /// Serve the built-in reference runtime (and its fake providers) for manual use.
    Serve(ServeArgs),
    /// Serve fake providers from script files, for configuring a host under test.
    MockProvider(MockProviderArgs),
    /// Write or check the published schemas (spec types, case format, report format).
    Schemas {
        /// `write` regenerates spec/schema/*.json; `check` fails on any difference.
        #[arg(value_enum)]
        action: SchemasAction,
    },
    /// Run the suite against the clean runtime and each known-bad runtime; write the kill matrix.
    Selftest(SelftestArgs),
    /// List the open points: what the seeds leave open, the options, who takes which.
    OpenPoints {
        /// Output format.
        #[arg(long, value_enum, default_value_t = TableOrJson::Table)]
        format: TableOrJson,
    },
    /// Run the suite against every non-standard built-in profile; write the tolerance matrix.
    Tolerance(ToleranceArgs),
    /// Merge the JSON reports of the partitions of one run (`run --partition k/n`) into the
    /// report of that run, in every format; refuses reports of different corpora or targets.
    Merge(MergeArgs),
    /// Check a claim (`run --claim`): its signature under the key, its members against the
    /// signed manifest, the case files and registry it names against the corpus; refuse a
    /// claim with a BLOCKED MUST. Prints the one-line summary; `--badge` writes the badge.
    VerifyClaim(VerifyClaimArgs),
    /// Make an Ed25519 key pair for signing claims (the secret key file is written with mode
    /// 0600 and never printed).
    ClaimKey(ClaimKeyArgs),
    /// Run one case file against the standard runtime, every profile and every known-bad
    /// runtime: does it pass, tolerate every profile, and which defects does it kill?
    Try(TryArgs),
    /// Many concurrent subscribers on each of several runs / executions, with forced
    /// disconnects and `Last-Event-ID` resumption; every sequence judged against its log.
    Load(Box<LoadArgs>),
}

/// `conformance load`.
#[derive(Debug, Args)]
pub struct LoadArgs {
    /// The host (without it the built-in reference runtime is started, with no subscriber
    /// limit).
    #[arg(long, env = "CONFORMANCE_TARGET")]
    pub target: Option<String>,
    /// How the external target is reached.
    #[command(flatten)]
    pub external: ExternalTargetArgs,
    /// What the operator states about the host, over what the probe finds (on surface W:
    /// `openwop_version`, `run_id_path_encoding`, `mock_provider_seat`).
    #[command(flatten)]
    pub host_facts: FactArgs,
    /// The surface: execution or openwop (repeatable; default both).
    #[arg(long = "surface")]
    pub surfaces: Vec<String>,
    /// Concurrent subscribers per run / execution.
    #[arg(long, default_value_t = 10)]
    pub subscribers: usize,
    /// Runs / executions created, each read by every subscriber count.
    #[arg(long, default_value_t = 1)]
    pub runs: usize,
    /// Streamed items per run (fixture tokens on W, provider chunks on X).
    #[arg(long, default_value_t = 100)]
    pub events: usize,
    /// Milliseconds between two streamed items (keeps the log live while it is read).
    #[arg(long, default_value_t = 5)]
    pub event_interval_ms: u64,
    /// W only: the `streamMode` of every subscriber (default `debug`: every event of the log;
    /// `updates` reads only the run and node transitions).
    #[arg(long, default_value = "debug")]
    pub stream_mode: spec::openwop::StreamModeSelection,
    /// W only: the `bufferMs` of every subscriber.
    #[arg(long)]
    pub buffer_ms: Option<u64>,
    /// Force a disconnect after a seeded 1..=2N frames on each connection and resume with
    /// `Last-Event-ID`.
    #[arg(long)]
    pub disconnect_every: Option<u32>,
    /// Connections per subscriber before it gives up.
    #[arg(long, default_value_t = 16)]
    pub max_connections: u32,
    /// Connection attempts in flight at once.
    #[arg(long, default_value_t = 64)]
    pub connect_concurrency: usize,
    /// The whole run's bound in seconds: past it every subscriber stops (not judged).
    #[arg(long, default_value_t = 120)]
    pub time_limit_s: u64,
    /// The longest silence (no frame, no keep-alive) an open stream may have.
    #[arg(long, default_value_t = 31_000)]
    pub keepalive_window_ms: u64,
    /// The seed of the forced-disconnect points (printed when chosen at random).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Where to write load-<surface>.json, load.html and load.md (default `reports/load-<time>`).
    #[arg(long)]
    pub report_dir: Option<PathBuf>,
    /// Built-in target only: switch on a known defect (repeatable).
    #[arg(long = "defect")]
    pub defects: Vec<String>,
    /// Built-in target only: its configuration (see `conformance run --built-in-profile`;
    /// `divergent` numbers an execution's events 2, 4, 6, … and appends a vendor event after a
    /// run's terminal one).
    #[arg(long, value_enum, default_value_t = ProfileArg::Standard)]
    pub built_in_profile: ProfileArg,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
}

/// `conformance verify-claim`.
#[derive(Debug, Args)]
pub struct VerifyClaimArgs {
    /// The claim file.
    pub file: PathBuf,
    /// The signer's public key: a file holding 64 hex digits, or the digits themselves.
    #[arg(long)]
    pub key: String,
    /// The corpus the claim's case files are checked against (default: the embedded one).
    #[command(flatten)]
    pub corpus: CorpusArgs,
    /// Write the claim's badge (SVG) here once it verifies.
    #[arg(long)]
    pub badge: Option<PathBuf>,
}

/// `conformance claim-key`.
#[derive(Debug, Args)]
pub struct ClaimKeyArgs {
    /// Where to write the secret key (64 hex digits; refused when the file exists).
    #[arg(long)]
    pub secret: PathBuf,
    /// Where to write the public key (64 hex digits).
    #[arg(long)]
    pub public: PathBuf,
}

/// `conformance merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The partitions' `report.json` files (or their report directories).
    #[arg(required = true)]
    pub reports: Vec<PathBuf>,
    /// Where to write the merged reports (default `reports/<merged run id>`).
    #[arg(long)]
    pub report_dir: Option<PathBuf>,
    /// The corpus the partitions ran (default: the embedded one).
    #[command(flatten)]
    pub corpus: CorpusArgs,
}

/// `conformance tolerance`.
#[derive(Debug, Args)]
pub struct ToleranceArgs {
    /// The cases.
    #[command(flatten)]
    pub corpus: CorpusArgs,
    /// Where to write the tolerance matrix (default `reports/tolerance`).
    #[arg(long)]
    pub report_dir: Option<PathBuf>,
    /// Cases run in parallel per runtime.
    #[arg(long, default_value_t = 4)]
    pub jobs: usize,
    /// Multiply every case timeout by this.
    #[arg(long, default_value_t = 1.0)]
    pub time_scale: f64,
}

/// `conformance try FILE.json`.
#[derive(Debug, Args)]
pub struct TryArgs {
    /// The case file (new or edited; it need not be in the corpus yet).
    pub file: PathBuf,
    /// Multiply the case's timeouts by this.
    #[arg(long, default_value_t = 1.0)]
    pub time_scale: f64,
    /// Output format.
    #[arg(long, value_enum, default_value_t = TableOrJson::Table)]
    pub format: TableOrJson,
    /// The corpus whose `selftest-exemptions.json` may exempt a MUST case that kills no
    /// defect.
    #[command(flatten)]
    pub corpus: CorpusArgs,
}

/// `write` or `check`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum SchemasAction {
    /// Regenerate.
    Write,
    /// Compare.
    Check,
}

/// The built-in runtime's configuration profile.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum ProfileArg {
    /// The default configuration.
    Standard,
    /// envelopeStrictness strict, supportedEnvelopes without kinds, feedback without signals,
    /// no providerUsage.
    Alternate,
    /// envelopeStrictness strict, with supportedEnvelopes.kinds.
    Strict,
    /// The other option at every open point it has a knob for (the tolerance matrix's profile).
    Divergent,
    /// The options that conflict with divergent's: execution.accepted appended after the 202,
    /// a durable event store, the other side of upstream's self-contradictions.
    Deferred,
    /// Only the updates stream mode served (the others refused with 400
    /// unsupported_stream_mode).
    UpdatesOnly,
    /// Bare heartbeat messages on the host channel, the chunk payload in mixed-mode messages
    /// frames, SSE headers sent with the first byte, discovery v1 unless v2 is asked for.
    UpstreamFraming,
}

impl From<ProfileArg> for conformance_cli::launch::BuiltInProfile {
    fn from(arg: ProfileArg) -> Self {
        match arg {
            ProfileArg::Standard => conformance_cli::launch::BuiltInProfile::Standard,
            ProfileArg::Alternate => conformance_cli::launch::BuiltInProfile::Alternate,
            ProfileArg::Strict => conformance_cli::launch::BuiltInProfile::Strict,
            ProfileArg::Divergent => conformance_cli::launch::BuiltInProfile::Divergent,
            ProfileArg::Deferred => conformance_cli::launch::BuiltInProfile::Deferred,
            ProfileArg::UpdatesOnly => conformance_cli::launch::BuiltInProfile::UpdatesOnly,
            ProfileArg::UpstreamFraming => conformance_cli::launch::BuiltInProfile::UpstreamFraming,
        }
    }
}

/// `table` or `json`.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum TableOrJson {
    /// A text table.
    Table,
    /// JSON.
    Json,
}

/// `markdown` or `json`.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum MarkdownOrJson {
    /// Markdown.
    Markdown,
    /// JSON.
    Json,
}

/// Where the cases are.
#[derive(Debug, Clone, Args)]
pub struct CorpusArgs {
    /// A cases directory to run instead of the corpus embedded in this binary (`conformance
    /// --version` names the embedded one).
    #[arg(long, env = "CONFORMANCE_CASES")]
    pub cases: Option<PathBuf>,
}

/// How an external target is reached: the headers and principals sent to it and the fake
/// providers it was configured with (`run` and `load` share them).
#[derive(Debug, Args)]
pub struct ExternalTargetArgs {
    /// A header sent on every request, `Name: value` (repeatable). Prefer --header-file or the
    /// environment for secrets: values are never printed or reported.
    #[arg(long = "header", value_name = "NAME: VALUE")]
    pub headers: Vec<String>,
    /// A file of `Name: value` lines sent on every request.
    #[arg(long)]
    pub header_file: Option<PathBuf>,
    /// The header identifying the first principal on the run events surface (env
    /// `CONFORMANCE_AUTH_A`), e.g. `Authorization: Bearer …`.
    #[arg(long, env = "CONFORMANCE_AUTH_A", hide_env_values = true)]
    pub auth_a: Option<String>,
    /// The header of a principal of another tenant (env `CONFORMANCE_AUTH_B`); enables the
    /// cross-tenant cases.
    #[arg(long, env = "CONFORMANCE_AUTH_B", hide_env_values = true)]
    pub auth_b: Option<String>,
    /// External targets: serve the fake provider instances on this address (the host was
    /// configured with `http://ADDR/<instance>` base URLs; `conformance plan` lists them).
    #[arg(long)]
    pub providers_listen: Option<SocketAddr>,
    /// External targets: the address of the fake providers' second server (no bound instance
    /// is served there: every instance, every fault, lives at --providers-listen).
    #[arg(long)]
    pub providers_streaming_listen: Option<SocketAddr>,
    /// External targets: the environment variable holding the canary credential the host was
    /// configured with for the fake providers.
    #[arg(long, default_value = "CONFORMANCE_CANARY")]
    pub canary_env: String,
    /// External targets: the host's provider id for a role, `role=id` (repeatable; roles:
    /// text-primary, text-secondary, media), keeping the role's default wire format.
    #[arg(long = "provider-role", value_name = "ROLE=ID")]
    pub provider_roles: Vec<String>,
    /// External targets: bind a role to the host's provider, the wire format its adapter
    /// speaks (openai-chat, openai-responses, anthropic-messages, async-media) and optionally
    /// the model, `ROLE=PROVIDER,FORMAT[,MODEL]` (repeatable; overrides --providers-file).
    #[arg(long = "bind", value_name = "ROLE=PROVIDER,FORMAT[,MODEL]")]
    pub bindings: Vec<String>,
    /// External targets: role bindings from a TOML or JSON file (`[roles.<role>]` with
    /// `provider`, `wire_format`, `model`).
    #[arg(long, value_name = "FILE")]
    pub providers_file: Option<PathBuf>,
}

/// Cases a run drives at once against one host by default (`--jobs`).
pub const DEFAULT_JOBS: usize = 16;

/// A run's default deadline in seconds at `--time-scale 1` (`--deadline`).
pub const DEFAULT_DEADLINE_SECS: u64 = 180;

/// The facts an operator states about an external host, applied over what the probe finds
/// (`run`, `load`).
#[derive(Debug, Args)]
pub struct FactArgs {
    /// A fact about the target for `${target.<name>}`, `name=value` (repeatable), e.g.
    /// `subscriber_limit=8`, `keepalive_window_ms=35000`.
    #[arg(long = "fact", value_name = "NAME=VALUE")]
    pub facts: Vec<String>,
    /// Facts from a JSON object file (`{"name": value, …}`, as `conformance serve
    /// --write-facts` writes); `--fact` overrides single ones.
    #[arg(long, value_name = "FILE")]
    pub facts_file: Option<PathBuf>,
}

impl RunArgs {
    /// The cases run at once: `--jobs`, else 1 for a paced run and [`DEFAULT_JOBS`] otherwise.
    pub fn jobs(&self) -> usize {
        self.jobs.unwrap_or(match self.max_requests_per_minute {
            Some(_) => 1,
            None => DEFAULT_JOBS,
        })
    }
}

/// `conformance run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The host to certify (e.g. `http://127.0.0.1:8080`); without it the built-in reference
    /// runtime is started and certified.
    #[arg(long, env = "CONFORMANCE_TARGET")]
    pub target: Option<String>,
    /// How the external target is reached.
    #[command(flatten)]
    pub external: ExternalTargetArgs,
    /// The cases.
    #[command(flatten)]
    pub corpus: CorpusArgs,
    /// Where to write the reports (default `reports/<run-id>`).
    #[arg(long)]
    pub report_dir: Option<PathBuf>,
    /// An explicit proxy (the system proxy is never used implicitly).
    #[arg(long)]
    pub proxy: Option<String>,
    /// A CA certificate (PEM) to trust.
    #[arg(long)]
    pub ca_cert: Option<PathBuf>,
    /// Accept invalid TLS certificates.
    #[arg(long)]
    pub insecure: bool,
    /// Send at most this many requests a minute to the host, evenly spaced, whatever case sends
    /// them: for a host with a request rate limit (cases it answers 429 are BLOCKED). Set it a
    /// little under the host's limit; the run takes longer.
    #[arg(long, value_name = "N")]
    pub max_requests_per_minute: Option<std::num::NonZeroU32>,
    /// Multiply every case timeout and wait by this (slow hosts, slow CI).
    #[arg(long, default_value_t = 1.0)]
    pub time_scale: f64,
    /// Cases run in parallel against the host (the per-host bound). Cases mostly wait on the
    /// host (streams, windows, scripted delays), so the default (16) is sized for waiting, not
    /// for CPUs; with --max-requests-per-minute it is 1, since a case waiting its turns behind
    /// other cases' requests spends its own budget.
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Start the cases in corpus order instead of the longest waits (stream windows, fact
    /// waits, scripted delays) first, the default (either is ignored with --shuffle).
    #[arg(long)]
    pub corpus_order: bool,
    /// The longest waits first: the default, kept for scripts that name it.
    #[arg(long, hide = true, conflicts_with = "corpus_order")]
    pub longest_first: bool,
    /// The run's deadline in seconds, from the start of discovery, multiplied by --time-scale
    /// (0: none). Cases not judged by then are ERROR ("the run's deadline passed") and the
    /// reports are written with what was judged.
    #[arg(long, default_value_t = DEFAULT_DEADLINE_SECS, value_name = "SECS")]
    pub deadline: u64,
    /// Run only cases with this id or id prefix (repeatable).
    #[arg(long = "id")]
    pub ids: Vec<String>,
    /// Run only cases of this level: MUST, SHOULD, MAY, CONTRACT (repeatable).
    #[arg(long = "level")]
    pub levels: Vec<String>,
    /// Run only cases with this tag (repeatable).
    #[arg(long = "tag")]
    pub tags: Vec<String>,
    /// Run only cases of this surface: execution or openwop (repeatable).
    #[arg(long = "surface")]
    pub surfaces: Vec<String>,
    /// Run slice `k` of `n` of the selected cases, for splitting a run across machines
    /// (`conformance merge` joins the reports): `hash:k/n` (also `k/n`: by a hash of the case
    /// id, stable whatever else is selected) or `count:k/n` (round-robin in corpus order).
    #[arg(long, value_name = "K/N")]
    pub partition: Option<harness::run::Partition>,
    /// A baseline of expected failures: baselined failures are XFAIL, baselined cases that now
    /// pass are STALE (and fail the run).
    #[arg(long)]
    pub baseline: Option<PathBuf>,
    /// Write the run's failures as a baseline file.
    #[arg(long)]
    pub write_baseline: Option<PathBuf>,
    /// Shuffle the case order.
    #[arg(long)]
    pub shuffle: bool,
    /// The shuffle seed (printed when chosen at random).
    #[arg(long)]
    pub seed: Option<u64>,
    /// The seed of property-based generation (printed; replays the same inputs).
    #[arg(long)]
    pub proptest_seed: Option<u64>,
    /// Capability overrides: a JSON file `{"add": [...], "remove": [...]}`.
    #[arg(long)]
    pub capabilities: Option<PathBuf>,
    /// What the operator states about the host.
    #[command(flatten)]
    pub host_facts: FactArgs,
    /// Built-in target only: the providers the runtime is configured with (`standard`,
    /// `anthropic-and-media`, `responses-and-media`, `one-provider-two-models`).
    #[arg(long, default_value = "standard")]
    pub built_in_providers: String,
    /// Built-in target only: the fixtures the runtime seeds (`shipped`: every one of
    /// spec/fixtures/, both catalogues; `upstream`: upstream's catalogue only, as a real
    /// OpenWOP host seeds it; `contract-table`: the eight of CONTRACT.md's table; `contract`:
    /// those and the two AI-envelope fixtures).
    #[arg(long, default_value = "shipped")]
    pub built_in_fixtures: String,
    /// A fixture the host must list (repeatable): a case needing it is BLOCKED, not SKIP,
    /// when the host's discovery does not list it.
    #[arg(long = "require-fixture", value_name = "ID")]
    pub require_fixtures: Vec<String>,
    /// Every fixture a case needs is required: a case whose fixture the host does not list is
    /// BLOCKED, not SKIP.
    #[arg(long = "require-all-fixtures")]
    pub require_all_fixtures: bool,
    /// Built-in target only: switch on a known defect (repeatable; see
    /// `reference-runtime --list-defects`).
    #[arg(long = "defect")]
    pub defects: Vec<String>,
    /// Built-in target only: its configuration (`alternate`: envelopeStrictness strict,
    /// supportedEnvelopes without kinds, feedback without signals, no providerUsage; `strict`:
    /// envelopeStrictness strict with supportedEnvelopes.kinds).
    #[arg(long, value_enum, default_value_t = ProfileArg::Standard)]
    pub built_in_profile: ProfileArg,
    /// Write counterexamples found by property-based steps to `cases/regressions/`.
    #[arg(long)]
    pub write_regressions: bool,
    /// Also run every selected case against the built-in reference runtime (standard, no
    /// defect) and show, case by case, how the target's normalised transcript differs from it
    /// (report.html, as an aligned two-column transcript). INFO only: never a verdict. The
    /// target is `--target`, or the built-in runtime with `--defect` / `--built-in-profile`.
    #[arg(long)]
    pub differential: bool,
    /// Write a signed claim of the run here (with `badge.svg` and `claim-summary.md` in the
    /// report directory). The Ed25519 secret key comes from `--claim-key-file` or the
    /// environment variable `CONFORMANCE_CLAIM_KEY` (64 hex digits; never printed).
    #[arg(long, value_name = "FILE")]
    pub claim: Option<PathBuf>,
    /// The file holding the claim's secret key (64 hex digits; see `conformance claim-key`).
    #[arg(long, value_name = "FILE", requires = "claim")]
    pub claim_key_file: Option<PathBuf>,
    /// No progress (no bar, no per-case lines): only the summary, in one line.
    #[arg(long)]
    pub quiet: bool,
}

/// `conformance serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Where the runtime listens (port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:4320")]
    pub listen: SocketAddr,
    /// Switch on a known defect (repeatable).
    #[arg(long = "defect")]
    pub defects: Vec<String>,
    /// The runtime's configuration (see `conformance run --built-in-profile`).
    #[arg(long, value_enum, default_value_t = ProfileArg::Standard)]
    pub built_in_profile: ProfileArg,
    /// Write the facts a `conformance run --target` against this server needs (heartbeat ids
    /// and timings, the subscriber limit, …) to this file, for its `--facts-file`.
    #[arg(long, value_name = "FILE")]
    pub write_facts: Option<PathBuf>,
    /// Keep-alive interval in milliseconds.
    #[arg(long, default_value_t = 15_000)]
    pub keep_alive_ms: u64,
    /// The event store, as for `reference-runtime --store`: `memory` (nothing survives the
    /// process) or `sqlite:PATH` (a durable SQLite file, kept at exit and recovered by the next
    /// start on the same PATH). Default: the profile's (in memory; `deferred` uses a temporary
    /// SQLite file, removed at exit or, after a `kill -9`, by the next `conformance` start).
    #[arg(long, value_name = "KIND")]
    pub store: Option<conformance_cli::launch::StoreKind>,
    /// Call fake providers served elsewhere (e.g. by `conformance run --providers-listen`)
    /// instead of starting them: their address.
    #[arg(long, requires = "providers_streaming_at")]
    pub providers_at: Option<SocketAddr>,
    /// The streaming backend of those fake providers.
    #[arg(long, requires = "providers_at")]
    pub providers_streaming_at: Option<SocketAddr>,
    /// The environment variable holding the canary credential those fake providers require.
    #[arg(long, default_value = "CONFORMANCE_CANARY")]
    pub canary_env: String,
    /// Longest time a connection may take to send a request's head, the wait for it on a
    /// kept-alive connection included, in ms (as `reference-runtime --header-read-timeout-ms`;
    /// default 40000).
    #[arg(long, value_name = "MS")]
    pub header_read_timeout_ms: Option<u64>,
    /// Longest time a request's whole body may take to arrive, in ms (default 60000).
    #[arg(long, value_name = "MS")]
    pub body_read_timeout_ms: Option<u64>,
    /// Connections served at once; more wait in the listen backlog (default 4096).
    #[arg(long, value_name = "N")]
    pub max_connections: Option<usize>,
    /// Longest time a connection's writes may stay blocked (its reader, e.g. an SSE
    /// subscriber, taking no byte) before it is closed, in ms; 0 for never (default 30000).
    #[arg(long, value_name = "MS")]
    pub write_stall_timeout_ms: Option<u64>,
}

/// `conformance mock-provider`.
#[derive(Debug, Args)]
pub struct MockProviderArgs {
    /// The wiremock server's address.
    #[arg(long, default_value = "127.0.0.1:4330")]
    pub listen: SocketAddr,
    /// The streaming backend's address.
    #[arg(long)]
    pub streaming_listen: Option<SocketAddr>,
    /// A directory of script files (`*.json`).
    #[arg(long)]
    pub scripts: PathBuf,
    /// The environment variable holding the canary credential.
    #[arg(long, default_value = "CONFORMANCE_CANARY")]
    pub canary_env: String,
}

/// `conformance selftest`.
#[derive(Debug, Args)]
pub struct SelftestArgs {
    /// The cases.
    #[command(flatten)]
    pub corpus: CorpusArgs,
    /// Where to write the kill matrix (default `reports/selftest`).
    #[arg(long)]
    pub report_dir: Option<PathBuf>,
    /// Only these defects (repeatable; default all).
    #[arg(long = "defect")]
    pub defects: Vec<String>,
    /// Cases run in parallel per runtime.
    #[arg(long, default_value_t = 4)]
    pub jobs: usize,
    /// Multiply every case timeout by this.
    #[arg(long, default_value_t = 1.0)]
    pub time_scale: f64,
}
