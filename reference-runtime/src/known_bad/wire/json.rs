//! The JSON rewrites: members of an answer or a refusal changed (poll's page, a stream-mode
//! refusal's `details.supported`, the discovery document), and surface W's refusal envelope the
//! layer answers in a handler's stead.

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use serde_json::{Value, json};

use super::rewrites::WireRewrites;

/// The largest answer body the layer reads to rewrite it (a poll page or an error envelope).
const MAX_REWRITTEN_BODY: usize = 16 << 20;

/// A registered reliability event the reference runtime never emits (listed only by a defective
/// host).
const UNEMITTED_RELIABILITY_EVENT: &str = "envelope.nl-to-format-engaged";

/// `response` with its JSON body changed by `edit` (its other parts kept; a body that is not a
/// JSON object is passed on unchanged). `edit` may answer a whole other response instead.
pub(super) async fn rewrite_json(
    response: Response,
    edit: impl FnOnce(&mut Value) -> Option<Response>,
) -> Response {
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_REWRITTEN_BODY).await else {
        return Response::from_parts(parts, Body::empty());
    };
    let mut value: Value = match serde_json::from_slice(&bytes) {
        Ok(value @ Value::Object(_)) => value,
        _ => return Response::from_parts(parts, Body::from(bytes)),
    };
    if let Some(instead) = edit(&mut value) {
        return instead;
    }
    let body = serde_json::to_vec(&value).unwrap_or_else(|_| bytes.to_vec());
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(body))
}

/// A surface-W refusal: `status` with the flat envelope `{error, message}`.
pub(super) fn w_refusal(status: StatusCode, code: &str, message: &str) -> Response {
    let envelope = spec::openwop::ErrorEnvelope::new(code, message);
    let body = serde_json::to_vec(&envelope).unwrap_or_default();
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// Whether a rewrite touches poll's page ([`poll_page`] does nothing otherwise).
pub(super) fn rewrites_poll_page(rewrites: &WireRewrites) -> bool {
    rewrites.poll_last_sequence_off_by_one() || rewrites.poll_past_end_404()
}

/// Poll's page as the rewrites say: a cursor past the end answered 404 instead of an empty
/// page, `lastSequence` one less than the highest sequence.
pub(super) fn poll_page(
    page: &mut Value,
    after_sequence: Option<u64>,
    rewrites: &WireRewrites,
) -> Option<Response> {
    let last = page.get("lastSequence").and_then(Value::as_i64)?;
    let past_end = u64::try_from(last)
        .ok()
        .zip(after_sequence)
        .is_some_and(|(last, after)| after > last);
    if past_end && rewrites.poll_past_end_404() {
        return Some(w_refusal(
            StatusCode::NOT_FOUND,
            "not_found",
            "no such resource",
        ));
    }
    if rewrites.poll_last_sequence_off_by_one() {
        page["lastSequence"] = json!(last - 1);
    }
    None
}

/// Whether a rewrite touches a 400's `details.supported` ([`supported`] does nothing otherwise).
pub(super) fn rewrites_supported(rewrites: &WireRewrites) -> bool {
    rewrites.supported_omitted() || rewrites.supported_lists_combinations()
}

/// `details.supported` of a 400 `unsupported_stream_mode`, as the rewrites say: omitted, or
/// listing combinations too.
pub(super) fn supported(envelope: &mut Value, rewrites: &WireRewrites) {
    if envelope.get("error").and_then(Value::as_str) != Some("unsupported_stream_mode") {
        return;
    }
    let Some(details) = envelope.get_mut("details").and_then(Value::as_object_mut) else {
        return;
    };
    if rewrites.supported_omitted() {
        details.remove("supported");
        if details.is_empty()
            && let Some(envelope) = envelope.as_object_mut()
        {
            envelope.remove("details");
        }
    } else if rewrites.supported_lists_combinations()
        && let Some(supported) = details.get_mut("supported").and_then(Value::as_array_mut)
    {
        supported.push(json!("updates,messages"));
        supported.push(json!("updates,debug"));
    }
}

/// Whether a rewrite touches the discovery document ([`discovery`] does nothing otherwise).
pub(super) fn rewrites_discovery(rewrites: &WireRewrites) -> bool {
    rewrites.reliability_list_omits_refusal()
        || rewrites.reliability_list_overlisted()
        || rewrites.currency_not_iso()
        || rewrites.host_channel_address_object()
        || rewrites.heartbeat_budget_over_run_ceiling()
}

/// The discovery document as the rewrites say: `envelopes.reliability.events` without
/// `envelope.refusal` or with an event never emitted, `providerUsage.currency` not ISO 4217,
/// `heartbeat.deliveryChannel` an object around the address, `heartbeat.maxRuntimeMs` a second
/// past `limits.maxRunDurationMs`.
pub(super) fn discovery(document: &mut Value, rewrites: &WireRewrites) {
    if rewrites.heartbeat_budget_over_run_ceiling()
        && let Some(ceiling) = document
            .pointer("/limits/maxRunDurationMs")
            .and_then(Value::as_u64)
        && let Some(budget) = document.pointer_mut("/heartbeat/maxRuntimeMs")
    {
        *budget = json!(ceiling + 1000);
    }
    if rewrites.host_channel_address_object()
        && let Some(channel) = document.pointer_mut("/heartbeat/deliveryChannel")
    {
        *channel = json!({ "address": channel.take() });
    }
    if let Some(events) = document
        .pointer_mut("/envelopes/reliability/events")
        .and_then(Value::as_array_mut)
    {
        if rewrites.reliability_list_omits_refusal() {
            events.retain(|e| e != "envelope.refusal");
        }
        if rewrites.reliability_list_overlisted() {
            events.push(json!(UNEMITTED_RELIABILITY_EVENT));
        }
    }
    if rewrites.currency_not_iso()
        && let Some(usage) = document
            .get_mut("providerUsage")
            .and_then(Value::as_object_mut)
    {
        usage.insert("costEstimates".into(), json!(true));
        usage.insert("currency".into(), json!("usd"));
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::policy::KnownBad;
    use super::*;
    use crate::defects::Defect;

    fn rewrites(defect: Defect) -> WireRewrites {
        WireRewrites::of(&KnownBad::of([defect])).expect("a wire defect")
    }

    #[test]
    fn poll_pages_are_rewritten_as_each_defect_says() {
        let page = json!({ "events": [], "lastSequence": 4 });
        let mut off = page.clone();
        assert!(poll_page(&mut off, None, &rewrites(Defect::WPollLastSequenceOffByOne)).is_none());
        assert_eq!(off["lastSequence"], json!(3));
        let past = rewrites(Defect::WPollPastEnd404);
        let refusal = poll_page(&mut page.clone(), Some(5), &past).expect("a 404");
        assert_eq!(refusal.status(), StatusCode::NOT_FOUND);
        assert!(poll_page(&mut page.clone(), Some(4), &past).is_none());
        let mut empty = json!({ "events": [], "lastSequence": -1 });
        assert!(poll_page(&mut empty, Some(5), &past).is_none());
    }

    #[test]
    fn discovery_and_supported_are_rewritten_as_each_defect_says() {
        let document = json!({
            "envelopes": { "reliability": { "events": ["envelope.refusal", "envelope.truncated"] } },
            "providerUsage": { "status": "stable", "costEstimates": true, "currency": "USD" },
        });
        let mut omitted = document.clone();
        discovery(
            &mut omitted,
            &rewrites(Defect::WReliabilityEventsIncomplete),
        );
        assert_eq!(
            omitted["envelopes"]["reliability"]["events"],
            json!(["envelope.truncated"])
        );
        let mut over = document.clone();
        discovery(&mut over, &rewrites(Defect::WReliabilityEventsOverlisted));
        assert_eq!(
            over["envelopes"]["reliability"]["events"][2],
            json!(UNEMITTED_RELIABILITY_EVENT)
        );
        let mut usd = document.clone();
        discovery(&mut usd, &rewrites(Defect::WCurrencyNotIso));
        assert_eq!(usd["providerUsage"]["currency"], json!("usd"));
        let mut wrapped = json!({ "heartbeat": { "deliveryChannel": "/host/events" } });
        discovery(&mut wrapped, &rewrites(Defect::WHostChannelAddressObject));
        assert_eq!(
            wrapped["heartbeat"]["deliveryChannel"],
            json!({ "address": "/host/events" })
        );
        let mut uncapped = json!({
            "heartbeat": { "maxRuntimeMs": 30_000 },
            "limits": { "maxRunDurationMs": 600_000 },
        });
        discovery(
            &mut uncapped,
            &rewrites(Defect::WHeartbeatMaxRuntimeOverRunCeiling),
        );
        assert_eq!(uncapped["heartbeat"]["maxRuntimeMs"], json!(601_000));
        let refusal =
            json!({ "error": "unsupported_stream_mode", "details": { "supported": ["updates"] } });
        let mut missing = refusal.clone();
        supported(&mut missing, &rewrites(Defect::WSupportedMissing));
        assert_eq!(missing, json!({ "error": "unsupported_stream_mode" }));
        let mut listed = refusal.clone();
        supported(&mut listed, &rewrites(Defect::WSupportedListsCombinations));
        assert_eq!(listed["details"]["supported"][1], json!("updates,messages"));
    }
}
