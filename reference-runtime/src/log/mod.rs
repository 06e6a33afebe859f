//! The live layer over the [`EventStore`]: assigns sequences and times, enforces the terminal
//! rule at append, and serves subscribers the backlog and then the live tail with no gap and no
//! duplicate at the seam.
//!
//! Both surfaces use it: surface X logs start at sequence 1, surface W logs at 0.
//!
//! Live subscribers read from the log's live tail, the events appended through this hub kept
//! in memory (up to [`LIVE_TAIL_EVENTS`], released once a terminal log has no subscriber), and
//! are handed at most [`MAX_BATCH_EVENTS`] at a time: a thousand subscribers of one live log
//! never query the store, and one that fell behind holds and renders a bounded batch. Events
//! older than the tail (appended by a previous process, or evicted) are read from the store.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use chrono::{DateTime, Utc};
use tokio::sync::watch;

use crate::clock::Clock;
use crate::store::{EventStore, LogRecord, StoreError, StoreView, StoredEvent, Surface};

/// What kind of event an append carries, for the terminal rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppendKind {
    /// A forward-execution event: refused once the log is terminal.
    Forward,
    /// The log's terminal event: refused once the log is terminal.
    Terminal,
    /// An event the protocol allows after the terminal event (`compensation.*`,
    /// `run.dead-lettered`, vendor types on surface W).
    AfterTerminal,
}

/// Why an append was refused.
#[derive(Debug, thiserror::Error)]
pub enum AppendError {
    /// The log is terminal and the event is not allowed after it. The refusal is logged, never
    /// surfaced as an event.
    #[error("log `{log_id}` is terminal; `{event_type}` refused")]
    Terminal {
        /// The log.
        log_id: String,
        /// The refused event's type.
        event_type: String,
    },
    /// Storage failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// How far a log has got, as subscribers observe it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogProgress {
    /// The highest sequence appended.
    pub last_sequence: Option<u64>,
    /// Whether the terminal event is appended.
    pub terminal: bool,
}

/// The most events a subscriber is handed at once.
pub const MAX_BATCH_EVENTS: usize = 128;
/// The most recent events a log keeps in memory for its subscribers.
pub const LIVE_TAIL_EVENTS: usize = 65_536;

/// The events appended through this hub, most recent last: `events[i]` has sequence
/// `first + i`; when empty, `first` is the next sequence.
struct LiveTail {
    first: u64,
    events: VecDeque<StoredEvent>,
}

impl LiveTail {
    fn push(&mut self, event: StoredEvent) {
        self.events.push_back(event);
        if self.events.len() > LIVE_TAIL_EVENTS {
            self.events.pop_front();
            self.first += 1;
        }
    }

    /// Forgets the events (the next sequence stays where it is).
    fn release(&mut self) {
        self.first += self.events.len() as u64;
        self.events = VecDeque::new();
    }

    /// Up to [`MAX_BATCH_EVENTS`] events from sequence `from`, or `None` when `from` is older
    /// than the tail.
    fn batch_from(&self, from: u64) -> Option<Vec<StoredEvent>> {
        let skip = from.checked_sub(self.first)?;
        let start = usize::try_from(skip)
            .unwrap_or(usize::MAX)
            .min(self.events.len());
        let end = start
            .saturating_add(MAX_BATCH_EVENTS)
            .min(self.events.len());
        Some(self.events.range(start..end).cloned().collect())
    }
}

struct LogState {
    surface: Surface,
    /// Serialises appends; holds the next sequence and the terminal flag.
    append: Mutex<(u64, bool)>,
    progress: watch::Sender<LogProgress>,
    /// Live subscriptions of this log.
    subscribers: AtomicUsize,
    /// What subscribers read while they follow the log.
    tail: RwLock<LiveTail>,
}

impl LogState {
    fn tail_mut(&self) -> std::sync::RwLockWriteGuard<'_, LiveTail> {
        self.tail
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// What may leave events out of a batch bound for one subscriber of a live log: only a
/// known-bad runtime's hub has one (`known_bad/delivery.rs`); the stored log is untouched.
pub trait DeliveryFilter: Send + Sync + std::fmt::Debug {
    /// Leaves events out of `events`; `sent` counts the events handed to this subscriber so
    /// far, `subscribers` how many read the log, `log_terminal` whether it has ended.
    fn withhold(
        &self,
        events: &mut Vec<StoredEvent>,
        sent: &mut u64,
        subscribers: usize,
        log_terminal: bool,
    );
}

/// The hub: one per runtime, shared by both surfaces.
pub struct LogHub {
    store: Arc<dyn EventStore>,
    clock: Arc<dyn Clock>,
    logs: Mutex<HashMap<String, Arc<LogState>>>,
    wire_offset: Option<chrono::FixedOffset>,
    /// A known-bad runtime's delivery layer (`known_bad/delivery.rs`): what it withholds from
    /// a live log's subscribers; `None` in a clean one.
    delivery: Option<Arc<dyn DeliveryFilter>>,
    /// How long an idempotency key stays bound after its log's terminal event.
    key_retention: chrono::Duration,
}

/// The default [`LogHub::key_retention`]: 24 hours.
pub const DEFAULT_KEY_RETENTION_HOURS: i64 = 24;

impl LogHub {
    /// A hub over a store.
    pub fn new(store: Arc<dyn EventStore>, clock: Arc<dyn Clock>) -> Self {
        LogHub {
            store,
            clock,
            logs: Mutex::new(HashMap::new()),
            wire_offset: None,
            delivery: None,
            key_retention: chrono::Duration::hours(DEFAULT_KEY_RETENTION_HOURS),
        }
    }

    /// Keeps idempotency keys bound this long after their log's terminal event (both
    /// surfaces; `[limits] idempotency_retention_hours`).
    pub fn with_key_retention(mut self, retention: chrono::Duration) -> Self {
        self.key_retention = retention;
        self
    }

    /// How long an idempotency key stays bound after its log's terminal event.
    pub fn key_retention(&self) -> chrono::Duration {
        self.key_retention
    }

    /// Whether an idempotency key bound to `log_id` has expired, by the hub's clock: the log's
    /// terminal event is at least [`Self::key_retention`] old, or the log does not exist (a
    /// crash between binding the key and creating the log: the creation never answered, so the
    /// key was never used). A key bound to a live log never expires.
    pub fn key_expired(&self, log_id: &str) -> Result<bool, StoreError> {
        let Some(record) = self.store.log(log_id)? else {
            return Ok(true);
        };
        let Some(last) = record.last_sequence.filter(|_| record.terminal) else {
            return Ok(false);
        };
        // The terminal event is last unless events the protocol allows after it follow.
        let tail = self.store.read_after(log_id, last.checked_sub(1))?;
        let terminal_time = match tail.last().filter(|e| e.terminal) {
            Some(event) => Some(event.time),
            None => self
                .store
                .read_after(log_id, None)?
                .iter()
                .find(|e| e.terminal)
                .map(|e| e.time),
        };
        Ok(terminal_time.is_some_and(|t| t + self.key_retention <= self.clock.now()))
    }

    /// Delivers through `filter` (a known-bad runtime's delivery layer, `KnownBad::delivery`;
    /// with `None` the hub delivers every event).
    pub fn with_delivery(mut self, filter: Option<Arc<dyn DeliveryFilter>>) -> Self {
        self.delivery = filter;
        self
    }

    /// Renders event times at this offset (`[server] timestamp_offset_minutes`) instead of UTC.
    pub fn with_wire_offset(mut self, offset: Option<chrono::FixedOffset>) -> Self {
        self.wire_offset = offset;
        self
    }

    /// An event time as the wire carries it when the offset is configured: RFC 3339 at that
    /// offset with millisecond fractions (`2026-01-01T12:00:00.123+02:00`); `None` when events
    /// carry the serializer's UTC form.
    pub fn wire_time(&self, time: DateTime<Utc>) -> Option<String> {
        self.wire_offset.map(|offset| {
            time.with_timezone(&offset)
                .to_rfc3339_opts(chrono::SecondsFormat::Millis, false)
        })
    }

    /// The store without `create_log` and `append`: only the hub creates logs and assigns
    /// sequences.
    pub fn store(&self) -> StoreView<'_> {
        StoreView::new(self.store.as_ref())
    }

    /// The clock.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// Creates an empty log.
    pub fn create(
        &self,
        id: &str,
        surface: Surface,
        meta: serde_json::Value,
    ) -> Result<LogRecord, StoreError> {
        let record = LogRecord {
            id: id.to_string(),
            surface,
            created_at: self.clock.now(),
            meta,
            last_sequence: None,
            terminal: false,
        };
        self.store.create_log(&record)?;
        Ok(record)
    }

    /// Appends one event. `render` receives the assigned sequence and time and returns the
    /// event's complete wire JSON; it runs under the log's lock, exactly once, and only when the
    /// append is allowed.
    pub fn append(
        &self,
        log_id: &str,
        event_type: &str,
        kind: AppendKind,
        render: impl FnOnce(u64, DateTime<Utc>) -> String,
    ) -> Result<StoredEvent, AppendError> {
        let state = self.state(log_id)?;
        let mut guard = state
            .append
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let (next_sequence, terminal) = *guard;
        if terminal && kind != AppendKind::AfterTerminal {
            tracing::warn!(
                log_id,
                event_type,
                "refused an append after the terminal event"
            );
            return Err(AppendError::Terminal {
                log_id: log_id.to_string(),
                event_type: event_type.to_string(),
            });
        }
        let time = self.clock.now();
        let event = StoredEvent {
            sequence: next_sequence,
            time,
            event_type: Arc::from(event_type),
            terminal: kind == AppendKind::Terminal,
            json: Arc::from(render(next_sequence, time)),
        };
        self.store.append(log_id, &event)?;
        let now_terminal = terminal || event.terminal;
        {
            let mut tail = state.tail_mut();
            tail.push(event.clone());
            if now_terminal && state.subscribers.load(Ordering::Relaxed) == 0 {
                tail.release();
            }
        }
        *guard = (next_sequence + 1, now_terminal);
        state.progress.send_replace(LogProgress {
            last_sequence: Some(next_sequence),
            terminal: now_terminal,
        });
        Ok(event)
    }

    /// The events with `sequence > after` (all when `None`).
    pub fn read_after(
        &self,
        log_id: &str,
        after: Option<u64>,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        self.store.read_after(log_id, after)
    }

    /// The log's progress.
    pub fn progress(&self, log_id: &str) -> Result<LogProgress, StoreError> {
        Ok(*self.state(log_id)?.progress.borrow())
    }

    /// Whether a log exists.
    pub fn exists(&self, log_id: &str) -> Result<bool, StoreError> {
        Ok(self.state(log_id).is_ok())
    }

    /// Subscribes from a cursor: first the backlog after it, then live events, ending after the
    /// terminal event has been delivered.
    pub fn subscribe(
        self: &Arc<Self>,
        log_id: &str,
        after: Option<u64>,
    ) -> Result<Subscription, StoreError> {
        let state = self.state(log_id)?;
        state.subscribers.fetch_add(1, Ordering::Relaxed);
        Ok(Subscription {
            hub: Arc::clone(self),
            log_id: log_id.to_string(),
            cursor: after,
            progress: state.progress.subscribe(),
            state,
            sent: 0,
        })
    }

    /// How many subscriptions of a log are open now.
    pub fn subscriber_count(&self, log_id: &str) -> Result<usize, StoreError> {
        Ok(self.state(log_id)?.subscribers.load(Ordering::Relaxed))
    }

    /// The surface of a log.
    pub fn surface(&self, log_id: &str) -> Result<Surface, StoreError> {
        Ok(self.state(log_id)?.surface)
    }

    fn state(&self, log_id: &str) -> Result<Arc<LogState>, StoreError> {
        let mut logs = self
            .logs
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(state) = logs.get(log_id) {
            return Ok(Arc::clone(state));
        }
        let record = self
            .store
            .log(log_id)?
            .ok_or_else(|| StoreError::UnknownLog(log_id.to_string()))?;
        let next = record
            .last_sequence
            .map_or(record.surface.first_sequence(), |s| s + 1);
        let (progress, _) = watch::channel(LogProgress {
            last_sequence: record.last_sequence,
            terminal: record.terminal,
        });
        let state = Arc::new(LogState {
            surface: record.surface,
            append: Mutex::new((next, record.terminal)),
            progress,
            subscribers: AtomicUsize::new(0),
            tail: RwLock::new(LiveTail {
                first: next,
                events: VecDeque::new(),
            }),
        });
        logs.insert(log_id.to_string(), Arc::clone(&state));
        Ok(state)
    }
}

/// A subscriber's view of one log.
pub struct Subscription {
    hub: Arc<LogHub>,
    log_id: String,
    cursor: Option<u64>,
    progress: watch::Receiver<LogProgress>,
    state: Arc<LogState>,
    /// Events handed to this subscriber (a delivery layer counts them).
    sent: u64,
}

impl Drop for Subscription {
    fn drop(&mut self) {
        let left = self.state.subscribers.fetch_sub(1, Ordering::Relaxed) - 1;
        if left == 0 && self.progress.borrow().terminal {
            self.state.tail_mut().release();
        }
    }
}

impl Subscription {
    /// The next batch of events after the cursor, waiting for new ones when caught up. `None`
    /// once the terminal event has been delivered (or the hub is gone).
    pub async fn next_batch(&mut self) -> Option<Result<Vec<StoredEvent>, StoreError>> {
        loop {
            let progress = *self.progress.borrow_and_update();
            let behind = match (progress.last_sequence, self.cursor) {
                (Some(last), Some(cursor)) => last > cursor,
                (Some(_), None) => true,
                (None, _) => false,
            };
            if behind {
                match self.read_batch() {
                    Ok(mut events) if !events.is_empty() => {
                        self.cursor = events.last().map(|e| e.sequence);
                        self.withhold_under_load(&mut events, progress.terminal);
                        if events.is_empty() {
                            continue;
                        }
                        return Some(Ok(events));
                    }
                    Ok(_) => {}
                    Err(error) => return Some(Err(error)),
                }
            }
            if progress.terminal && !behind {
                return None;
            }
            if self.progress.changed().await.is_err() {
                return None;
            }
        }
    }

    /// The next events after the cursor: from the live tail when it reaches back far enough,
    /// else from the store.
    fn read_batch(&self) -> Result<Vec<StoredEvent>, StoreError> {
        let from = self
            .cursor
            .map_or(self.state.surface.first_sequence(), |c| c.saturating_add(1));
        let from_tail = self
            .state
            .tail
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .batch_from(from);
        match from_tail {
            Some(events) => Ok(events),
            None => self.hub.read_after(&self.log_id, self.cursor),
        }
    }

    /// A batch as a known-bad hub's delivery layer lets it through (unchanged without one).
    fn withhold_under_load(&mut self, events: &mut Vec<StoredEvent>, terminal: bool) {
        if let Some(delivery) = &self.hub.delivery {
            let subscribers = self.state.subscribers.load(Ordering::Relaxed);
            delivery.withhold(events, &mut self.sent, subscribers, terminal);
        }
    }

    /// The highest sequence delivered so far (or the starting cursor).
    pub fn cursor(&self) -> Option<u64> {
        self.cursor
    }

    /// The log's current progress.
    pub fn progress(&self) -> LogProgress {
        *self.progress.borrow()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::SystemClock;
    use crate::store::{EventStore, MemoryEventStore};

    fn hub() -> Arc<LogHub> {
        Arc::new(LogHub::new(
            Arc::new(MemoryEventStore::new()),
            Arc::new(SystemClock),
        ))
    }

    fn append(hub: &LogHub, id: &str, kind: AppendKind) -> Result<StoredEvent, AppendError> {
        hub.append(id, "t", kind, |seq, _| format!("{{\"sequence\":{seq}}}"))
    }

    #[test]
    fn sequences_start_per_surface_and_never_gap() {
        let hub = hub();
        hub.create("x", Surface::Execution, serde_json::json!({}))
            .unwrap();
        hub.create("w", Surface::Run, serde_json::json!({}))
            .unwrap();
        let xs: Vec<u64> = (0..3)
            .map(|_| append(&hub, "x", AppendKind::Forward).unwrap().sequence)
            .collect();
        let ws: Vec<u64> = (0..3)
            .map(|_| append(&hub, "w", AppendKind::Forward).unwrap().sequence)
            .collect();
        assert_eq!(xs, [1, 2, 3]);
        assert_eq!(ws, [0, 1, 2]);
    }

    #[test]
    fn refuses_forward_events_after_the_terminal_event() {
        let hub = hub();
        hub.create("w", Surface::Run, serde_json::json!({}))
            .unwrap();
        append(&hub, "w", AppendKind::Forward).unwrap();
        append(&hub, "w", AppendKind::Terminal).unwrap();
        assert!(matches!(
            append(&hub, "w", AppendKind::Forward),
            Err(AppendError::Terminal { .. })
        ));
        assert!(matches!(
            append(&hub, "w", AppendKind::Terminal),
            Err(AppendError::Terminal { .. })
        ));
        assert_eq!(
            append(&hub, "w", AppendKind::AfterTerminal)
                .unwrap()
                .sequence,
            2
        );
        assert_eq!(hub.read_after("w", None).unwrap().len(), 3);
    }

    #[tokio::test]
    async fn subscribers_get_backlog_then_live_tail_without_gap_or_duplicate() {
        let hub = hub();
        hub.create("x", Surface::Execution, serde_json::json!({}))
            .unwrap();
        append(&hub, "x", AppendKind::Forward).unwrap();
        append(&hub, "x", AppendKind::Forward).unwrap();
        let mut from_start = hub.subscribe("x", None).unwrap();
        let mut from_one = hub.subscribe("x", Some(1)).unwrap();
        let writer = {
            let hub = Arc::clone(&hub);
            tokio::spawn(async move {
                for _ in 0..50 {
                    append(&hub, "x", AppendKind::Forward).unwrap();
                    tokio::task::yield_now().await;
                }
                append(&hub, "x", AppendKind::Terminal).unwrap();
            })
        };
        let mut seen = Vec::new();
        while let Some(batch) = from_start.next_batch().await {
            seen.extend(batch.unwrap().into_iter().map(|e| e.sequence));
        }
        writer.await.unwrap();
        assert_eq!(seen, (1..=53).collect::<Vec<_>>());
        let mut seen = Vec::new();
        while let Some(batch) = from_one.next_batch().await {
            seen.extend(batch.unwrap().into_iter().map(|e| e.sequence));
        }
        assert_eq!(seen, (2..=53).collect::<Vec<_>>());
    }

    /// Reads a subscription to its end: each batch's sequences.
    async fn batches(subscription: &mut Subscription) -> Vec<Vec<u64>> {
        let mut batches = Vec::new();
        while let Some(batch) = subscription.next_batch().await {
            batches.push(batch.unwrap().into_iter().map(|e| e.sequence).collect());
        }
        batches
    }

    #[tokio::test]
    async fn a_subscriber_far_behind_gets_bounded_batches_in_order() {
        let hub = hub();
        hub.create("w", Surface::Run, serde_json::json!({}))
            .unwrap();
        let mut subscription = hub.subscribe("w", None).unwrap();
        for _ in 0..300 {
            append(&hub, "w", AppendKind::Forward).unwrap();
        }
        append(&hub, "w", AppendKind::Terminal).unwrap();
        let batches = batches(&mut subscription).await;
        assert!(batches.iter().all(|b| b.len() <= MAX_BATCH_EVENTS));
        assert_eq!(batches.concat(), (0..=300).collect::<Vec<_>>());
    }

    #[tokio::test]
    async fn events_older_than_the_tail_come_from_the_store() {
        let store = Arc::new(MemoryEventStore::new());
        let first = LogHub::new(
            Arc::clone(&store) as Arc<dyn EventStore>,
            Arc::new(SystemClock),
        );
        first
            .create("x", Surface::Execution, serde_json::json!({}))
            .unwrap();
        for _ in 0..3 {
            append(&first, "x", AppendKind::Forward).unwrap();
        }
        // A second hub over the same store (a restart) never saw those appends.
        let hub = Arc::new(LogHub::new(store, Arc::new(SystemClock)));
        let mut from_start = hub.subscribe("x", None).unwrap();
        let mut from_two = hub.subscribe("x", Some(2)).unwrap();
        append(&hub, "x", AppendKind::Terminal).unwrap();
        assert_eq!(batches(&mut from_start).await.concat(), [1, 2, 3, 4]);
        assert_eq!(batches(&mut from_two).await.concat(), [3, 4]);
    }

    #[tokio::test]
    async fn evicted_events_are_read_from_the_store_and_a_terminal_tail_is_released() {
        let hub = hub();
        hub.create("w", Surface::Run, serde_json::json!({}))
            .unwrap();
        let total = LIVE_TAIL_EVENTS as u64 + 10;
        for _ in 0..total {
            append(&hub, "w", AppendKind::Forward).unwrap();
        }
        let mut from_start = hub.subscribe("w", None).unwrap();
        let mut near_end = hub.subscribe("w", Some(total - 3)).unwrap();
        append(&hub, "w", AppendKind::Terminal).unwrap();
        let seen = batches(&mut from_start).await.concat();
        assert_eq!(seen, (0..=total).collect::<Vec<_>>());
        assert_eq!(
            batches(&mut near_end).await.concat(),
            [total - 2, total - 1, total]
        );
        let state = hub.state("w").unwrap();
        drop(from_start);
        drop(near_end);
        assert!(state.tail.read().unwrap().events.is_empty());
        // A later reader of the terminal log reads the store.
        let mut later = hub.subscribe("w", Some(total - 1)).unwrap();
        assert_eq!(batches(&mut later).await.concat(), [total]);
    }

    #[tokio::test]
    async fn a_cursor_at_the_end_of_a_terminal_log_ends_at_once() {
        let hub = hub();
        hub.create("x", Surface::Execution, serde_json::json!({}))
            .unwrap();
        append(&hub, "x", AppendKind::Terminal).unwrap();
        let mut at_end = hub.subscribe("x", Some(1)).unwrap();
        assert!(at_end.next_batch().await.is_none());
        let mut past_end = hub.subscribe("x", Some(99)).unwrap();
        assert!(past_end.next_batch().await.is_none());
    }
}
