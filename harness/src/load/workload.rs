//! The logs a load run reads: creating them on the host (a fixture run on W, an execution
//! streamed by a scripted fake provider on X) and reading each one whole once it has ended.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::time::Instant;

use super::plan::{LoadPlan, LoadSurface};
use crate::case::{CaseSurface, Principal};
use crate::host::{SecretHeader, Target};
use crate::mock_provider_seat::MockProviderSeat;
use crate::template::RunIdPathEncoding;

/// One log the host created.
#[derive(Debug, Clone)]
pub(crate) struct CreatedLog {
    /// The host's id (run id or execution id).
    pub id: String,
    /// The SSE stream URL subscribers read (with the stream-mode query).
    pub stream_url: String,
}

/// One event of a log's full read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LogEvent {
    /// Its sequence.
    pub sequence: u64,
    /// Its type.
    pub event_type: String,
}

/// A log read whole after its end.
#[derive(Debug, Clone)]
pub(crate) struct FullRead {
    /// The events, in log order.
    pub events: Vec<LogEvent>,
    /// What was wrong with the read itself (a sequence repeated or going back).
    pub problem: Option<String>,
}

impl FullRead {
    /// The log's terminal event (the first of `surface`'s terminal types), when it has one.
    pub(crate) fn terminal(&self, surface: LoadSurface) -> Option<&LogEvent> {
        self.events
            .iter()
            .find(|e| is_terminal_type(surface, &e.event_type))
    }
}

/// The terminal event types of each surface.
pub(crate) fn is_terminal_type(surface: LoadSurface, event_type: &str) -> bool {
    let surface = match surface {
        LoadSurface::Execution => CaseSurface::Execution,
        LoadSurface::Openwop => CaseSurface::Openwop,
    };
    crate::checks::is_terminal(surface, Some(event_type))
}

/// The headers of every request: the target's, and on W principal `a` and the
/// `OpenWOP-Version` negotiated from discovery (the probe's fact), as every case's request.
pub(crate) fn request_headers(target: &Target, surface: LoadSurface) -> Vec<SecretHeader> {
    let mut headers = target.headers.clone();
    if surface == LoadSurface::Openwop {
        headers.extend(target.principal_headers(Principal::A));
        if let Some(version) = crate::probe::negotiated_version(&target.facts) {
            headers.push(SecretHeader {
                name: crate::probe::VERSION_HEADER.into(),
                value: version.to_string(),
            });
        }
    }
    headers
}

fn with_headers(
    mut request: reqwest::RequestBuilder,
    headers: &[SecretHeader],
) -> reqwest::RequestBuilder {
    for header in headers {
        request = request.header(header.name.as_str(), header.value.as_str());
    }
    request
}

/// A run id in a path, in the encoding the host reads (the probe's fact; `~2F` without one).
fn path_id(target: &Target, id: &str) -> String {
    RunIdPathEncoding::of(&target.facts).encode(id)
}

/// The seconds of a `Retry-After` header (delta-seconds only; an HTTP date reads as 1 s).
pub(crate) fn retry_after(response: &reqwest::Response) -> Option<Duration> {
    let value = response.headers().get(reqwest::header::RETRY_AFTER)?;
    let text = value.to_str().ok()?.trim();
    Some(Duration::from_secs(
        text.parse::<u64>().unwrap_or(1).min(60),
    ))
}

/// Surface W: the wait a `503` with `Retry-After` asks for (the host at capacity, which upstream's
/// clients retry, as `conformance run` does); `None` for any other answer, and on surface X
/// (a provider's 503 may reach an execution host's answer).
pub(crate) fn at_capacity(surface: LoadSurface, response: &reqwest::Response) -> Option<Duration> {
    (surface == LoadSurface::Openwop
        && response.status() == reqwest::StatusCode::SERVICE_UNAVAILABLE)
        .then(|| retry_after(response))
        .flatten()
}

/// Sends a request, waiting out 429 answers (and, on surface W, 503 answers with
/// `Retry-After`) as they ask, at most 10 times.
async fn send_with_backoff(
    surface: LoadSurface,
    build: impl Fn() -> reqwest::RequestBuilder,
    deadline: Instant,
) -> Result<reqwest::Response, String> {
    for _ in 0..10 {
        let response = tokio::time::timeout_at(deadline, build().send())
            .await
            .map_err(|_| "the time limit passed".to_string())?
            .map_err(|e| format!("request failed: {e}"))?;
        let wait = if response.status() == reqwest::StatusCode::TOO_MANY_REQUESTS {
            Some(retry_after(&response).unwrap_or(Duration::from_secs(1)))
        } else {
            at_capacity(surface, &response)
        };
        if let Some(wait) = wait {
            tokio::time::sleep_until((Instant::now() + wait).min(deadline)).await;
            continue;
        }
        return Ok(response);
    }
    Err("still refused (429, or 503 with Retry-After) after 10 attempts".into())
}

/// Why a creation request gave no log: the host's status when it answered, and in words.
#[derive(Debug)]
struct NotCreated {
    status: Option<reqwest::StatusCode>,
    message: String,
}

impl From<String> for NotCreated {
    fn from(message: String) -> Self {
        NotCreated {
            status: None,
            message,
        }
    }
}

/// POSTs a creation body to `path` (backing off as [`send_with_backoff`] does) and reads the created log's id from
/// the answer's `id_field`; an error names the path and status when there is none.
async fn post_creation(
    client: &reqwest::Client,
    target: &Target,
    surface: LoadSurface,
    path: &str,
    body: &Value,
    id_field: &str,
    deadline: Instant,
) -> Result<String, NotCreated> {
    let url = format!("{}{path}", target.base_url);
    let headers = request_headers(target, surface);
    let response = send_with_backoff(
        surface,
        || with_headers(client.post(&url), &headers).json(body),
        deadline,
    )
    .await?;
    let status = response.status();
    let refused = |message: String| NotCreated {
        status: Some(status),
        message,
    };
    let doc: Value = response
        .json()
        .await
        .map_err(|e| refused(format!("POST {path} answered {status} without JSON: {e}")))?;
    doc.get(id_field)
        .and_then(Value::as_str)
        .filter(|_| status.is_success())
        .map(str::to_string)
        .ok_or_else(|| {
            refused(format!(
                "POST {path} answered {status} without a `{id_field}`"
            ))
        })
}

/// Creates log number `index` on the host.
pub(crate) async fn create(
    client: &reqwest::Client,
    target: &Target,
    plan: &LoadPlan,
    index: usize,
    run_tag: &str,
    deadline: Instant,
    seat: &mut MockProviderSeat,
) -> Result<CreatedLog, String> {
    let tokens: Vec<String> = (0..plan.events).map(|i| format!("t{i} ")).collect();
    match plan.surface {
        LoadSurface::Openwop => {
            // Upstream's fixture, driven as upstream's suite drives it (`configurable.mockProvider`),
            // or at v2's schema seat for a host that reads only that (`seat`: the target's fact,
            // or what an earlier creation found).
            let mut body = json!({
                "workflowId": "conformance-stream-text",
                "configurable": {"mockProvider": {"id": "stream-text", "config": {
                    "tokens": tokens,
                    "delayMsPerToken": plan.event_interval_ms,
                    "finishReason": "stop",
                    "usage": {"promptTokens": 1, "completionTokens": plan.events, "totalTokens": plan.events + 1}
                }}}
            });
            let post = |body: Value| async move {
                post_creation(
                    client,
                    target,
                    LoadSurface::Openwop,
                    "/runs",
                    &body,
                    "runId",
                    deadline,
                )
                .await
            };
            let mut at_seat = body.clone();
            seat.write(&mut at_seat);
            let id = match post(at_seat).await {
                Err(NotCreated {
                    status: Some(status),
                    ..
                }) if *seat == MockProviderSeat::Suite
                    && MockProviderSeat::refuses_the_body(status.as_u16()) =>
                {
                    MockProviderSeat::ConfigurableAi.write(&mut body);
                    let id = post(body).await.map_err(|e| e.message)?;
                    *seat = MockProviderSeat::ConfigurableAi;
                    id
                }
                other => other.map_err(|e| e.message)?,
            };
            let mut query = Vec::new();
            if let Some(mode) = &plan.stream_mode {
                query.push(format!("streamMode={mode}"));
            }
            if let Some(buffer) = plan.buffer_ms {
                query.push(format!("bufferMs={buffer}"));
            }
            let query = if query.is_empty() {
                String::new()
            } else {
                format!("?{}", query.join("&"))
            };
            Ok(CreatedLog {
                stream_url: format!(
                    "{}/runs/{}/events{query}",
                    target.base_url,
                    path_id(target, &id)
                ),
                id,
            })
        }
        LoadSurface::Execution => {
            let upstream = target.upstream.as_ref().ok_or(
                "execution load needs the fake providers (built-in target, or --providers-listen)",
            )?;
            let provider = target
                .providers
                .get(&crate::upstream::role::Role::TextPrimary)
                .ok_or("no provider id for the `text-primary` role")?;
            let chunks: Vec<Value> = tokens
                .iter()
                .map(|t| json!({"kind": "text", "delta": t}))
                .collect();
            let script = json!({"calls": {"text-primary": [{
                "kind": "completion",
                "chunks": chunks,
                "timing": {"delay_between_frames_ms": plan.event_interval_ms}
            }]}});
            let script_id = format!("load.{run_tag}.{index}");
            let (marker, _) = upstream.register(&script_id, &script)?;
            let body = json!({
                "ability": "text-generation",
                "input": [{"type": "text", "text": format!("{marker} load")}],
                "routing": {"provider_order": [provider]}
            });
            let id = post_creation(
                client,
                target,
                LoadSurface::Execution,
                "/v1/executions",
                &body,
                "execution_id",
                deadline,
            )
            .await
            .map_err(|e| e.message)?;
            Ok(CreatedLog {
                stream_url: format!("{}/v1/executions/{id}/events", target.base_url),
                id,
            })
        }
    }
}

/// Reads a log whole once it has ended: W through poll (every event, whatever the stream
/// mode), X through a stream from the start once the snapshot says the execution ended.
pub(crate) async fn read_whole(
    client: &reqwest::Client,
    target: &Target,
    surface: LoadSurface,
    log: &CreatedLog,
    deadline: Instant,
) -> Result<FullRead, String> {
    let headers = request_headers(target, surface);
    let events = match surface {
        LoadSurface::Openwop => read_by_poll(client, target, &headers, log, deadline).await?,
        LoadSurface::Execution => read_by_stream(client, target, &headers, log, deadline).await?,
    };
    let problem = log_order_problem(&events);
    Ok(FullRead { events, problem })
}

/// What is wrong with a full read's order, if anything: each event's sequence must be larger
/// than the one before it. Gaps are not a problem: the execution protocol asks for a monotonic
/// sequence (seed 000: "an execution-scoped monotonic sequence"), and the run events chapter
/// expects cursors "no event carries" (seed 002), so neither log has to be numbered
/// `first, first + 1, …`.
fn log_order_problem(events: &[LogEvent]) -> Option<String> {
    events.windows(2).enumerate().find_map(|(i, pair)| {
        (pair[1].sequence <= pair[0].sequence).then(|| {
            format!(
                "the full read's event #{} has sequence {} after sequence {}: the log itself repeats or goes back",
                i + 1,
                pair[1].sequence,
                pair[0].sequence
            )
        })
    })
}

fn doc_event(doc: &Value) -> Option<LogEvent> {
    Some(LogEvent {
        sequence: doc.get("sequence")?.as_u64()?,
        event_type: doc.get("type")?.as_str()?.to_string(),
    })
}

async fn read_by_poll(
    client: &reqwest::Client,
    target: &Target,
    headers: &[SecretHeader],
    log: &CreatedLog,
    deadline: Instant,
) -> Result<Vec<LogEvent>, String> {
    let mut events: Vec<LogEvent> = Vec::new();
    loop {
        let mut url = format!(
            "{}/runs/{}/events/poll?timeout=1",
            target.base_url,
            path_id(target, &log.id)
        );
        if let Some(last) = events.last() {
            url.push_str(&format!("&afterSequence={}", last.sequence));
        }
        let response = send_with_backoff(
            LoadSurface::Openwop,
            || with_headers(client.get(&url), headers),
            deadline,
        )
        .await?;
        let status = response.status();
        if !status.is_success() {
            return Err(format!("poll answered {status}"));
        }
        let doc: Value = response
            .json()
            .await
            .map_err(|e| format!("poll answered without JSON: {e}"))?;
        let page: Vec<LogEvent> = doc
            .get("events")
            .and_then(Value::as_array)
            .ok_or("poll answered without an events array")?
            .iter()
            .map(|d| doc_event(d).ok_or("a polled event without sequence or type"))
            .collect::<Result<_, _>>()?;
        let terminal = doc.get("isTerminal").and_then(Value::as_bool) == Some(true);
        let empty = page.is_empty();
        events.extend(page);
        if terminal && empty {
            return Ok(events);
        }
        if Instant::now() >= deadline {
            return Err("the time limit passed while polling the log".into());
        }
    }
}

async fn read_by_stream(
    client: &reqwest::Client,
    target: &Target,
    headers: &[SecretHeader],
    log: &CreatedLog,
    deadline: Instant,
) -> Result<Vec<LogEvent>, String> {
    let snapshot_url = format!("{}/v1/executions/{}", target.base_url, log.id);
    loop {
        let response = send_with_backoff(
            LoadSurface::Execution,
            || with_headers(client.get(&snapshot_url), headers),
            deadline,
        )
        .await?;
        let doc: Value = response
            .json()
            .await
            .map_err(|e| format!("the snapshot is not JSON: {e}"))?;
        let status = doc.get("status").and_then(Value::as_str).unwrap_or("");
        if matches!(status, "succeeded" | "failed" | "cancelled") {
            break;
        }
        if Instant::now() >= deadline {
            return Err("the time limit passed before the execution ended".into());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let response = send_with_backoff(
        LoadSurface::Execution,
        || with_headers(client.get(&log.stream_url), headers),
        deadline,
    )
    .await?;
    if !response.status().is_success() {
        return Err(format!("the full read answered {}", response.status()));
    }
    let body = tokio::time::timeout_at(deadline, response.bytes())
        .await
        .map_err(|_| "the full read did not end before the time limit".to_string())?
        .map_err(|e| format!("the full read failed: {e}"))?;
    let mut tokenizer = crate::sse::SseTokenizer::new(crate::sse::SseLimits {
        max_frame_bytes: 1024 * 1024,
        max_line_bytes: 1024 * 1024,
    });
    let frames = tokenizer
        .feed(&body, 0)
        .map_err(|e| format!("the full read: {e}"))?;
    Ok(frames
        .iter()
        .filter_map(|f| match &f.kind {
            crate::transcript::FrameKind::Event {
                json: Some(json), ..
            } => doc_event(json),
            _ => None,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(sequences: &[u64]) -> Vec<LogEvent> {
        sequences
            .iter()
            .map(|&sequence| LogEvent {
                sequence,
                event_type: "e".into(),
            })
            .collect()
    }

    #[test]
    fn a_log_may_start_anywhere_and_skip_numbers() {
        for sequences in [
            &[][..],
            &[0],
            &[1, 2, 3],
            &[0, 1, 2],
            &[2, 4, 6, 8],
            &[5, 90],
        ] {
            assert_eq!(log_order_problem(&events(sequences)), None, "{sequences:?}");
        }
    }

    #[test]
    fn a_repeat_or_a_step_back_is_named() {
        let repeat = log_order_problem(&events(&[2, 4, 4, 6])).expect("a repeat");
        assert!(
            repeat.contains("#2 has sequence 4 after sequence 4"),
            "{repeat}"
        );
        let back = log_order_problem(&events(&[1, 3, 2])).expect("a step back");
        assert!(
            back.contains("#2 has sequence 2 after sequence 3"),
            "{back}"
        );
    }
}
