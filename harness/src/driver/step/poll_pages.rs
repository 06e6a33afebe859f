//! A run-events poll answered in pages, read to its end.
//!
//! The events chapter gives `GET /runs/{runId}/events/poll` no `limit` parameter, but it does
//! not say that one answer holds every event after the cursor either: `lastSequence` is "the
//! highest sequence in the log at the time of the response", which an answer may stop short
//! of. A host may therefore page. A request step to a W poll whose answer ends before its own
//! `lastSequence` is read on from its last event (`afterSequence`), as a client would, and the
//! step's response is the pages joined: their events in order, every other member from the
//! last page. Each page stays in the step's record before the joined answer, so the report
//! shows what the host sent. A host that answers every event at once sends one page and is
//! read exactly as before.

use serde_json::Value;

use crate::case::{CaseSurface, RequestSpec};
use crate::transcript::{Exchange, ResponseRecord};

/// At most this many pages are read for one step (a host that pages forever is judged on what
/// was read; every page is bounded by the driver's own body limit).
pub(super) const MAX_PAGES: usize = 256;

/// Whether the step's request is a run-events poll (a `GET` of `…/events/poll` on surface W).
pub(super) fn is_events_poll(surface: CaseSurface, request: &RequestSpec) -> bool {
    surface == CaseSurface::Openwop
        && request.method.eq_ignore_ascii_case("GET")
        && request.path.ends_with("/events/poll")
}

/// The cursor to read the next page from: the last event's sequence, when the answer is a
/// 200 poll document whose events stop before its `lastSequence` and advance past `after`
/// (the cursor this page was read from). `None` when the answer is whole, not a poll document,
/// or would not move the cursor forward.
pub(super) fn next_cursor(response: &ResponseRecord, after: Option<i64>) -> Option<i64> {
    if response.status != 200 {
        return None;
    }
    let body = response.json.as_ref()?;
    let last_sequence = body.get("lastSequence")?.as_i64()?;
    let last_event = body.get("events")?.as_array()?.last()?;
    let reached = last_event.get("sequence")?.as_i64()?;
    let advances = after.is_none_or(|after| reached > after);
    (reached < last_sequence && advances).then_some(reached)
}

/// The pages joined into one answer: the first page's request, the last page's response with
/// every page's events in order (and the body text and size of what was joined).
pub(super) fn joined(pages: &[Exchange]) -> Option<Exchange> {
    let first = pages.first()?;
    let last = pages.last()?;
    let mut response = last.response.clone()?;
    let mut body = response.json.clone()?;
    let events: Vec<Value> = pages
        .iter()
        .filter_map(|page| {
            page.response
                .as_ref()?
                .json
                .as_ref()?
                .get("events")?
                .as_array()
        })
        .flatten()
        .cloned()
        .collect();
    body.as_object_mut()?
        .insert("events".into(), Value::Array(events));
    response.body = body.to_string();
    response.body_bytes = pages
        .iter()
        .filter_map(|page| page.response.as_ref().map(|r| r.body_bytes))
        .sum();
    response.json = Some(body);
    Some(Exchange {
        request: first.request.clone(),
        response: Some(response),
        transport_error: None,
        sent_at_ms: first.sent_at_ms,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::{BodyEnd, RequestRecord};
    use serde_json::json;

    fn page(status: u16, body: Value) -> Exchange {
        Exchange {
            request: RequestRecord {
                method: "GET".into(),
                url: "http://host/runs/r/events/poll".into(),
                headers: Vec::new(),
                body: None,
            },
            response: Some(ResponseRecord {
                status,
                headers: Vec::new(),
                headers_at_ms: 0,
                body: body.to_string(),
                body_bytes: body.to_string().len() as u64,
                body_utf8: true,
                json: Some(body),
                frames: Vec::new(),
                trailing_partial_frame: None,
                end: BodyEnd::ServerClosed,
                end_at_ms: 0,
                excerpt: None,
                folded: None,
                run_end: None,
            }),
            transport_error: None,
            sent_at_ms: 0,
        }
    }

    fn poll(sequences: &[i64], last_sequence: i64) -> Value {
        let events: Vec<Value> = sequences.iter().map(|s| json!({"sequence": s})).collect();
        json!({"runId": "r", "events": events, "lastSequence": last_sequence, "status": "completed", "isTerminal": true})
    }

    #[test]
    fn an_answer_short_of_its_last_sequence_is_read_on_from_its_last_event() {
        let short = page(200, poll(&[0, 1, 2], 5));
        assert_eq!(next_cursor(short.response.as_ref().unwrap(), None), Some(2));
        assert_eq!(
            next_cursor(short.response.as_ref().unwrap(), Some(1)),
            Some(2)
        );
    }

    #[test]
    fn a_whole_answer_an_empty_one_a_refusal_or_a_cursor_that_does_not_move_ends_the_read() {
        let cursor =
            |exchange: Exchange, after| next_cursor(exchange.response.as_ref().unwrap(), after);
        assert_eq!(cursor(page(200, poll(&[0, 1, 2], 2)), None), None);
        assert_eq!(cursor(page(200, poll(&[], 5)), None), None);
        assert_eq!(cursor(page(400, poll(&[0], 5)), None), None);
        assert_eq!(cursor(page(200, poll(&[0, 1, 2], 5)), Some(2)), None);
        assert_eq!(
            cursor(page(200, json!({"events": [{"sequence": 0}]})), None),
            None
        );
    }

    #[test]
    fn pages_join_their_events_in_order_under_the_last_pages_members() {
        let pages = [page(200, poll(&[0, 1], 3)), page(200, poll(&[2, 3], 4))];
        let joined = joined(&pages).unwrap();
        let body = joined.response.as_ref().unwrap().json.clone().unwrap();
        assert_eq!(
            body["events"],
            json!([{"sequence": 0}, {"sequence": 1}, {"sequence": 2}, {"sequence": 3}])
        );
        assert_eq!(body["lastSequence"], json!(4));
        assert_eq!(joined.response.unwrap().body, body.to_string());
    }
}
