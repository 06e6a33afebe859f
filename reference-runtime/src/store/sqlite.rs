//! The SQLite event store (`sqlite:PATH`): logs, idempotency claims and key-value state survive
//! a restart. Events are stored as their wire JSON with their sequence; nothing is ever updated
//! or deleted in the `events` table.
//!
//! Crash safety: the file is in WAL mode. Each append is one `IMMEDIATE` transaction that reads
//! the log's extent, checks the event's sequence is the next one, writes the event and moves
//! the extent; a crash leaves either all of it or none. A commit is in the WAL before the hub
//! tells any subscriber about the event, so a killed process never takes back an event a client
//! has received ([`SqliteSync::Normal`], the default). Surviving a power loss or an OS crash
//! too needs [`SqliteSync::Full`] (`[store] sync = "full"`): an fsync per append, about 200
//! times slower on an ordinary disk, and every append of every log waits for it.

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use chrono::{DateTime, Utc};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use serde_json::Value;

use super::event_store::{ClaimOutcome, EventStore, LogRecord, StoreError, StoredEvent, Surface};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS logs (
    id TEXT PRIMARY KEY,
    surface TEXT NOT NULL,
    created_at TEXT NOT NULL,
    meta TEXT NOT NULL,
    last_sequence INTEGER,
    terminal INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS events (
    log_id TEXT NOT NULL,
    sequence INTEGER NOT NULL,
    time TEXT NOT NULL,
    event_type TEXT NOT NULL,
    terminal INTEGER NOT NULL,
    json TEXT NOT NULL,
    PRIMARY KEY (log_id, sequence)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS claims (
    scope TEXT NOT NULL,
    key_hash TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    log_id TEXT NOT NULL,
    PRIMARY KEY (scope, key_hash)
);
CREATE TABLE IF NOT EXISTS kv (
    namespace TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (namespace, key)
);
";

/// How far a committed append survives (SQLite's `synchronous` in WAL mode).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SqliteSync {
    /// `NORMAL`: a committed append survives the process being killed at any point; a power
    /// loss or an OS crash may take back the last ones.
    #[default]
    Normal,
    /// `FULL`: a committed append also survives a power loss or an OS crash (an fsync per
    /// append).
    Full,
}

impl SqliteSync {
    fn pragma(self) -> &'static str {
        match self {
            SqliteSync::Normal => "NORMAL",
            SqliteSync::Full => "FULL",
        }
    }
}

/// An event store in one SQLite file.
#[derive(Debug)]
pub struct SqliteEventStore {
    connection: Mutex<Connection>,
}

fn backend(error: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(format!("sqlite: {error}"))
}

fn parse_time(text: &str) -> Result<DateTime<Utc>, StoreError> {
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&Utc))
        .map_err(backend)
}

fn format_time(time: &DateTime<Utc>) -> String {
    time.to_rfc3339_opts(chrono::SecondsFormat::Nanos, true)
}

fn parse_surface(text: &str) -> Result<Surface, StoreError> {
    match text {
        "execution" => Ok(Surface::Execution),
        "run" => Ok(Surface::Run),
        other => Err(backend(format!("unknown surface `{other}`"))),
    }
}

impl SqliteEventStore {
    /// Opens (creating when missing) the store at `path` with [`SqliteSync::Normal`].
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        Self::open_with(path, SqliteSync::default())
    }

    /// Opens (creating when missing) the store at `path` with this durability.
    pub fn open_with(path: &Path, sync: SqliteSync) -> Result<Self, StoreError> {
        let connection = Connection::open(path).map_err(backend)?;
        connection
            .busy_timeout(std::time::Duration::from_secs(5))
            .map_err(backend)?;
        let journal: String = connection
            .query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))
            .map_err(backend)?;
        // An in-memory database (tests) has no WAL; a file must have one.
        if !journal.eq_ignore_ascii_case("wal") && !journal.eq_ignore_ascii_case("memory") {
            return Err(backend(format!("journal mode `{journal}` instead of WAL")));
        }
        connection
            .execute_batch(&format!(
                "PRAGMA synchronous = {}; PRAGMA foreign_keys = ON;",
                sync.pragma()
            ))
            .map_err(backend)?;
        connection.execute_batch(SCHEMA).map_err(backend)?;
        Ok(SqliteEventStore {
            connection: Mutex::new(connection),
        })
    }

    /// Opens the store (with [`SqliteSync::Normal`]) and wraps it for the hub.
    pub fn open_shared(path: &Path) -> Result<Arc<dyn EventStore>, StoreError> {
        Self::open_shared_with(path, SqliteSync::default())
    }

    /// Opens the store with this durability and wraps it for the hub.
    pub fn open_shared_with(
        path: &Path,
        sync: SqliteSync,
    ) -> Result<Arc<dyn EventStore>, StoreError> {
        Ok(Arc::new(Self::open_with(path, sync)?))
    }

    fn connection(&self) -> MutexGuard<'_, Connection> {
        self.connection.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn record_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<RawRecord> {
    Ok(RawRecord {
        id: row.get(0)?,
        surface: row.get(1)?,
        created_at: row.get(2)?,
        meta: row.get(3)?,
        last_sequence: row.get(4)?,
        terminal: row.get(5)?,
    })
}

struct RawRecord {
    id: String,
    surface: String,
    created_at: String,
    meta: String,
    last_sequence: Option<i64>,
    terminal: bool,
}

impl RawRecord {
    fn into_record(self) -> Result<LogRecord, StoreError> {
        Ok(LogRecord {
            id: self.id,
            surface: parse_surface(&self.surface)?,
            created_at: parse_time(&self.created_at)?,
            meta: serde_json::from_str(&self.meta).map_err(backend)?,
            last_sequence: self.last_sequence.map(|s| s as u64),
            terminal: self.terminal,
        })
    }
}

const RECORD_COLUMNS: &str = "id, surface, created_at, meta, last_sequence, terminal";

impl EventStore for SqliteEventStore {
    fn create_log(&self, record: &LogRecord) -> Result<(), StoreError> {
        let meta = serde_json::to_string(&record.meta).map_err(backend)?;
        let inserted = self
            .connection()
            .execute(
                "INSERT OR IGNORE INTO logs (id, surface, created_at, meta, last_sequence, terminal)
                 VALUES (?1, ?2, ?3, ?4, NULL, 0)",
                params![
                    record.id,
                    record.surface.as_str(),
                    format_time(&record.created_at),
                    meta
                ],
            )
            .map_err(backend)?;
        if inserted == 0 {
            return Err(StoreError::DuplicateLog(record.id.clone()));
        }
        Ok(())
    }

    fn append(&self, log_id: &str, event: &StoredEvent) -> Result<(), StoreError> {
        let mut connection = self.connection();
        let transaction = connection
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(backend)?;
        let extent: Option<(String, Option<i64>)> = transaction
            .query_row(
                "SELECT surface, last_sequence FROM logs WHERE id = ?1",
                params![log_id],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()
            .map_err(backend)?;
        let Some((surface, last_sequence)) = extent else {
            return Err(StoreError::UnknownLog(log_id.to_string()));
        };
        let expected = last_sequence.map_or_else(
            || parse_surface(&surface).map(Surface::first_sequence),
            |last| Ok(last as u64 + 1),
        )?;
        if event.sequence != expected {
            return Err(StoreError::SequenceConflict {
                log_id: log_id.to_string(),
                expected,
                got: event.sequence,
            });
        }
        transaction
            .execute(
                "UPDATE logs SET last_sequence = ?2, terminal = terminal OR ?3 WHERE id = ?1",
                params![log_id, event.sequence as i64, event.terminal],
            )
            .map_err(backend)?;
        transaction
            .execute(
                "INSERT INTO events (log_id, sequence, time, event_type, terminal, json)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    log_id,
                    event.sequence as i64,
                    format_time(&event.time),
                    &*event.event_type,
                    event.terminal,
                    &*event.json
                ],
            )
            .map_err(backend)?;
        transaction.commit().map_err(backend)
    }

    fn read_after(&self, log_id: &str, after: Option<u64>) -> Result<Vec<StoredEvent>, StoreError> {
        let connection = self.connection();
        let exists: Option<i64> = connection
            .query_row("SELECT 1 FROM logs WHERE id = ?1", params![log_id], |r| {
                r.get(0)
            })
            .optional()
            .map_err(backend)?;
        if exists.is_none() {
            return Err(StoreError::UnknownLog(log_id.to_string()));
        }
        let after = after.map_or(-1, |a| a.min(i64::MAX as u64) as i64);
        let mut statement = connection
            .prepare_cached(
                "SELECT sequence, time, event_type, terminal, json FROM events
                 WHERE log_id = ?1 AND sequence > ?2 ORDER BY sequence",
            )
            .map_err(backend)?;
        let rows = statement
            .query_map(params![log_id, after], |row| {
                Ok((
                    row.get::<_, i64>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, String>(2)?,
                    row.get::<_, bool>(3)?,
                    row.get::<_, String>(4)?,
                ))
            })
            .map_err(backend)?;
        let mut events = Vec::new();
        for row in rows {
            let (sequence, time, event_type, terminal, json) = row.map_err(backend)?;
            events.push(StoredEvent {
                sequence: sequence as u64,
                time: parse_time(&time)?,
                event_type: Arc::from(event_type),
                terminal,
                json: Arc::from(json),
            });
        }
        Ok(events)
    }

    fn log(&self, log_id: &str) -> Result<Option<LogRecord>, StoreError> {
        let raw = self
            .connection()
            .query_row(
                &format!("SELECT {RECORD_COLUMNS} FROM logs WHERE id = ?1"),
                params![log_id],
                record_from_row,
            )
            .optional()
            .map_err(backend)?;
        raw.map(RawRecord::into_record).transpose()
    }

    fn logs(&self, surface: Surface) -> Result<Vec<LogRecord>, StoreError> {
        let connection = self.connection();
        let mut statement = connection
            .prepare(&format!(
                "SELECT {RECORD_COLUMNS} FROM logs WHERE surface = ?1 ORDER BY created_at, id"
            ))
            .map_err(backend)?;
        let rows = statement
            .query_map(params![surface.as_str()], record_from_row)
            .map_err(backend)?;
        let mut records = Vec::new();
        for row in rows {
            records.push(row.map_err(backend)?.into_record()?);
        }
        Ok(records)
    }

    fn update_meta(&self, log_id: &str, meta: &Value) -> Result<(), StoreError> {
        let meta = serde_json::to_string(meta).map_err(backend)?;
        let updated = self
            .connection()
            .execute(
                "UPDATE logs SET meta = ?2 WHERE id = ?1",
                params![log_id, meta],
            )
            .map_err(backend)?;
        if updated == 0 {
            return Err(StoreError::UnknownLog(log_id.to_string()));
        }
        Ok(())
    }

    fn claim(
        &self,
        scope: &str,
        key_hash: &str,
        fingerprint: &str,
        log_id: &str,
    ) -> Result<ClaimOutcome, StoreError> {
        let mut connection = self.connection();
        let transaction = connection.transaction().map_err(backend)?;
        let existing: Option<(String, String)> = transaction
            .query_row(
                "SELECT fingerprint, log_id FROM claims WHERE scope = ?1 AND key_hash = ?2",
                params![scope, key_hash],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()
            .map_err(backend)?;
        let outcome = match existing {
            Some((bound, bound_log)) if bound == fingerprint => {
                ClaimOutcome::Replay { log_id: bound_log }
            }
            Some(_) => ClaimOutcome::Mismatch,
            None => {
                transaction
                    .execute(
                        "INSERT INTO claims (scope, key_hash, fingerprint, log_id)
                         VALUES (?1, ?2, ?3, ?4)",
                        params![scope, key_hash, fingerprint, log_id],
                    )
                    .map_err(backend)?;
                ClaimOutcome::Claimed
            }
        };
        transaction.commit().map_err(backend)?;
        Ok(outcome)
    }

    fn claim_holder(&self, scope: &str, key_hash: &str) -> Result<Option<String>, StoreError> {
        self.connection()
            .query_row(
                "SELECT log_id FROM claims WHERE scope = ?1 AND key_hash = ?2",
                params![scope, key_hash],
                |row| row.get(0),
            )
            .optional()
            .map_err(backend)
    }

    fn release_claim(&self, scope: &str, key_hash: &str) -> Result<(), StoreError> {
        self.connection()
            .execute(
                "DELETE FROM claims WHERE scope = ?1 AND key_hash = ?2",
                params![scope, key_hash],
            )
            .map_err(backend)?;
        Ok(())
    }

    fn kv_get(&self, namespace: &str, key: &str) -> Result<Option<Value>, StoreError> {
        let text: Option<String> = self
            .connection()
            .query_row(
                "SELECT value FROM kv WHERE namespace = ?1 AND key = ?2",
                params![namespace, key],
                |row| row.get(0),
            )
            .optional()
            .map_err(backend)?;
        text.map(|t| serde_json::from_str(&t).map_err(backend))
            .transpose()
    }

    fn kv_put(&self, namespace: &str, key: &str, value: &Value) -> Result<(), StoreError> {
        let text = serde_json::to_string(value).map_err(backend)?;
        self.connection()
            .execute(
                "INSERT INTO kv (namespace, key, value) VALUES (?1, ?2, ?3)
                 ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value",
                params![namespace, key, text],
            )
            .map_err(backend)?;
        Ok(())
    }

    fn is_durable(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(sequence: u64, terminal: bool) -> StoredEvent {
        StoredEvent {
            sequence,
            time: Utc::now(),
            event_type: Arc::from("t"),
            terminal,
            json: Arc::from(format!("{{\"sequence\":{sequence}}}")),
        }
    }

    #[test]
    fn survives_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.db");
        {
            let store = SqliteEventStore::open(&path).unwrap();
            store
                .create_log(&LogRecord {
                    id: "e1".into(),
                    surface: Surface::Execution,
                    created_at: Utc::now(),
                    meta: serde_json::json!({"k": 1}),
                    last_sequence: None,
                    terminal: false,
                })
                .unwrap();
            store.append("e1", &event(1, false)).unwrap();
            store.append("e1", &event(2, true)).unwrap();
            assert_eq!(
                store.claim("x", "h", "f", "e1").unwrap(),
                ClaimOutcome::Claimed
            );
            store.kv_put("ns", "k", &serde_json::json!([1, 2])).unwrap();
            assert_eq!(store.claim_holder("x", "h").unwrap().as_deref(), Some("e1"));
            assert_eq!(store.claim_holder("x", "other").unwrap(), None);
        }
        let store = SqliteEventStore::open(&path).unwrap();
        let record = store.log("e1").unwrap().unwrap();
        assert_eq!(record.last_sequence, Some(2));
        assert!(record.terminal);
        assert_eq!(record.meta, serde_json::json!({"k": 1}));
        let events = store.read_after("e1", Some(1)).unwrap();
        assert_eq!(events.len(), 1);
        assert_eq!(&*events[0].json, "{\"sequence\":2}");
        assert_eq!(
            store.claim("x", "h", "f", "e2").unwrap(),
            ClaimOutcome::Replay {
                log_id: "e1".into()
            }
        );
        assert_eq!(
            store.claim("x", "h", "g", "e2").unwrap(),
            ClaimOutcome::Mismatch
        );
        assert_eq!(
            store.kv_get("ns", "k").unwrap(),
            Some(serde_json::json!([1, 2]))
        );
        assert_eq!(store.logs(Surface::Execution).unwrap().len(), 1);
        assert!(matches!(
            store.read_after("nope", None),
            Err(StoreError::UnknownLog(_))
        ));
    }

    #[test]
    fn refuses_a_duplicate_sequence() {
        let store = SqliteEventStore::open(Path::new(":memory:")).unwrap();
        store
            .create_log(&LogRecord {
                id: "e1".into(),
                surface: Surface::Run,
                created_at: Utc::now(),
                meta: Value::Null,
                last_sequence: None,
                terminal: false,
            })
            .unwrap();
        store.append("e1", &event(0, false)).unwrap();
        assert!(store.append("e1", &event(0, false)).is_err());
    }

    #[test]
    fn refuses_a_gap_and_keeps_the_extent() {
        let store = SqliteEventStore::open(Path::new(":memory:")).unwrap();
        store
            .create_log(&LogRecord {
                id: "e1".into(),
                surface: Surface::Execution,
                created_at: Utc::now(),
                meta: Value::Null,
                last_sequence: None,
                terminal: false,
            })
            .unwrap();
        assert!(matches!(
            store.append("e1", &event(0, false)),
            Err(StoreError::SequenceConflict {
                expected: 1,
                got: 0,
                ..
            })
        ));
        store.append("e1", &event(1, false)).unwrap();
        assert!(matches!(
            store.append("e1", &event(3, true)),
            Err(StoreError::SequenceConflict {
                expected: 2,
                got: 3,
                ..
            })
        ));
        let record = store.log("e1").unwrap().unwrap();
        assert_eq!((record.last_sequence, record.terminal), (Some(1), false));
        assert_eq!(store.read_after("e1", None).unwrap().len(), 1);
    }

    #[test]
    fn a_file_is_in_wal_mode_with_the_chosen_sync() {
        let dir = tempfile::tempdir().unwrap();
        for (sync, level) in [(SqliteSync::Normal, 1), (SqliteSync::Full, 2)] {
            let path = dir.path().join(format!("{level}.db"));
            let store = SqliteEventStore::open_with(&path, sync).unwrap();
            let connection = store.connection();
            let journal: String = connection
                .query_row("PRAGMA journal_mode", [], |row| row.get(0))
                .unwrap();
            let synchronous: i64 = connection
                .query_row("PRAGMA synchronous", [], |row| row.get(0))
                .unwrap();
            assert_eq!((journal.as_str(), synchronous), ("wal", level));
        }
    }
}
