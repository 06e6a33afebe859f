//! Streaming metrics of a run, from its transcripts: per SSE stream the time to the response
//! headers and to the first event, the largest gap and the event frames per second; per run the
//! slowest streams. Figures, never verdicts.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::transcript::{FrameKind, StepRecord};

/// At most this many streams are listed as the slowest.
pub const SLOWEST_STREAMS: usize = 10;

/// Every SSE stream of a run, and the slowest of them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StreamingMetrics {
    /// Every stream (a response with `Content-Type: text/event-stream`), in run order.
    pub streams: Vec<StreamMetrics>,
    /// The slowest streams: longest time to the first event, then the largest gap.
    pub slowest: Vec<StreamMetrics>,
}

/// One SSE stream's figures (milliseconds from the request being sent).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StreamMetrics {
    /// The case.
    pub case: String,
    /// The step.
    pub step: String,
    /// The request path (without the query).
    pub path: String,
    /// Time to the response headers (the first byte of the response).
    pub time_to_first_byte_ms: u64,
    /// Time to the first event frame; `null` when none came.
    pub time_to_first_event_ms: Option<u64>,
    /// The largest gap between the headers, two frames (events or comments), and the end.
    pub largest_gap_ms: u64,
    /// Event frames received.
    pub event_frames: u64,
    /// Event frames per second from the headers to the end of the stream; `null` when the
    /// stream lasted under 1 ms.
    pub frames_per_s: Option<f64>,
}

/// The streaming metrics of a run's cases, given as `(case id, transcript)`.
pub fn streaming_metrics<'a>(
    cases: impl IntoIterator<Item = (&'a str, &'a [StepRecord])>,
) -> StreamingMetrics {
    let mut streams = Vec::new();
    for (case, transcript) in cases {
        for step in transcript {
            for exchange in &step.exchanges {
                let Some(response) = &exchange.response else {
                    continue;
                };
                let is_stream = response
                    .header("content-type")
                    .is_some_and(|t| t.trim_start().starts_with("text/event-stream"));
                if !is_stream {
                    continue;
                }
                let mut last = response.headers_at_ms;
                let mut largest_gap = 0;
                let mut first_event = None;
                let mut events = 0u64;
                for frame in &response.frames {
                    largest_gap = largest_gap.max(frame.at_ms.saturating_sub(last));
                    last = last.max(frame.at_ms);
                    if matches!(frame.kind, FrameKind::Event { .. }) {
                        events += 1;
                        first_event.get_or_insert(frame.at_ms);
                    }
                }
                largest_gap = largest_gap.max(response.end_at_ms.saturating_sub(last));
                let lasted_ms = response.end_at_ms.saturating_sub(response.headers_at_ms);
                let path = exchange
                    .request
                    .url
                    .split_once("://")
                    .map_or(exchange.request.url.as_str(), |(_, rest)| {
                        rest.find('/').map_or("/", |i| &rest[i..])
                    });
                streams.push(StreamMetrics {
                    case: case.to_string(),
                    step: step.step.clone(),
                    path: path.split('?').next().unwrap_or(path).to_string(),
                    time_to_first_byte_ms: response.headers_at_ms,
                    time_to_first_event_ms: first_event,
                    largest_gap_ms: largest_gap,
                    event_frames: events,
                    frames_per_s: (lasted_ms > 0)
                        .then(|| (events as f64 * 1000.0 / lasted_ms as f64 * 10.0).round() / 10.0),
                });
            }
        }
    }
    let mut slowest = streams.clone();
    slowest.sort_by(|a, b| {
        b.time_to_first_event_ms
            .unwrap_or(0)
            .cmp(&a.time_to_first_event_ms.unwrap_or(0))
            .then(b.largest_gap_ms.cmp(&a.largest_gap_ms))
    });
    slowest.truncate(SLOWEST_STREAMS);
    StreamingMetrics { streams, slowest }
}

fn optional(value: Option<u64>) -> String {
    value.map_or("–".into(), |v| v.to_string())
}

fn rate(value: Option<f64>) -> String {
    value.map_or("–".into(), |v| format!("{v:.1}"))
}

/// The Markdown section (empty when the run read no stream).
pub fn to_markdown(metrics: &StreamingMetrics) -> String {
    if metrics.streams.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "### Streaming\n\n{} SSE stream(s). Slowest (time to the first event, then the largest gap):\n\n\
         | case | step | path | first byte ms | first event ms | largest gap ms | events | frames/s |\n\
         |---|---|---|---:|---:|---:|---:|---:|\n",
        metrics.streams.len()
    );
    for s in &metrics.slowest {
        let _ = writeln!(
            out,
            "| `{}` | {} | `{}` | {} | {} | {} | {} | {} |",
            s.case,
            s.step.replace('|', "\\|"),
            s.path,
            s.time_to_first_byte_ms,
            optional(s.time_to_first_event_ms),
            s.largest_gap_ms,
            s.event_frames,
            rate(s.frames_per_s)
        );
    }
    out.push('\n');
    out
}

/// The HTML section (empty when the run read no stream); `esc` escapes text.
pub fn to_html(metrics: &StreamingMetrics, esc: &dyn Fn(&str) -> String) -> String {
    if metrics.streams.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "<section id=\"streaming\">\n<h2>Streaming ({} streams)</h2>\n<p>The slowest streams: \
         longest time to the first event, then the largest gap (milliseconds from the request).</p>\n\
         <table><tr><th>case</th><th>step</th><th>path</th><th>first byte</th><th>first event</th>\
         <th>largest gap</th><th>events</th><th>frames/s</th></tr>\n",
        metrics.streams.len()
    );
    for s in &metrics.slowest {
        let _ = writeln!(
            out,
            "<tr><td><code>{}</code></td><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&s.case),
            esc(&s.step),
            esc(&s.path),
            s.time_to_first_byte_ms,
            optional(s.time_to_first_event_ms),
            s.largest_gap_ms,
            s.event_frames,
            rate(s.frames_per_s)
        );
    }
    out.push_str("</table>\n</section>\n");
    out
}
