//! The [`EventStore`] trait and the records it keeps: what every store implements.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde_json::Value;

/// Which protocol surface a log belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Surface {
    /// Surface X: an execution's log, sequences from 1.
    Execution,
    /// Surface W: a run's log, sequences from 0.
    Run,
}

impl Surface {
    /// The sequence of the first event of a log of this surface.
    pub fn first_sequence(self) -> u64 {
        match self {
            Surface::Execution => 1,
            Surface::Run => 0,
        }
    }

    /// A stable name for storage.
    pub fn as_str(self) -> &'static str {
        match self {
            Surface::Execution => "execution",
            Surface::Run => "run",
        }
    }
}

/// One stored event: the wire JSON exactly as served, plus what the hub needs to route it.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredEvent {
    /// Position in the log.
    pub sequence: u64,
    /// When the runtime appended it.
    pub time: DateTime<Utc>,
    /// The event's type (wire name).
    pub event_type: Arc<str>,
    /// Whether it is the log's terminal event.
    pub terminal: bool,
    /// The complete wire JSON of the event.
    pub json: Arc<str>,
}

/// A log's record: identity, creation metadata and its current extent.
#[derive(Debug, Clone, PartialEq)]
pub struct LogRecord {
    /// The execution id or run id.
    pub id: String,
    /// Which surface.
    pub surface: Surface,
    /// When the log was created.
    pub created_at: DateTime<Utc>,
    /// Surface-specific creation metadata (the request, owner, workflow, …) as JSON.
    pub meta: Value,
    /// The highest sequence appended, `None` when empty.
    pub last_sequence: Option<u64>,
    /// Whether the terminal event has been appended.
    pub terminal: bool,
}

/// The outcome of claiming an idempotency key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClaimOutcome {
    /// The key was free and is now bound to the given log.
    Claimed,
    /// The key is bound to `log_id` with the same fingerprint.
    Replay {
        /// The bound log.
        log_id: String,
    },
    /// The key is bound with a different fingerprint.
    Mismatch,
}

/// A storage failure. Messages never carry event content.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// No such log.
    #[error("log `{0}` does not exist")]
    UnknownLog(String),
    /// A log with this id already exists.
    #[error("log `{0}` already exists")]
    DuplicateLog(String),
    /// An append whose sequence is not the log's next one (a gap, a reuse or a renumbering):
    /// refused, nothing written.
    #[error("log `{log_id}`: sequence {got} refused, the next one is {expected}")]
    SequenceConflict {
        /// The log.
        log_id: String,
        /// The log's next sequence.
        expected: u64,
        /// The sequence the append carried.
        got: u64,
    },
    /// The backend failed.
    #[error("event store backend failed: {0}")]
    Backend(String),
}

/// Durable storage of logs, idempotency claims and small key-value state.
///
/// Every method is synchronous and short; the hub calls `append` while holding the log's lock,
/// so appends to one log are serialised and sequences are never reused.
pub trait EventStore: Send + Sync + 'static {
    /// Creates an empty log.
    fn create_log(&self, record: &LogRecord) -> Result<(), StoreError>;
    /// Appends one event. Its sequence must be the log's next one (the first sequence of the
    /// surface for an empty log, else the last plus one); the store checks this in the same
    /// transaction that writes the event and moves the log's extent, and refuses anything else
    /// with [`StoreError::SequenceConflict`], so no gap, reuse or renumbering can be stored.
    fn append(&self, log_id: &str, event: &StoredEvent) -> Result<(), StoreError>;
    /// The events with `sequence > after` (all when `after` is `None`), in log order.
    fn read_after(&self, log_id: &str, after: Option<u64>) -> Result<Vec<StoredEvent>, StoreError>;
    /// A log's record.
    fn log(&self, log_id: &str) -> Result<Option<LogRecord>, StoreError>;
    /// Every log of a surface (for recovery after a restart and for listings).
    fn logs(&self, surface: Surface) -> Result<Vec<LogRecord>, StoreError>;
    /// Replaces a log's creation metadata (e.g. to record a retention deadline).
    fn update_meta(&self, log_id: &str, meta: &Value) -> Result<(), StoreError>;
    /// Atomically binds `(scope, key_hash)` to `log_id` unless already bound.
    fn claim(
        &self,
        scope: &str,
        key_hash: &str,
        fingerprint: &str,
        log_id: &str,
    ) -> Result<ClaimOutcome, StoreError>;
    /// The log a claim is bound to, `None` when the key is free.
    fn claim_holder(&self, scope: &str, key_hash: &str) -> Result<Option<String>, StoreError>;
    /// Removes a claim (a refused or expired request frees its key).
    fn release_claim(&self, scope: &str, key_hash: &str) -> Result<(), StoreError>;
    /// Reads a small value (heartbeat state, …).
    fn kv_get(&self, namespace: &str, key: &str) -> Result<Option<Value>, StoreError>;
    /// Writes a small value.
    fn kv_put(&self, namespace: &str, key: &str, value: &Value) -> Result<(), StoreError>;
    /// Whether the store is durable across restarts.
    fn is_durable(&self) -> bool;
}
