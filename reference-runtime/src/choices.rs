//! Host choices: the configuration knobs for behaviours the two protocols leave open (see
//! `spec/open-points.json`). Every option of every knob keeps every MUST and SHOULD (one
//! exception: `implemented_modes = "updates-only"` departs from "SHOULD implement all four" on
//! purpose, as the chapter allows); the defaults are the standard profile's options, the others
//! are what the tolerance matrix runs the corpus against.
//!
//! The choices of each surface live with its configuration: surface X's `[execution]` in
//! `execution/choices.rs` (a field of `ExecutionConfig`), surface W's `[openwop.choices]` in
//! `openwop/infra/choices.rs` (a field of `OpenWopConfig`); this module names both. One choice
//! applies to both surfaces and is `[server]`'s (`crate::config`):
//!
//! ```toml
//! [server]
//! json_charset = true                        # `application/json; charset=utf-8`
//! ```

pub use crate::execution::choices::{
    AcceptedAppend, ArtifactFields, CancelTerminal, CursorPrecedence, ErrorWording,
    ExecutionCancel, ExecutionChoices, ExecutionIdForm, IdempotencyMismatch, MalformedStatus,
    ManifestFields, ProviderCodeChoice, RUNTIME_FACT_UNIT, ReplayStatus, ResultBeforeSuccess,
    SequenceForm, SubmissionStatus, UnsatisfiableRequirements, UsageFacts, ValidationOrder,
};
pub use crate::openwop::infra::choices::{
    AfterTerminalEvents, CancelAnswer, CancelledPayload, CrossTenantAnswer, CursorRange,
    EmptyLastEventId, EnvelopeFields, ErrorDetails, EventIdForm, FixtureNodeIds,
    HostChannelAddress, HostEventFraming, ImplementedModes, InterruptIdForm, KeepAliveComment,
    MessagesBatching, MixedMessagesData, MockProviderSeat, MultiAdmitted, NEGOTIATED_MCP_VERSION,
    OpenWopChoices, PollForeignParameters, PollPage, RunIdForm, RunIdPathForms, RunStartedTiming,
    SseHeaderTiming, StreamValidationOrder, TickSeamRuns, UnprojectableProperty,
    UpstreamContradictions, UsageCurrency, ValuesResumeAtEnd, VersionDefault,
};
