//! What the runtime outside the [`crate::log::LogHub`] may do with the store
//! ([`StoreView`]): read logs, update a log's metadata, claims and small values, but never
//! create a log or append an event. Only the hub holds the whole [`EventStore`], so only the
//! hub assigns sequences, by type.

use serde_json::Value;

use super::event_store::{ClaimOutcome, EventStore, LogRecord, StoreError, StoredEvent, Surface};

/// The store without `create_log` and `append` (see the module documentation).
#[derive(Clone, Copy)]
pub struct StoreView<'a> {
    store: &'a dyn EventStore,
}

impl std::fmt::Debug for StoreView<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreView")
            .field("durable", &self.store.is_durable())
            .finish()
    }
}

impl<'a> StoreView<'a> {
    /// The view of `store`.
    pub fn new(store: &'a dyn EventStore) -> Self {
        StoreView { store }
    }

    /// The events with `sequence > after` (all when `after` is `None`), in log order.
    pub fn read_after(
        &self,
        log_id: &str,
        after: Option<u64>,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        self.store.read_after(log_id, after)
    }

    /// A log's record.
    pub fn log(&self, log_id: &str) -> Result<Option<LogRecord>, StoreError> {
        self.store.log(log_id)
    }

    /// Every log of a surface.
    pub fn logs(&self, surface: Surface) -> Result<Vec<LogRecord>, StoreError> {
        self.store.logs(surface)
    }

    /// Replaces a log's creation metadata.
    pub fn update_meta(&self, log_id: &str, meta: &Value) -> Result<(), StoreError> {
        self.store.update_meta(log_id, meta)
    }

    /// Atomically binds `(scope, key_hash)` to `log_id` unless already bound.
    pub fn claim(
        &self,
        scope: &str,
        key_hash: &str,
        fingerprint: &str,
        log_id: &str,
    ) -> Result<ClaimOutcome, StoreError> {
        self.store.claim(scope, key_hash, fingerprint, log_id)
    }

    /// The log a claim is bound to, `None` when the key is free.
    pub fn claim_holder(&self, scope: &str, key_hash: &str) -> Result<Option<String>, StoreError> {
        self.store.claim_holder(scope, key_hash)
    }

    /// Removes a claim.
    pub fn release_claim(&self, scope: &str, key_hash: &str) -> Result<(), StoreError> {
        self.store.release_claim(scope, key_hash)
    }

    /// Reads a small value.
    pub fn kv_get(&self, namespace: &str, key: &str) -> Result<Option<Value>, StoreError> {
        self.store.kv_get(namespace, key)
    }

    /// Writes a small value.
    pub fn kv_put(&self, namespace: &str, key: &str, value: &Value) -> Result<(), StoreError> {
        self.store.kv_put(namespace, key, value)
    }

    /// Whether the store is durable across restarts.
    pub fn is_durable(&self) -> bool {
        self.store.is_durable()
    }
}
