//! The era-2 seed rewrite: payload members the v2 payload of their type cannot carry are
//! dropped from the seeded rows before the seam stores them, so the clean reader never meets
//! them (the defect: an unprojectable member dropped silently instead of failing the read).

use axum::body::Body;
use axum::extract::Request;
use axum::http::header::CONTENT_LENGTH;
use serde_json::Value;

use crate::openwop::infra::config::MAX_BODY_BYTES;
use crate::openwop::infra::era2;

/// `request` (a seed) with its rows' unprojectable payload members dropped; a body that is
/// too large or not a seed goes on as it came (the seam refuses it the clean way).
pub(super) async fn without_unprojectable(request: Request) -> Request {
    let (mut parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_BODY_BYTES + 1).await else {
        // Past the limit: the seam answers 413 to an oversized body whatever it holds.
        return Request::from_parts(parts, Body::from(vec![b' '; MAX_BODY_BYTES + 1]));
    };
    let Ok(mut seed) = serde_json::from_slice::<Value>(&bytes) else {
        return Request::from_parts(parts, Body::from(bytes));
    };
    drop_unprojectable(&mut seed);
    parts.headers.remove(CONTENT_LENGTH);
    Request::from_parts(parts, Body::from(seed.to_string()))
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
