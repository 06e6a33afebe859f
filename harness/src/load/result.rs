//! The result of one load run: the published JSON document (`spec/schema/load-result.schema.json`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::plan::LoadPlan;

/// The `$id` of the load result schema.
pub const LOAD_RESULT_SCHEMA_ID: &str =
    "https://conformance-harness.invalid/spec/schema/load-result.schema.json";

/// What the clock comparison behind every latency figure means.
pub const CLOCK_CAVEAT: &str = "Delivery latency is the harness's wall clock when a frame's bytes \
arrived minus the event's own timestamp (`timestamp` on W, `time` on X), which the host took from \
its clock. On loopback both clocks are the same clock; against a remote host the figure includes \
the clock offset between the machines, and a timestamp with millisecond precision adds up to 1 ms.";

/// One load run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LoadResult {
    /// The harness version that produced it.
    pub harness_version: String,
    /// The host's base URL.
    pub target: String,
    /// `built-in` or `external`.
    pub target_kind: String,
    /// The plan, as run.
    pub plan: LoadPlan,
    /// When the run started (RFC 3339, UTC).
    pub started_at: String,
    /// Wall time from the first log's creation to the last subscriber's end, in seconds.
    pub wall_s: f64,
    /// `pass`, `fail` (an event lost, duplicated or reordered, or a frame after the terminal
    /// event) or `not_judged` (the run did not finish within its bounds or a log could not be
    /// read).
    pub verdict: LoadVerdict,
    /// Why the run was not judged, when it was not.
    pub not_judged_reasons: Vec<String>,
    /// Totals over every subscriber.
    pub totals: Totals,
    /// Delivery latency (see `clock_caveat`).
    pub latency_ms: Percentiles,
    /// Time from a subscriber's first request to its first event frame.
    pub time_to_first_event_ms: Percentiles,
    /// Time from a subscriber's first request to the response headers.
    pub time_to_first_byte_ms: Percentiles,
    /// Frames per second per stream (a subscriber's event frames over its reading time).
    pub frames_per_s_per_stream: Percentiles,
    /// Event frames per second over the whole run, every stream together.
    pub frames_per_s_total: f64,
    /// Connections: opened, resumed, refused.
    pub connections: Connections,
    /// What the latency figures mean.
    pub clock_caveat: String,
    /// The latency histogram (for the plot).
    pub latency_histogram: Vec<HistogramBucket>,
    /// Deliveries per time slice since the start (for the plot).
    pub deliveries_over_time: Vec<TimelineBucket>,
    /// Each log and what its full read held.
    pub logs: Vec<LogSummary>,
    /// Every broken rule found (at most [`MAX_ANOMALIES`], the count in `totals` is complete).
    pub anomalies: Vec<Anomaly>,
    /// The slowest streams (lowest frames per second), at most ten.
    pub slowest_streams: Vec<StreamSummary>,
}

/// At most this many anomalies are listed one by one.
pub const MAX_ANOMALIES: usize = 200;

/// A load run's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LoadVerdict {
    /// Every subscriber got exactly its log's events, in order, nothing after the terminal one.
    Pass,
    /// An event lost, duplicated or reordered, or a frame after the terminal event.
    Fail,
    /// The harness could not judge (time bound hit, a log unreadable, a subscriber refused).
    NotJudged,
}

impl LoadVerdict {
    /// The process exit code: 0 pass, 1 fail, 4 not judged (as `conformance run`).
    pub fn exit_code(self) -> u8 {
        match self {
            LoadVerdict::Pass => 0,
            LoadVerdict::Fail => 1,
            LoadVerdict::NotJudged => 4,
        }
    }
}

/// Totals over every subscriber.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Totals {
    /// Subscribers started.
    pub subscribers: usize,
    /// Subscribers that read their stream to the end (terminal event, then the host closed).
    pub completed_subscribers: usize,
    /// Events delivered (a batch frame counts each event it holds).
    pub deliveries: u64,
    /// Events every subscriber had to get, together (a run's events through its terminal one;
    /// events its log holds after it may arrive too, and then count in `deliveries`).
    pub expected_deliveries: u64,
    /// Events of the log a subscriber never got.
    pub lost: u64,
    /// Events a subscriber got more than once.
    pub duplicated: u64,
    /// Events that arrived after an event with a larger sequence.
    pub reordered: u64,
    /// Frames that arrived after the terminal event on the same stream.
    pub after_terminal: u64,
    /// Frames naming a sequence the log's full read does not hold, or one the stream mode does
    /// not admit.
    pub unexpected: u64,
    /// Streams that stayed open past the grace after their terminal event.
    pub open_after_terminal: u64,
    /// Gaps between two frames of an open stream longer than the keep-alive window.
    pub keepalive_gaps: u64,
}

/// p50 / p99 / max of a sample, with its size.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Percentiles {
    /// Samples.
    pub count: u64,
    /// Median (nearest rank).
    pub p50: Option<f64>,
    /// 99th percentile (nearest rank).
    pub p99: Option<f64>,
    /// Largest.
    pub max: Option<f64>,
}

/// Connections over the run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Connections {
    /// Stream requests answered 200.
    pub opened: u64,
    /// Disconnects the harness forced.
    pub forced_disconnects: u64,
    /// Requests carrying `Last-Event-ID` (after a forced disconnect or an early close).
    pub resumptions: u64,
    /// 429 answers with `Retry-After` (a correct answer: the subscriber waited and retried).
    pub rate_limited: u64,
    /// 429 answers without `Retry-After`.
    pub rate_limited_without_retry_after: u64,
    /// Surface W: 503 answers with `Retry-After` (the host at capacity: the subscriber waited
    /// and retried).
    #[serde(default)]
    pub at_capacity: u64,
    /// Connection failures, unexpected statuses and read errors.
    pub errors: u64,
    /// The first few errors, verbatim.
    pub first_errors: Vec<String>,
}

/// One histogram bucket of delivery latency.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HistogramBucket {
    /// Lower bound (inclusive), ms.
    pub from_ms: f64,
    /// Upper bound (exclusive), ms.
    pub to_ms: f64,
    /// Deliveries in the bucket.
    pub count: u64,
}

/// Deliveries in one time slice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TimelineBucket {
    /// Start of the slice, ms since the run started.
    pub at_ms: u64,
    /// Events delivered in the slice, every stream together.
    pub deliveries: u64,
}

/// One log (run or execution) and its full read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LogSummary {
    /// The host's id.
    pub id: String,
    /// Events in the full read.
    pub events: usize,
    /// The terminal event's sequence and type, when the log has one.
    pub terminal: Option<(u64, String)>,
    /// What was wrong with the full read itself (a sequence repeated or going back), when
    /// anything.
    pub read_problem: Option<String>,
}

/// One broken rule on one stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Anomaly {
    /// The log.
    pub log: String,
    /// The subscriber (0-based, per log).
    pub subscriber: usize,
    /// What broke.
    pub kind: AnomalyKind,
    /// How many events (or gaps) it concerns.
    pub count: u64,
    /// The sequences concerned (at most 20).
    pub sequences: Vec<u64>,
    /// One sentence, naming the gap.
    pub detail: String,
}

/// The kinds of broken rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AnomalyKind {
    /// Events never delivered.
    Lost,
    /// Events delivered twice.
    Duplicated,
    /// Events delivered after a larger sequence.
    Reordered,
    /// Frames after the terminal event.
    AfterTerminal,
    /// Sequences the log or the stream mode does not have.
    Unexpected,
    /// The stream stayed open after the terminal event.
    OpenAfterTerminal,
    /// A gap between frames longer than the keep-alive window.
    KeepaliveGap,
}

impl AnomalyKind {
    /// Whether this kind fails the run (the others are reported as warnings).
    pub fn fails(self) -> bool {
        matches!(
            self,
            AnomalyKind::Lost
                | AnomalyKind::Duplicated
                | AnomalyKind::Reordered
                | AnomalyKind::AfterTerminal
                | AnomalyKind::Unexpected
        )
    }
}

/// One subscriber's stream figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StreamSummary {
    /// The log.
    pub log: String,
    /// The subscriber (0-based, per log).
    pub subscriber: usize,
    /// Connections it used.
    pub connections: u32,
    /// Events delivered.
    pub deliveries: u64,
    /// Time to the first response headers, ms.
    pub time_to_first_byte_ms: Option<f64>,
    /// Time to the first event frame, ms.
    pub time_to_first_event_ms: Option<f64>,
    /// The largest gap between two frames of one connection, ms.
    pub largest_gap_ms: f64,
    /// Event frames per second over its reading time.
    pub frames_per_s: f64,
}

/// The JSON Schema of [`LoadResult`] (draft 2020-12), as `cargo schemas` publishes it.
pub fn load_result_schema() -> Value {
    crate::report::json::published_schema::<LoadResult>(LOAD_RESULT_SCHEMA_ID)
}
