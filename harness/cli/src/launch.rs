//! The built-in target: the reference runtime and the fake providers started in-process on
//! ephemeral ports, wired to each other, and described as a [`Target`].
//!
//! This is the only module that names `reference_runtime`, and it uses only the launching API
//! the runtime re-exports at its root: the harness library never links the runtime and judges
//! it over HTTP like any host (a hygiene test guards both).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;

use reference_runtime::{
    AcceptedAppend, AfterTerminalEvents, ArtifactFields, CancelTerminal, CancelledPayload,
    EnvelopeFields, ErrorDetails, ErrorWording, EventIdForm, ExecutionCancel, HostChannelAddress,
    IdempotencyMismatch, InterruptIdForm, KeepAliveComment, MalformedStatus, ManifestFields,
    MessagesBatching, ProviderCodeChoice, ResultBeforeSuccess, RunStartedTiming, SequenceForm,
    StreamValidationOrder, SubmissionStatus, UsageCurrency, UsageFacts, ValidationOrder,
    ValuesResumeAtEnd,
};
use reference_runtime::{
    ApiKeyConfig, CancelAnswer, Config, CredentialSource, CrossTenantAnswer, CursorPrecedence,
    Defect, Defects, ExecutionIdForm, FeedbackSignals, FeedbackTargets, HeartbeatConfig,
    MAX_DELAY_MS, ModelConfig, MultiAdmitted, PredicateConfig, ProviderConfig, ReplayStatus,
    RunIdForm, RunningRuntime, RuntimeOptions, Strictness, UnsatisfiableRequirements, start,
};
use reference_runtime::{
    CursorRange, EmptyLastEventId, FixtureNodeIds, HostEventFraming, ImplementedModes,
    MixedMessagesData, MockProviderSeat, PollForeignParameters, PollPage, RunIdPathForms,
    SseHeaderTiming, TickSeamRuns, UnprojectableProperty, UpstreamContradictions, VersionDefault,
};
use serde_json::json;
use spec::execution::Modality;

use harness::case::Principal;
use harness::target::{FakeUpstream, Role, RoleBinding, WireFormat};
use harness::target::{SecretHeader, Target, TargetKind};

/// The runtime's event store kind (`memory` or `sqlite:PATH`), for `conformance serve --store`.
pub use reference_runtime::StoreKind;

/// The environment-variable name the built-in runtime's providers read their credential from.
pub const CREDENTIAL_ENV: &str = "CONFORMANCE_PROVIDER_KEY";

/// The configuration of the built-in runtime. Cases never name a profile: they select hosts by
/// what discovery advertises (`needs`), so every case is PASS or SKIP under every profile.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum BuiltInProfile {
    /// The default configuration: `envelopeStrictness.mode: warn`, `supportedEnvelopes` with
    /// `kinds`, `feedback` with `signals`.
    #[default]
    Standard,
    /// The seats the standard profile fills, left to their other readings:
    /// `envelopeStrictness.mode: strict`, `supportedEnvelopes` advertised without `kinds`,
    /// `feedback` advertised without `signals`, `providerUsage` not advertised (so the rule for
    /// hosts without it is exercised; cases needing it run under the other profiles); everything
    /// else as [`BuiltInProfile::Standard`].
    Alternate,
    /// `envelopeStrictness.mode: strict` with `supportedEnvelopes.kinds` advertised; everything
    /// else as [`BuiltInProfile::Standard`]. Strictness is read after the catalog, so only a
    /// host that admits a non-universal kind (which [`BuiltInProfile::Alternate`] never does)
    /// ever reaches the strict refusal of drift.
    Strict,
    /// At every open point it has a knob for (`spec/open-points.json`), the option the standard
    /// profile does not take (but for the points [`BuiltInProfile::Deferred`] and
    /// [`BuiltInProfile::UpdatesOnly`] take), and never a defect: JSON content types with `charset=utf-8`,
    /// header names in title case,
    /// event times at `+02:00` with millisecond fractions, `Last-Event-ID` winning over `after`, idempotent replays answered 202, no
    /// subscriber limit, mixed-mode events sent once per admitting mode,
    /// unsatisfiable requirements failed as an accepted execution, `exe_` execution ids,
    /// dotted run ids, cross-tenant 404, asynchronous cancel (`cancelling`), a keep-alive
    /// interval twice the launcher's; on surface X also: submissions reporting the current
    /// status, 415/413/422 for malformed requests, the Idempotency-Key checked first, 409 for
    /// a reused key, even sequence numbers (2, 4, 6, …), synchronous cancel (200), 200 no-op
    /// cancel of a terminal execution, 404 for a result before success, no `provider_code`,
    /// terse error messages, `uri`-only artifacts, a runtime-derived custom usage fact,
    /// manifests with `limits`, title-case header names; on surface W also dotted event and interrupt ids,
    /// `engineVersion` on every event, `run.cancelled` without the fields the request did not
    /// give, `run.started` appended after the 201, `bufferMs` checked before `streamMode`, a
    /// snapshot on a `values` resumption at the end of a terminal run, batched `messages`, bare
    /// `:` keep-alive comments, a vendor event after `run.completed`, the host channel at
    /// `/host/channel`, no `currency` (USD), `details.hostReference` on every error, and
    /// heartbeats named `hb.*`; capabilities as [`BuiltInProfile::Standard`]. The tolerance
    /// matrix runs the corpus against it (zero FAIL, zero WARN).
    Divergent,
    /// The options that conflict with [`BuiltInProfile::Divergent`]'s: `execution.accepted`
    /// appended just after the 202 (so a submission can only report `accepted`), over a
    /// durable (SQLite) event store; and, on surface W, the other side of upstream's
    /// self-contradictions wherever a host can take it (a `negotiation.decided` event, the
    /// type the run-event enum has and the codemap lacks, in every run's log), and
    /// `feedback.targets: [node, event]` (an annotation on the run refused); everything else
    /// as [`BuiltInProfile::Standard`].
    Deferred,
    /// A host serving a subset of the stream modes: `updates` only, each other mode (alone or
    /// in a combination) refused with 400 `unsupported_stream_mode`, `details.supported:
    /// ["updates"]` (open point `w.stream-mode.implemented-modes`); everything else as
    /// [`BuiltInProfile::Standard`]. It departs from the chapter's SHOULD ("SHOULD implement
    /// all four") on purpose: the tolerance matrix accepts WARN from it exactly at the
    /// requirements [`BuiltInProfile::departs_from`] names, and cases needing a missing mode
    /// SKIP by the probe.
    #[serde(rename = "updates-only")]
    UpdatesOnly,
    /// The framings and timings a real host may choose where the seed and upstream's asyncapi
    /// leave them open, as the upstream reference host takes them: host-channel frames whose
    /// data is the bare heartbeat message (`event: heartbeat.evaluated`), mixed-mode frames
    /// admitted by `messages` carrying the outputChunk payload (`event: messages`), SSE
    /// headers written only with the first body byte, and a dual-stack discovery (v1 without
    /// `OpenWOP-Version`, v2 on request), and the envelope fixtures of upstream's later catalogue
    /// (one mock node id per fixture, `retry-attempted` with `maxTokens: 256`); everything else
    /// as [`BuiltInProfile::Standard`].
    #[serde(rename = "upstream-framing")]
    UpstreamFraming,
}

impl BuiltInProfile {
    /// Every profile, standard first.
    pub const ALL: [BuiltInProfile; 7] = [
        BuiltInProfile::Standard,
        BuiltInProfile::Alternate,
        BuiltInProfile::Strict,
        BuiltInProfile::Divergent,
        BuiltInProfile::Deferred,
        BuiltInProfile::UpdatesOnly,
        BuiltInProfile::UpstreamFraming,
    ];

    /// The profiles that take a non-standard option at some open point without changing what
    /// discovery advertises: the tolerance matrix's rows.
    pub const DIVERGENT: [BuiltInProfile; 4] = [
        BuiltInProfile::Divergent,
        BuiltInProfile::Deferred,
        BuiltInProfile::UpdatesOnly,
        BuiltInProfile::UpstreamFraming,
    ];

    /// The SHOULD requirements this profile departs from on purpose (an open point whose other
    /// option breaks a SHOULD): the only requirements the tolerance matrix accepts a WARN at
    /// from it. Empty for every profile that keeps every MUST and SHOULD.
    pub fn departs_from(self) -> &'static [&'static str] {
        match self {
            BuiltInProfile::UpdatesOnly => &[
                "events.stream-mode.should-implement-values",
                "events.stream-mode.should-implement-messages",
                "events.stream-mode.should-implement-debug",
            ],
            _ => &[],
        }
    }

    /// The name (`--built-in-profile NAME`).
    pub fn as_str(self) -> &'static str {
        match self {
            BuiltInProfile::Standard => "standard",
            BuiltInProfile::Alternate => "alternate",
            BuiltInProfile::Strict => "strict",
            BuiltInProfile::Divergent => "divergent",
            BuiltInProfile::Deferred => "deferred",
            BuiltInProfile::UpdatesOnly => "updates-only",
            BuiltInProfile::UpstreamFraming => "upstream-framing",
        }
    }

    /// The keep-alive interval this profile runs at, given the launcher's (open point
    /// `x.sse.keep-alive-interval` / `w.sse.keep-alive-interval`): the divergent profile doubles
    /// it, within the chapter's 30 s.
    pub fn keep_alive_ms(self, requested: u64) -> u64 {
        match self {
            BuiltInProfile::Divergent => (requested * 2).min(30_000),
            _ => requested,
        }
    }

    /// Whether this is the default profile.
    pub fn is_standard(&self) -> bool {
        *self == BuiltInProfile::Standard
    }

    /// The profile under which a defect shows: a non-standard one for a defect in a rule only
    /// that configuration exercises (an absent `kinds` or `signals`, no `providerUsage`, strict
    /// mode), or for one found on a host configured so (a `messages` stream left open, on a host
    /// writing its headers with its first byte).
    pub fn showing(defect: Defect) -> BuiltInProfile {
        match defect {
            Defect::WAbsentKindsAdmitted
            | Defect::WAbsentSignalsNoneAccepted
            | Defect::WUsageEmittedUnadvertised => BuiltInProfile::Alternate,
            Defect::WStrictAdmitsDrift | Defect::WStrictRefusesAtFloor => BuiltInProfile::Strict,
            // As on the upstream host where it was found: its headers come with its first byte.
            Defect::WMessagesStreamOpenAfterTerminal => BuiltInProfile::UpstreamFraming,
            // A node target refused and logged, where the targets are `[run, event]` (the
            // node-target twin of w.feedback.targets judges it; the event-target one judges
            // the other feedback-target defects under the standard profile).
            Defect::WRefusedAnnotationLogged => BuiltInProfile::Divergent,
            // A run annotation accepted, where the targets are `[node, event]` (the run-target
            // twin of w.feedback.targets judges it).
            Defect::WRunAnnotationOutsideTargetAccepted => BuiltInProfile::Deferred,
            _ => BuiltInProfile::Standard,
        }
    }

    /// Applies the profile to the runtime's configuration.
    fn configure(self, config: &mut Config) {
        if self == BuiltInProfile::Divergent {
            config.server.json_charset = true;
            config.server.timestamp_offset_minutes = Some(120);
            config.server.title_case_headers = true;
            config.execution.unsatisfiable_requirements = UnsatisfiableRequirements::FailExecution;
            config.execution.id_form = ExecutionIdForm::Prefixed;
            config.execution.replay_status = ReplayStatus::Accepted;
            config.execution.cursor_precedence = CursorPrecedence::LastEventId;
            let x = &mut config.execution;
            x.submission_status = SubmissionStatus::Current;
            x.malformed_status = MalformedStatus::Specific;
            x.validation_order = ValidationOrder::KeyFirst;
            x.idempotency_mismatch = IdempotencyMismatch::Conflict;
            x.sequence_form = SequenceForm::Even;
            x.cancel = ExecutionCancel::Synchronous;
            x.cancel_terminal = CancelTerminal::NoOp;
            x.result_before_success = ResultBeforeSuccess::NotFound;
            x.provider_code = ProviderCodeChoice::Omitted;
            x.error_wording = ErrorWording::Terse;
            x.artifact_fields = ArtifactFields::UriOnly;
            x.usage_facts = UsageFacts::WithRuntimeFacts;
            x.manifest_fields = ManifestFields::WithLimits;
        }
        if self == BuiltInProfile::Deferred {
            config.execution.accepted_append = AcceptedAppend::AfterResponse;
        }
        let openwop = &mut config.openwop;
        match self {
            BuiltInProfile::Standard => {}
            BuiltInProfile::Alternate => {
                openwop.envelopes.strictness = Strictness::Strict;
                openwop.envelopes.advertise_kinds = false;
                openwop.feedback.advertise_signals = false;
                openwop.provider_usage.advertise = false;
            }
            BuiltInProfile::Strict => openwop.envelopes.strictness = Strictness::Strict,
            BuiltInProfile::Deferred => {
                openwop.choices.upstream_contradictions = UpstreamContradictions::OtherSide;
                // The seed's default address against upstream's required `deliveryChannel`.
                openwop.choices.host_channel = HostChannelAddress::Undeclared;
                // Divergent's cursor bound is 2^53 - 1.
                openwop.choices.cursor_range = CursorRange::FifteenDigits;
                // Divergent's targets are `[run, event]`; these, an independent host's, leave
                // the run out.
                openwop.feedback.targets = FeedbackTargets::NodeAndEvent;
            }
            BuiltInProfile::UpdatesOnly => {
                openwop.choices.implemented_modes = ImplementedModes::UpdatesOnly;
                // Every poll read a page at a time: the cases moved to poll for a host serving
                // `updates` alone read the log through pages.
                openwop.choices.poll_page = PollPage::OneEvent;
            }
            BuiltInProfile::UpstreamFraming => {
                openwop.choices.host_event_framing = HostEventFraming::BareMessage;
                openwop.choices.mixed_messages_data = MixedMessagesData::ChunkPayload;
                openwop.choices.sse_headers = SseHeaderTiming::WithFirstByte;
                openwop.choices.version_default = VersionDefault::V1UnlessAsked;
                openwop.choices.fixture_node_ids = FixtureNodeIds::PerFixture;
                openwop.choices.run_id_path_forms = RunIdPathForms::PercentOnly;
            }
            BuiltInProfile::Divergent => {
                let choices = &mut openwop.choices;
                choices.cross_tenant = CrossTenantAnswer::NotFound;
                choices.cancel = CancelAnswer::Asynchronous;
                choices.run_id_form = RunIdForm::Dotted;
                choices.multi_admitted = MultiAdmitted::OncePerMode;
                choices.event_id_form = EventIdForm::Dotted;
                choices.interrupt_id_form = InterruptIdForm::Dotted;
                choices.envelope_fields = EnvelopeFields::WithEngineVersion;
                choices.cancelled_payload = CancelledPayload::AsRequested;
                choices.run_started = RunStartedTiming::AfterResponse;
                choices.stream_validation = StreamValidationOrder::BufferFirst;
                choices.values_resume_at_end = ValuesResumeAtEnd::SnapshotFirst;
                choices.messages_batching = MessagesBatching::Applied;
                choices.keep_alive_comment = KeepAliveComment::BareColon;
                choices.after_terminal = AfterTerminalEvents::VendorEvent;
                choices.host_channel = HostChannelAddress::Declared;
                choices.usage_currency = UsageCurrency::Omitted;
                choices.error_details = ErrorDetails::Annotated;
                choices.poll_page = PollPage::FourEvents;
                choices.poll_foreign_parameters = PollForeignParameters::Refused;
                choices.cursor_range = CursorRange::SafeInteger;
                choices.empty_last_event_id = EmptyLastEventId::AsAbsent;
                choices.tick_seam_runs = TickSeamRuns::Ids;
                choices.mock_provider_seat = MockProviderSeat::SchemaOnly;
                choices.unprojectable_property = UnprojectableProperty::CarriedUnderHatch;
                openwop.feedback.signals = FeedbackSignals::RatingAndCorrection;
                openwop.feedback.targets = FeedbackTargets::RunAndEvent;
                // No subscriber limit (so no `subscriber_limit` fact: the 429 case SKIPs).
                openwop.max_subscribers_per_run = 0;
            }
        }
    }
}

impl std::fmt::Display for BuiltInProfile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One known defect of the reference runtime, as the kill matrix lists it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DefectInfo {
    /// The name (`--defect NAME`).
    pub name: String,
    /// `X` or `W`.
    pub surface: String,
    /// The mission area.
    pub area: String,
    /// The requirement it breaks.
    pub requirement: String,
    /// What the defective runtime does.
    pub description: String,
    /// The built-in profile the kill matrix runs it under (omitted when standard).
    #[serde(default, skip_serializing_if = "BuiltInProfile::is_standard")]
    pub profile: BuiltInProfile,
}

/// The reference runtime's defect catalogue.
pub fn defect_catalogue() -> Vec<DefectInfo> {
    Defect::ALL
        .iter()
        .map(|d| DefectInfo {
            name: d.name().to_string(),
            surface: d.surface().to_string(),
            area: d.area().as_str().to_string(),
            requirement: d.requirement().to_string(),
            description: d.description().to_string(),
            profile: BuiltInProfile::showing(*d),
        })
        .collect()
}

/// Fake providers someone else serves (e.g. a harness run against this runtime as an external
/// target): where they listen and the canary they require.
#[derive(Clone)]
pub struct ExternalProviders {
    /// Where the fake provider instances are served (`run --providers-listen`).
    pub address: SocketAddr,
    /// The fake providers' second server (no bound instance is served there).
    pub streaming_address: SocketAddr,
    /// The canary credential.
    pub canary: String,
}

impl std::fmt::Debug for ExternalProviders {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExternalProviders")
            .field("address", &self.address)
            .field("streaming_address", &self.streaming_address)
            .finish_non_exhaustive()
    }
}

/// How long the keep-alive case watches a stream with nothing to send (the fact
/// `keepalive_window_ms`): four keep-alive intervals, but never so long that the
/// `conformance-delay` run the case keeps live for the window (its `delayMs`, the window plus
/// [`KEEPALIVE_CASE_MARGIN_MS`]) exceeds the runtime's largest delay ([`MAX_DELAY_MS`]), which
/// it would refuse. The keep-alive bound is 30 s, so any window of at least one interval above
/// it still observes a comment.
pub fn keepalive_window_ms(keep_alive_ms: u64) -> u64 {
    (keep_alive_ms * 4).min(MAX_DELAY_MS - KEEPALIVE_CASE_MARGIN_MS)
}

/// What `w.sse.keep-alive` adds to the window for its run's delay (3 s), with room to spare.
pub const KEEPALIVE_CASE_MARGIN_MS: u64 = 5_000;

/// How to start the built-in target.
#[derive(Debug, Clone)]
pub struct BuiltInOptions {
    /// Defects to switch on (by name), for the kill matrix.
    pub defects: Vec<String>,
    /// The keep-alive interval of both surfaces' streams, in milliseconds.
    pub keep_alive_ms: u64,
    /// Where the runtime listens (port 0 picks a free port).
    pub listen: SocketAddr,
    /// Use fake providers served elsewhere instead of starting them in-process.
    pub external_providers: Option<ExternalProviders>,
    /// The bearer keys of principals `a` and `b` (tenants `tenant-a`, `tenant-b`); fresh random
    /// keys when absent.
    pub principal_keys: Option<(String, String)>,
    /// The runtime's configuration profile.
    pub profile: BuiltInProfile,
    /// Overrides the W subscriber limit per run (`Some(0)`: none, as a load run needs);
    /// `None` keeps the profile's.
    pub max_subscribers_per_run: Option<usize>,
    /// The providers the runtime is configured with.
    pub providers: BuiltInProviders,
    /// The fixtures the runtime seeds (and lists in discovery); every shipped one when `None`.
    pub fixtures: Option<Vec<String>>,
    /// The event store (`conformance serve --store`); `None`: the profile's (in memory, or a
    /// temporary SQLite file for `deferred`, see [`crate::temp_store`]).
    pub store: Option<StoreKind>,
    /// Connections the runtime serves at once; `None`: the runtime's default.
    pub max_connections: Option<usize>,
    /// The runtime's request-head (and idle keep-alive) timeout in ms; `None`: its default.
    pub header_read_timeout_ms: Option<u64>,
    /// The runtime's request-body timeout in ms; `None`: its default.
    pub body_read_timeout_ms: Option<u64>,
    /// The runtime's write-stall timeout in ms (0: none); `None`: its default.
    pub write_stall_timeout_ms: Option<u64>,
}

impl Default for BuiltInOptions {
    fn default() -> Self {
        BuiltInOptions {
            defects: Vec::new(),
            keep_alive_ms: 1_000,
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            external_providers: None,
            principal_keys: None,
            profile: BuiltInProfile::Standard,
            max_subscribers_per_run: None,
            providers: BuiltInProviders::Standard,
            fixtures: None,
            store: None,
            max_connections: None,
            header_read_timeout_ms: None,
            body_read_timeout_ms: None,
            write_stall_timeout_ms: None,
        }
    }
}

/// Starting the built-in target failed.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// An unknown defect name.
    #[error("{0}")]
    UnknownDefect(String),
    /// The fake providers did not start.
    #[error("the fake providers did not start: {0}")]
    FakeProviders(String),
    /// The runtime did not start.
    #[error("the reference runtime did not start: {0}")]
    Runtime(String),
}

/// The running built-in target. Dropping it without [`BuiltIn::shutdown`] leaves the servers to
/// stop with the process.
pub struct BuiltIn {
    /// The target description.
    pub target: Target,
    runtime: RunningRuntime,
    /// A temporary durable event store, removed when the target is dropped.
    _store_dir: Option<crate::temp_store::TempStore>,
}

impl BuiltIn {
    /// The runtime's base URL.
    pub fn base_url(&self) -> String {
        self.target.base_url.clone()
    }

    /// Stops the runtime (the fake providers stop with the process).
    pub async fn shutdown(self) {
        self.runtime.shutdown().await;
    }
}

/// Which providers the built-in runtime is configured with, and so which role bindings the
/// harness serves fake instances for. Cases never name a setup: they bind roles.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum BuiltInProviders {
    /// OpenAI Chat Completions (`openai-primary`, `text-primary`), Anthropic Messages
    /// (`anthropic-secondary`, `text-secondary`) and a fal queue (`media`).
    #[default]
    Standard,
    /// No OpenAI at all: one Anthropic Messages provider with two models (`text-primary` and
    /// `text-secondary` both bound to it) and a fal queue.
    AnthropicAndMedia,
    /// OpenAI Responses only for text: one provider with two models, and a fal queue.
    ResponsesAndMedia,
    /// One provider (OpenAI Chat Completions) with two models, nothing else.
    OneProviderTwoModels,
    /// A known-bad configuration, not a host's setup (not in [`BuiltInProviders::ALL`]): the
    /// standard providers with every base URL's instance segment misspelt
    /// (`http://ADDR/<instance>-misdirected`), so every call the runtime makes reaches the fake
    /// providers' listener and matches no fake (a path appended to a right base would still
    /// reach the fal queue's fake, whose model ids may hold slashes).
    /// No case whose checks depend on a provider call may PASS against it
    /// (`provider_setups.rs`).
    Misdirected,
}

impl BuiltInProviders {
    /// Every setup, standard first.
    pub const ALL: [BuiltInProviders; 4] = [
        BuiltInProviders::Standard,
        BuiltInProviders::AnthropicAndMedia,
        BuiltInProviders::ResponsesAndMedia,
        BuiltInProviders::OneProviderTwoModels,
    ];

    /// The name (`--built-in-providers NAME`).
    pub fn as_str(self) -> &'static str {
        match self {
            BuiltInProviders::Standard => "standard",
            BuiltInProviders::AnthropicAndMedia => "anthropic-and-media",
            BuiltInProviders::ResponsesAndMedia => "responses-and-media",
            BuiltInProviders::OneProviderTwoModels => "one-provider-two-models",
            BuiltInProviders::Misdirected => "misdirected",
        }
    }

    /// Parses a name.
    pub fn parse(name: &str) -> Option<BuiltInProviders> {
        Self::ALL.into_iter().find(|setup| setup.as_str() == name)
    }

    /// The role bindings an operator would give for this setup. Roles sharing a provider are
    /// bound without a model: the harness learns the models from `GET /v1/providers`.
    pub fn bindings(self) -> Vec<RoleBinding> {
        let bind = |role: Role, provider: &str, wire_format| RoleBinding {
            role,
            provider: provider.into(),
            wire_format,
            model: None,
        };
        let media = || bind(Role::Media, "fal", WireFormat::AsyncMedia);
        match self {
            BuiltInProviders::Standard | BuiltInProviders::Misdirected => RoleBinding::defaults(),
            BuiltInProviders::AnthropicAndMedia => vec![
                bind(
                    Role::TextPrimary,
                    "anthropic",
                    WireFormat::AnthropicMessages,
                ),
                bind(
                    Role::TextSecondary,
                    "anthropic",
                    WireFormat::AnthropicMessages,
                ),
                media(),
            ],
            BuiltInProviders::ResponsesAndMedia => vec![
                bind(Role::TextPrimary, "openai", WireFormat::OpenaiResponses),
                bind(Role::TextSecondary, "openai", WireFormat::OpenaiResponses),
                media(),
            ],
            BuiltInProviders::OneProviderTwoModels => vec![
                bind(Role::TextPrimary, "openai", WireFormat::OpenaiChat),
                bind(Role::TextSecondary, "openai", WireFormat::OpenaiChat),
            ],
        }
    }

    /// The runtime's provider configuration: one provider per bound provider id, of the bound
    /// wire format, at `base(id)`; a text provider gets one model per role bound to it.
    pub fn provider_configs(self, base: &dyn Fn(&str) -> String) -> Vec<ProviderConfig> {
        let mut configs: Vec<ProviderConfig> = Vec::new();
        for binding in self.bindings() {
            if let Some(config) = configs.iter_mut().find(|c| c.id == binding.provider) {
                let next = text_model(&format!(
                    "{}-{}",
                    model_stem(binding.wire_format),
                    config.models.len() + 1
                ));
                config.models.push(next);
                continue;
            }
            // The harness's, the fakes' and the runtime's wire format are one type
            // (`spec::wire_format::WireFormat`).
            let kind = binding.wire_format;
            let model = match binding.wire_format {
                WireFormat::AsyncMedia => media_model(),
                format
                    if matches!(
                        self,
                        BuiltInProviders::Standard | BuiltInProviders::Misdirected
                    ) =>
                {
                    text_model(&format!("{}-fake", model_stem(format)))
                }
                format => text_model(&format!("{}-1", model_stem(format))),
            };
            configs.push(ProviderConfig {
                id: binding.provider.clone(),
                kind,
                base_url: match self {
                    BuiltInProviders::Misdirected => {
                        format!("{}-misdirected", base(&binding.provider))
                    }
                    _ => base(&binding.provider),
                },
                credential_env: CREDENTIAL_ENV.into(),
                models: vec![model],
            });
        }
        configs
    }
}

impl std::fmt::Display for BuiltInProviders {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

fn model_stem(format: WireFormat) -> &'static str {
    match format {
        WireFormat::OpenaiChat | WireFormat::OpenaiResponses => "gpt",
        WireFormat::AnthropicMessages => "claude",
        WireFormat::AsyncMedia => "fake/image",
    }
}

fn text_model(model: &str) -> ModelConfig {
    ModelConfig {
        model: model.into(),
        abilities: vec!["text-generation".into()],
        input_modalities: vec![Modality::Text, Modality::Json],
        output_modalities: vec![Modality::Text],
        stream: true,
        tools: true,
        structured_output: false,
        asynchronous: false,
        cancel: true,
    }
}

fn media_model() -> ModelConfig {
    ModelConfig {
        model: "fake/image-model".into(),
        abilities: vec!["image-generation".into()],
        input_modalities: vec![Modality::Text, Modality::Json],
        output_modalities: vec![Modality::Image, Modality::Json],
        stream: false,
        tools: false,
        structured_output: false,
        asynchronous: true,
        cancel: true,
    }
}

/// The provider configuration of the built-in runtime's standard setup; `base` gives a
/// provider's base URL.
pub fn provider_configs(base: &dyn Fn(&str) -> String) -> Vec<ProviderConfig> {
    BuiltInProviders::Standard.provider_configs(base)
}

/// Starts the fake providers and the reference runtime, and describes them as a target.
pub async fn start_built_in(options: &BuiltInOptions) -> Result<BuiltIn, LaunchError> {
    let defects: Vec<Defect> = options
        .defects
        .iter()
        .map(|name| {
            name.parse::<Defect>()
                .map_err(|e| LaunchError::UnknownDefect(e.to_string()))
        })
        .collect::<Result<_, _>>()?;
    let bindings = options.providers.bindings();
    let (canary, upstream) = match &options.external_providers {
        Some(external) => (external.canary.clone(), None),
        None => {
            let canary = format!("sk-canary-{}", uuid::Uuid::new_v4().simple());
            let fakes = FakeUpstream::start(&canary, bindings.clone(), None, None)
                .await
                .map_err(|e| LaunchError::FakeProviders(e.to_string()))?;
            (canary, Some(fakes))
        }
    };
    let keep_alive_ms = options.profile.keep_alive_ms(options.keep_alive_ms);
    let mut config = Config::default();
    config.server.keep_alive_ms = keep_alive_ms;
    config.providers = match (&upstream, &options.external_providers) {
        (Some(upstream), _) => options
            .providers
            .provider_configs(&|provider| upstream.base_url(provider).unwrap_or_default()),
        (None, Some(external)) => {
            // The same instance names the harness serves for these bindings, on the
            // streaming backend that serves every instance.
            let names = harness::target::instances_for(&bindings)
                .map(|(_, names)| names)
                .unwrap_or_default();
            options.providers.provider_configs(&|provider| {
                let instance = names.get(provider).map_or(provider, String::as_str);
                format!("http://{}/{instance}", external.address)
            })
        }
        (None, None) => Vec::new(),
    };
    let openwop = configure_openwop(&mut config, options, keep_alive_ms);
    config.openwop.fixtures = options.fixtures.clone();
    options.profile.configure(&mut config);
    if let Some(limit) = options.max_subscribers_per_run {
        config.openwop.max_subscribers_per_run = limit;
    }
    if let Some(limit) = options.max_connections {
        config.server.max_connections = limit;
    }
    if let Some(ms) = options.header_read_timeout_ms {
        config.server.header_read_timeout_ms = ms;
    }
    if let Some(ms) = options.body_read_timeout_ms {
        config.server.body_read_timeout_ms = ms;
    }
    if let Some(ms) = options.write_stall_timeout_ms {
        config.server.write_stall_timeout_ms = ms;
    }
    // The deferred profile's event store is durable (open point `x.event-store.durability`):
    // a temporary one unless a store is given.
    let store_dir = match &options.store {
        Some(kind) => {
            config.store.kind = kind.clone();
            None
        }
        None if options.profile == BuiltInProfile::Deferred => {
            let store = crate::temp_store::TempStore::create().map_err(|e| {
                LaunchError::Runtime(format!("no directory for the event store: {e}"))
            })?;
            config.store.kind = StoreKind::Sqlite(store.database());
            Some(store)
        }
        None => None,
    };
    let runtime_options = RuntimeOptions {
        defects: Defects::of(defects),
        credentials: CredentialSource::from_pairs([(CREDENTIAL_ENV, canary.as_str())]),
        ..RuntimeOptions::new(config)
    };
    let runtime = start(options.listen, runtime_options)
        .await
        .map_err(|e| LaunchError::Runtime(e.to_string()))?;
    let providers: BTreeMap<Role, String> = bindings
        .iter()
        .map(|b| (b.role, b.provider.clone()))
        .collect();
    let mut facts = BTreeMap::new();
    facts.insert(
        "keepalive_window_ms".into(),
        json!(keepalive_window_ms(keep_alive_ms)),
    );
    facts.insert("keepalive_interval_ms".into(), json!(keep_alive_ms));
    facts.extend(openwop.facts);
    match options.max_subscribers_per_run {
        Some(0) => {
            facts.remove("subscriber_limit");
        }
        Some(limit) => {
            facts.insert("subscriber_limit".into(), json!(limit));
        }
        None => {}
    }
    let target = Target {
        kind: built_in_kind(options),
        base_url: runtime.base_url().trim_end_matches('/').to_string(),
        headers: Vec::new(),
        principals: openwop
            .principals
            .into_iter()
            .map(|(principal, token)| {
                (
                    principal,
                    vec![SecretHeader {
                        name: "authorization".into(),
                        value: format!("Bearer {token}"),
                    }],
                )
            })
            .collect(),
        providers,
        facts,
        capabilities: Default::default(),
        canary: Some(canary),
        upstream: upstream.map(|u| Arc::new(u) as Arc<dyn harness::target::Upstream>),
        implementation: None,
        unjudgeable: Default::default(),
    };
    Ok(BuiltIn {
        target,
        runtime,
        _store_dir: store_dir,
    })
}

/// The built-in target's kind: its profile, providers and defects when not the standard clean
/// runtime (reports name it `built-in (divergent profile; defects: a, b)`).
fn built_in_kind(options: &BuiltInOptions) -> TargetKind {
    let mut traits = Vec::new();
    if options.profile != BuiltInProfile::Standard {
        traits.push(format!("{} profile", options.profile));
    }
    if options.providers != BuiltInProviders::Standard {
        traits.push(format!("{} providers", options.providers));
    }
    if !options.defects.is_empty() {
        traits.push(format!("defects: {}", options.defects.join(", ")));
    }
    TargetKind::BuiltIn { traits }
}

/// What the run events surface of the built-in runtime gives the target description.
struct OpenWopLaunch {
    /// Principal → bearer token.
    principals: Vec<(Principal, String)>,
    /// Facts for `${target.…}`.
    facts: BTreeMap<String, serde_json::Value>,
}

/// Configures surface W of the built-in runtime: two fresh test keys in two tenants (secrets
/// of this run, scrubbed from reports), a 1 s keep-alive, a small subscriber limit, the test
/// seams mounted (the era-2 log seed; advertised as `conformance.seamsProfile`), and the
/// heartbeats the heartbeat cases observe on `/host/events`:
///
/// - one host heartbeat, [`BUILT_IN_HEARTBEAT_CONSTANT`], a constant predicate every second,
///   on every subscription (its first tick happened when the host started);
/// - per-subscription heartbeats, one fresh instance per subscription that names it in
///   `?heartbeatId=` (its first tick comes one interval after the subscription opens, and only
///   that subscription sees it), each ticking every second:
///   [`BUILT_IN_HEARTBEAT_FRESH`] (constant), [`BUILT_IN_HEARTBEAT_BUSY`] (observing takes
///   longer than the interval, within its bound), [`BUILT_IN_HEARTBEAT_OVERRUN`] (observing
///   takes longer than its bound), [`BUILT_IN_HEARTBEAT_TOGGLE`] (state flips given the prior
///   state) and [`BUILT_IN_HEARTBEAT_CREATED_RUNS`] (asks for a `conformance-noop` run on its
///   first tick and on every unchanged tick).
///
/// Their ids and timings are published as facts (`heartbeat_*`), so cases never hard-code them.
fn configure_openwop(
    config: &mut Config,
    options: &BuiltInOptions,
    keep_alive_ms: u64,
) -> OpenWopLaunch {
    let key = |tenant: &str| format!("hk_test_{tenant}_{}", uuid::Uuid::new_v4().simple());
    let (key_a, key_b) = options
        .principal_keys
        .clone()
        .unwrap_or_else(|| (key("a"), key("b")));
    let openwop = &mut config.openwop;
    openwop.api_keys = vec![
        ApiKeyConfig {
            key: key_a.clone(),
            tenant: "tenant-a".into(),
            subject: "conformance-a".into(),
        },
        ApiKeyConfig {
            key: key_b.clone(),
            tenant: "tenant-b".into(),
            subject: "conformance-b".into(),
        },
    ];
    openwop.keep_alive_secs = keep_alive_ms.div_ceil(1000).clamp(1, 30);
    openwop.max_subscribers_per_run = BUILT_IN_SUBSCRIBER_LIMIT;
    openwop.seams_enabled = true;
    let interval_sec = BUILT_IN_HEARTBEAT_INTERVAL_MS / 1000;
    // The divergent profile names its heartbeats otherwise (open point `w.heartbeat-id.form`).
    let divergent = options.profile == BuiltInProfile::Divergent;
    let hb = |id: &str| {
        if divergent {
            format!("hb.{}", id.trim_start_matches("conformance-"))
        } else {
            id.to_string()
        }
    };
    let beat = |id: &str, max_runtime_ms: u64, observe_delay_ms: u64, predicate| HeartbeatConfig {
        id: id.into(),
        interval_sec,
        max_runtime_ms,
        observe_delay_ms,
        predicate,
    };
    let constant = || PredicateConfig::Constant { value: json!(true) };
    let heartbeat = &mut openwop.heartbeat;
    heartbeat.min_interval_sec = interval_sec;
    // The advertised maxRuntimeMs, which bounds a tick on request (upstream's tick seam): the
    // largest bound of the built-in heartbeats, so an overrun asked of the seam ends quickly.
    heartbeat.max_runtime_ms = BUILT_IN_HEARTBEAT_BUSY_OBSERVE_MS * 2;
    heartbeat.heartbeats = vec![beat(&hb(BUILT_IN_HEARTBEAT_CONSTANT), 1_000, 0, constant())];
    heartbeat.subscription_heartbeats = vec![
        beat(&hb(BUILT_IN_HEARTBEAT_FRESH), 1_000, 0, constant()),
        beat(
            &hb(BUILT_IN_HEARTBEAT_BUSY),
            BUILT_IN_HEARTBEAT_BUSY_OBSERVE_MS * 2,
            BUILT_IN_HEARTBEAT_BUSY_OBSERVE_MS,
            constant(),
        ),
        beat(
            &hb(BUILT_IN_HEARTBEAT_OVERRUN),
            BUILT_IN_HEARTBEAT_OVERRUN_MAX_RUNTIME_MS,
            BUILT_IN_HEARTBEAT_OVERRUN_OBSERVE_MS,
            constant(),
        ),
        beat(
            &hb(BUILT_IN_HEARTBEAT_TOGGLE),
            1_000,
            0,
            PredicateConfig::Toggle,
        ),
        beat(
            &hb(BUILT_IN_HEARTBEAT_CREATED_RUNS),
            1_000,
            0,
            PredicateConfig::CreatedRuns {
                workflow_id: "conformance-noop".into(),
                tenant: "tenant-a".into(),
            },
        ),
    ];
    let interval = BUILT_IN_HEARTBEAT_INTERVAL_MS;
    let mut facts = BTreeMap::new();
    let mut fact = |name: &str, value: serde_json::Value| {
        facts.insert(name.to_string(), value);
    };
    if options.profile != BuiltInProfile::Divergent {
        fact("subscriber_limit", json!(BUILT_IN_SUBSCRIBER_LIMIT));
    }
    fact("heartbeat_interval_ms", json!(interval));
    fact("heartbeat_min_interval_ms", json!(interval));
    fact("heartbeat_min_interval_sec", json!(interval_sec));
    fact(
        "heartbeat_constant_id",
        json!(hb(BUILT_IN_HEARTBEAT_CONSTANT)),
    );
    fact("heartbeat_fresh_id", json!(hb(BUILT_IN_HEARTBEAT_FRESH)));
    fact("heartbeat_busy_id", json!(hb(BUILT_IN_HEARTBEAT_BUSY)));
    // Skipping the ticks that fall during an evaluation spaces evaluations by whole intervals.
    let busy_gap = BUILT_IN_HEARTBEAT_BUSY_OBSERVE_MS.div_ceil(interval) * interval;
    fact("heartbeat_busy_gap_ms", json!(busy_gap));
    // The spacing that tells a host that skips (evaluations `busy_gap` apart) from one that
    // queues (one evaluation time apart): their midpoint.
    fact(
        "heartbeat_busy_min_gap_ms",
        json!((busy_gap + BUILT_IN_HEARTBEAT_BUSY_OBSERVE_MS) / 2),
    );
    fact(
        "heartbeat_busy_evaluation_ms",
        json!(BUILT_IN_HEARTBEAT_BUSY_OBSERVE_MS),
    );
    fact(
        "heartbeat_overrun_id",
        json!(hb(BUILT_IN_HEARTBEAT_OVERRUN)),
    );
    fact(
        "heartbeat_overrun_max_runtime_ms",
        json!(BUILT_IN_HEARTBEAT_OVERRUN_MAX_RUNTIME_MS),
    );
    // By then (after subscribing) the first tick's bounded evaluation is over.
    fact(
        "heartbeat_overrun_bound_ms",
        json!(interval + BUILT_IN_HEARTBEAT_OVERRUN_MAX_RUNTIME_MS),
    );
    fact("heartbeat_toggle_id", json!(hb(BUILT_IN_HEARTBEAT_TOGGLE)));
    fact(
        "heartbeat_created_runs_id",
        json!(hb(BUILT_IN_HEARTBEAT_CREATED_RUNS)),
    );
    OpenWopLaunch {
        principals: vec![(Principal::A, key_a), (Principal::B, key_b)],
        facts,
    }
}

/// The interval of every built-in heartbeat, and the advertised `heartbeat.minIntervalSec`
/// (fact `heartbeat_interval_ms`, `heartbeat_min_interval_ms`).
pub const BUILT_IN_HEARTBEAT_INTERVAL_MS: u64 = 1_000;
/// The host heartbeat (constant predicate; fact `heartbeat_constant_id`).
pub const BUILT_IN_HEARTBEAT_CONSTANT: &str = "conformance-constant";
/// The per-subscription constant heartbeat (fact `heartbeat_fresh_id`).
pub const BUILT_IN_HEARTBEAT_FRESH: &str = "conformance-fresh";
/// The per-subscription heartbeat whose evaluation outlasts its interval (fact
/// `heartbeat_busy_id`).
pub const BUILT_IN_HEARTBEAT_BUSY: &str = "conformance-busy";
/// How long the busy heartbeat observes (fact `heartbeat_busy_evaluation_ms`); its bound is
/// twice that.
pub const BUILT_IN_HEARTBEAT_BUSY_OBSERVE_MS: u64 = 1_200;
/// The per-subscription heartbeat that overruns its bound (fact `heartbeat_overrun_id`).
pub const BUILT_IN_HEARTBEAT_OVERRUN: &str = "conformance-overrun";
/// The overrunning heartbeat's bound (fact `heartbeat_overrun_max_runtime_ms`).
pub const BUILT_IN_HEARTBEAT_OVERRUN_MAX_RUNTIME_MS: u64 = 300;
/// How long the overrunning heartbeat would observe if it were not stopped.
pub const BUILT_IN_HEARTBEAT_OVERRUN_OBSERVE_MS: u64 = 2_000;
/// The per-subscription toggle heartbeat (fact `heartbeat_toggle_id`).
pub const BUILT_IN_HEARTBEAT_TOGGLE: &str = "conformance-toggle";
/// The per-subscription created-runs heartbeat (fact `heartbeat_created_runs_id`).
pub const BUILT_IN_HEARTBEAT_CREATED_RUNS: &str = "conformance-created-runs";

/// The per-run subscriber limit of the built-in runtime (small, so the 429 case is cheap).
pub const BUILT_IN_SUBSCRIBER_LIMIT: usize = 8;
