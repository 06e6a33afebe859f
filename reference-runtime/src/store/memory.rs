//! The in-memory event store: the default; nothing survives the process.

use std::collections::HashMap;
use std::sync::RwLock;

use serde_json::Value;

use super::event_store::{ClaimOutcome, EventStore, LogRecord, StoreError, StoredEvent, Surface};

/// Logs, claims and key-value state in memory.
#[derive(Debug, Default)]
pub struct MemoryEventStore {
    logs: RwLock<HashMap<String, (LogRecord, Vec<StoredEvent>)>>,
    claims: RwLock<HashMap<(String, String), (String, String)>>,
    kv: RwLock<HashMap<(String, String), Value>>,
}

impl MemoryEventStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

fn poisoned<T>(_: T) -> StoreError {
    StoreError::Backend("in-memory store lock poisoned".into())
}

impl EventStore for MemoryEventStore {
    fn create_log(&self, record: &LogRecord) -> Result<(), StoreError> {
        let mut logs = self.logs.write().map_err(poisoned)?;
        if logs.contains_key(&record.id) {
            return Err(StoreError::DuplicateLog(record.id.clone()));
        }
        logs.insert(record.id.clone(), (record.clone(), Vec::new()));
        Ok(())
    }

    fn append(&self, log_id: &str, event: &StoredEvent) -> Result<(), StoreError> {
        let mut logs = self.logs.write().map_err(poisoned)?;
        let (record, events) = logs
            .get_mut(log_id)
            .ok_or_else(|| StoreError::UnknownLog(log_id.into()))?;
        let expected = record
            .last_sequence
            .map_or(record.surface.first_sequence(), |s| s + 1);
        if event.sequence != expected {
            return Err(StoreError::SequenceConflict {
                log_id: log_id.into(),
                expected,
                got: event.sequence,
            });
        }
        record.last_sequence = Some(event.sequence);
        record.terminal |= event.terminal;
        events.push(event.clone());
        Ok(())
    }

    fn read_after(&self, log_id: &str, after: Option<u64>) -> Result<Vec<StoredEvent>, StoreError> {
        let logs = self.logs.read().map_err(poisoned)?;
        let (_, events) = logs
            .get(log_id)
            .ok_or_else(|| StoreError::UnknownLog(log_id.into()))?;
        let start = match after {
            None => 0,
            Some(after) => events.partition_point(|e| e.sequence <= after),
        };
        Ok(events[start..].to_vec())
    }

    fn log(&self, log_id: &str) -> Result<Option<LogRecord>, StoreError> {
        Ok(self
            .logs
            .read()
            .map_err(poisoned)?
            .get(log_id)
            .map(|(r, _)| r.clone()))
    }

    fn logs(&self, surface: Surface) -> Result<Vec<LogRecord>, StoreError> {
        let logs = self.logs.read().map_err(poisoned)?;
        let mut records: Vec<LogRecord> = logs
            .values()
            .filter(|(r, _)| r.surface == surface)
            .map(|(r, _)| r.clone())
            .collect();
        records.sort_by(|a, b| {
            a.created_at
                .cmp(&b.created_at)
                .then_with(|| a.id.cmp(&b.id))
        });
        Ok(records)
    }

    fn update_meta(&self, log_id: &str, meta: &Value) -> Result<(), StoreError> {
        let mut logs = self.logs.write().map_err(poisoned)?;
        let (record, _) = logs
            .get_mut(log_id)
            .ok_or_else(|| StoreError::UnknownLog(log_id.into()))?;
        record.meta = meta.clone();
        Ok(())
    }

    fn claim(
        &self,
        scope: &str,
        key_hash: &str,
        fingerprint: &str,
        log_id: &str,
    ) -> Result<ClaimOutcome, StoreError> {
        let mut claims = self.claims.write().map_err(poisoned)?;
        let key = (scope.to_string(), key_hash.to_string());
        match claims.get(&key) {
            Some((bound_fingerprint, bound_log)) if bound_fingerprint == fingerprint => {
                Ok(ClaimOutcome::Replay {
                    log_id: bound_log.clone(),
                })
            }
            Some(_) => Ok(ClaimOutcome::Mismatch),
            None => {
                claims.insert(key, (fingerprint.to_string(), log_id.to_string()));
                Ok(ClaimOutcome::Claimed)
            }
        }
    }

    fn claim_holder(&self, scope: &str, key_hash: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .claims
            .read()
            .map_err(poisoned)?
            .get(&(scope.to_string(), key_hash.to_string()))
            .map(|(_, log_id)| log_id.clone()))
    }

    fn release_claim(&self, scope: &str, key_hash: &str) -> Result<(), StoreError> {
        self.claims
            .write()
            .map_err(poisoned)?
            .remove(&(scope.to_string(), key_hash.to_string()));
        Ok(())
    }

    fn kv_get(&self, namespace: &str, key: &str) -> Result<Option<Value>, StoreError> {
        Ok(self
            .kv
            .read()
            .map_err(poisoned)?
            .get(&(namespace.to_string(), key.to_string()))
            .cloned())
    }

    fn kv_put(&self, namespace: &str, key: &str, value: &Value) -> Result<(), StoreError> {
        self.kv
            .write()
            .map_err(poisoned)?
            .insert((namespace.to_string(), key.to_string()), value.clone());
        Ok(())
    }

    fn is_durable(&self) -> bool {
        false
    }
}
