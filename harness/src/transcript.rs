//! What the driver recorded: every request sent, every response and SSE frame received, with
//! timings. Checks read only this; reports render it. Secrets are redacted at recording time.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use crate::frame_kind::FrameKind;

/// Headers whose values are always replaced by [`REDACTED`] in transcripts and reports.
pub const SECRET_HEADERS: [&str; 6] = [
    "authorization",
    "proxy-authorization",
    "x-api-key",
    "api-key",
    "cookie",
    "set-cookie",
];

/// The replacement for a redacted secret.
pub const REDACTED: &str = "[REDACTED]";

/// Largest response body or frame text kept verbatim in a transcript (checks see the whole
/// body; reports keep this much and say how much was cut).
pub const TRANSCRIPT_TEXT_LIMIT: usize = 64 * 1024;

/// One header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Header {
    /// Lowercased name.
    pub name: String,
    /// Value (lossy UTF-8), redacted for secret headers.
    pub value: String,
}

/// A request as sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RequestRecord {
    /// Method.
    pub method: String,
    /// Absolute URL.
    pub url: String,
    /// Headers sent (secrets redacted).
    pub headers: Vec<Header>,
    /// Body sent, when any.
    pub body: Option<String>,
}

/// How a response body or stream ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", tag = "kind", content = "detail")]
pub enum BodyEnd {
    /// The server closed the body cleanly.
    ServerClosed,
    /// The harness stopped reading on purpose (frame count reached, window elapsed).
    ClientStopped,
    /// The step's time ran out while the server kept the connection open.
    Timeout,
    /// The server broke the connection (reset, malformed chunking, …).
    Broken(String),
    /// The harness stopped reading because the host exceeded a size bound.
    TooLarge(String),
}

/// One SSE frame or comment, as tokenised from the raw bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FrameRecord {
    /// Milliseconds since the request was sent.
    pub at_ms: u64,
    /// The frame kind.
    #[serde(flatten)]
    pub kind: FrameKind,
}

/// A response as received.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ResponseRecord {
    /// Status code.
    pub status: u16,
    /// Headers (secrets redacted).
    pub headers: Vec<Header>,
    /// Milliseconds from send to headers.
    pub headers_at_ms: u64,
    /// The body as text (lossy UTF-8). A body past the driver's size bound, and any body in a
    /// report, may be an excerpt: its head and tail around a marker, counted in `excerpt`.
    pub body: String,
    /// Bytes of body received in total.
    pub body_bytes: u64,
    /// Whether the body was valid UTF-8.
    pub body_utf8: bool,
    /// The body parsed as JSON, when it is JSON.
    pub json: Option<Value>,
    /// SSE frames and comments, when the body was read as a stream.
    pub frames: Vec<FrameRecord>,
    /// Bytes left after the last complete frame (a truncated final frame), when any.
    pub trailing_partial_frame: Option<String>,
    /// How the body ended, and when (ms since send).
    pub end: BodyEnd,
    /// When the body ended.
    pub end_at_ms: u64,
    /// What was left out of this record, when it is an excerpt (see the `excerpt` module):
    /// absent when the record is whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub excerpt: Option<Excerpt>,
    /// What the harness read of a stream past the frames it kept, folded as it arrived and not
    /// kept (see `crate::stream_fold`): absent when every frame read is in `frames`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folded: Option<StreamFold>,
    /// Surface W, a stream: when its run was seen to end while the stream was read, and what
    /// showed it (from then the host owed the close within one keep-alive interval); absent
    /// when no end was seen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_end: Option<RunEndSeen>,
}

/// When a surface-W stream's run was seen to end while the stream was read, and what showed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunEndSeen {
    /// Milliseconds from the stream's request (0 when the run had ended before it).
    pub at_ms: u64,
    /// What showed it.
    pub witness: RunEndWitness,
}

/// What showed a stream that its run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunEndWitness {
    /// The stream itself: the run's terminal event, or a `values` snapshot of the run terminal.
    ThisStream,
    /// Another stream of the same run in the case.
    AnotherStream,
    /// The run's poll, answering `isTerminal: true` (asked by the harness while the stream was
    /// open and had shown no end).
    RunPoll,
}

impl RunEndWitness {
    /// The witness in words.
    pub fn describe(self) -> &'static str {
        match self {
            RunEndWitness::ThisStream => "shown on this stream",
            RunEndWitness::AnotherStream => "shown on another stream of the run",
            RunEndWitness::RunPoll => "the run's poll answered isTerminal: true",
        }
    }
}

/// What an excerpt left out of a response: the middle of its body, the middle of its frames,
/// the text of long frames, its parsed JSON. Checks never see an excerpt of what they judge
/// unless it says so; reports show it with these counts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Excerpt {
    /// Bytes of the body text cut out of its middle (the head and the tail are kept).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub body_bytes_dropped: u64,
    /// Frames left out between the first and the last ones kept.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub frames_dropped: u64,
    /// Frames kept whose text was cut (their parsed JSON is dropped with it).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub frames_cut: u64,
    /// Whether the body's parsed JSON was dropped (the body text, or its excerpt, remains).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub json_dropped: bool,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl ResponseRecord {
    /// A stream read with a window whose connection the host held open without sending its
    /// headers (status 0): the host writes them with its first body byte, which had not come
    /// when the window ended at `end_at_ms`. The driver records it then, without waiting on.
    pub fn held_without_headers(end_at_ms: u64) -> Self {
        ResponseRecord {
            status: 0,
            headers: Vec::new(),
            headers_at_ms: end_at_ms,
            body: String::new(),
            body_bytes: 0,
            body_utf8: true,
            json: None,
            frames: Vec::new(),
            trailing_partial_frame: None,
            end: BodyEnd::ClientStopped,
            end_at_ms,
            excerpt: None,
            folded: None,
            run_end: None,
        }
    }

    /// Whether the host sent the response's status line and headers (status 0: a stream held
    /// open without them through its window, [`ResponseRecord::held_without_headers`]).
    pub fn headers_received(&self) -> bool {
        self.status != 0
    }

    /// A header's value by (case-insensitive) name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| h.value.as_str())
    }

    /// The dispatched event frames, in order.
    pub fn events(
        &self,
    ) -> impl Iterator<
        Item = (
            &FrameRecord,
            Option<&str>,
            Option<&str>,
            &str,
            Option<&Value>,
        ),
    > {
        self.frames.iter().filter_map(|f| match &f.kind {
            FrameKind::Event {
                id,
                event,
                data,
                json,
                ..
            } => Some((
                f,
                id.as_deref(),
                event.as_deref(),
                data.as_str(),
                json.as_ref(),
            )),
            FrameKind::Comment { .. } => None,
        })
    }
}

/// One HTTP exchange: a request and what came back (or why nothing did).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Exchange {
    /// The request.
    pub request: RequestRecord,
    /// The response, when one arrived.
    pub response: Option<ResponseRecord>,
    /// A transport failure before any response (connection refused, reset before headers,
    /// timeout before headers).
    pub transport_error: Option<TransportError>,
    /// Milliseconds since the case started when the request was sent.
    pub sent_at_ms: u64,
}

impl Exchange {
    /// Whether the case's deadline cut the request before the host answered it (the host may
    /// still have been about to: such an exchange says nothing of the host).
    pub(crate) fn cut_by_deadline(&self) -> bool {
        self.response.is_none()
            && self
                .transport_error
                .as_ref()
                .is_some_and(|t| t.message == TransportError::NO_HEADERS_BEFORE_DEADLINE)
    }
}

/// A failure to get a response at all.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TransportError {
    /// Whether the target could not be reached at all (an environment problem, ERROR) rather
    /// than misbehaving after accepting the connection (a host problem, judged by checks).
    pub unreachable: bool,
    /// What happened.
    pub message: String,
}

impl TransportError {
    /// The message of a request the case's deadline cut before the host sent its headers.
    pub(crate) const NO_HEADERS_BEFORE_DEADLINE: &'static str =
        "no response headers before the case deadline";
}

/// Everything one step recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StepRecord {
    /// The step id (or `#<index>` when the case gave none).
    pub step: String,
    /// The JSON pointer of the step in the case file.
    pub location: String,
    /// The action kind (`request`, `stream`, `wait_terminal`, …).
    pub action: String,
    /// The exchanges, in the order they were sent (several for polls, concurrent requests).
    pub exchanges: Vec<Exchange>,
    /// Loop variables bound while the step ran (`repeat`, `generate`).
    pub bindings: Vec<(String, Value)>,
    /// Whether the step finished within the case's time.
    pub completed: bool,
    /// Fake-provider calls observed after the step: `(script, instance, count)`.
    pub provider_calls: Vec<ProviderCallCount>,
    /// Exchanges left out of this record between the first and the last ones kept (an
    /// excerpt, see the `excerpt` module); 0 when every exchange is here.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub exchanges_dropped: u64,
    /// Answers asking to be asked again (surface W: `429 rate_limited`, or `503`, with
    /// `Retry-After`) that the step waited out before sending its request again: never judged,
    /// so not among the exchanges; 0 when there were none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub refusals_waited_out: u64,
    /// Why the step was not taken (a stream mode it reads that the host does not serve, an
    /// optional one): it sent nothing and its checks were not judged; absent when it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_taken: Option<String>,
}

/// How often a fake provider instance was called with one script.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProviderCallCount {
    /// The case's local script name.
    pub script: String,
    /// The provider instance.
    pub instance: String,
    /// The role the instance plays (`text-primary`, …), when it has one.
    pub role: Option<String>,
    /// Calls received.
    pub count: u32,
}

/// Redacts a header value when the header is secret.
pub fn redact_header(name: &str, value: &str) -> String {
    if SECRET_HEADERS.contains(&name.to_ascii_lowercase().as_str()) {
        REDACTED.to_string()
    } else {
        value.to_string()
    }
}

/// What the frames read past the kept ones held, folded one by one as they arrived.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StreamFold {
    /// Frames (events and comments) folded and not kept.
    pub frames: u64,
    /// Of which event frames.
    pub event_frames: u64,
    /// Of which `:` comments.
    pub comments: u64,
    /// Events those frames carried (a `batch` frame carries several).
    pub events: u64,
    /// The index, among the stream's event frames, of the first one folded (the kept ones come
    /// before it).
    pub first_frame_index: u64,
    /// When the last frame read arrived (ms after the request was sent).
    pub last_at_ms: u64,
    /// The longest silence between two frames from the last kept frame on (ms).
    pub max_silence_ms: u64,
    /// Event frames whose data is not JSON.
    pub unparsable: u64,
    /// The index (among event frames) of the first of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_unparsable: Option<u64>,
    /// Events without a sequence.
    pub without_sequence: u64,
    /// The last sequence seen (seeded with the kept frames' last one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_sequence: Option<u64>,
    /// The first pair of consecutive sequences that decreases, from the seam on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_decrease: Option<[u64; 2]>,
    /// The first pair of consecutive sequences that does not increase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_not_increasing: Option<[u64; 2]>,
    /// The first pair of consecutive sequences that does not increase by exactly 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_gap: Option<[u64; 2]>,
    /// The sequence of the first unbatched event whose frame `id:` differs from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_id_mismatch: Option<u64>,
    /// Events per type (at most `crate::stream_fold::FOLD_TYPES` types).
    pub types: BTreeMap<String, u64>,
    /// Whether more types came than `crate::stream_fold::FOLD_TYPES`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub types_overflow: bool,
    /// The index (among all folded frames) of the first one carrying the canary credential.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canary_frame: Option<u64>,
}
