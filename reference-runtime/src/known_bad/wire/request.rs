//! The request rewrites: the cursors a wire defect misreads (`Last-Event-ID`, `after`,
//! `afterSequence`), rewritten before the handler reads them, and [`Asked`], what the answer's
//! rewrites need to know of the request.

use axum::extract::Request;
use axum::http::uri::PathAndQuery;
use axum::http::{HeaderValue, Uri};
use spec::openwop::{StreamMode, StreamModeSelection};

use super::exchange::Exchange;
use super::rewrites::WireRewrites;

/// The resumption header of both surfaces.
const LAST_EVENT_ID: &str = "last-event-id";

/// What the answer's rewrites need to know of the request, read after its own rewrites.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Asked {
    /// A `Last-Event-ID` header that is not a cursor (surface W's stream).
    pub(super) malformed_last_event_id: bool,
    /// `streamMode=messages` alone (surface W's stream).
    pub(super) messages_only: bool,
    /// The `afterSequence` cursor (surface W's poll).
    pub(super) after_sequence: Option<u64>,
}

/// `request` with its cursors rewritten as the defects misread them, and what the answer's
/// rewrites need to know of it.
pub(super) fn rewrite(
    exchange: Exchange,
    mut request: Request,
    rewrites: &WireRewrites,
) -> (Request, Asked) {
    let mut asked = Asked::default();
    match exchange {
        Exchange::Stream => {
            let header = last_event_id(&request);
            let header = match header {
                // A malformed header read as the cursor 0 instead of refused.
                Some(None) if rewrites.malformed_last_event_id_read_as_zero() => Some(Some(0)),
                header => header,
            };
            let cursor = match header {
                // Last-Event-ID N read as inclusive: N-1, or no cursor at all for 0 (surface W's
                // logs start at 0).
                Some(Some(n)) if rewrites.run_last_event_id_inclusive() => {
                    n.checked_sub(1).map(Some)
                }
                // Last-Event-ID N read as N+1: event N+1 is skipped.
                Some(Some(n)) if rewrites.last_event_id_skips_next() => {
                    Some(Some(n.saturating_add(1)))
                }
                header => header,
            };
            if cursor != last_event_id(&request) {
                set_last_event_id(&mut request, cursor.flatten());
            }
            asked.malformed_last_event_id = cursor == Some(None);
            asked.messages_only = query(request.uri(), "streamMode")
                .and_then(|mode| StreamModeSelection::parse(&mode).ok())
                .is_some_and(|selection| selection.modes() == [StreamMode::Messages]);
        }
        Exchange::ExecutionEvents => {
            if rewrites.after_cursor_ignored() {
                // The `after` query cursor is never read.
                edit_query(&mut request, |pairs| {
                    pairs.retain(|(name, _)| name != "after")
                });
            }
            if rewrites.execution_last_event_id_inclusive()
                && let Some(Some(n)) = last_event_id(&request)
                && n > 0
            {
                // Last-Event-ID N read as inclusive: event N is sent again (surface X's logs
                // start at 1, so 0 stays 0).
                set_last_event_id(&mut request, Some(n - 1));
            }
        }
        Exchange::Poll => {
            if rewrites.poll_honours_last_sequence()
                && query(request.uri(), "afterSequence").is_none()
                && let Some(last) = query(request.uri(), "lastSequence")
            {
                // `lastSequence` (not a parameter) taken as the cursor.
                edit_query(&mut request, |pairs| {
                    pairs.push(("afterSequence".to_string(), last));
                });
            }
            asked.after_sequence = query(request.uri(), "afterSequence").and_then(|v| cursor(&v));
        }
        _ => {}
    }
    (request, asked)
}

/// A well-formed cursor: ASCII digits only, saturating beyond `u64` (as both surfaces read it).
fn cursor(text: &str) -> Option<u64> {
    (!text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()))
        .then(|| text.parse().unwrap_or(u64::MAX))
}

/// The `Last-Event-ID` header: absent (`None`), malformed (`Some(None)`) or a cursor.
fn last_event_id(request: &Request) -> Option<Option<u64>> {
    let value = request.headers().get(LAST_EVENT_ID)?;
    Some(value.to_str().ok().and_then(cursor))
}

/// Sets `Last-Event-ID` to `cursor`, or removes it.
fn set_last_event_id(request: &mut Request, cursor: Option<u64>) {
    match cursor {
        Some(n) => request
            .headers_mut()
            .insert(LAST_EVENT_ID, HeaderValue::from(n)),
        None => request.headers_mut().remove(LAST_EVENT_ID),
    };
}

/// The query's pairs, percent-decoded (`None` for a query that cannot be read).
fn pairs(uri: &Uri) -> Option<Vec<(String, String)>> {
    let raw = uri.query().unwrap_or("");
    let url = reqwest::Url::parse(&format!("http://wire.invalid/?{raw}")).ok()?;
    Some(url.query_pairs().into_owned().collect())
}

/// The first value of the query parameter `name`.
fn query(uri: &Uri, name: &str) -> Option<String> {
    pairs(uri)?
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, value)| value)
}

/// `request` with its query's pairs changed by `edit` (unchanged if it cannot be read).
fn edit_query(request: &mut Request, edit: impl FnOnce(&mut Vec<(String, String)>)) {
    let Some(mut pairs) = pairs(request.uri()) else {
        return;
    };
    edit(&mut pairs);
    let mut url = match reqwest::Url::parse("http://wire.invalid/") {
        Ok(url) => url,
        Err(_) => return,
    };
    if !pairs.is_empty() {
        url.query_pairs_mut().extend_pairs(&pairs);
    }
    let path_and_query = match url.query() {
        Some(query) => format!("{}?{query}", request.uri().path()),
        None => request.uri().path().to_string(),
    };
    let mut parts = request.uri().clone().into_parts();
    let Ok(path_and_query) = PathAndQuery::try_from(path_and_query) else {
        return;
    };
    parts.path_and_query = Some(path_and_query);
    if let Ok(uri) = Uri::from_parts(parts) {
        *request.uri_mut() = uri;
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

    fn get(uri: &str, last_event_id: Option<&str>) -> Request {
        let mut builder = Request::get(uri);
        if let Some(value) = last_event_id {
            builder = builder.header(LAST_EVENT_ID, value);
        }
        builder.body(axum::body::Body::empty()).expect("a request")
    }

    fn header(request: &Request) -> Option<&str> {
        request
            .headers()
            .get(LAST_EVENT_ID)
            .and_then(|v| v.to_str().ok())
    }

    #[test]
    fn run_cursors_are_misread_as_each_defect_says() {
        let stream = "/runs/r1/events";
        let inclusive = rewrites(Defect::WLastEventIdInclusive);
        let (request, _) = rewrite(Exchange::Stream, get(stream, Some("5")), &inclusive);
        assert_eq!(header(&request), Some("4"));
        let (request, _) = rewrite(Exchange::Stream, get(stream, Some("0")), &inclusive);
        assert_eq!(header(&request), None);
        let skips = rewrites(Defect::WLastEventIdSkipsNext);
        let (request, _) = rewrite(Exchange::Stream, get(stream, Some("5")), &skips);
        assert_eq!(header(&request), Some("6"));
        let zero = rewrites(Defect::WMalformedLastEventIdAccepted);
        let (request, asked) = rewrite(Exchange::Stream, get(stream, Some("x")), &zero);
        assert_eq!(
            (header(&request), asked.malformed_last_event_id),
            (Some("0"), false)
        );
        let before = rewrites(Defect::WLastEventIdBeforeAuthorization);
        let (request, asked) = rewrite(Exchange::Stream, get(stream, Some("x")), &before);
        assert_eq!(
            (header(&request), asked.malformed_last_event_id),
            (Some("x"), true)
        );
        let (_, asked) = rewrite(
            Exchange::Stream,
            get("/runs/r1/events?streamMode=messages", None),
            &before,
        );
        assert!(asked.messages_only);
        let (_, asked) = rewrite(
            Exchange::Stream,
            get("/runs/r1/events?streamMode=messages,updates", None),
            &before,
        );
        assert!(!asked.messages_only);
    }

    #[test]
    fn execution_cursors_and_poll_cursors_are_misread_as_each_defect_says() {
        let events = "/v1/executions/e1/events?after=3&x=y";
        let ignored = rewrites(Defect::XAfterIgnored);
        let (request, _) = rewrite(Exchange::ExecutionEvents, get(events, Some("2")), &ignored);
        assert_eq!(request.uri().query(), Some("x=y"));
        assert_eq!(header(&request), Some("2"));
        let inclusive = rewrites(Defect::XLastEventIdInclusive);
        let (request, _) = rewrite(
            Exchange::ExecutionEvents,
            get(events, Some("2")),
            &inclusive,
        );
        assert_eq!(
            (request.uri().query(), header(&request)),
            (Some("after=3&x=y"), Some("1"))
        );
        let (request, _) = rewrite(
            Exchange::ExecutionEvents,
            get(events, Some("0")),
            &inclusive,
        );
        assert_eq!(header(&request), Some("0"));
        let honours = rewrites(Defect::WPollHonoursLastSequence);
        let poll = "/runs/r1/events/poll?lastSequence=7";
        let (request, asked) = rewrite(Exchange::Poll, get(poll, None), &honours);
        assert_eq!(
            request.uri().query(),
            Some("lastSequence=7&afterSequence=7")
        );
        assert_eq!(asked.after_sequence, Some(7));
        let past = rewrites(Defect::WPollPastEnd404);
        let (request, asked) = rewrite(Exchange::Poll, get(poll, None), &past);
        assert_eq!(
            (request.uri().query(), asked.after_sequence),
            (Some("lastSequence=7"), None)
        );
    }
}
