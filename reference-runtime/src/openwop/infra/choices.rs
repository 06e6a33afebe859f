//! Surface W's host choices, `[openwop.choices]`: the knobs for what the run events chapter
//! leaves open (see `spec/open-points.json`), a field of the surface's one configuration value
//! ([`crate::openwop::infra::config::OpenWopConfig`]). Every option keeps every MUST and
//! SHOULD (one exception: `implemented_modes = "updates-only"` departs from "SHOULD implement
//! all four" on purpose, as the chapter allows); the defaults are the standard profile's
//! options, the others are what the tolerance matrix runs the corpus against.
//!
//! ```toml
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
//! host_channel = "declared"                  # or "undeclared", or "default-address" (the default)
//! usage_currency = "omitted"                 # or "stated" (the default)
//! error_details = "annotated"                # or "plain" (the default)
//! implemented_modes = "updates-only"         # or "all-four" (the default)
//! upstream_contradictions = "other-side"     # or "reference-side" (the default)
//! fixture_node_ids = "per-fixture"           # or "shared" (the default)
//! poll_page = "four-events"                  # or "one-event", or "whole" (the default)
//! poll_foreign_parameters = "refused"        # or "ignored" (the default)
//! cursor_range = "safe-integer"             # or "fifteen-digits", or "any" (the default)
//! empty_last_event_id = "as-absent"          # or "refused" (the default)
//! tick_seam_runs = "ids"                     # or "count" (the default)
//! run_id_path_forms = "percent-only"         # or "both" (the default)
//! unprojectable_property = "carried-under-hatch"  # or "fails" (the default)
//! ```

use serde::Deserialize;

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
    /// Which edition of upstream's catalogue names the envelope fixtures' mock nodes.
    pub fixture_node_ids: FixtureNodeIds,
    /// How many events one poll answers.
    pub poll_page: PollPage,
    /// What a poll does with `lastSequence` and `since`, which are not its parameters.
    pub poll_foreign_parameters: PollForeignParameters,
    /// Which cursors (poll's `afterSequence`, a stream's `Last-Event-ID`) the host reads.
    pub cursor_range: CursorRange,
    /// What an empty `Last-Event-ID` header is.
    pub empty_last_event_id: EmptyLastEventId,
    /// How the heartbeat tick seam reports the runs a tick enqueued.
    pub tick_seam_runs: TickSeamRuns,
    /// Which forms of a run id in a request path the host reads, and writes in its URLs.
    pub run_id_path_forms: RunIdPathForms,
    /// Where a run's mock provider is read in `POST /runs`.
    pub mock_provider_seat: MockProviderSeat,
    /// What a reader of an era-2 log does with a property the v2 payload has no place for.
    pub unprojectable_property: UnprojectableProperty,
}

/// What a reader of an era-2 log does with a payload property the v2 definition of its type
/// declares nowhere (open point `w.era2.unprojectable-property`): the chapter's "A projection
/// MUST NOT silently drop a property: it carries it or fails with 500 payload_unprojectable
/// (hatch `^(openwop-|x-|vendor\.)`)" leaves the choice to the host.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum UnprojectableProperty {
    /// The read fails `500 payload_unprojectable` naming the keys.
    #[default]
    Fails,
    /// The property is carried under the hatch, renamed `x-<name>`, where the definition has
    /// the hatch; where it has none (or `x-<name>` is taken) the read fails as under `Fails`.
    CarriedUnderHatch,
}

/// Where `POST /runs` reads a run's mock provider (open point `w.fixtures.mock-provider-seat`):
/// upstream's suite starts `conformance-stream-text` with `configurable.mockProvider` (v1's run
/// options: flat, no `version`), where v2's closed `configurable.schema.json` has
/// `configurable.ai.mockProvider` under `version: 1`; a host reading the v2 schema alone refuses
/// the suite's body (found on an independent host).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MockProviderSeat {
    /// Both: the suite's flat spelling is read as the v2 one.
    #[default]
    Both,
    /// `configurable.ai.mockProvider` only: the flat spelling is a member the closed
    /// `configurable` does not have (400 `validation_error`).
    SchemaOnly,
}

/// Which forms of a tenant-bound run id in a request path the host reads (open point
/// `w.run-id.path-form`): upstream's identity chapter has a host emit `~2F` and accept `~2F` and
/// `%2F`; its OpenAPI `RunId` parameter names only `%2F`, and upstream's first v2 reference host
/// reads only that (a `~2F` path is a 404 there). The run events chapter says nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunIdPathForms {
    /// `~2F` and `%2F` read; `~2F` written (CONTRACT.md).
    #[default]
    Both,
    /// `%2F` only read and written; a path with `~` names no run (404).
    PercentOnly,
}

impl RunIdPathForms {
    /// Whether a run-id path segment is in a form the host reads.
    pub(crate) fn reads(self, segment: &str) -> bool {
        match self {
            RunIdPathForms::Both => true,
            RunIdPathForms::PercentOnly => !segment.contains('~'),
        }
    }

    /// A run id written into a URL the host hands out.
    pub(crate) fn write(self, run_id: &str) -> String {
        match self {
            RunIdPathForms::Both => spec::openwop::encode_run_id_for_path(run_id),
            RunIdPathForms::PercentOnly => run_id.replace('/', "%2F").replace(':', "%3A"),
        }
    }
}

/// How upstream's heartbeat tick seam answers `enqueuedRuns`, the runs a tick enqueued: the
/// seam is upstream's test surface, not the chapter's; upstream's answers a count, and an
/// independent host listed the runs' ids. The cases read either.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TickSeamRuns {
    /// A count, as upstream's seam answers it.
    #[default]
    Count,
    /// The ids of the runs.
    Ids,
}

/// How many events one poll answers (open point `w.poll.page-size`): the chapter gives poll no
/// `limit` parameter, and does not say one answer holds every event after the cursor;
/// `lastSequence` says how far the log goes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PollPage {
    /// Every event after the cursor.
    #[default]
    Whole,
    /// At most four events; the client reads on from the last one.
    FourEvents,
    /// One event at a time: the smallest page a host may answer.
    OneEvent,
}

impl PollPage {
    /// The most events one answer holds (`None`: every event after the cursor).
    pub fn events(self) -> Option<usize> {
        match self {
            PollPage::Whole => None,
            PollPage::FourEvents => Some(4),
            PollPage::OneEvent => Some(1),
        }
    }
}

/// What a poll does with `lastSequence` and `since` (open point `w.poll.foreign-parameters`):
/// "lastSequence and since are not parameters" says they are no cursor, not how a host answers
/// a request naming them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PollForeignParameters {
    /// Ignored, as every unknown query parameter (CONTRACT.md).
    #[default]
    Ignored,
    /// Refused with 400 `validation_error`.
    Refused,
}

/// Which cursors the host reads, poll's `afterSequence` and a stream's `Last-Event-ID` alike
/// (open point `w.cursor.range`): the chapter bounds no cursor; a host reading JSON numbers holds
/// integers to 2^53 - 1, and one bounding them by digits to 15 (what a double always holds).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CursorRange {
    /// Any non-negative integer (past the end of every log beyond `u64`).
    #[default]
    Any,
    /// Integers to 2^53 - 1; a larger one is refused with 400 `validation_error`.
    SafeInteger,
    /// Integers of at most 15 digits; a longer one is refused with 400 `validation_error`.
    FifteenDigits,
}

/// What an empty `Last-Event-ID` header is (open point `w.cursor.empty-value`): the chapter
/// refuses every value that is not a well-formed non-negative integer (SHOULD), and in SSE the
/// empty last event id is the state of having none (an `EventSource` never sends the header
/// empty, and an `id:` with no value resets it), so a host may read the empty header as no
/// header.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EmptyLastEventId {
    /// Refused with 400 `validation_error`, like any value that is not a cursor.
    #[default]
    Refused,
    /// Read as no header: the stream starts at the beginning of the log.
    AsAbsent,
}

impl EmptyLastEventId {
    /// The header's value as the host reads it.
    pub(crate) fn read(self, value: Option<&str>) -> Option<&str> {
        match self {
            EmptyLastEventId::Refused => value,
            EmptyLastEventId::AsAbsent => value.filter(|v| !v.is_empty()),
        }
    }
}

impl CursorRange {
    /// Whether the host reads `cursor` (a well-formed one, saturated at `u64::MAX`).
    pub(crate) fn admits(self, cursor: u64) -> bool {
        match self {
            CursorRange::Any => true,
            CursorRange::SafeInteger => cursor <= spec::openwop::MAX_EXACT_CURSOR,
            CursorRange::FifteenDigits => cursor <= spec::openwop::MAX_FIFTEEN_DIGIT_CURSOR,
        }
    }
}

/// Which edition of upstream's fixture catalogue the seeded envelope fixtures' mock-provider
/// nodes follow (open point `w.fixtures.mock-node-ids`): upstream's catalogue at the commit
/// `spec/fixtures/` transcribes names every one `structured-call`; later upstream gives each its
/// own id (`spec::fixtures::mock_nodes`). The node id is what upstream's mock-AI program seam is
/// keyed by; the definitions are served at `GET /workflows/{workflowId}` either way.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FixtureNodeIds {
    /// Every envelope fixture's node is `structured-call` (upstream at 75b28328).
    #[default]
    Shared,
    /// One node id per envelope fixture, and `maxTokens: 256` on the retry-attempted fixture.
    PerFixture,
}

impl FixtureNodeIds {
    /// The catalogue edition this choice seeds.
    pub fn edition(self) -> spec::fixtures::mock_nodes::NodeIdEdition {
        match self {
            FixtureNodeIds::Shared => spec::fixtures::mock_nodes::NodeIdEdition::Shared,
            FixtureNodeIds::PerFixture => spec::fixtures::mock_nodes::NodeIdEdition::PerFixture,
        }
    }
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
    /// `/host/events`, with no `heartbeat.deliveryChannel` in discovery (the seed: the default
    /// address applies; upstream's `HeartbeatRecord` requires the member, open point
    /// `w.host-events.address`).
    Undeclared,
}

impl HostChannelAddress {
    /// The path.
    pub fn path(self) -> &'static str {
        match self {
            HostChannelAddress::DefaultAddress | HostChannelAddress::Undeclared => "/host/events",
            HostChannelAddress::Declared => "/host/channel",
        }
    }

    /// The address discovery declares under `heartbeat.deliveryChannel`, if any.
    pub fn declared(self) -> Option<&'static str> {
        (self != HostChannelAddress::Undeclared).then(|| self.path())
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
}
