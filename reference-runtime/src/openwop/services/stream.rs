//! `GET /runs/{runId}/events`: the run's log as SSE frames in the four stream modes, resumable
//! with `Last-Event-ID` (an exclusive cursor in every mode), optionally batched with `bufferMs`
//! (the route, which writes the frames, is `openwop::http::stream`).
//!
//! Order of checks: the key (401), the run (400/403/404), `streamMode` (400
//! `unsupported_stream_mode`, before any content negotiation), `bufferMs` (the two the other way
//! round under `[openwop.choices] stream_validation = "buffer-first"`), then `Last-Event-ID`
//! (read only now that the caller may read the run), then an era-2 log's translation (500
//! `payload_unprojectable` / `event_type_unmapped`), then the subscriber limit (429).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use futures::Stream;
use futures::stream::{BoxStream, StreamExt};
use spec::openwop::StreamMode;
use tokio::time::Instant;

use crate::log::Subscription;
use crate::sse::SseFrame;
use crate::store::StoredEvent;

use super::state::WState;
use super::subscribers::SubscriberSlot;
use crate::openwop::infra::auth::Caller;
use crate::openwop::infra::choices::{
    MessagesBatching, MixedMessagesData, MultiAdmitted, StreamValidationOrder, ValuesResumeAtEnd,
};
use crate::openwop::infra::error::ApiError;
use crate::openwop::infra::projection::{Projection, RunMeta, parse_event};
use crate::openwop::services::stream_params::{self, Selection, admits};

/// What a stream request carries, as received.
pub(crate) struct StreamRequest<'a> {
    /// The request path, `/runs/{runId}/events`.
    pub(crate) run_path: &'a str,
    /// The query parameters (`None`: a malformed query string).
    pub(crate) query: Option<&'a HashMap<String, String>>,
    /// The `Accept` header (`None`: absent, or not text).
    pub(crate) accept: Option<&'a str>,
    /// The `Last-Event-ID` header (`None`: absent).
    pub(crate) last_event_id: Option<&'a str>,
}

/// An opened event stream: its frames and how its idle time is filled.
pub(crate) struct EventStream {
    /// The frames, ending after the terminal event.
    pub(crate) frames: BoxStream<'static, SseFrame>,
    /// The idle interval between keep-alive comments.
    pub(crate) keep_alive: Option<Duration>,
    /// The keep-alive comment's text.
    pub(crate) comment: &'static str,
}

/// Opens the event stream of the run `request` names for `caller`, checking in the order of
/// the module documentation.
pub(crate) fn open(
    state: &Arc<WState>,
    caller: &Caller,
    request: StreamRequest<'_>,
) -> Result<EventStream, ApiError> {
    let meta = state.readable_run(caller, request.run_path)?;
    let query = request
        .query
        .ok_or_else(|| ApiError::validation("the query string is malformed"))?;
    if state.defects.negotiates_before_validating_mode() {
        stream_params::negotiate(request.accept)?;
    }
    let mode = || match query.get("streamMode").map(String::as_str) {
        Some(value)
            if state.defects.values_combination_accepted()
                && stream_params::is_values_combination(value) =>
        {
            Ok(Selection::Values)
        }
        value => Selection::parse(value, state.config.choices.implemented_modes),
    };
    let buffer_ms = || stream_params::buffer(query.get("bufferMs").map(String::as_str));
    let (selection, buffer) = match state.config.choices.stream_validation {
        StreamValidationOrder::ModeFirst => (mode()?, buffer_ms()?),
        StreamValidationOrder::BufferFirst => {
            let buffer = buffer_ms()?;
            (mode()?, buffer)
        }
    };
    let header = state
        .config
        .choices
        .empty_last_event_id
        .read(request.last_event_id);
    let cursor = stream_params::last_event_id(header)?;
    if cursor.is_some_and(|cursor| !state.config.choices.cursor_range.admits(cursor)) {
        return Err(ApiError::validation(
            "Last-Event-ID must be an integer from 0 to 2^53 - 1",
        ));
    }
    // Every reader translates an era-2 log; one that cannot be read fails here, before any
    // SSE byte (a log this host wrote needs no translation).
    if meta.event_log_schema_version.is_some() {
        state.read_events(&meta, None)?;
    }
    let slot = state
        .subscribers
        .try_acquire(&meta.run_id, state.config.max_subscribers_per_run);
    let Some(slot) = slot else {
        return Err(ApiError::new(
            "rate_limited",
            "too many open event streams for this run; retry later",
        )
        .with_retry_after(state.config.subscriber_retry_after_secs));
    };
    let subscription = state
        .hub
        .subscribe(&meta.run_id, cursor)
        .map_err(|_| ApiError::internal())?;
    let keep_alive = state.keep_alive();
    let comment = state.config.choices.keep_alive_comment.text();
    let open = Open {
        state: Arc::clone(state),
        meta: meta.clone(),
        subscription,
        _slot: slot,
    };
    let frames = match selection {
        Selection::Values => {
            let base = values_base(state, &meta, cursor)?;
            let resume = cursor.is_some();
            values_frames(open, base, resume).boxed()
        }
        Selection::Modes(modes) => {
            let buffer = match (modes.as_slice(), state.config.choices.messages_batching) {
                ([StreamMode::Messages], MessagesBatching::Ignored) => None,
                _ => buffer,
            };
            event_frames(open, modes, buffer).boxed()
        }
    };
    Ok(EventStream {
        frames,
        keep_alive,
        comment,
    })
}

/// What an open stream holds: the subscription and its subscriber slot.
struct Open {
    state: Arc<WState>,
    meta: RunMeta,
    subscription: Subscription,
    _slot: SubscriberSlot,
}

impl Open {
    /// The next events, or `None` once the terminal event was delivered (a store error is logged
    /// and ends the stream too: the client resumes from its last id).
    async fn next(&mut self) -> Option<Vec<StoredEvent>> {
        match self.subscription.next_batch().await? {
            Ok(events) => match self.state.translate(&self.meta, events) {
                Ok(events) => Some(events),
                Err(error) => {
                    tracing::error!(
                        code = error.code(),
                        "an era-2 log could not be translated for a stream"
                    );
                    None
                }
            },
            Err(error) => {
                tracing::error!(%error, "reading a run log for a stream failed");
                None
            }
        }
    }

    fn ended_terminal(&self) -> bool {
        self.subscription.progress().terminal
    }
}

/// One frame of an updates/messages/debug stream, before batching: the event it shows (its
/// JSON and type, shared with the log) and how its frame differs from the event.
struct Pending {
    sequence: u64,
    event_type: Arc<str>,
    json: Arc<str>,
    /// The frame's `event:` name when it is not the event's type (mixed modes, messages).
    frame_event: Option<&'static str>,
    /// The frame's data when it is not the event's JSON (messages: the payload).
    frame_data: Option<Arc<str>>,
    mode_index: usize,
}

impl Pending {
    /// The pending frame of `event` for `mode` (`None`: a messages frame whose event cannot be
    /// read).
    fn of(
        event: StoredEvent,
        mode_index: usize,
        mode: StreamMode,
        mixed: bool,
        mixed_messages: MixedMessagesData,
    ) -> Option<Self> {
        let (frame_event, frame_data) = match (mixed, mode) {
            (true, StreamMode::Messages) if mixed_messages == MixedMessagesData::ChunkPayload => {
                let doc = parse_event(&event.json)?;
                (
                    Some(mode.as_str()),
                    Some(Arc::from(doc.payload.to_string())),
                )
            }
            (true, mode) => (Some(mode.as_str()), None),
            (false, StreamMode::Messages) => {
                let doc = parse_event(&event.json)?;
                (
                    Some("ai.message.chunk"),
                    Some(Arc::from(doc.payload.to_string())),
                )
            }
            (false, _) => (None, None),
        };
        Some(Pending {
            sequence: event.sequence,
            event_type: event.event_type,
            json: event.json,
            frame_event,
            frame_data,
            mode_index,
        })
    }

    fn into_frame(self) -> SseFrame {
        let event: Arc<str> = match self.frame_event {
            Some(name) => Arc::from(name),
            None => self.event_type,
        };
        SseFrame::numbered(self.sequence, event, self.frame_data.unwrap_or(self.json))
    }
}

/// The frames of `events` for `modes`: each event once, under its first admitting mode, or
/// once per admitting mode where the host choice says so.
fn render(events: Vec<StoredEvent>, modes: &[StreamMode], state: &WState) -> Vec<Pending> {
    let mixed = modes.len() > 1;
    let per_mode = mixed && state.config.choices.multi_admitted == MultiAdmitted::OncePerMode;
    let mixed_messages = state.config.choices.mixed_messages_data;
    let mut frames: Vec<Pending> = Vec::with_capacity(events.len());
    for event in events {
        let mut admitting = modes
            .iter()
            .copied()
            .enumerate()
            .filter(|(_, m)| admitted(*m, &event.event_type, state));
        if per_mode {
            frames.extend(admitting.filter_map(|(mode_index, mode)| {
                Pending::of(event.clone(), mode_index, mode, mixed, mixed_messages)
            }));
        } else if let Some((mode_index, mode)) = admitting.next() {
            frames.extend(Pending::of(event, mode_index, mode, mixed, mixed_messages));
        }
    }
    if mixed && state.defects.mixed_modes_grouped() {
        frames.sort_by_key(|f| f.mode_index);
    }
    frames
}

/// Whether `mode` admits an event of `event_type` on this host: as the mode says, or also a
/// vendor event in `updates` where the policy says so.
fn admitted(mode: StreamMode, event_type: &str, state: &WState) -> bool {
    admits(mode, event_type)
        || (mode == StreamMode::Updates
            && state.defects.vendor_events_in_updates()
            && spec::registry::event_types().get(event_type).is_none())
}

/// A batch frame: `data:` an array of RunEventDoc, `id:` the highest sequence.
fn batch_frame(batch: &mut Vec<Pending>) -> Option<SseFrame> {
    let id = batch.iter().map(|p| p.sequence).max()?;
    let data = format!(
        "[{}]",
        batch.iter().map(|p| &*p.json).collect::<Vec<_>>().join(",")
    );
    batch.clear();
    Some(SseFrame::numbered(id, "batch", data))
}

/// Whether an event forces a batch flush: the terminal event and `node.suspended`.
fn forces_flush(event_type: &str, state: &WState) -> bool {
    let terminal = spec::registry::event_types()
        .get(event_type)
        .is_some_and(|e| e.terminal);
    let suspended = event_type == "node.suspended" && !state.defects.no_flush_on_suspended();
    terminal || suspended
}

enum Wake {
    Events(Option<Vec<StoredEvent>>),
    Deadline,
}

fn event_frames(
    mut open: Open,
    modes: Vec<StreamMode>,
    buffer: Option<Duration>,
) -> impl Stream<Item = SseFrame> + Send + 'static {
    async_stream::stream! {
        let mut batch: Vec<Pending> = Vec::new();
        let mut deadline: Option<Instant> = None;
        loop {
            let wake = match deadline {
                Some(at) => tokio::select! {
                    events = open.next() => Wake::Events(events),
                    () = tokio::time::sleep_until(at) => Wake::Deadline,
                },
                None => Wake::Events(open.next().await),
            };
            let events = match wake {
                Wake::Deadline => {
                    deadline = None;
                    if let Some(frame) = batch_frame(&mut batch) {
                        yield frame;
                    }
                    continue;
                }
                Wake::Events(None) => break,
                Wake::Events(Some(events)) => events,
            };
            for pending in render(events, &modes, &open.state) {
                let Some(window) = buffer else {
                    yield pending.into_frame();
                    continue;
                };
                let flush = forces_flush(&pending.event_type, &open.state);
                batch.push(pending);
                if flush {
                    deadline = None;
                    if let Some(frame) = batch_frame(&mut batch) {
                        yield frame;
                    }
                } else if deadline.is_none() {
                    deadline = Some(Instant::now() + window);
                }
            }
        }
        if let Some(frame) = batch_frame(&mut batch) {
            yield frame;
        }
    }
}

/// The projection a `values` stream starts from: everything up to the cursor.
fn values_base(
    state: &WState,
    meta: &RunMeta,
    cursor: Option<u64>,
) -> Result<Projection, ApiError> {
    let mut projection = Projection::new(meta.clone());
    if let Some(cursor) = cursor {
        let events = state.read_events(meta, None)?;
        for event in events.iter().take_while(|e| e.sequence <= cursor) {
            if let Some(doc) = parse_event(&event.json) {
                projection.apply(&doc);
            }
        }
    }
    Ok(projection)
}

fn snapshot_frame(projection: &Projection) -> Option<SseFrame> {
    let id = projection.last_sequence()?;
    let data = serde_json::to_string(&projection.snapshot()).ok()?;
    Some(SseFrame::numbered(id, "state.snapshot", data))
}

/// `values`: a `state.snapshot` (id = the highest sequence folded) after each updates-tier
/// transition. A resumption first sends one snapshot folding every event available after the
/// cursor, so it starts with the current state.
fn values_frames(
    mut open: Open,
    mut projection: Projection,
    resume: bool,
) -> impl Stream<Item = SseFrame> + Send + 'static {
    async_stream::stream! {
        let mut catch_up = resume;
        while let Some(events) = open.next().await {
            if catch_up {
                catch_up = false;
                if open.state.defects.values_resume_without_snapshot() {
                    for event in &events {
                        if let Some(doc) = parse_event(&event.json) {
                            projection.apply(&doc);
                            if admits(StreamMode::Values, &event.event_type) {
                                yield SseFrame::numbered(event.sequence, Arc::clone(&event.event_type), Arc::clone(&event.json));
                            }
                        }
                    }
                    continue;
                }
                for event in &events {
                    if let Some(doc) = parse_event(&event.json) {
                        projection.apply(&doc);
                    }
                }
                if let Some(frame) = snapshot_frame(&projection) {
                    yield frame;
                }
                continue;
            }
            for event in &events {
                let Some(doc) = parse_event(&event.json) else { continue };
                projection.apply(&doc);
                if admits(StreamMode::Values, &event.event_type)
                    && let Some(frame) = snapshot_frame(&projection)
                {
                    yield frame;
                }
            }
        }
        // A resumption that found nothing after its cursor on a terminal run: a host taking
        // the snapshot-first reading still sends the run's state once.
        if catch_up
            && open.ended_terminal()
            && open.state.config.choices.values_resume_at_end == ValuesResumeAtEnd::SnapshotFirst
            && let Some(frame) = snapshot_frame(&projection)
        {
            yield frame;
        }
    }
}
