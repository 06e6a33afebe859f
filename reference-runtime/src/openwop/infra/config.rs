//! Surface-W configuration: the `[openwop]` table of the runtime's TOML file.
//!
//! Every field has a default, so an absent table gives a working host with two test keys in two
//! tenants and no heartbeats. Values are checked when the table is read; a value out of range is
//! a configuration error, never silently changed.

use serde::Deserialize;
use serde_json::Value;

use crate::openwop::infra::choices::OpenWopChoices;
use crate::openwop::infra::envelope_settings::EnvelopeSettings;

/// The largest request body surface W reads.
pub(crate) const MAX_BODY_BYTES: usize = 1024 * 1024;

/// The four signal kinds of an annotation.
pub(crate) const SIGNALS: [&str; 4] = ["rating", "correction", "label", "flag"];

/// `[openwop.feedback]`: how the `feedback` capability is advertised (see the module
/// documentation).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FeedbackSettings {
    /// Whether `feedback` carries `signals` (absent means all four, which this host accepts).
    pub advertise_signals: bool,
    /// The signal kinds the host accepts (and lists, with `advertise_signals`).
    pub signals: FeedbackSignals,
    /// The resources an annotation may be attached to (`feedback.targets`).
    pub targets: FeedbackTargets,
}

impl Default for FeedbackSettings {
    fn default() -> Self {
        FeedbackSettings {
            advertise_signals: true,
            signals: FeedbackSignals::default(),
            targets: FeedbackTargets::default(),
        }
    }
}

/// The signal kinds the host accepts (open point `w.feedback.signals`): the chapter's
/// `feedback.signals` "lists the signal kinds a host accepts", which may be fewer than four.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FeedbackSignals {
    /// `rating`, `correction`, `label`, `flag`.
    #[default]
    AllFour,
    /// `rating` and `correction` (an independent host's list); the others are refused `422
    /// capability_not_provided`.
    RatingAndCorrection,
}

impl FeedbackSignals {
    /// The kinds, in the order discovery lists them.
    pub(crate) fn kinds(self) -> &'static [&'static str] {
        match self {
            FeedbackSignals::AllFour => &SIGNALS,
            FeedbackSignals::RatingAndCorrection => &SIGNALS[..2],
        }
    }
}

/// The resources an annotation may be attached to (open point `w.feedback.targets`): the
/// chapter's `feedback.targets` names them, the host's choice among the run, its nodes and its
/// events.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FeedbackTargets {
    /// `run` and `node`: an event target is refused.
    #[default]
    RunAndNode,
    /// `run` and `event` (an independent host's list): a node target is refused.
    RunAndEvent,
    /// `node` and `event` (an independent host's list): an annotation on the run (no target)
    /// is refused.
    NodeAndEvent,
}

impl FeedbackTargets {
    /// The targets, as discovery lists them.
    pub(crate) fn kinds(self) -> &'static [&'static str] {
        match self {
            FeedbackTargets::RunAndNode => &["run", "node"],
            FeedbackTargets::RunAndEvent => &["run", "event"],
            FeedbackTargets::NodeAndEvent => &["node", "event"],
        }
    }
}

/// `[openwop.provider_usage]`: whether the `providerUsage` capability is advertised (see the
/// module documentation).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ProviderUsageSettings {
    /// Whether discovery lists `providerUsage` and runs record `provider.usage`.
    pub advertise: bool,
}

impl Default for ProviderUsageSettings {
    fn default() -> Self {
        ProviderUsageSettings { advertise: true }
    }
}

/// The longest keep-alive interval the chapter allows (a comment at least every 30 s).
pub const MAX_KEEP_ALIVE_SECS: u64 = 30;

/// Surface-W configuration (the `[openwop]` table of the runtime's TOML file).
///
/// Defaults (what an absent table gives):
///
/// | field | default |
/// |---|---|
/// | `api_keys` | `hk_test_openwop_tenant_a` → tenant `tenant-a`, subject `conformance-a`; `hk_test_openwop_tenant_b` → tenant `tenant-b`, subject `conformance-b` |
/// | `test_key_prefix` | `hk_test_` (keys with it may use `configurable.ai.mockProvider`) |
/// | `keep_alive_secs` | 15 (1–30) |
/// | `max_subscribers_per_run` | 64 concurrent event streams per run (0 = unlimited) |
/// | `subscriber_retry_after_secs` | 1 (the `Retry-After` of the 429) |
/// | `max_run_duration_ms` | 600 000 (each run's wall-clock ceiling, advertised as `limits.maxRunDurationMs`; 0 = none) |
/// | `public_base_url` | none: `eventsUrl`/`statusUrl` use `http://<Host header>` |
/// | `heartbeat.min_interval_sec` | 1 |
/// | `heartbeat.max_runtime_ms` | 30 000 (the cap on every heartbeat's `max_runtime_ms`) |
/// | `heartbeat.heartbeats` | none |
/// | `heartbeat.subscription_heartbeats` | none |
/// | `scheduling.min_interval_sec` | 1 |
/// | `scheduling.schedules` | none |
/// | `envelopes` | the envelope catalog and reliability limits (see [`EnvelopeSettings`]) |
/// | `feedback.advertise_signals` | `true` (see [`FeedbackSettings`]) |
/// | `provider_usage.advertise` | `true` (see [`ProviderUsageSettings`]) |
/// | `choices` | the standard options where the chapter leaves the choice (see [`OpenWopChoices`]) |
/// | `seams_enabled` | `false`: the `/conformance/seams/…` test seams (the era-2 log seed) answer 404; `true` mounts them (bearer-authenticated) and advertises `conformance.seamsProfile` |
///
/// ```toml
/// [openwop]
/// keep_alive_secs = 15
/// max_subscribers_per_run = 64
///
/// [[openwop.api_keys]]
/// key = "hk_test_openwop_tenant_a"
/// tenant = "tenant-a"
/// subject = "conformance-a"
///
/// [[openwop.heartbeat.heartbeats]]
/// id = "runs-idle"
/// interval_sec = 5
/// max_runtime_ms = 1000
/// predicate = { kind = "active-runs", threshold = 1 }
///
/// [[openwop.scheduling.schedules]]
/// id = "nightly-noop"
/// workflow_id = "conformance-noop"
/// tenant = "tenant-a"
/// interval_sec = 60
/// inputs = {}
/// ```
///
/// Interval substrate: heartbeats and schedules share one, an in-process `tokio` interval timer
/// started with the router (first tick one interval after start); a tick that falls while the
/// prior evaluation (heartbeat) or the prior run (schedule) is still going is skipped, never
/// queued. The host advertises it as the `scheduling` capability (see the `scheduling` module).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default, try_from = "RawOpenWopConfig")]
pub struct OpenWopConfig {
    /// Bearer keys and the tenant and subject each one acts as. Replaces the defaults when set.
    pub api_keys: Vec<ApiKeyConfig>,
    /// Keys starting with this prefix are test keys (allowed to use mock providers); discovery
    /// advertises it as `testing.testKeyPrefix`.
    pub test_key_prefix: String,
    /// Seconds between `:` keep-alive comments on an idle event stream (1–30).
    pub keep_alive_secs: u64,
    /// Concurrent event-stream subscribers per run before 429 `rate_limited` (0 = unlimited).
    pub max_subscribers_per_run: usize,
    /// `Retry-After` seconds of the subscriber-limit 429.
    pub subscriber_retry_after_secs: u64,
    /// Each run's wall-clock ceiling in milliseconds (at least 1000), advertised as
    /// `limits.maxRunDurationMs` and enforced: a run still going when it passes fails with
    /// `cap.breached {kind: run-duration}` and error `run_timeout` (upstream's capabilities
    /// schema). It caps `heartbeat.max_runtime_ms` (the chapter). `0` sets no ceiling and
    /// advertises none.
    pub max_run_duration_ms: u64,
    /// Absolute base URL for `eventsUrl`/`statusUrl` (e.g. `https://host.example`); when unset,
    /// `http://<Host header>`.
    pub public_base_url: Option<String>,
    /// Heartbeats evaluated by the host.
    pub heartbeat: HeartbeatSettings,
    /// Interval schedules (the `scheduling` capability).
    pub scheduling: SchedulingSettings,
    /// The envelope catalog and reliability limits.
    pub envelopes: EnvelopeSettings,
    /// How the `feedback` capability is advertised.
    pub feedback: FeedbackSettings,
    /// Whether the `providerUsage` capability is advertised (and `provider.usage` recorded).
    pub provider_usage: ProviderUsageSettings,
    /// Whether the test seams are mounted (never in production).
    pub seams_enabled: bool,
    /// Behaviours the chapter leaves to the host (`[openwop.choices]`).
    pub choices: OpenWopChoices,
    /// The fixture workflows to seed (and list in discovery), by id; every fixture of
    /// `spec/fixtures/` when unset. `["conformance-noop", …]` seeds just those.
    pub fixtures: Option<Vec<String>>,
}

impl Default for OpenWopConfig {
    fn default() -> Self {
        OpenWopConfig {
            api_keys: default_api_keys(),
            test_key_prefix: "hk_test_".to_string(),
            keep_alive_secs: 15,
            max_subscribers_per_run: 64,
            subscriber_retry_after_secs: 1,
            max_run_duration_ms: DEFAULT_MAX_RUN_DURATION_MS,
            public_base_url: None,
            heartbeat: HeartbeatSettings::default(),
            scheduling: SchedulingSettings::default(),
            envelopes: EnvelopeSettings::default(),
            feedback: FeedbackSettings::default(),
            provider_usage: ProviderUsageSettings::default(),
            seams_enabled: false,
            choices: OpenWopChoices::default(),
            fixtures: None,
        }
    }
}

fn default_api_keys() -> Vec<ApiKeyConfig> {
    vec![
        ApiKeyConfig {
            key: "hk_test_openwop_tenant_a".to_string(),
            tenant: "tenant-a".to_string(),
            subject: "conformance-a".to_string(),
        },
        ApiKeyConfig {
            key: "hk_test_openwop_tenant_b".to_string(),
            tenant: "tenant-b".to_string(),
            subject: "conformance-b".to_string(),
        },
    ]
}

/// One bearer key.
#[derive(Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApiKeyConfig {
    /// The key as sent in `Authorization: Bearer <key>`.
    pub key: String,
    /// The tenant it belongs to (`^[A-Za-z0-9._-]{1,128}$`).
    pub tenant: String,
    /// The subject it acts as (`^[^\s/]{1,256}$`).
    pub subject: String,
}

impl std::fmt::Debug for ApiKeyConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiKeyConfig")
            .field("key", &"<redacted>")
            .field("tenant", &self.tenant)
            .field("subject", &self.subject)
            .finish()
    }
}

/// The heartbeat capability and the heartbeats the host evaluates.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HeartbeatSettings {
    /// The smallest interval a heartbeat may use (advertised as `heartbeat.minIntervalSec`).
    pub min_interval_sec: u64,
    /// The cap on every heartbeat's `max_runtime_ms` (advertised as `heartbeat.maxRuntimeMs`).
    pub max_runtime_ms: u64,
    /// The heartbeats, started with the host; their messages go to every subscriber of the host
    /// channel.
    pub heartbeats: Vec<HeartbeatConfig>,
    /// Per-subscription heartbeats: one fresh instance of each is started for every
    /// `/host/events` subscription that names it in `heartbeatId`, under the id
    /// `<id>.<16 hex digits>`, ticking from the moment the subscription opens and stopped when it
    /// closes; its messages go to that subscription only and its state is kept in memory (an
    /// instance never outlives the process, so there is nothing to re-notify after a restart).
    /// Every tick rule is the same as for [`HeartbeatSettings::heartbeats`]. The id is at most
    /// 100 characters and unique across both lists.
    pub subscription_heartbeats: Vec<HeartbeatConfig>,
}

impl Default for HeartbeatSettings {
    fn default() -> Self {
        HeartbeatSettings {
            min_interval_sec: 1,
            max_runtime_ms: 30_000,
            heartbeats: Vec::new(),
            subscription_heartbeats: Vec::new(),
        }
    }
}

/// The longest id of a per-subscription heartbeat (its instances add 17 characters).
pub const MAX_SUBSCRIPTION_HEARTBEAT_ID_LEN: usize = 100;

/// Interval schedules: each creates a run of a seeded workflow every `interval_sec`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SchedulingSettings {
    /// The smallest interval a schedule may use (advertised as `scheduling.minIntervalSec`).
    pub min_interval_sec: u64,
    /// The schedules.
    pub schedules: Vec<ScheduleConfig>,
}

impl Default for SchedulingSettings {
    fn default() -> Self {
        SchedulingSettings {
            min_interval_sec: 1,
            schedules: Vec::new(),
        }
    }
}

/// One interval schedule.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScheduleConfig {
    /// The schedule id (its runs' owner subject is `schedule-<id>`).
    pub id: String,
    /// The workflow (a seeded fixture id); a schedule naming an unseeded workflow, or inputs
    /// the workflow refuses, is logged and not started.
    pub workflow_id: String,
    /// The tenant that owns the runs.
    pub tenant: String,
    /// Seconds between runs (≥ `min_interval_sec`).
    pub interval_sec: u64,
    /// The runs' inputs.
    #[serde(default)]
    pub inputs: serde_json::Map<String, Value>,
}

/// One heartbeat: a predicate evaluated on an interval.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeartbeatConfig {
    /// The heartbeat id (`heartbeatId` of its messages; the key of its persisted state).
    pub id: String,
    /// Seconds between ticks (≥ `min_interval_sec`).
    pub interval_sec: u64,
    /// The bound on one evaluation; an overrun ends with `status: timeout`.
    pub max_runtime_ms: u64,
    /// Simulated latency of observing host state before the predicate runs (a conformance knob
    /// to provoke overruns and skipped ticks; 0 in production).
    #[serde(default)]
    pub observe_delay_ms: u64,
    /// The predicate.
    pub predicate: PredicateConfig,
}

/// The closed set of built-in predicates. Each is a pure function of the observed host state
/// and the prior state.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, tag = "kind", rename_all = "kebab-case")]
pub enum PredicateConfig {
    /// State `{"value": value}` whatever is observed: one transition (the first tick), then
    /// unchanged ticks.
    Constant {
        /// The value.
        #[serde(default = "default_constant")]
        value: Value,
    },
    /// State `{"active": n >= threshold}` where `n` is the number of non-terminal runs on the
    /// host (no run data leaves the host: only the boolean). On a transition into
    /// `create_run.when`, asks the host to create a run.
    ActiveRuns {
        /// The threshold (≥ 1).
        #[serde(default = "default_threshold")]
        threshold: u64,
        /// The run to create on a transition, when any.
        #[serde(default)]
        create_run: Option<CreateRunOnTransition>,
    },
    /// State `{"on": b}` where `b` is the negation of the prior state's `on` (`true` on the
    /// first tick): every tick is a transition, provided the host passes the predicate the
    /// prior tick's state (without it every tick would compute `{"on": true}`).
    Toggle,
    /// State `{"runs": n}` where `n` is the number of runs on the host owned by this heartbeat
    /// (subject `heartbeat-<heartbeatId>`; an aggregate, no run data). It asks for a run of
    /// `workflow_id` in `tenant` on its first tick and on every tick whose state equals the
    /// prior state: an adversarial predicate, so that only the host's transition gate decides.
    /// The host creates one run on the first tick (a transition from `{}`), the next tick sees
    /// `{"runs": 1}`, and from then on every tick is unchanged and must create nothing.
    CreatedRuns {
        /// The workflow (a seeded fixture id).
        workflow_id: String,
        /// The tenant that owns the runs.
        tenant: String,
    },
    /// The tick seam's predicate (built per request, never configured): state `{"value":
    /// value}`, the state the request says is observed, asking on every tick for a run of
    /// `workflow_id` in `tenant`, as upstream's seam enqueues one on each transition; the host
    /// creates it on a transition only.
    #[serde(skip)]
    Requested {
        /// The observed state.
        value: Value,
        /// The workflow (a seeded fixture id).
        workflow_id: String,
        /// The tenant that owns the runs (the caller's).
        tenant: String,
    },
}

fn default_constant() -> Value {
    Value::Bool(true)
}

fn default_threshold() -> u64 {
    1
}

/// The run a predicate asks for on a transition.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateRunOnTransition {
    /// Create the run on a transition into `active` (`true`) or into idle (`false`).
    pub when_active: bool,
    /// The workflow (a seeded fixture id).
    pub workflow_id: String,
    /// The tenant that owns the run (its subject is `heartbeat-<id>`).
    pub tenant: String,
}

/// A configuration value out of range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid [openwop] configuration: {0}")]
pub struct ConfigError(pub String);

/// The default run ceiling, `max_run_duration_ms` (ten minutes, the figure upstream's host
/// advertises).
pub const DEFAULT_MAX_RUN_DURATION_MS: u64 = 600_000;

/// The smallest run ceiling upstream's `limits.maxRunDurationMs` admits.
pub const MIN_RUN_DURATION_MS: u64 = 1000;

impl OpenWopConfig {
    /// Each run's wall-clock ceiling, when the host sets one.
    pub fn run_duration_ceiling(&self) -> Option<std::time::Duration> {
        (self.max_run_duration_ms > 0)
            .then(|| std::time::Duration::from_millis(self.max_run_duration_ms))
    }

    /// Checks every range the chapter and this host impose. That every advertised envelope kind
    /// is one the envelope catalog holds a schema for is checked where the catalog is known, by
    /// the runtime's [`crate::config::Config::validate`].
    pub fn validate(&self) -> Result<(), ConfigError> {
        let fail = |m: String| Err(ConfigError(m));
        if !(1..=MAX_KEEP_ALIVE_SECS).contains(&self.keep_alive_secs) {
            return fail(format!(
                "keep_alive_secs must be 1..={MAX_KEEP_ALIVE_SECS} (the chapter requires a keep-alive at least every 30 s)"
            ));
        }
        if self.api_keys.is_empty() {
            return fail("api_keys must name at least one key".to_string());
        }
        for (i, key) in self.api_keys.iter().enumerate() {
            if key.key.is_empty() || !key.key.bytes().all(|b| b.is_ascii_graphic()) {
                return fail(format!(
                    "api_keys[{i}].key must be visible ASCII, non-empty"
                ));
            }
            if !is_tenant_id(&key.tenant) {
                return fail(format!(
                    "api_keys[{i}].tenant must match ^[A-Za-z0-9._-]{{1,128}}$"
                ));
            }
            if !is_subject_id(&key.subject) {
                return fail(format!(
                    "api_keys[{i}].subject must match ^[^\\s/]{{1,256}}$"
                ));
            }
            if self.api_keys[..i].iter().any(|k| k.key == key.key) {
                return fail(format!("api_keys[{i}] repeats an earlier key"));
            }
        }
        self.envelopes.check().map_err(ConfigError)?;
        let hb = &self.heartbeat;
        if hb.min_interval_sec == 0 {
            return fail("heartbeat.min_interval_sec must be at least 1".to_string());
        }
        let ceiling = self.max_run_duration_ms;
        if ceiling > 0 && ceiling < MIN_RUN_DURATION_MS {
            return fail(format!(
                "max_run_duration_ms must be 0 (none) or at least {MIN_RUN_DURATION_MS}"
            ));
        }
        if ceiling > 0 && hb.max_runtime_ms > ceiling {
            return fail(
                "heartbeat.max_runtime_ms must not exceed max_run_duration_ms (the chapter caps maxRuntimeMs by limits.maxRunDurationMs)"
                    .to_string(),
            );
        }
        let lists = [
            ("heartbeat.heartbeats", &hb.heartbeats),
            (
                "heartbeat.subscription_heartbeats",
                &hb.subscription_heartbeats,
            ),
        ];
        let mut seen: Vec<&str> = Vec::new();
        for (list, beats) in lists {
            for (i, beat) in beats.iter().enumerate() {
                let at = format!("{list}[{i}]");
                check_heartbeat(hb, &at, beat).map_err(ConfigError)?;
                if seen.contains(&beat.id.as_str()) {
                    return fail(format!("{at}.id repeats an earlier heartbeat id"));
                }
                seen.push(&beat.id);
            }
        }
        if hb
            .subscription_heartbeats
            .iter()
            .any(|b| b.id.len() > MAX_SUBSCRIPTION_HEARTBEAT_ID_LEN)
        {
            return fail(format!(
                "heartbeat.subscription_heartbeats ids are at most {MAX_SUBSCRIPTION_HEARTBEAT_ID_LEN} characters"
            ));
        }
        let sc = &self.scheduling;
        if sc.min_interval_sec == 0 {
            return fail("scheduling.min_interval_sec must be at least 1".to_string());
        }
        for (i, schedule) in sc.schedules.iter().enumerate() {
            let at = format!("scheduling.schedules[{i}]");
            if !is_tenant_id(&schedule.id) {
                return fail(format!("{at}.id must match ^[A-Za-z0-9._-]{{1,128}}$"));
            }
            if sc.schedules[..i].iter().any(|s| s.id == schedule.id) {
                return fail(format!("{at}.id repeats an earlier id"));
            }
            if !is_tenant_id(&schedule.tenant) {
                return fail(format!("{at}.tenant must match ^[A-Za-z0-9._-]{{1,128}}$"));
            }
            if schedule.interval_sec < sc.min_interval_sec {
                return fail(format!(
                    "{at}.interval_sec must be at least min_interval_sec ({})",
                    sc.min_interval_sec
                ));
            }
        }
        Ok(())
    }
}

/// The ranges of one heartbeat (`at` names it in messages).
fn check_heartbeat(
    settings: &HeartbeatSettings,
    at: &str,
    beat: &HeartbeatConfig,
) -> Result<(), String> {
    if !is_tenant_id(&beat.id) {
        return Err(format!("{at}.id must match ^[A-Za-z0-9._-]{{1,128}}$"));
    }
    if beat.interval_sec < settings.min_interval_sec {
        return Err(format!(
            "{at}.interval_sec must be at least min_interval_sec ({})",
            settings.min_interval_sec
        ));
    }
    if beat.max_runtime_ms == 0 || beat.max_runtime_ms > settings.max_runtime_ms {
        return Err(format!(
            "{at}.max_runtime_ms must be 1..={}",
            settings.max_runtime_ms
        ));
    }
    let tenant = match &beat.predicate {
        PredicateConfig::ActiveRuns { threshold: 0, .. } => {
            return Err(format!("{at}.predicate.threshold must be at least 1"));
        }
        PredicateConfig::ActiveRuns {
            create_run: Some(run),
            ..
        } => Some(&run.tenant),
        PredicateConfig::CreatedRuns { tenant, .. } => Some(tenant),
        _ => None,
    };
    if tenant.is_some_and(|t| !is_tenant_id(t)) {
        return Err(format!(
            "{at}.predicate tenant must match ^[A-Za-z0-9._-]{{1,128}}$"
        ));
    }
    Ok(())
}

/// `^[A-Za-z0-9._-]{1,128}$`: a tenant id this host mints (no `~`, no `anon:`).
pub(crate) fn is_tenant_id(value: &str) -> bool {
    (1..=128).contains(&value.len())
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// `^[^\s/]{1,256}$`: the subject grammar.
pub(crate) fn is_subject_id(value: &str) -> bool {
    (1..=256).contains(&value.chars().count())
        && !value.chars().any(|c| c.is_whitespace() || c == '/')
}

/// The shape read from TOML before validation.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, default)]
struct RawOpenWopConfig {
    api_keys: Vec<ApiKeyConfig>,
    test_key_prefix: String,
    keep_alive_secs: u64,
    max_subscribers_per_run: usize,
    subscriber_retry_after_secs: u64,
    max_run_duration_ms: u64,
    public_base_url: Option<String>,
    heartbeat: HeartbeatSettings,
    scheduling: SchedulingSettings,
    envelopes: EnvelopeSettings,
    feedback: FeedbackSettings,
    provider_usage: ProviderUsageSettings,
    seams_enabled: bool,
    choices: OpenWopChoices,
    fixtures: Option<Vec<String>>,
}

impl Default for RawOpenWopConfig {
    fn default() -> Self {
        let d = OpenWopConfig::default();
        RawOpenWopConfig {
            api_keys: d.api_keys,
            test_key_prefix: d.test_key_prefix,
            keep_alive_secs: d.keep_alive_secs,
            max_subscribers_per_run: d.max_subscribers_per_run,
            subscriber_retry_after_secs: d.subscriber_retry_after_secs,
            max_run_duration_ms: d.max_run_duration_ms,
            public_base_url: d.public_base_url,
            heartbeat: d.heartbeat,
            scheduling: d.scheduling,
            envelopes: d.envelopes,
            feedback: d.feedback,
            provider_usage: d.provider_usage,
            seams_enabled: d.seams_enabled,
            choices: d.choices,
            fixtures: d.fixtures,
        }
    }
}

impl TryFrom<RawOpenWopConfig> for OpenWopConfig {
    type Error = ConfigError;

    fn try_from(raw: RawOpenWopConfig) -> Result<Self, Self::Error> {
        let config = OpenWopConfig {
            api_keys: raw.api_keys,
            test_key_prefix: raw.test_key_prefix,
            keep_alive_secs: raw.keep_alive_secs,
            max_subscribers_per_run: raw.max_subscribers_per_run,
            subscriber_retry_after_secs: raw.subscriber_retry_after_secs,
            max_run_duration_ms: raw.max_run_duration_ms,
            public_base_url: raw.public_base_url,
            heartbeat: raw.heartbeat,
            scheduling: raw.scheduling,
            envelopes: raw.envelopes,
            feedback: raw.feedback,
            provider_usage: raw.provider_usage,
            seams_enabled: raw.seams_enabled,
            choices: raw.choices,
            fixtures: raw.fixtures,
        };
        config.validate()?;
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_absent_table_gives_the_documented_defaults() {
        let config: OpenWopConfig = toml::from_str("").unwrap();
        assert_eq!(config, OpenWopConfig::default());
        assert_eq!(config.api_keys.len(), 2);
        assert_ne!(config.api_keys[0].tenant, config.api_keys[1].tenant);
        assert!(config.validate().is_ok());
    }

    #[test]
    fn out_of_range_values_are_refused_when_read() {
        assert!(toml::from_str::<OpenWopConfig>("keep_alive_secs = 31").is_err());
        assert!(toml::from_str::<OpenWopConfig>("keep_alive_secs = 0").is_err());
        let below_min = r#"
            [heartbeat]
            min_interval_sec = 5
            [[heartbeat.heartbeats]]
            id = "h"
            interval_sec = 1
            max_runtime_ms = 100
            predicate = { kind = "constant" }
        "#;
        assert!(toml::from_str::<OpenWopConfig>(below_min).is_err());
        let ok = below_min.replace("interval_sec = 1", "interval_sec = 5");
        let config: OpenWopConfig = toml::from_str(&ok).unwrap();
        assert_eq!(config.heartbeat.heartbeats[0].interval_sec, 5);
    }

    #[test]
    fn the_run_ceiling_has_upstreams_floor_and_caps_the_heartbeat_budget() {
        for refused in ["max_run_duration_ms = 999", "max_run_duration_ms = 20000"] {
            assert!(
                toml::from_str::<OpenWopConfig>(refused).is_err(),
                "{refused}: below 1000, or under heartbeat.max_runtime_ms (30 000)"
            );
        }
        for accepted in ["max_run_duration_ms = 0", "max_run_duration_ms = 30000"] {
            assert!(
                toml::from_str::<OpenWopConfig>(accepted).is_ok(),
                "{accepted}"
            );
        }
        let lowered = "max_run_duration_ms = 1000\n[heartbeat]\nmax_runtime_ms = 1000";
        assert!(toml::from_str::<OpenWopConfig>(lowered).is_ok());
    }

    #[test]
    fn schedules_and_per_subscription_heartbeats_are_checked_when_read() {
        let schedule = r#"
            [scheduling]
            min_interval_sec = 5
            [[scheduling.schedules]]
            id = "s"
            workflow_id = "conformance-noop"
            tenant = "tenant-a"
            interval_sec = 6
            inputs = { delayMs = 10 }
        "#;
        let config: OpenWopConfig = toml::from_str(schedule).unwrap();
        assert_eq!(config.scheduling.schedules[0].inputs["delayMs"], 10);
        let below_min = schedule.replace("interval_sec = 6", "interval_sec = 4");
        assert!(toml::from_str::<OpenWopConfig>(&below_min).is_err());
        let bad_tenant = schedule.replace("tenant-a", "tenant/a");
        assert!(toml::from_str::<OpenWopConfig>(&bad_tenant).is_err());
        let beats = |second_list: &str, id: &str| {
            format!(
                r#"
                [[heartbeat.heartbeats]]
                id = "h"
                interval_sec = 1
                max_runtime_ms = 100
                predicate = {{ kind = "toggle" }}
                [[heartbeat.{second_list}]]
                id = "{id}"
                interval_sec = 1
                max_runtime_ms = 100
                predicate = {{ kind = "created-runs", workflow_id = "conformance-noop", tenant = "tenant-a" }}
                "#
            )
        };
        let config: OpenWopConfig = toml::from_str(&beats("subscription_heartbeats", "p")).unwrap();
        assert_eq!(config.heartbeat.subscription_heartbeats.len(), 1);
        assert!(
            toml::from_str::<OpenWopConfig>(&beats("subscription_heartbeats", "h")).is_err(),
            "ids are unique across both lists"
        );
        let long = "p".repeat(MAX_SUBSCRIPTION_HEARTBEAT_ID_LEN + 1);
        assert!(toml::from_str::<OpenWopConfig>(&beats("subscription_heartbeats", &long)).is_err());
        assert!(
            toml::from_str::<OpenWopConfig>(&beats("heartbeats", &long)).is_ok(),
            "host heartbeat ids may use the whole grammar"
        );
    }

    #[test]
    fn debug_output_never_shows_a_key() {
        let text = format!("{:?}", OpenWopConfig::default());
        assert!(!text.contains("hk_test_openwop"));
    }
}
