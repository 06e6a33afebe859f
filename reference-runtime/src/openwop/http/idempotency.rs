//! `Idempotency-Key` on `POST /runs`: the key is bound per tenant to the first request's
//! fingerprint (SHA-256 of the body with object keys sorted) and its response; a replay with the
//! same body gets that response again with `OpenWOP-Idempotent-Replay: true`, a different body
//! 409 `idempotency_key_mismatch`. A request refused at validation never binds its key. A binding
//! is kept 24 h (`[limits] idempotency_retention_hours`) after its run's terminal event, then
//! the key is free again (`LogHub::key_expired`, the rule surface X's keys follow too).

use axum::http::HeaderMap;

pub(crate) use crate::canonical::{fingerprint, key_hash};
use crate::openwop::infra::error::ApiError;

/// The replay marker header.
pub(crate) const REPLAY_HEADER: &str = "openwop-idempotent-replay";

/// The store's key-value namespace of recorded responses.
pub(crate) const RESPONSES_NAMESPACE: &str = "openwop.idempotency";

/// The `Idempotency-Key` of a request: 1–255 visible ASCII characters, or 400
/// `idempotency_key_invalid`.
pub(crate) fn key_from(headers: &HeaderMap) -> Result<Option<String>, ApiError> {
    let Some(value) = headers.get("idempotency-key") else {
        return Ok(None);
    };
    let invalid = || {
        ApiError::new(
            "idempotency_key_invalid",
            "Idempotency-Key must be 1-255 visible ASCII characters",
        )
    };
    let key = value.to_str().map_err(|_| invalid())?;
    if key.is_empty() || key.len() > 255 || !key.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(invalid());
    }
    Ok(Some(key.to_string()))
}

/// The claim scope of a tenant's `POST /runs`.
pub(crate) fn scope(tenant: &str) -> String {
    format!("openwop:{tenant}:POST /runs")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn key_order_never_changes_the_fingerprint() {
        let a = json!({"workflowId": "w", "inputs": {"x": 1, "y": [1, {"b": 2, "a": 1}]}});
        let b: Value =
            serde_json::from_str(r#"{"inputs":{"y":[1,{"a":1,"b":2}],"x":1},"workflowId":"w"}"#)
                .unwrap();
        assert_eq!(fingerprint(&a), fingerprint(&b));
        assert_ne!(fingerprint(&a), fingerprint(&json!({"workflowId": "w"})));
    }

    #[test]
    fn keys_are_checked() {
        let mut headers = HeaderMap::new();
        assert_eq!(key_from(&headers).unwrap(), None);
        headers.insert("idempotency-key", "k-1".parse().unwrap());
        assert_eq!(key_from(&headers).unwrap().as_deref(), Some("k-1"));
        headers.insert("idempotency-key", "a b".parse().unwrap());
        assert_eq!(
            key_from(&headers).unwrap_err().code(),
            "idempotency_key_invalid"
        );
    }
}
