//! One HTTP exchange, recorded: send, read the headers, read the body whole or as an SSE stream
//! until a stop condition, within a deadline and size bounds. Whatever the host sends, this
//! returns an [`Exchange`]; it never fails and never panics on host input.

use std::num::NonZeroU32;
use std::path::PathBuf;
use std::time::Duration;

use bytes::Bytes;
use tokio::time::Instant;

use super::run_ends::{CloseAfterRunEnd, EndWitness, RunLookout};
use crate::checks::events::{FrameContent, read_frame};
use crate::event_selector::EventSelector;
use crate::sse::{SseLimits, SseTokenizer};
use crate::transcript::{
    BodyEnd, Exchange, FrameKind, Header, RequestRecord, ResponseRecord, RunEndSeen, RunEndWitness,
    TransportError, redact_header,
};

/// The largest poll body a stream's lookout reads (a run's poll answer; a larger one says
/// nothing to it).
const LOOKOUT_BODY_BYTES: usize = 8 * 1024 * 1024;

/// How to reach hosts.
#[derive(Debug, Clone, Default)]
pub struct ClientOptions {
    /// An explicit proxy URL (the system proxy is never used implicitly).
    pub proxy: Option<String>,
    /// An extra CA certificate (PEM) to trust.
    pub ca_cert: Option<PathBuf>,
    /// Accept invalid TLS certificates.
    pub insecure: bool,
    /// At most this many requests a minute to the host, evenly spaced: the harness waits for
    /// its turn before it sends any request (a case's, or a stream's lookout poll), whatever
    /// case sends it. For a host whose request rate limit the operator knows; `None`: unpaced.
    pub max_requests_per_minute: Option<NonZeroU32>,
}

/// Building the HTTP client failed (a configuration error).
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The CA certificate could not be read or parsed.
    #[error("failed to load the CA certificate `{path}`: {message}")]
    CaCert {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// The proxy URL is invalid.
    #[error("invalid proxy URL: {0}")]
    Proxy(String),
    /// reqwest refused the configuration.
    #[error("failed to build the HTTP client: {0}")]
    Build(String),
}

/// Size bounds on what a host may send in one exchange. Past a read bound the harness stops
/// reading (`BodyEnd::TooLarge`, judged); a body past its bound keeps only an excerpt (its head
/// and tail, see [`crate::excerpt`]) since no check can read a cut body as JSON. A stream keeps
/// its first frames (the kept bound) and is folded past them as it arrives
/// ([`crate::stream_fold`]) up to its read bound.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Largest non-stream body read.
    pub max_body_bytes: usize,
    /// Most bytes of a stream's frames kept for the checks; later frames are folded.
    pub max_stream_bytes: usize,
    /// Most frames (events and comments) of a stream kept for the checks; later frames are
    /// folded.
    pub max_stream_frames: usize,
    /// Largest stream read in total (kept and folded).
    pub max_stream_read_bytes: usize,
    /// Most frames read from one stream in total (kept and folded).
    pub max_stream_read_frames: usize,
    /// SSE frame and line bounds.
    pub sse: SseLimits,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_body_bytes: 8 * 1024 * 1024,
            max_stream_bytes: 16 * 1024 * 1024,
            max_stream_frames: 20_000,
            max_stream_read_bytes: 64 * 1024 * 1024,
            max_stream_read_frames: 100_000,
            sse: SseLimits::default(),
        }
    }
}

/// A rough size of one frame held in memory (its text, its parsed JSON counted as the text
/// again).
fn frame_bytes(frame: &crate::transcript::FrameRecord) -> usize {
    match &frame.kind {
        FrameKind::Event { data, json, .. } => 96 + data.len() * if json.is_some() { 2 } else { 1 },
        FrameKind::Comment { text } => 64 + text.len(),
    }
}

/// When a stream read stops (besides the server closing it and the deadline).
#[derive(Debug, Clone, Default)]
pub struct StopCondition {
    /// After this many event frames.
    pub frames: Option<u64>,
    /// After a frame of the event this selector names (`type` or `type@member=value`, expanded).
    pub event: Option<String>,
    /// After reading this long.
    pub duration: Option<Duration>,
    /// After an event this selector names (`.0`) carrying, at member `.1` (of the event or its
    /// payload), a value an earlier such event carried: the second tick of one heartbeat is
    /// `("heartbeat.evaluated", "heartbeatId")`.
    pub repeated: Option<(String, String)>,
    /// Surface W: once the run's terminal event (or a `values` snapshot of the run in a
    /// terminal status) arrived, on this stream or on another of the same run in the case, or
    /// the run's poll said the run is terminal (the lookout of a stream read to its close), the
    /// host owes the stream's close within one keep-alive interval. The read goes on until the
    /// server closes it, at most that long after the end (or after the request, when the end
    /// came before it), past the window and the deadline, so a stream the host holds open is
    /// judged (still open: the harness stopped reading) and a close within it is seen.
    pub(crate) close_after_terminal: Option<CloseAfterRunEnd>,
}

/// How to read the body.
#[derive(Debug, Clone)]
pub enum ReadMode {
    /// Read it whole.
    Whole,
    /// Tokenise it as SSE (when the status is 2xx) until a stop condition.
    Stream(StopCondition),
}

/// A request ready to send: real header values (never recorded as is).
#[derive(Debug, Clone)]
pub struct PreparedRequest {
    /// Method.
    pub method: reqwest::Method,
    /// Absolute URL.
    pub url: String,
    /// Headers, with real values.
    pub headers: Vec<(String, String)>,
    /// Body.
    pub body: Option<Vec<u8>>,
}

/// The HTTP driver: the client of the probe, and of every case its own
/// ([`HttpDriver::with_own_connections`]).
#[derive(Debug, Clone)]
pub struct HttpDriver {
    client: reqwest::Client,
    config: ClientConfig,
    limits: Limits,
    /// Looked for in the stream frames folded past the kept ones (they are not kept, so the
    /// case's canary check cannot look afterwards).
    canary: Option<std::sync::Arc<str>>,
    /// The pace every request keeps ([`ClientOptions::max_requests_per_minute`]), shared by
    /// every copy of the driver.
    pace: Option<std::sync::Arc<Pace>>,
}

/// Requests spaced evenly: one every minute divided by the rate, with no burst, so no minute
/// (a host's fixed window or its sliding one) holds more than the rate.
type Pace = governor::DefaultDirectRateLimiter;

/// What every client of a driver is built from, read once from [`ClientOptions`].
#[derive(Debug, Clone)]
struct ClientConfig {
    proxy: Option<reqwest::Proxy>,
    ca_cert: Option<reqwest::Certificate>,
    insecure: bool,
}

impl ClientConfig {
    fn read(options: &ClientOptions) -> Result<Self, ClientError> {
        let proxy = match &options.proxy {
            None => None,
            Some(proxy) => Some(
                reqwest::Proxy::all(proxy)
                    .map_err(|e| ClientError::Proxy(e.without_url().to_string()))?,
            ),
        };
        let ca_cert = match &options.ca_cert {
            None => None,
            Some(path) => {
                let pem = std::fs::read(path).map_err(|e| ClientError::CaCert {
                    path: path.clone(),
                    message: e.to_string(),
                })?;
                Some(
                    reqwest::Certificate::from_pem(&pem).map_err(|e| ClientError::CaCert {
                        path: path.clone(),
                        message: e.to_string(),
                    })?,
                )
            }
        };
        Ok(ClientConfig {
            proxy,
            ca_cert,
            insecure: options.insecure,
        })
    }

    /// A client with a connection pool of its own. Loopback targets never go through a system
    /// proxy; the proxy is explicit. Redirects are not followed (a redirect is a response to
    /// judge).
    fn build(&self) -> Result<reqwest::Client, ClientError> {
        let mut builder = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .pool_idle_timeout(Duration::from_secs(30))
            .tcp_nodelay(true);
        if let Some(proxy) = &self.proxy {
            builder = builder.proxy(proxy.clone());
        }
        if let Some(cert) = &self.ca_cert {
            builder = builder.add_root_certificate(cert.clone());
        }
        if self.insecure {
            builder = builder.danger_accept_invalid_certs(true);
        }
        builder
            .build()
            .map_err(|e| ClientError::Build(e.to_string()))
    }
}

impl HttpDriver {
    /// Builds the driver.
    pub fn new(options: &ClientOptions, limits: Limits) -> Result<Self, ClientError> {
        let config = ClientConfig::read(options)?;
        Ok(HttpDriver {
            client: config.build()?,
            config,
            limits,
            canary: None,
            pace: options.max_requests_per_minute.map(|rate| {
                let quota = governor::Quota::per_minute(rate).allow_burst(NonZeroU32::MIN);
                std::sync::Arc::new(governor::RateLimiter::direct(quota))
            }),
        })
    }

    /// Waits for this driver's turn to send a request ([`ClientOptions::max_requests_per_minute`])
    /// until `deadline` at most: a request whose turn comes later is sent then, and the case's
    /// budget judges what it gets.
    async fn take_turn(&self, deadline: Instant) {
        if let Some(pace) = &self.pace {
            let _ = tokio::time::timeout_at(deadline, pace.until_ready()).await;
        }
    }

    /// The same driver with connections of its own, for one case: a connection a host left in
    /// a bad state (a request body it never read, a stream it never ended) harms only the case
    /// that met it, and no verdict depends on which cases ran before or beside it.
    pub fn with_own_connections(&self) -> Self {
        match self.config.build() {
            Ok(client) => HttpDriver {
                client,
                ..self.clone()
            },
            // The same configuration built once already; should it not build again, sharing
            // the first client is still correct.
            Err(_) => self.clone(),
        }
    }

    /// The same driver, looking for the canary credential in the stream frames it folds and
    /// does not keep.
    pub fn watching_canary(mut self, canary: Option<&str>) -> Self {
        self.canary = canary.filter(|c| !c.is_empty()).map(std::sync::Arc::from);
        self
    }

    /// The bounds this driver reads within.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Sends one request and records everything, bounded by `deadline`. `since` is the case's
    /// start, for timestamps.
    pub async fn exchange(
        &self,
        request: PreparedRequest,
        mode: ReadMode,
        deadline: Instant,
        since: Instant,
    ) -> Exchange {
        let record = RequestRecord {
            method: request.method.to_string(),
            url: strip_userinfo(&request.url),
            headers: request
                .headers
                .iter()
                .map(|(n, v)| Header {
                    name: n.to_ascii_lowercase(),
                    value: redact_header(n, v),
                })
                .collect(),
            body: request.body.as_ref().map(|b| {
                if b.len() > 64 * 1024 {
                    format!("[{} bytes]", b.len())
                } else {
                    String::from_utf8_lossy(b).into_owned()
                }
            }),
        };
        self.take_turn(deadline).await;
        let sent = Instant::now();
        let sent_at_ms = ms_between(since, sent);
        let mut builder = self.request(request.method, &request.url, &request.headers);
        if let Some(body) = request.body {
            builder = builder.body(body);
        }
        // Every window starts when the request is sent: a host may write its headers only with
        // its first body byte (open point `w.sse.header-timing`), so waiting for them is part of
        // the window. A windowed stream whose headers have not come when its window ends was
        // held open through it with nothing sent: it is recorded so (status 0) at once. Waiting
        // on for the headers (a host writes them with its first keep-alive, up to 30 s later)
        // would spend the case's budget on a status line, and leave its later steps no time.
        let window_end = match &mode {
            ReadMode::Stream(StopCondition {
                duration: Some(window),
                ..
            }) if sent + *window < deadline => Some(sent + *window),
            _ => None,
        };
        let mut sending = Box::pin(builder.send());
        let early = match window_end {
            Some(end) => tokio::time::timeout_at(end, &mut sending).await.ok(),
            None => None,
        };
        if let (Some(end), None) = (window_end, &early) {
            return Exchange {
                request: record,
                response: Some(ResponseRecord::held_without_headers(ms_between(sent, end))),
                transport_error: None,
                sent_at_ms,
            };
        }
        let answered = match early {
            Some(answer) => Ok(answer),
            None => tokio::time::timeout_at(deadline, &mut sending).await,
        };
        let response = match answered {
            Err(_) => {
                return Exchange {
                    request: record,
                    response: None,
                    transport_error: Some(TransportError {
                        unreachable: false,
                        message: TransportError::NO_HEADERS_BEFORE_DEADLINE.into(),
                    }),
                    sent_at_ms,
                };
            }
            Ok(Err(error)) => {
                return Exchange {
                    request: record,
                    response: None,
                    transport_error: Some(TransportError {
                        unreachable: error.is_connect(),
                        message: describe(&error),
                    }),
                    sent_at_ms,
                };
            }
            Ok(Ok(response)) => response,
        };
        let headers_at_ms = ms_between(sent, Instant::now());
        let status = response.status().as_u16();
        let headers: Vec<Header> = response
            .headers()
            .iter()
            .map(|(n, v)| {
                let name = n.as_str().to_ascii_lowercase();
                let value = String::from_utf8_lossy(v.as_bytes()).into_owned();
                let value = if name == "set-cookie" {
                    crate::transcript::REDACTED.to_string()
                } else {
                    value
                };
                Header { name, value }
            })
            .collect();
        let as_stream = matches!(mode, ReadMode::Stream(_)) && (200..300).contains(&status);
        let mut body_record = match (as_stream, mode) {
            (true, ReadMode::Stream(stop)) => {
                self.read_stream(response, stop, deadline, sent).await
            }
            _ => self.read_whole(response, deadline, sent).await,
        };
        body_record.status = status;
        body_record.headers = headers;
        body_record.headers_at_ms = headers_at_ms;
        Exchange {
            request: record,
            response: Some(body_record),
            transport_error: None,
            sent_at_ms,
        }
    }

    async fn read_whole(
        &self,
        mut response: reqwest::Response,
        deadline: Instant,
        sent: Instant,
    ) -> ResponseRecord {
        let mut body: Vec<u8> = Vec::new();
        let mut total: u64 = 0;
        let end = loop {
            match tokio::time::timeout_at(deadline, response.chunk()).await {
                Err(_) => break BodyEnd::Timeout,
                Ok(Err(error)) => break BodyEnd::Broken(describe(&error)),
                Ok(Ok(None)) => break BodyEnd::ServerClosed,
                Ok(Ok(Some(chunk))) => {
                    total += chunk.len() as u64;
                    let room = self.limits.max_body_bytes.saturating_sub(body.len());
                    body.extend_from_slice(&chunk[..chunk.len().min(room)]);
                    if chunk.len() > room {
                        break BodyEnd::TooLarge(format!(
                            "the body exceeded {} bytes",
                            self.limits.max_body_bytes
                        ));
                    }
                }
            }
        };
        let too_large = matches!(end, BodyEnd::TooLarge(_));
        // A cut body is no JSON document; whole, it is parsed once and kept as text without a
        // second copy when it is valid UTF-8.
        let json = if too_large {
            None
        } else {
            serde_json::from_slice(&body).ok()
        };
        let (mut text, body_utf8) = match String::from_utf8(body) {
            Ok(text) => (text, true),
            Err(error) => (
                String::from_utf8_lossy(error.as_bytes()).into_owned(),
                false,
            ),
        };
        let excerpt = too_large.then(|| {
            let bounds = crate::excerpt::ExcerptBounds::LEVELS[0];
            crate::transcript::Excerpt {
                body_bytes_dropped: crate::excerpt::cut_text(&mut text, bounds.body_end_bytes)
                    as u64,
                ..Default::default()
            }
        });
        ResponseRecord {
            status: 0,
            headers: Vec::new(),
            headers_at_ms: 0,
            body: text,
            body_bytes: total,
            body_utf8,
            json,
            frames: Vec::new(),
            trailing_partial_frame: None,
            end,
            end_at_ms: ms_between(sent, Instant::now()),
            excerpt,
            folded: None,
            run_end: None,
        }
    }

    async fn read_stream(
        &self,
        mut response: reqwest::Response,
        stop: StopCondition,
        deadline: Instant,
        sent: Instant,
    ) -> ResponseRecord {
        let mut tokenizer = SseTokenizer::new(self.limits.sse);
        // The event that ends the read, read from each frame as the checks read it.
        let awaited = stop.event.as_deref().map(EventSelector::parse);
        let repeated = stop
            .repeated
            .as_ref()
            .map(|(selector, member)| (EventSelector::parse(selector), member.as_str()));
        let mut repeat_keys: std::collections::BTreeSet<String> = Default::default();
        let mut frames = Vec::new();
        let mut kept_bytes: usize = 0;
        let mut folded: Option<crate::transcript::StreamFold> = None;
        let mut frames_read: usize = 0;
        let mut raw: Vec<u8> = Vec::new();
        let mut total: u64 = 0;
        let mut event_frames: u64 = 0;
        // The window started when the request was sent, not when the headers came.
        let (mut read_until, mut window_end) = match stop.duration {
            Some(window) if sent + window < deadline => (sent + window, true),
            _ => (deadline, false),
        };
        let mut run_end: Option<RunEndSeen> = None;
        // Another stream of the run, or the run's poll, may show its end first (this one's mode
        // may not show it, or the host may have lost it here, or on every stream).
        let mut learnt_end = std::pin::pin!(async {
            match &stop.close_after_terminal {
                Some(close) => tokio::select! {
                    seen = close.ends.wait_for(&close.run) => seen,
                    seen = self.look_out(close, deadline) => seen,
                },
                None => std::future::pending().await,
            }
        });
        let end = 'read: loop {
            let read = tokio::select! {
                biased;
                read = tokio::time::timeout_at(read_until, response.chunk()) => read,
                (ended_at, witness) = &mut learnt_end, if run_end.is_none() => {
                    let ended_at = ended_at.max(sent);
                    run_end = Some(RunEndSeen {
                        at_ms: ms_between(sent, ended_at),
                        witness: match witness {
                            EndWitness::Stream => RunEndWitness::AnotherStream,
                            EndWitness::Poll => RunEndWitness::RunPoll,
                        },
                    });
                    if let Some(close) = &stop.close_after_terminal {
                        let due = ended_at + close.grace;
                        if window_end {
                            read_on_until(due, &mut read_until, &mut window_end);
                        } else {
                            // Bound by the deadline only, and showing no end of its own: read
                            // to its close or the end of the grace, before the deadline or
                            // after it.
                            read_until = due;
                            window_end = true;
                        }
                    }
                    continue 'read;
                }
            };
            let chunk: Option<Bytes> = match read {
                Err(_) => {
                    break if window_end {
                        BodyEnd::ClientStopped
                    } else {
                        BodyEnd::Timeout
                    };
                }
                Ok(Err(error)) => break BodyEnd::Broken(describe(&error)),
                Ok(Ok(None)) => break BodyEnd::ServerClosed,
                Ok(Ok(Some(chunk))) => Some(chunk),
            };
            let Some(chunk) = chunk else {
                break BodyEnd::ServerClosed;
            };
            total += chunk.len() as u64;
            if total as usize > self.limits.max_stream_read_bytes {
                break BodyEnd::TooLarge(format!(
                    "the stream exceeded {} bytes",
                    self.limits.max_stream_read_bytes
                ));
            }
            if raw.len() < 256 * 1024 {
                raw.extend_from_slice(&chunk[..chunk.len().min(256 * 1024 - raw.len())]);
            }
            let at_ms = ms_between(sent, Instant::now());
            match tokenizer.feed(&chunk, at_ms) {
                Err(error) => break BodyEnd::TooLarge(error.to_string()),
                Ok(new_frames) => {
                    for frame in new_frames {
                        let matched_event = match &frame.kind {
                            FrameKind::Event {
                                id, event, json, ..
                            } => {
                                event_frames += 1;
                                let awaited_came = awaited.as_ref().zip(json.as_ref()).is_some_and(
                                    |(awaited, json)| {
                                        carries(awaited, id.as_deref(), event.as_deref(), json)
                                    },
                                );
                                let repeat_came = repeated.as_ref().zip(json.as_ref()).is_some_and(
                                    |((selector, member), json)| {
                                        repeats(
                                            selector,
                                            member,
                                            (id.as_deref(), event.as_deref(), json),
                                            &mut repeat_keys,
                                        )
                                    },
                                );
                                if let Some(close) = &stop.close_after_terminal
                                    && run_end.is_none()
                                    && json.as_ref().is_some_and(|json| {
                                        ends_the_run(id.as_deref(), event.as_deref(), json)
                                    })
                                {
                                    let now = Instant::now();
                                    run_end = Some(RunEndSeen {
                                        at_ms: ms_between(sent, now),
                                        witness: RunEndWitness::ThisStream,
                                    });
                                    close.ends.ended(&close.run, now, EndWitness::Stream);
                                    read_on_until(
                                        now + close.grace,
                                        &mut read_until,
                                        &mut window_end,
                                    );
                                }
                                awaited_came || repeat_came
                            }
                            FrameKind::Comment { .. } => false,
                        };
                        frames_read += 1;
                        // The first frames are kept for the checks; past the kept bound each
                        // frame is folded as it arrives and dropped.
                        if folded.is_none()
                            && (frames.len() >= self.limits.max_stream_frames
                                || kept_bytes >= self.limits.max_stream_bytes)
                        {
                            folded = Some(crate::transcript::StreamFold::after(&frames));
                        }
                        match &mut folded {
                            Some(fold) => fold.fold(frame, self.canary.as_deref()),
                            None => {
                                kept_bytes += frame_bytes(&frame);
                                frames.push(frame);
                            }
                        }
                        if matched_event || stop.frames.is_some_and(|n| event_frames >= n) {
                            break 'read BodyEnd::ClientStopped;
                        }
                        if frames_read >= self.limits.max_stream_read_frames {
                            break 'read BodyEnd::TooLarge(format!(
                                "the stream exceeded {} frames",
                                self.limits.max_stream_read_frames
                            ));
                        }
                    }
                }
            }
        };
        let body_utf8 = tokenizer.utf8_valid();
        let trailing_partial_frame = if end == BodyEnd::ServerClosed {
            tokenizer.finish()
        } else {
            None
        };
        ResponseRecord {
            status: 0,
            headers: Vec::new(),
            headers_at_ms: 0,
            body: String::from_utf8_lossy(&raw).into_owned(),
            body_bytes: total,
            body_utf8,
            json: None,
            frames,
            trailing_partial_frame,
            end,
            end_at_ms: ms_between(sent, Instant::now()),
            excerpt: None,
            folded,
            run_end,
        }
    }

    /// A request of `method` to `url` with `headers` (real values), on this driver's client.
    fn request(
        &self,
        method: reqwest::Method,
        url: &str,
        headers: &[(String, String)],
    ) -> reqwest::RequestBuilder {
        headers.iter().fold(
            self.client.request(method, url),
            |builder, (name, value)| builder.header(name.as_str(), value.as_str()),
        )
    }

    /// A run's poll answer for a lookout: its JSON body when it answered 200 with one within
    /// [`LOOKOUT_BODY_BYTES`]; `None` for any other answer or failure.
    async fn poll_body(&self, lookout: &RunLookout) -> Option<serde_json::Value> {
        let mut response = self
            .request(reqwest::Method::GET, &lookout.poll_url, &lookout.headers)
            .send()
            .await
            .ok()?;
        if response.status().as_u16() != 200 {
            return None;
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.ok()? {
            if body.len() + chunk.len() > LOOKOUT_BODY_BYTES {
                return None;
            }
            body.extend_from_slice(&chunk);
        }
        serde_json::from_slice(&body).ok()
    }

    /// A stream's lookout on its run (see [`RunLookout`]): polls the run's log every
    /// `lookout.every` until an answer says the run is terminal, records the end on the case's
    /// board and resolves with it; never resolves when the stream has no lookout or the next
    /// poll would fall past `deadline`. A refused or failed poll says nothing: the next one is
    /// sent as planned.
    async fn look_out(&self, close: &CloseAfterRunEnd, deadline: Instant) -> (Instant, EndWitness) {
        let Some(lookout) = &close.lookout else {
            return std::future::pending().await;
        };
        loop {
            let next = Instant::now() + lookout.every;
            if next >= deadline {
                return std::future::pending().await;
            }
            tokio::time::sleep_until(next).await;
            let answered = tokio::time::timeout_at(deadline, async {
                self.take_turn(deadline).await;
                self.poll_body(lookout).await
            })
            .await;
            if answered
                .ok()
                .flatten()
                .is_some_and(|body| RunLookout::says_ended(&body))
            {
                let now = Instant::now();
                close.ends.ended(&close.run, now, EndWitness::Poll);
                return (now, EndWitness::Poll);
            }
        }
    }
}

/// Whether an event frame (its `id:`, `event:` and JSON data) carries the awaited event, the
/// frame read as the checks read it.
fn carries(
    awaited: &EventSelector<'_>,
    id: Option<&str>,
    event: Option<&str>,
    json: &serde_json::Value,
) -> bool {
    // The frame's index only places its events in a transcript.
    match read_frame(0, id, event, json) {
        FrameContent::Events(events) => events.iter().any(|e| awaited.matches(e)),
        FrameContent::Snapshot => false,
    }
}

/// Reads a stream on until `due` (the host's close is owed by then), when that is later than
/// the read would have stopped: the stop is then the harness's (a window's end), not the
/// deadline's.
fn read_on_until(due: Instant, read_until: &mut Instant, window_end: &mut bool) {
    if due > *read_until {
        *read_until = due;
        *window_end = true;
    }
}

/// Whether a surface-W event frame ends the run: it carries the run's terminal event, or it is a
/// `values` snapshot of the run in a terminal status.
fn ends_the_run(id: Option<&str>, event: Option<&str>, json: &serde_json::Value) -> bool {
    match read_frame(0, id, event, json) {
        FrameContent::Events(events) => events.iter().any(|e| {
            crate::checks::is_terminal(crate::case::CaseSurface::Openwop, e.event_type.as_deref())
        }),
        FrameContent::Snapshot => crate::checks::is_terminal_snapshot(json),
    }
}

/// Whether an event frame carries an event `selector` names whose value at `member` an earlier
/// one carried (`seen` holds the values so far, and takes this frame's).
fn repeats(
    selector: &EventSelector<'_>,
    member: &str,
    (id, event, json): (Option<&str>, Option<&str>, &serde_json::Value),
    seen: &mut std::collections::BTreeSet<String>,
) -> bool {
    let FrameContent::Events(events) = read_frame(0, id, event, json) else {
        return false;
    };
    let mut repeated = false;
    for observed in events.iter().filter(|e| selector.matches(e)) {
        if let Some(value) = crate::checks::events::field(&observed.doc, member) {
            repeated |= !seen.insert(value.to_string());
        }
    }
    repeated
}

fn ms_between(from: Instant, to: Instant) -> u64 {
    to.saturating_duration_since(from).as_millis() as u64
}

/// A reqwest error as text, without its URL (which may carry credentials).
fn describe(error: &reqwest::Error) -> String {
    use std::error::Error as _;
    let mut message = String::new();
    let mut source: Option<&dyn std::error::Error> = error.source();
    message.push_str(if error.is_timeout() {
        "timed out"
    } else if error.is_connect() {
        "connection failed"
    } else if error.is_body() || error.is_decode() {
        "the response body broke off"
    } else if error.is_request() {
        "the request failed"
    } else {
        "transport error"
    });
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    message
}

/// Removes `user:password@` from a URL for recording.
pub(crate) fn strip_userinfo(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut parsed) if !parsed.username().is_empty() || parsed.password().is_some() => {
            let _ = parsed.set_username("");
            let _ = parsed.set_password(None);
            parsed.to_string()
        }
        _ => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A stream of heartbeat ticks `a`, `b`, `a`, `c` in one write, held open.
    async fn ticking_channel() -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut head = vec![0u8; 4096];
            let _ = socket.read(&mut head).await;
            let tick = |id: &str| {
                format!(
                    "event: heartbeat.evaluated\ndata: {}\n\n",
                    serde_json::json!({"heartbeatId": id, "status": "ok", "changed": false})
                )
            };
            let body: String = ["a", "b", "a", "c"].iter().map(|id| tick(id)).collect();
            let _ = socket
                .write_all(
                    format!("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n{body}")
                        .as_bytes(),
                )
                .await;
            tokio::time::sleep(Duration::from_secs(30)).await;
        });
        format!("http://{address}/host/events")
    }

    #[tokio::test]
    async fn a_read_stops_on_the_first_repeat_of_a_value() {
        let driver = HttpDriver::new(&ClientOptions::default(), Limits::default()).unwrap();
        let request = PreparedRequest {
            method: reqwest::Method::GET,
            url: ticking_channel().await,
            headers: Vec::new(),
            body: None,
        };
        let stop = StopCondition {
            repeated: Some(("heartbeat.evaluated".into(), "heartbeatId".into())),
            duration: Some(Duration::from_secs(10)),
            ..StopCondition::default()
        };
        let now = Instant::now();
        let exchange = driver
            .exchange(
                request,
                ReadMode::Stream(stop),
                now + Duration::from_secs(20),
                now,
            )
            .await;
        let response = exchange.response.expect("answered");
        // Stopped at `a`'s second tick: `c` is never read, as it would be had the read gone on
        // to its 10 s window.
        assert_eq!(response.frames.len(), 3, "{:#?}", response.frames);
        assert_eq!(response.end, BodyEnd::ClientStopped);
    }

    /// A host answering every request at once with an empty JSON object.
    async fn answering_host() -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let mut buffer = [0u8; 4096];
                    let _ = socket.read(&mut buffer).await;
                    let _ = socket
                        .write_all(
                            b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}",
                        )
                        .await;
                });
            }
        });
        format!("http://{address}/")
    }

    #[tokio::test]
    async fn a_paced_driver_spaces_its_requests_whoever_sends_them() {
        let options = ClientOptions {
            max_requests_per_minute: NonZeroU32::new(300),
            ..ClientOptions::default()
        };
        let driver = HttpDriver::new(&options, Limits::default()).unwrap();
        let url = answering_host().await;
        let now = Instant::now();
        let deadline = now + Duration::from_secs(20);
        let send = |driver: HttpDriver| {
            let request = PreparedRequest {
                method: reqwest::Method::GET,
                url: url.clone(),
                headers: Vec::new(),
                body: None,
            };
            async move {
                driver
                    .exchange(request, ReadMode::Whole, deadline, now)
                    .await
            }
        };
        // Three cases at once, each on its own connections: one pace for all.
        let answers =
            futures::future::join_all((0..3).map(|_| send(driver.with_own_connections()))).await;
        assert!(
            answers
                .iter()
                .all(|a| a.response.as_ref().is_some_and(|r| r.status == 200))
        );
        // 300 a minute is one every 200 ms: the third is sent 400 ms after the first turn at
        // the earliest (a slow machine only sends it later; unpaced, all three go at once).
        let last_sent = answers.iter().map(|a| a.sent_at_ms).max().unwrap();
        assert!(last_sent >= 390, "the last request went at {last_sent} ms");
    }
}
