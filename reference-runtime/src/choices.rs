//! Host choices: the configuration knobs for behaviours the two protocols leave open (see
//! `spec/open-points.json`). Every option of every knob keeps every MUST and SHOULD (one
//! exception: `implemented_modes = "updates-only"` departs from "SHOULD implement all four" on
//! purpose, as the chapter allows); the defaults are the standard profile's options, the others
//! are what the tolerance matrix runs the corpus against.
//!
//! ```toml
//! [server]
//! json_charset = true                        # `application/json; charset=utf-8`
//!
//! [execution]
//! unsatisfiable_requirements = "fail-execution"   # or "refuse" (the default)
//! id_form = "prefixed"                            # or "uuid" (the default)
//! replay_status = "accepted"                      # or "ok" (the default: 200)
//! cursor_precedence = "last-event-id"             # or "after" (the default)
//! submission_status = "current"                   # or "accepted" (the default)
//! malformed_status = "specific"                   # or "bad-request" (the default: 400)
//! validation_order = "key-first"                  # or "body-first" (the default)
//! idempotency_mismatch = "conflict"               # or "invalid-request" (the default)
//! sequence_form = "even"                          # or "dense" (the default: 1, 2, 3, …)
//! accepted_append = "after-response"              # or "before-response" (the default)
//! cancel = "synchronous"                          # or "asynchronous" (the default: 202)
//! cancel_terminal = "no-op"                       # or "conflict" (the default: 409)
//! result_before_success = "not-found"             # or "conflict" (the default: 409)
//! provider_code = "omitted"                       # or "when-known" (the default)
//! error_wording = "terse"                         # or "reference" (the default)
//! artifact_fields = "uri-only"                    # or "as-reported" (the default)
//! usage_facts = "with-runtime-facts"              # or "as-reported" (the default)
//! manifest_fields = "with-limits"                 # or "contract" (the default)
//!
//! [openwop.choices]
//! cross_tenant = "not-found"                 # or "forbidden" (the default)
//! cancel = "asynchronous"                    # or "synchronous" (the default)
//! run_id_form = "dotted"                     # or "run-hex" (the default)
//! multi_admitted = "once-per-mode"           # or "once" (the default)
//! event_id_form = "dotted"                   # or "evt-hex" (the default)
//! interrupt_id_form = "dotted"               # or "int-hex" (the default)
//! envelope_fields = "with-engine-version"    # or "node-and-causation" (the default)
//! cancelled_payload = "as-requested"         # or "filled" (the default)
//! run_started = "after-response"             # or "before-response" (the default)
//! stream_validation = "buffer-first"         # or "mode-first" (the default)
//! values_resume_at_end = "snapshot-first"    # or "close-without-frame" (the default)
//! messages_batching = "applied"              # or "ignored" (the default)
//! keep_alive_comment = "bare-colon"          # or "keep-alive-text" (the default)
//! after_terminal = "vendor-event"            # or "nothing" (the default)
//! host_channel = "declared"                  # or "default-address" (the default)
//! usage_currency = "omitted"                 # or "stated" (the default)
//! error_details = "annotated"                # or "plain" (the default)
//! implemented_modes = "updates-only"         # or "all-four" (the default)
//! upstream_contradictions = "other-side"     # or "reference-side" (the default)
//! ```

use serde::Deserialize;

/// `[execution]`: surface-X choices.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ExecutionChoices {
    /// How a request whose `requirements` no provider satisfies is refused.
    pub unsatisfiable_requirements: UnsatisfiableRequirements,
    /// The form of a minted execution id.
    pub id_form: ExecutionIdForm,
    /// The status of an idempotent replay.
    pub replay_status: ReplayStatus,
    /// Which cursor wins when a request sends both `after` and `Last-Event-ID`.
    pub cursor_precedence: CursorPrecedence,
    /// The `status` a new submission's 202 body reports.
    pub submission_status: SubmissionStatus,
    /// The HTTP status of a malformed request's refusal.
    pub malformed_status: MalformedStatus,
    /// Whether the Idempotency-Key format is checked before or after the body.
    pub validation_order: ValidationOrder,
    /// The refusal of an Idempotency-Key reused with a different request.
    pub idempotency_mismatch: IdempotencyMismatch,
    /// The numbers an execution's events carry as `sequence`.
    pub sequence_form: SequenceForm,
    /// Whether `execution.accepted` is in the log before the 202 is written.
    pub accepted_append: AcceptedAppend,
    /// Whether a cancel answers before or after the terminal event.
    pub cancel: ExecutionCancel,
    /// The answer to a cancel of an execution that is already terminal.
    pub cancel_terminal: CancelTerminal,
    /// The answer to a result request before the execution succeeded.
    pub result_before_success: ResultBeforeSuccess,
    /// Whether errors carry the provider-native code as `provider_code`.
    pub provider_code: ProviderCodeChoice,
    /// The wording of error messages.
    pub error_wording: ErrorWording,
    /// Which optional fields an artifact reference carries.
    pub artifact_fields: ArtifactFields,
    /// Whether `usage.reported` carries runtime-derived facts beside the provider's.
    pub usage_facts: UsageFacts,
    /// Which optional fields a provider manifest carries.
    pub manifest_fields: ManifestFields,
}

/// The `status` of a new submission's 202 body (the seed: "returns 202 with an execution
/// ID"; the execution may already have moved on when the answer is written).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SubmissionStatus {
    /// `accepted`.
    #[default]
    Accepted,
    /// The status of the log's last event when the answer is written, after giving the driver
    /// a moment (up to 250 ms) to move past `execution.accepted`: `routing`, `running` or a
    /// terminal status.
    Current,
}

/// The HTTP status of a malformed request's refusal (the seed: "must reject"; no status).
/// The code is `invalid_request` either way.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MalformedStatus {
    /// 400 for every fault (CONTRACT.md).
    #[default]
    BadRequest,
    /// 415 for a wrong content type, 413 for an oversized body, 422 for a schema violation,
    /// 400 for the rest (unparseable JSON, a bad Idempotency-Key).
    Specific,
}

/// The order of admission's validations (the seed orders none).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ValidationOrder {
    /// Content type, size, JSON, schema, then the Idempotency-Key format.
    #[default]
    BodyFirst,
    /// The Idempotency-Key format first, then the body.
    KeyFirst,
}

/// The refusal of an Idempotency-Key reused with a different request (the seed: "fails").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IdempotencyMismatch {
    /// 400 `invalid_request` (CONTRACT.md).
    #[default]
    InvalidRequest,
    /// 409 `conflict`.
    Conflict,
}

/// The numbers an execution's events carry (the seed: "an execution-scoped monotonic
/// sequence").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SequenceForm {
    /// 1, 2, 3, … (CONTRACT.md).
    #[default]
    Dense,
    /// 2, 4, 6, …: another origin, with gaps, still strictly increasing. Cursors, SSE ids and
    /// `last_sequence` use the same numbers.
    Even,
}

impl SequenceForm {
    /// The wire number of the stored sequence `stored` (1-based).
    pub fn wire(self, stored: u64) -> u64 {
        match self {
            SequenceForm::Dense => stored,
            SequenceForm::Even => stored.saturating_mul(2),
        }
    }

    /// The stored cursor equivalent to the wire cursor `wire`: the stored events after it are
    /// exactly those whose wire numbers are larger than `wire`.
    pub fn stored_cursor(self, wire: u64) -> u64 {
        match self {
            SequenceForm::Dense => wire,
            SequenceForm::Even => wire / 2,
        }
    }
}

/// When `execution.accepted` is appended relative to the 202.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AcceptedAppend {
    /// Before the response is written.
    #[default]
    BeforeResponse,
    /// By the execution's driver, shortly (25 ms) after the response: a reader right after
    /// the 202 may see an empty log (and a snapshot with `last_sequence` 0) for a moment.
    AfterResponse,
}

/// Whether `POST /v1/executions/{id}/cancel` answers before or after the terminal event.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExecutionCancel {
    /// 202; `execution.failed{status: cancelled}` follows (CONTRACT.md).
    #[default]
    Asynchronous,
    /// 200 once the terminal event is in the log (waiting at most 10 s, then 202).
    Synchronous,
}

/// The answer to a cancel of an execution that is already terminal.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CancelTerminal {
    /// 409 `conflict` (CONTRACT.md).
    #[default]
    Conflict,
    /// 200 with the execution's terminal status; nothing is appended.
    NoOp,
}

/// The answer to `GET /v1/executions/{id}/result` before the execution succeeded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ResultBeforeSuccess {
    /// 409 `conflict` (CONTRACT.md).
    #[default]
    Conflict,
    /// 404 `not_found`: the result resource does not exist (yet).
    NotFound,
}

/// Whether errors carry the provider-native code (the seed: "may appear").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProviderCodeChoice {
    /// `provider_code` when the provider gave one.
    #[default]
    WhenKnown,
    /// Never.
    Omitted,
}

/// The wording of error messages (only `code` and `retryable` are portable).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorWording {
    /// The reference runtime's messages.
    #[default]
    Reference,
    /// One terse sentence per code (`Error: invalid_request.`), echoing nothing.
    Terse,
}

impl ErrorWording {
    /// The message of an error with portable code `code` whose reference wording is
    /// `reference`.
    pub fn message(self, code: &str, reference: &str) -> String {
        match self {
            ErrorWording::Reference => reference.to_string(),
            ErrorWording::Terse => format!("Error: {code}."),
        }
    }
}

/// Which optional fields an artifact reference carries (the seed: "optional artifact
/// references"; `media_type` and `name` are optional).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ArtifactFields {
    /// What the provider reported.
    #[default]
    AsReported,
    /// `uri` only.
    UriOnly,
}

/// Whether `usage.reported` carries runtime-derived facts (the seed: "source states whether the
/// provider reported the value or the runtime derived it"; "providers may emit a namespaced
/// custom unit").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum UsageFacts {
    /// The provider's facts only.
    #[default]
    AsReported,
    /// Also `reference-runtime.reported_fact` (how many facts the provider reported in this
    /// event), a namespaced custom unit with `source: runtime`.
    WithRuntimeFacts,
}

/// The namespaced custom unit of [`UsageFacts::WithRuntimeFacts`].
pub const RUNTIME_FACT_UNIT: &str = "reference-runtime.reported_fact";

/// Which optional fields a provider manifest carries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ManifestFields {
    /// The CONTRACT.md fields.
    #[default]
    Contract,
    /// Also `limits {max_concurrency, max_queue_depth}` (upstream admits it): the runtime's
    /// admission limit, no queue.
    WithLimits,
}

/// Which cursor wins when both `after` and `Last-Event-ID` are sent (the seed: the endpoint
/// "accepts after or Last-Event-ID").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CursorPrecedence {
    /// `after` (CONTRACT.md).
    #[default]
    After,
    /// `Last-Event-ID`.
    LastEventId,
}

/// The status of an idempotent replay (the seed says only that it "returns that execution").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReplayStatus {
    /// 200 (CONTRACT.md).
    #[default]
    Ok,
    /// 202, like the first submission.
    Accepted,
}

/// How a request whose `requirements` no provider satisfies is refused (CONTRACT.md admits
/// both; the provider is never called either way).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum UnsatisfiableRequirements {
    /// 422 `capability_unavailable` at admission; nothing is created.
    #[default]
    Refuse,
    /// 202, then `execution.accepted` and `execution.failed{capability_unavailable}`.
    FailExecution,
}

/// The form of a minted execution id (the seed fixes none).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExecutionIdForm {
    /// A hyphenated UUID.
    #[default]
    Uuid,
    /// `exe_<32 hex>`.
    Prefixed,
}

impl ExecutionIdForm {
    /// A new execution id of this form.
    pub fn mint(self) -> String {
        let id = uuid::Uuid::new_v4();
        match self {
            ExecutionIdForm::Uuid => id.to_string(),
            ExecutionIdForm::Prefixed => format!("exe_{}", id.simple()),
        }
    }
}

/// `[openwop.choices]`: surface-W choices.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OpenWopChoices {
    /// The answer to a request naming another tenant's run.
    pub cross_tenant: CrossTenantAnswer,
    /// Whether cancel appends `run.cancelled` before it answers.
    pub cancel: CancelAnswer,
    /// The opaque part of a minted run id.
    pub run_id_form: RunIdForm,
    /// How a mixed-mode stream sends an event more than one of its modes admits.
    pub multi_admitted: MultiAdmitted,
    /// The form of a minted event id.
    pub event_id_form: EventIdForm,
    /// The opaque part of a minted interrupt id.
    pub interrupt_id_form: InterruptIdForm,
    /// Which optional envelope fields an event carries.
    pub envelope_fields: EnvelopeFields,
    /// Which optional fields `run.cancelled` carries.
    pub cancelled_payload: CancelledPayload,
    /// When `run.started` is appended relative to the 201 of `POST /runs`.
    pub run_started: RunStartedTiming,
    /// The order of the `streamMode` and `bufferMs` checks of a stream request.
    pub stream_validation: StreamValidationOrder,
    /// A `values` resumption at or past the end of a terminal run.
    pub values_resume_at_end: ValuesResumeAtEnd,
    /// Whether `bufferMs` batches a `messages` stream.
    pub messages_batching: MessagesBatching,
    /// The text of the SSE keep-alive comment of an event stream.
    pub keep_alive_comment: KeepAliveComment,
    /// Whether a completed run's log carries an event after its terminal event.
    pub after_terminal: AfterTerminalEvents,
    /// Where the host channel is served (and declared under `heartbeat.deliveryChannel`).
    pub host_channel: HostChannelAddress,
    /// Whether `provider.usage` and discovery state the cost estimate's currency.
    pub usage_currency: UsageCurrency,
    /// Whether an error carries `details` beyond the conditionals.
    pub error_details: ErrorDetails,
    /// Which stream modes the events endpoint serves.
    pub implemented_modes: ImplementedModes,
    /// Which side of upstream's self-contradictions a run log follows.
    pub upstream_contradictions: UpstreamContradictions,
    /// What a host-channel frame's `data:` is.
    pub host_event_framing: HostEventFraming,
    /// What a mixed-mode frame admitted by `messages` carries.
    pub mixed_messages_data: MixedMessagesData,
    /// When an SSE response's headers are written.
    pub sse_headers: SseHeaderTiming,
    /// Which representation discovery answers without `OpenWOP-Version`.
    pub version_default: VersionDefault,
}

/// Which protocol version a request without `OpenWOP-Version` gets at discovery (open point
/// `w.version.header-less-discovery`): upstream's versioning answers the `preferredVersion`'s
/// major, and during the v1/v2 overlap a dual-stack host prefers 1.x.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VersionDefault {
    /// A v2-only host: `protocolVersions: ["2.0"]`, the v2 document without the header.
    #[default]
    V2,
    /// A dual-stack host in the overlap: `protocolVersions: ["1.0", "2.0"]`, `preferredVersion:
    /// "1.0"`; discovery without the header (or with major 1) answers its v1 document, with
    /// `OpenWOP-Version: 2` (or `2.0`) the v2 one. Every other path is v2.
    V1UnlessAsked,
}

/// What a host-channel frame's `data:` is (open point `w.host-events.framing`): the seed names
/// the heartbeat messages' schemas as what the channel carries, and upstream's asyncapi gives
/// each message `name: heartbeat.evaluated` with the bare message as its payload; CONTRACT.md
/// wraps it in a HostEvent document. Both frames are named by the message's type.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HostEventFraming {
    /// The HostEvent document `{eventId, type, timestamp, delivery, payload}`.
    #[default]
    Envelope,
    /// The bare heartbeat message (`{heartbeatId, status, changed}` / `{heartbeatId, from, to}`).
    BareMessage,
}

/// What a mixed-mode frame admitted by `messages` carries (open point
/// `w.sse.mixed-messages-data`): the seed names `ai.message.chunk` (the outputChunk payload) as
/// the messages frame and, in a mixed mode, an `event:` naming the admitting mode, without
/// saying whether the data stays the chunk payload.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MixedMessagesData {
    /// The RunEventDoc (CONTRACT.md).
    #[default]
    RunEventDoc,
    /// The outputChunk payload, as `ai.message.chunk` carries it.
    ChunkPayload,
}

/// When an SSE response's status line and headers are written (open point
/// `w.sse.header-timing`): HTTP lets a server send them with its first body byte (Node's
/// `writeHead` without a flush), which on a stream with nothing to say is the first keep-alive
/// comment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SseHeaderTiming {
    /// As soon as the stream is accepted.
    #[default]
    Immediate,
    /// Only with the first body byte (a frame, a keep-alive comment, or the close).
    WithFirstByte,
}

/// The form of a minted event id (CONTRACT.md fixes only the grammar
/// `^[A-Za-z0-9._~-]{16,128}$`; a consumer treats it as a string).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EventIdForm {
    /// `evt-<32 hex>`.
    #[default]
    EvtHex,
    /// `E.<25 base-36 digits>_<8 hex>` (upper case, a dot and an underscore).
    Dotted,
}

impl EventIdForm {
    /// A new event id of this form.
    pub fn mint(self) -> String {
        match self {
            EventIdForm::EvtHex => format!("evt-{}", uuid::Uuid::new_v4().simple()),
            EventIdForm::Dotted => format!("E.{}", dotted_opaque()),
        }
    }
}

/// The opaque part of a minted interrupt id, within the tenant-bound grammar (CONTRACT.md:
/// interrupt ids are the host's choice).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum InterruptIdForm {
    /// `<tenant>/int-<32 hex>`.
    #[default]
    IntHex,
    /// `<tenant>/gate.<25 base-36 digits>_<8 hex>`.
    Dotted,
}

impl InterruptIdForm {
    /// A new interrupt id of tenant `tenant`.
    pub fn mint(self, tenant: &str) -> String {
        match self {
            InterruptIdForm::IntHex => format!("{tenant}/int-{}", uuid::Uuid::new_v4().simple()),
            InterruptIdForm::Dotted => format!("{tenant}/gate.{}", dotted_opaque()),
        }
    }
}

/// Which optional envelope fields an event carries (the chapter: `nodeId`, `engineVersion` and
/// `causationId` are OPTIONAL).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EnvelopeFields {
    /// `nodeId` on node events, `causationId` on envelope-caused events, no `engineVersion`.
    #[default]
    NodeAndCausation,
    /// The same, plus `engineVersion` on every event.
    WithEngineVersion,
}

/// Which optional fields `run.cancelled` carries (upstream requires none of its four).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CancelledPayload {
    /// `reason` (a default when the request gave none), `cancelledBy`, `durationMs`.
    #[default]
    Filled,
    /// `reason` only when the request gave one, and `durationMs`; no `cancelledBy`.
    AsRequested,
}

/// When `run.started` is appended relative to the 201 of `POST /runs` (the chapter does not
/// say; a poll right after creation may find an empty log).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunStartedTiming {
    /// In the log before the response is written.
    #[default]
    BeforeResponse,
    /// Appended by the run's task, after the response.
    AfterResponse,
}

/// The order of the `streamMode` and `bufferMs` checks (the chapter fixes only `streamMode`
/// before content negotiation and `Last-Event-ID` after authorization).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StreamValidationOrder {
    /// `streamMode`, then `bufferMs`.
    #[default]
    ModeFirst,
    /// `bufferMs`, then `streamMode`.
    BufferFirst,
}

/// A `values` resumption at or past the end of a terminal run (CONTRACT.md: a case may not fail
/// a host for either reading).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ValuesResumeAtEnd {
    /// The stream closes without a frame.
    #[default]
    CloseWithoutFrame,
    /// One `state.snapshot` of the run, then close.
    SnapshotFirst,
}

/// Whether `bufferMs` batches a `messages` stream (CONTRACT.md: validated and ignored).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MessagesBatching {
    /// Validated and ignored.
    #[default]
    Ignored,
    /// Applied: `event: batch` frames, as for `updates`.
    Applied,
}

/// The text of the keep-alive comment (any line starting with `:` is a comment).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KeepAliveComment {
    /// `:keep-alive`.
    #[default]
    KeepAliveText,
    /// `:` alone.
    BareColon,
}

impl KeepAliveComment {
    /// The comment's text after the `:`.
    pub fn text(self) -> &'static str {
        match self {
            KeepAliveComment::KeepAliveText => "keep-alive",
            KeepAliveComment::BareColon => "",
        }
    }
}

/// Whether a completed run's log carries an event after its terminal event (the chapter:
/// `compensation.*`, `run.dead-lettered` and vendor types MAY follow it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AfterTerminalEvents {
    /// Nothing after the terminal event.
    #[default]
    Nothing,
    /// A vendor event `example.run-archived` right after `run.completed`, and another,
    /// `example.run-indexed`, once the first poll of the finished run was answered (so a
    /// reading taken right after the terminal event lacks one event every later reading holds).
    VendorEvent,
}

/// Where the host channel is served (the chapter: `/host/events` unless discovery declares
/// another address under `heartbeat.deliveryChannel`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HostChannelAddress {
    /// `/host/events`.
    #[default]
    DefaultAddress,
    /// `/host/channel`, declared under `heartbeat.deliveryChannel`.
    Declared,
}

impl HostChannelAddress {
    /// The path.
    pub fn path(self) -> &'static str {
        match self {
            HostChannelAddress::DefaultAddress => "/host/events",
            HostChannelAddress::Declared => "/host/channel",
        }
    }
}

/// Whether `provider.usage` and discovery's `providerUsage.currency` state the currency (the
/// chapter: absent means USD).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum UsageCurrency {
    /// `currency: USD` stated.
    #[default]
    Stated,
    /// Omitted (absent means USD).
    Omitted,
}

/// Whether an error carries `details` beyond the conditionals (upstream: `details` is an open
/// object).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorDetails {
    /// Only the details a code's rule asks for.
    #[default]
    Plain,
    /// Every error also carries `details.hostReference` (an opaque reference for the host's
    /// operational log).
    Annotated,
}

/// `<25 base-36 digits>_<8 hex>`: unreserved characters, never a `~`.
fn dotted_opaque() -> String {
    let mut value = uuid::Uuid::new_v4().as_u128();
    let mut digits = Vec::with_capacity(26);
    while digits.len() < 25 {
        let digit = (value % 36) as u8;
        digits.push(if digit < 10 {
            b'0' + digit
        } else {
            b'a' + digit - 10
        });
        value /= 36;
    }
    let base36: String = digits.into_iter().rev().map(char::from).collect();
    let tail = &uuid::Uuid::new_v4().simple().to_string()[..8];
    format!("{base36}_{tail}")
}

/// How a mixed-mode stream sends an event more than one of its modes admits (the chapter: a
/// consumer MUST tolerate it; CONTRACT.md: once, named by the first admitting mode).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MultiAdmitted {
    /// Once; `event:` names the first admitting mode of the client's list.
    #[default]
    Once,
    /// Once per admitting mode, each frame's `event:` naming its mode.
    OncePerMode,
}

/// The answer to a request naming another tenant's run (CONTRACT.md: 403 or 404, never its
/// data; either answer is the same whether or not the run exists).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CrossTenantAnswer {
    /// 403 `id_tenant_mismatch`.
    #[default]
    Forbidden,
    /// 404 `not_found`.
    NotFound,
}

/// When `POST /runs/{runId}/cancel` appends `run.cancelled`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CancelAnswer {
    /// Before it answers `{status: cancelled}`.
    #[default]
    Synchronous,
    /// After it answers `{status: cancelling}` (the run stops at once; its terminal event
    /// follows shortly).
    Asynchronous,
}

/// The opaque part of a minted run id, within the tenant-bound grammar.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunIdForm {
    /// `run-<32 hex>`.
    #[default]
    RunHex,
    /// `r.<25 base-36 digits>_<8 hex>` (a dot and an underscore: unreserved characters a
    /// client might mishandle in a path).
    Dotted,
}

impl RunIdForm {
    /// A new run id of tenant `tenant`, `<tenant>/<opaque>`.
    pub fn mint(self, tenant: &str) -> String {
        match self {
            RunIdForm::RunHex => format!("{tenant}/run-{}", uuid::Uuid::new_v4().simple()),
            RunIdForm::Dotted => format!("{tenant}/r.{}", dotted_opaque()),
        }
    }
}

/// Which stream modes `GET /runs/{runId}/events` serves (the chapter: "A host MUST implement
/// updates and SHOULD implement all four"; a mode it does not implement "MUST return 400
/// unsupported_stream_mode with details.supported listing each individual mode the host
/// serves"). Taking [`ImplementedModes::UpdatesOnly`] departs from that SHOULD on purpose: its
/// WARNs are the ones at `events.stream-mode.should-implement-{values,messages,debug}`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ImplementedModes {
    /// `values`, `updates`, `messages` and `debug`.
    #[default]
    AllFour,
    /// `updates` alone: `values`, `messages`, `debug` and every combination naming one of them
    /// are refused with 400 `unsupported_stream_mode`, `details.supported: ["updates"]`.
    UpdatesOnly,
}

impl ImplementedModes {
    /// The single modes served (`details.supported`), `updates` first.
    pub fn served(self) -> &'static [&'static str] {
        match self {
            ImplementedModes::AllFour => &["updates", "values", "messages", "debug"],
            ImplementedModes::UpdatesOnly => &["updates"],
        }
    }

    /// Whether the single mode named `mode` is served.
    pub fn serves(self, mode: &str) -> bool {
        self.served().contains(&mode)
    }
}

/// Which side of upstream's self-contradictions a run log follows (upstream-schema-facts.md,
/// "Points where upstream contradicts itself": `negotiation.decided` is in the run-event type
/// enum and the normative `_typeIndex` of `run-event-payloads.schema.json` but not in
/// `spec/v2/event-codemap.json`; `suspend-request.schema.json` is closed over `kind`, `key`,
/// `data` yet its prose says the recorded event carries engine-assigned identity fields; the
/// harness takes the tolerant reading of each contradiction, so a host may follow either
/// side).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum UpstreamContradictions {
    /// The codemap's side (no `negotiation.decided` is ever recorded) and the prose's side
    /// (`interrupt.requested` carries `nodeId` and `interruptId` beside `kind`, `key`, `data`).
    #[default]
    ReferenceSide,
    /// The type enum's side: every run records, right after `run.started`, the protocol
    /// negotiation of its tool peer as a `negotiation.decided` event whose payload is valid
    /// against upstream's closed def (`protocol: mcp`, `outcome: accepted`, `version`,
    /// `reason: ok`, `at`; run-event-payloads @ 446c2f2c `$defs/negotiationDecided`). Its tier
    /// is debug (the type has no codemap row), so `updates` and `values` never show it. And
    /// `interrupt.requested` in the closed suspend-request shape: `kind`, `key`, `data` only
    /// (`node.suspended` and the envelope's `nodeId` still name the node and the interrupt).
    OtherSide,
}

/// The MCP revision the [`UpstreamContradictions::OtherSide`] negotiation settles on.
pub const NEGOTIATED_MCP_VERSION: &str = "2025-06-18";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_run_id_form_is_tenant_bound() {
        for form in [RunIdForm::RunHex, RunIdForm::Dotted] {
            let id = form.mint("tenant-a");
            let (tenant, opaque) = id.split_once('/').unwrap();
            assert_eq!(tenant, "tenant-a");
            assert!((16..=128).contains(&opaque.len()), "{form:?}: {id}");
            assert!(
                opaque
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"._~-".contains(&b)),
                "{form:?}: {id}"
            );
        }
        assert!(RunIdForm::Dotted.mint("t").starts_with("t/r."));
    }

    #[test]
    fn a_wire_cursor_selects_exactly_the_events_numbered_above_it() {
        for form in [SequenceForm::Dense, SequenceForm::Even] {
            for wire_cursor in 0..40u64 {
                for stored in 1..20u64 {
                    assert_eq!(
                        stored > form.stored_cursor(wire_cursor),
                        form.wire(stored) > wire_cursor,
                        "{form:?}: cursor {wire_cursor}, event {stored}"
                    );
                }
            }
            let wires: Vec<u64> = (1..6).map(|s| form.wire(s)).collect();
            assert!(wires.windows(2).all(|w| w[0] < w[1]), "{form:?}: {wires:?}");
        }
        assert_eq!(SequenceForm::Even.wire(1), 2);
        assert_eq!(SequenceForm::Even.stored_cursor(u64::MAX), u64::MAX / 2);
    }

    #[test]
    fn terse_messages_name_only_the_code() {
        assert_eq!(
            ErrorWording::Terse.message("invalid_request", "Request body is not valid JSON"),
            "Error: invalid_request."
        );
        assert_eq!(ErrorWording::Reference.message("x", "kept"), "kept");
    }

    #[test]
    fn every_event_and_interrupt_id_form_follows_its_grammar() {
        let unreserved = |s: &str| {
            s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
        };
        for form in [EventIdForm::EvtHex, EventIdForm::Dotted] {
            let id = form.mint();
            assert!((16..=128).contains(&id.len()) && unreserved(&id), "{id}");
        }
        for form in [InterruptIdForm::IntHex, InterruptIdForm::Dotted] {
            let id = form.mint("tenant-a");
            let (tenant, opaque) = id.split_once('/').unwrap();
            assert_eq!(tenant, "tenant-a");
            assert!(
                (16..=128).contains(&opaque.len()) && unreserved(opaque),
                "{id}"
            );
        }
        assert!(EventIdForm::Dotted.mint().starts_with("E."));
    }

    #[test]
    fn execution_id_forms_differ() {
        assert_eq!(ExecutionIdForm::Uuid.mint().len(), 36);
        assert!(ExecutionIdForm::Prefixed.mint().starts_with("exe_"));
    }
}
