//! Surface W: the OpenWOP v2 run events chapter (runs, the workflow engine, the event stream,
//! poll, host events), in four layers, each importing only from the layers below it:
//!
//! - `http`: the router (`http::router`), the route handlers, extractors, discovery, the error
//!   envelope as a response (`http::error_response`);
//! - `services`: runs, the event stream, poll, feedback, heartbeats and schedules, host events,
//!   the shared state (`WState`) the handlers receive, crash recovery; they take plain
//!   parameters (the caller, the run, what the request says) and return domain values;
//! - `engine`: the run loop (`engine::runner`), workflows, the node context, the AI node
//!   (`engine::ai`), the envelope node kinds (`engine::envelopes`), usage and pricing;
//! - `infra`: configuration (`OpenWopConfig`, the surface's one configuration value, shared as
//!   one `Arc`), auth, ids, the error type, the log projection and the recorder, era-2
//!   translation.
//!
//! `cargo test -p xtask` checks the layers (`xtask/src/layers.rs`). The composition root calls
//! [`router`].
//!
//! | Method, path | Module |
//! |---|---|
//! | `GET /.well-known/openwop` (no auth) | `discovery` |
//! | `POST /runs`, `GET /runs/{runId}`, `POST /runs/{runId}/cancel`, `POST /runs/{runId}/interrupts/{nodeId}` | `run_routes` over `runs` |
//! | `GET /runs/{runId}/events` | `stream` |
//! | `GET /runs/{runId}/events/poll` | `poll` |
//! | `GET /host/events` | `host_events`, fed by `heartbeat` (`?heartbeatId=` narrows it and starts per-subscription heartbeats) |
//! | `POST`/`GET /runs/{runId}/annotations` | `feedback` |
//! | `GET /conformance/seams/mock-ai/runs/{runId}/calls` | `envelopes::journal` (the `envelope-program` mock's call journal) |
//! | `POST /conformance/seams/sample/event-log/seed` (off unless `seams_enabled`) | `era2` |
//! | `POST /conformance/seams/sample/heartbeat/tick` (off unless `seams_enabled`) | `heartbeat_seam` over `heartbeat::tick_on_request` (upstream's tick seam) |
//!
//! AI envelopes, the envelope catalog and reliability live in `envelopes` (the
//! `core.ai.structuredOutput` node); `provider.usage` and whether `providerUsage` is advertised in `usage`, its cost
//! estimate in `pricing`; the
//! secret redaction of envelope-derived text and annotations in `secrets`; era-2 translation
//! (every reader goes through `WState::read_events`) in `era2`.
//!
//! Heartbeats and interval schedules tick on one in-process interval substrate; the host
//! advertises it as the `scheduling` capability (the chapter's SHOULD for a host advertising
//! `heartbeat`) and documents it in `scheduling` (interval triggers, skip on overlap, schedules
//! from host configuration only; the record's facets are the ones upstream admits).
//!
//! Every run is its log: snapshots, streams and polls are projections of the events the
//! [`LogHub`] holds (`projection`). The engine (`engine`) runs the seeded fixture workflows
//! (`workflow`) on tokio tasks; `live` holds only what a running task must be told (cancel, the
//! open interrupt). Each `w-*` defect is checked in one place, next to the rule it breaks.

pub(crate) mod engine;
pub(crate) mod http;
pub(crate) mod infra;
pub(crate) mod services;

pub use engine::ai::provider::ConfiguredProviders;
pub use engine::workflow::MAX_DELAY_MS;
pub use http::router::{Dependencies, PATH_PREFIXES, claims_path, fallback, router};
pub use infra::auth::Caller;
pub use infra::config::{
    ApiKeyConfig, ConfigError, CreateRunOnTransition, HeartbeatConfig, HeartbeatSettings,
    MAX_KEEP_ALIVE_SECS, MAX_SUBSCRIPTION_HEARTBEAT_ID_LEN, OpenWopConfig, PredicateConfig,
    ScheduleConfig, SchedulingSettings,
};
pub use infra::config::{
    FeedbackSettings, FeedbackSignals, FeedbackTargets, ProviderUsageSettings,
};
pub use infra::envelope_settings::{EnvelopeSettings, Strictness};
pub use infra::error::ApiError;
pub use services::recovery::{INTERRUPTED_RUN_CODE, INTERRUPTED_RUN_REASON, recover_runs};
