//! One subscriber: reads a log's SSE stream to its end, forcing disconnects where the plan
//! says and resuming with `Last-Event-ID`, waiting out 429 answers (and, on surface W, 503
//! answers with `Retry-After`: the host at capacity) as they ask, and recording every event it
//! got with its arrival time.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use futures::StreamExt;
use serde_json::Value;
use tokio::sync::Semaphore;
use tokio::time::Instant;

use super::plan::{LoadPlan, LoadSurface};
use super::workload::{at_capacity, is_terminal_type, retry_after};
use crate::host::SecretHeader;
use crate::sse::{SseLimits, SseTokenizer};
use crate::transcript::FrameKind;

/// One event as a subscriber got it.
#[derive(Debug, Clone)]
pub(crate) struct Delivery {
    /// Its sequence.
    pub sequence: u64,
    /// The connection (0-based) it arrived on.
    pub connection: u32,
    /// Arrival, ms since the run started.
    pub at_ms: f64,
    /// Arrival minus the event's own timestamp, when it carries one.
    pub latency_ms: Option<f64>,
    /// The frame's `event:` name.
    pub frame_event: Option<String>,
}

/// Everything one subscriber saw.
#[derive(Debug, Clone, Default)]
pub(crate) struct SubscriberRecord {
    /// The log's index in the run.
    pub log: usize,
    /// The subscriber's index on its log.
    pub subscriber: usize,
    /// Events in arrival order.
    pub deliveries: Vec<Delivery>,
    /// Connections answered 200.
    pub connections: u32,
    /// Disconnects forced by the plan.
    pub forced_disconnects: u32,
    /// Requests carrying `Last-Event-ID`.
    pub resumptions: u32,
    /// 429 answers with `Retry-After`.
    pub rate_limited: u32,
    /// 429 answers without it.
    pub rate_limited_without_retry_after: u32,
    /// Surface W: 503 answers with `Retry-After` (the host at capacity).
    pub at_capacity: u32,
    /// Connection and read errors.
    pub errors: Vec<String>,
    /// First response headers, ms after the first request.
    pub time_to_first_byte_ms: Option<f64>,
    /// First event frame, ms after the first request.
    pub time_to_first_event_ms: Option<f64>,
    /// Largest gap between frames (or headers and the first frame) of one connection.
    pub largest_gap_ms: f64,
    /// Gaps longer than the keep-alive window: `(gap ms, last sequence before it)`.
    pub keepalive_gaps: Vec<(f64, Option<u64>)>,
    /// Time spent reading, ms.
    pub reading_ms: f64,
    /// The stream ended as the protocol says (terminal event, then the host closed; or the
    /// host had nothing more after a resumption).
    pub completed: bool,
    /// The stream stayed open past the grace after its terminal event.
    pub open_after_terminal: bool,
    /// Why it stopped early, when it did.
    pub gave_up: Option<String>,
}

/// What a subscriber needs, shared by all of them.
pub(crate) struct SubscriberContext {
    pub client: reqwest::Client,
    pub headers: Vec<SecretHeader>,
    pub plan: LoadPlan,
    pub run_started: Instant,
    pub deadline: Instant,
    pub connect_permits: Arc<Semaphore>,
    pub delivered: Arc<AtomicU64>,
}

/// The sequences a frame carries and whether it is the terminal one: a batch's array of
/// documents, one document's `sequence`, else the frame's `id:`.
fn frame_sequences(
    surface: LoadSurface,
    id: Option<&str>,
    json: Option<&Value>,
) -> (Vec<(u64, Option<f64>)>, bool) {
    let now = SystemTime::now();
    let latency = |doc: &Value| -> Option<f64> {
        let field = match surface {
            LoadSurface::Openwop => "timestamp",
            LoadSurface::Execution => "time",
        };
        let stamp = chrono::DateTime::parse_from_rfc3339(doc.get(field)?.as_str()?).ok()?;
        let stamp: SystemTime = stamp.with_timezone(&chrono::Utc).into();
        Some(match now.duration_since(stamp) {
            Ok(d) => d.as_secs_f64() * 1000.0,
            Err(e) => -(e.duration().as_secs_f64() * 1000.0),
        })
    };
    let terminal_doc = |doc: &Value| {
        doc.get("type")
            .and_then(Value::as_str)
            .is_some_and(|t| is_terminal_type(surface, t))
            || (surface == LoadSurface::Openwop
                && doc.get("runId").is_some()
                && doc.get("sequence").is_none()
                && doc
                    .get("status")
                    .and_then(Value::as_str)
                    .is_some_and(|s| matches!(s, "completed" | "failed" | "cancelled")))
    };
    match json {
        Some(Value::Array(docs)) => {
            let sequences = docs
                .iter()
                .filter_map(|d| Some((d.get("sequence")?.as_u64()?, latency(d))))
                .collect();
            (sequences, docs.iter().any(terminal_doc))
        }
        Some(doc) if doc.get("sequence").and_then(Value::as_u64).is_some() => (
            vec![(doc["sequence"].as_u64().unwrap_or_default(), latency(doc))],
            terminal_doc(doc),
        ),
        other => {
            let sequence = id.and_then(|i| i.trim().parse::<u64>().ok());
            (
                sequence.map(|s| (s, None)).into_iter().collect(),
                other.is_some_and(terminal_doc),
            )
        }
    }
}

/// Reads `url` as subscriber `subscriber` of log `log`.
pub(crate) async fn subscribe(
    context: Arc<SubscriberContext>,
    log: usize,
    subscriber: usize,
    url: String,
) -> SubscriberRecord {
    let plan = &context.plan;
    let mut record = SubscriberRecord {
        log,
        subscriber,
        ..SubscriberRecord::default()
    };
    let started = Instant::now();
    let since = |at: Instant| (at - started).as_secs_f64() * 1000.0;
    let mut last_id: Option<String> = None;
    let mut saw_terminal = false;
    let mut connection: u32 = 0;
    let mut attempts: u32 = 0;
    'connections: while attempts < plan.max_connections.saturating_mul(4) {
        attempts += 1;
        let mut request = context
            .client
            .get(&url)
            .header(reqwest::header::ACCEPT, "text/event-stream");
        for header in &context.headers {
            request = request.header(header.name.as_str(), header.value.as_str());
        }
        if let Some(id) = &last_id {
            request = request.header("last-event-id", id.as_str());
            record.resumptions += 1;
        }
        let permit = context.connect_permits.acquire().await;
        let sent = tokio::time::timeout_at(context.deadline, request.send()).await;
        drop(permit);
        let response = match sent {
            Err(_) => {
                record.gave_up = Some("the time limit passed while connecting".into());
                break;
            }
            Ok(Err(error)) => {
                record.errors.push(format!("connect: {error}"));
                let backoff = Duration::from_millis(50 << attempts.min(6));
                tokio::time::sleep_until((Instant::now() + backoff).min(context.deadline)).await;
                continue;
            }
            Ok(Ok(response)) => response,
        };
        // A correct answer asking to be asked again: wait as long as the host asks, then try
        // again (a 429; on surface W a 503 with `Retry-After`, the host at capacity, as `run`
        // reads it).
        let wait = if response.status() == reqwest::StatusCode::TOO_MANY_REQUESTS {
            Some(match retry_after(&response) {
                Some(wait) => {
                    record.rate_limited += 1;
                    wait
                }
                None => {
                    record.rate_limited_without_retry_after += 1;
                    Duration::from_secs(1)
                }
            })
        } else {
            let wait = at_capacity(plan.surface, &response);
            record.at_capacity += u32::from(wait.is_some());
            wait
        };
        if let Some(wait) = wait {
            tokio::time::sleep_until((Instant::now() + wait).min(context.deadline)).await;
            continue;
        }
        if response.status() != reqwest::StatusCode::OK {
            record
                .errors
                .push(format!("the stream answered {}", response.status()));
            record.gave_up = Some(format!("the stream answered {}", response.status()));
            break;
        }
        record.connections += 1;
        let opened = Instant::now();
        record.time_to_first_byte_ms.get_or_insert(since(opened));
        let disconnect_at = plan.disconnect_after(log, subscriber, connection);
        let this_connection = connection;
        connection += 1;
        let mut tokenizer = SseTokenizer::new(SseLimits::default());
        let mut body = response.bytes_stream();
        let mut last_activity = opened;
        let mut frames_here: u32 = 0;
        let mut last_sequence: Option<u64> = record.deliveries.last().map(|d| d.sequence);
        loop {
            let next = if saw_terminal {
                match tokio::time::timeout(Duration::from_millis(plan.close_grace_ms), body.next())
                    .await
                {
                    Ok(next) => next,
                    Err(_) => {
                        record.open_after_terminal = true;
                        record.completed = true;
                        break 'connections;
                    }
                }
            } else {
                match tokio::time::timeout_at(context.deadline, body.next()).await {
                    Ok(next) => next,
                    Err(_) => {
                        record.gave_up = Some("the time limit passed while reading".into());
                        break 'connections;
                    }
                }
            };
            let chunk = match next {
                None => break,
                Some(Err(error)) => {
                    record.errors.push(format!("read: {error}"));
                    break;
                }
                Some(Ok(chunk)) => chunk,
            };
            let now = Instant::now();
            let at_ms = (now - context.run_started).as_secs_f64() * 1000.0;
            let frames = match tokenizer.feed(&chunk, 0) {
                Ok(frames) => frames,
                Err(error) => {
                    record.errors.push(format!("read: {error}"));
                    break;
                }
            };
            for frame in frames {
                let gap = (now - last_activity).as_secs_f64() * 1000.0;
                last_activity = now;
                record.largest_gap_ms = record.largest_gap_ms.max(gap);
                if gap > plan.keepalive_window_ms as f64 {
                    record.keepalive_gaps.push((gap, last_sequence));
                }
                let FrameKind::Event {
                    id, event, json, ..
                } = frame.kind
                else {
                    continue;
                };
                let (sequences, terminal) =
                    frame_sequences(plan.surface, id.as_deref(), json.as_ref());
                if sequences.is_empty() && id.is_none() {
                    continue;
                }
                record.time_to_first_event_ms.get_or_insert(since(now));
                for (sequence, latency_ms) in &sequences {
                    record.deliveries.push(Delivery {
                        sequence: *sequence,
                        connection: this_connection,
                        at_ms,
                        latency_ms: *latency_ms,
                        frame_event: event.clone(),
                    });
                    last_sequence = Some(*sequence);
                }
                context
                    .delivered
                    .fetch_add(sequences.len() as u64, Ordering::Relaxed);
                last_id = id
                    .filter(|i| !i.is_empty())
                    .or_else(|| last_sequence.map(|s| s.to_string()))
                    .or(last_id);
                saw_terminal |= terminal;
                frames_here += 1;
                if !saw_terminal && disconnect_at == Some(frames_here) {
                    record.forced_disconnects += 1;
                    continue 'connections;
                }
            }
        }
        if saw_terminal || (frames_here == 0 && this_connection > 0) {
            // The terminal event and then the close; or, resumed, nothing more to say.
            record.completed = true;
            break;
        }
        if record.connections >= plan.max_connections {
            record.gave_up = Some(format!(
                "the stream closed {} times before its terminal event",
                record.connections
            ));
            break;
        }
    }
    if !record.completed && record.gave_up.is_none() {
        record.gave_up = Some(format!("gave up after {attempts} attempts"));
    }
    record.reading_ms = since(Instant::now());
    record
}
