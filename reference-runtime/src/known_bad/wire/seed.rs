//! The era-2 seed rewrite: payload members the v2 payload of their type cannot carry are
//! dropped from the seeded rows before the seam stores them, so the clean reader never meets
//! them (the defect: an unprojectable member dropped silently instead of failing the read).

use axum::body::Body;
use axum::extract::Request;
use serde_json::Value;

use super::super::body::{Buffered, buffer_within, set_length};
use crate::openwop::infra::config::MAX_BODY_BYTES;
use crate::openwop::infra::era2;

/// `request` (a seed) with its rows' unprojectable payload members dropped; a body past the
/// limit, failing while read or not JSON goes on as it came (the seam refuses it the clean way).
pub(super) async fn without_unprojectable(request: Request) -> Request {
    let (mut parts, body) = request.into_parts();
    let bytes = match buffer_within(body, MAX_BODY_BYTES).await {
        Buffered::Whole(bytes) => bytes,
        Buffered::Unread(body) => return Request::from_parts(parts, body),
    };
    let Ok(mut seed) = serde_json::from_slice::<Value>(&bytes) else {
        return Request::from_parts(parts, Body::from(bytes));
    };
    drop_unprojectable(&mut seed);
    let rewritten = seed.to_string();
    set_length(&mut parts.headers, rewritten.len());
    Request::from_parts(parts, Body::from(rewritten))
}

/// Drops, from each row of `seed`, the payload members its mapped type cannot carry.
fn drop_unprojectable(seed: &mut Value) {
    let rows = seed.get_mut("events").and_then(Value::as_array_mut);
    for row in rows.into_iter().flatten() {
        let Some(v2) = row
            .get("type")
            .and_then(Value::as_str)
            .and_then(era2::v2_type)
        else {
            continue;
        };
        let keys = era2::unprojectable(&v2, row.get("payload").unwrap_or(&Value::Null));
        if let Some(payload) = row.get_mut("payload").and_then(Value::as_object_mut) {
            payload.retain(|key, _| !keys.contains(key));
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn only_members_the_v2_payload_cannot_carry_are_dropped() {
        let mut seed = json!({"events": [
            {"type": "run.completed", "payload": {"outputs": {}, "legacyTotal": 3}},
            {"type": "no.such.type", "payload": {"legacyFlag": true}}
        ]});
        let before = seed.clone();
        drop_unprojectable(&mut seed);
        assert_ne!(seed, before);
        assert_eq!(seed["events"][0]["payload"], json!({"outputs": {}}));
        assert_eq!(seed["events"][1], before["events"][1]);
    }
}
