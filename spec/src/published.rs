//! The names of the schemas this crate publishes ([`Published`]); what each holds and where it
//! is written is in `schema`.

/// Every schema this crate publishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Published {
    /// `execution-request.json`: the body of `POST /v1/executions`.
    ExecutionRequest,
    /// `execution-event.json`: one event of an execution's log.
    ExecutionEvent,
    /// `execution-error.json`: the error envelope of surface X.
    ExecutionError,
    /// `execution-submission.json`.
    ExecutionSubmission,
    /// `execution-snapshot.json`.
    ExecutionSnapshot,
    /// `execution-result.json`.
    ExecutionResult,
    /// `runtime-info.json`.
    RuntimeInfo,
    /// `provider-manifests.json`.
    ProviderManifests,
    /// `run-event.json`: `RunEventDoc`.
    RunEvent,
    /// `run-event-payloads.json`: one `$defs` entry per payload plus `_typeIndex`.
    RunEventPayloads,
    /// `poll-response.json`.
    PollResponse,
    /// `run-snapshot.json`.
    RunSnapshot,
    /// `openwop-error.json`: the flat error envelope of surface W.
    OpenWopError,
    /// `create-run-request.json`.
    CreateRunRequest,
    /// `create-run-response.json`.
    CreateRunResponse,
    /// `cancel-run-response.json`.
    CancelRunResponse,
    /// `discovery.json`.
    Discovery,
    /// `host-event.json`.
    HostEvent,
    /// `heartbeat-evaluated.json`.
    HeartbeatEvaluated,
    /// `heartbeat-state-changed.json`.
    HeartbeatStateChanged,
}
