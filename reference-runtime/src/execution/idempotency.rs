//! Idempotency-Key: the request fingerprint, the key binding and the replay decision.
//!
//! The fingerprint is the SHA-256 of the request's canonical JSON (`crate::canonical`, shared
//! with surface W: object keys sorted recursively, arrays in order), so key order never matters. The key itself is stored only as
//! its SHA-256. A binding lives in the store (an atomic claim plus a record of the bound
//! execution) until 24 h (configurable) after the bound execution's terminal event, measured
//! with the runtime's clock ([`LogHub::key_expired`], the rule both surfaces share); after that
//! the key is free again. Callers hold the service's
//! creation lock around [`decide`] and [`bind`], so N concurrent duplicates make one execution.

use serde_json::{Value, json};

use spec::execution::ErrorCode;

use super::choices::IdempotencyMismatch;
use super::errors::ApiError;
pub(crate) use crate::canonical::{fingerprint, key_hash};
use crate::log::LogHub;
use crate::store::{ClaimOutcome, StoreError};

/// The claim scope and key-value namespace of surface X keys.
const SCOPE: &str = "x-idempotency";

/// What a submission with a key leads to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Create a new execution and bind the key to it.
    CreateAndBind,
    /// Create a new execution without touching the key.
    CreateUnbound,
    /// Answer with this existing execution (200, `idempotent_replay: true`).
    Replay(String),
}

/// Decides what a keyed submission does. Mismatch → 400 `invalid_request` (or 409 `conflict`,
/// as `mismatch` chooses), nothing created.
pub(crate) fn decide(
    hub: &LogHub,
    key_hash: &str,
    fingerprint: &str,
    mismatch: IdempotencyMismatch,
) -> Result<Decision, ApiError> {
    let Some((bound_log, bound_fingerprint)) = lookup(hub, key_hash)? else {
        return Ok(Decision::CreateAndBind);
    };
    if bound_fingerprint != fingerprint {
        const MESSAGE: &str = "Idempotency-Key was already used with a different request";
        return Err(match mismatch {
            IdempotencyMismatch::InvalidRequest => ApiError::invalid(MESSAGE),
            IdempotencyMismatch::Conflict => ApiError::new(ErrorCode::Conflict, MESSAGE, false),
        });
    }
    Ok(Decision::Replay(bound_log))
}

/// The live binding of a key: `(execution_id, fingerprint)`. An expired binding is released.
fn lookup(hub: &LogHub, key_hash: &str) -> Result<Option<(String, String)>, StoreError> {
    let store = hub.store();
    let Some(entry) = store.kv_get(SCOPE, key_hash)? else {
        return Ok(None);
    };
    let (Some(log_id), Some(fingerprint)) = (
        entry.get("log_id").and_then(Value::as_str),
        entry.get("fingerprint").and_then(Value::as_str),
    ) else {
        return Ok(None);
    };
    if hub.key_expired(log_id)? {
        store.release_claim(SCOPE, key_hash)?;
        store.kv_put(SCOPE, key_hash, &Value::Null)?;
        return Ok(None);
    }
    Ok(Some((log_id.to_string(), fingerprint.to_string())))
}

/// Binds a key to a new execution.
pub(crate) fn bind(
    hub: &LogHub,
    key_hash: &str,
    fingerprint: &str,
    log_id: &str,
) -> Result<(), StoreError> {
    let store = hub.store();
    if !matches!(
        store.claim(SCOPE, key_hash, fingerprint, log_id)?,
        ClaimOutcome::Claimed
    ) {
        // A claim without its record (a crash between the two writes): rebind.
        store.release_claim(SCOPE, key_hash)?;
        store.claim(SCOPE, key_hash, fingerprint, log_id)?;
    }
    store.kv_put(
        SCOPE,
        key_hash,
        &json!({"log_id": log_id, "fingerprint": fingerprint}),
    )
}

/// Frees a key whose execution could not be created.
pub(crate) fn unbind(hub: &LogHub, key_hash: &str) -> Result<(), StoreError> {
    hub.store().release_claim(SCOPE, key_hash)?;
    hub.store().kv_put(SCOPE, key_hash, &Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprint_ignores_key_order_but_not_values() {
        let a = fingerprint(&json!({"b": 1, "a": {"y": [1, 2], "x": "s"}}));
        let b = fingerprint(&json!({"a": {"x": "s", "y": [1, 2]}, "b": 1}));
        let c = fingerprint(&json!({"a": {"x": "s", "y": [2, 1]}, "b": 1}));
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(a.len(), 64);
    }
}
