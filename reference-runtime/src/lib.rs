//! The built-in reference host: both protocol surfaces over axum, one event store, provider
//! adapters.
//!
//! See ARCHITECTURE.md for the module map.
//!
//! # The launching API
//!
//! What an embedder needs to configure and start a runtime in-process is re-exported here, at
//! the root: the configuration (the same model as the TOML file, [`Config`] and the types its
//! fields are built from), the switchable [`Defect`]s, where credentials come from
//! ([`CredentialSource`]), and [`start`] with its [`RuntimeOptions`], [`RunningRuntime`] and
//! [`StartError`]. The `conformance` command's built-in target uses only these names; the
//! modules below are the runtime's own (its tests reach into them, embedders do not).

mod bench_publisher;
mod canonical;
pub mod choices;
pub mod clock;
pub mod config;
pub mod defects;
pub mod execution;
pub mod known_bad;
pub mod log;
pub mod openwop;
pub mod providers;
pub mod redact;
pub mod runtime;
pub mod server;
pub mod sse;
pub mod store;

pub use choices::{
    AcceptedAppend, AfterTerminalEvents, ArtifactFields, CancelTerminal, CancelledPayload,
    EnvelopeFields, ErrorDetails, ErrorWording, EventIdForm, ExecutionCancel, ExecutionChoices,
    HostChannelAddress, IdempotencyMismatch, InterruptIdForm, KeepAliveComment, MalformedStatus,
    ManifestFields, MessagesBatching, ProviderCodeChoice, ResultBeforeSuccess, RunStartedTiming,
    SequenceForm, StreamValidationOrder, SubmissionStatus, UsageCurrency, UsageFacts,
    ValidationOrder, ValuesResumeAtEnd,
};
pub use choices::{
    CancelAnswer, CrossTenantAnswer, CursorPrecedence, ExecutionIdForm, MultiAdmitted,
    ReplayStatus, RunIdForm, UnsatisfiableRequirements,
};
pub use choices::{
    CursorRange, EmptyLastEventId, FixtureNodeIds, HostEventFraming, ImplementedModes,
    MixedMessagesData, MockProviderSeat, PollForeignParameters, PollPage, RunIdPathForms,
    SseHeaderTiming, TickSeamRuns, UnprojectableProperty, UpstreamContradictions, VersionDefault,
};
pub use config::StoreKind;
pub use config::{Config, ModelConfig, ProviderConfig, ProviderKind};
pub use defects::{Defect, Defects};
pub use openwop::{
    ApiKeyConfig, FeedbackSignals, FeedbackTargets, HeartbeatConfig, MAX_DELAY_MS, PredicateConfig,
    Strictness,
};
pub use redact::CredentialSource;
pub use runtime::{RunningRuntime, RuntimeOptions, StartError, start};
pub use server::ConnectionLimits;
