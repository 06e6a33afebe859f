//! `Idempotency-Key` on `POST /runs`: the key is bound per tenant to the first request's
//! fingerprint (SHA-256 of the body with object keys sorted) and its response; a replay with the
//! same body gets that response again with `OpenWOP-Idempotent-Replay: true`, a different body
//! 409 `idempotency_key_mismatch`. A request refused at validation never binds its key.

use axum::http::HeaderMap;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::error::ApiError;

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

/// SHA-256 (hex) of the key, so the store never holds the key itself.
pub(crate) fn key_hash(key: &str) -> String {
    hex::encode(Sha256::digest(key.as_bytes()))
}

/// SHA-256 (hex) of the canonical JSON of a body: object keys sorted at every level.
pub(crate) fn fingerprint(body: &Value) -> String {
    let mut text = String::new();
    canonical(body, &mut text);
    hex::encode(Sha256::digest(text.as_bytes()))
}

fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                canonical(&map[key], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
