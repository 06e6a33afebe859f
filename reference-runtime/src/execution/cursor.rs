//! The events cursor: query `after` or header `Last-Event-ID`; `after` wins when both are sent
//! (CONTRACT.md; `[execution] cursor_precedence = "last-event-id"` lets the header win);
//! only events with a larger sequence are sent. A cursor is a non-negative decimal integer
//! (digits only, any length: one beyond `u64` is past the end of every log); anything else,
//! including an empty value, is 400 `invalid_request` before any SSE byte.

use axum::http::HeaderMap;

use super::choices::CursorPrecedence;
use super::errors::ApiError;

/// Resolves the cursor of a request: `None` streams from the first event.
pub(crate) fn resolve(
    raw_query: Option<&str>,
    headers: &HeaderMap,
    precedence: CursorPrecedence,
) -> Result<Option<u64>, ApiError> {
    if precedence == CursorPrecedence::LastEventId && headers.contains_key("last-event-id") {
        // The header wins: `after` is not read at all.
        return header_cursor(headers);
    }
    if let Some(after) = query_after(raw_query)? {
        return Ok(Some(parse(&after)?));
    }
    header_cursor(headers)
}

/// The `Last-Event-ID` cursor, if the header is sent.
fn header_cursor(headers: &HeaderMap) -> Result<Option<u64>, ApiError> {
    let Some(value) = headers.get("last-event-id") else {
        return Ok(None);
    };
    let text = value.to_str().map_err(|_| refused())?;
    Ok(Some(parse(text)?))
}

fn refused() -> ApiError {
    ApiError::invalid("Event cursor must be a non-negative integer")
}

/// A decimal integer beyond `u64` is still a well-formed cursor: it is past the end of every
/// log, so it saturates (only events with a larger sequence are sent: none).
fn parse(text: &str) -> Result<u64, ApiError> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(refused());
    }
    Ok(text.parse().unwrap_or(u64::MAX))
}

/// The value of the `after` query parameter, percent-decoded.
fn query_after(raw_query: Option<&str>) -> Result<Option<String>, ApiError> {
    let Some(raw) = raw_query else {
        return Ok(None);
    };
    let url =
        reqwest::Url::parse(&format!("http://cursor.invalid/?{raw}")).map_err(|_| refused())?;
    Ok(url
        .query_pairs()
        .find(|(name, _)| name == "after")
        .map(|(_, value)| value.into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(value: &str) -> HeaderMap {
        let mut map = HeaderMap::new();
        map.insert("last-event-id", value.parse().unwrap());
        map
    }

    #[test]
    fn integers_beyond_u64_are_past_the_end() {
        assert_eq!(
            resolve(
                Some("after=100000000000000000000"),
                &HeaderMap::new(),
                CursorPrecedence::After
            )
            .unwrap(),
            Some(u64::MAX)
        );
    }

    #[test]
    fn after_wins_and_bad_cursors_are_refused() {
        assert_eq!(
            resolve(None, &HeaderMap::new(), CursorPrecedence::After).unwrap(),
            None
        );
        assert_eq!(
            resolve(Some("after=3"), &header("5"), CursorPrecedence::After).unwrap(),
            Some(3)
        );
        assert_eq!(
            resolve(None, &header("5"), CursorPrecedence::After).unwrap(),
            Some(5)
        );
        assert_eq!(
            resolve(Some("other=1"), &header("5"), CursorPrecedence::After).unwrap(),
            Some(5)
        );
        for bad in [
            "after=",
            "after=-1",
            "after=1.5",
            "after=0x10",
            "after=%201",
        ] {
            assert!(
                resolve(Some(bad), &HeaderMap::new(), CursorPrecedence::After).is_err(),
                "{bad}"
            );
        }
        assert!(resolve(None, &header("abc"), CursorPrecedence::After).is_err());
    }

    #[test]
    fn the_header_wins_when_configured_to() {
        let header_wins = CursorPrecedence::LastEventId;
        assert_eq!(
            resolve(Some("after=3"), &header("5"), header_wins).unwrap(),
            Some(5)
        );
        assert_eq!(
            resolve(Some("after=3"), &HeaderMap::new(), header_wins).unwrap(),
            Some(3)
        );
        assert!(resolve(Some("after=3"), &header("x"), header_wins).is_err());
    }
}
