//! Canonical JSON and the fingerprints both surfaces bind `Idempotency-Key`s with: object keys
//! sorted at every level, arrays in order, scalars as `serde_json` writes them, so key order
//! never changes a fingerprint. Keys themselves are kept only as their SHA-256.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// The canonical JSON text of `value`.
pub(crate) fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

/// SHA-256 (hex) of the canonical JSON of `value`: a request's fingerprint.
pub(crate) fn fingerprint(value: &Value) -> String {
    hex::encode(Sha256::digest(canonical_json(value).as_bytes()))
}

/// SHA-256 (hex) of an idempotency key, so no store holds the key itself.
pub(crate) fn key_hash(key: &str) -> String {
    hex::encode(Sha256::digest(key.as_bytes()))
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (key, value)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_canonical(value, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_are_sorted_at_every_level_and_arrays_keep_their_order() {
        let value: Value =
            serde_json::from_str(r#"{"b":[2,{"d":1,"c":"x"}],"a":null,"é":1.5}"#).unwrap();
        assert_eq!(
            canonical_json(&value),
            r#"{"a":null,"b":[2,{"c":"x","d":1}],"é":1.5}"#
        );
        assert_ne!(fingerprint(&json!([1, 2])), fingerprint(&json!([2, 1])));
        assert_eq!(key_hash("k").len(), 64);
    }
}
