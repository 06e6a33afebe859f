//! A submission's body buffered for the layer (`known_bad/body.rs`) within the runtime's body
//! limit, without changing what the service's admission reads: a body the admission would
//! refuse unread (not JSON, declared too large) is left unread.

use axum::body::Body;
use axum::http::{HeaderMap, header};

use super::super::body::buffer_within;
pub(super) use super::super::body::{Buffered, set_length};

/// Reads `body` whole when it is JSON within `limit` bytes (as `headers` declare it and as it
/// turns out).
pub(super) async fn buffer(headers: &HeaderMap, body: Body, limit: usize) -> Buffered {
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if !crate::execution::admission::declares_json(headers)
        || declared.is_some_and(|len| len > limit as u64)
    {
        return Buffered::Unread(body);
    }
    buffer_within(body, limit).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json_headers(length: Option<usize>) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::CONTENT_TYPE, "application/json".parse().unwrap());
        if let Some(length) = length {
            set_length(&mut headers, length);
        }
        headers
    }

    #[tokio::test]
    async fn a_json_body_within_the_limit_is_read_whole() {
        let Buffered::Whole(bytes) = buffer(&json_headers(None), Body::from("{}"), 10).await else {
            panic!("not read");
        };
        assert_eq!(&bytes[..], b"{}");
    }

    #[tokio::test]
    async fn a_body_declared_past_the_limit_or_not_json_is_left_unread() {
        let declared = buffer(&json_headers(Some(100)), Body::from("{}"), 6).await;
        assert!(matches!(declared, Buffered::Unread(_)));
        let plain = buffer(&HeaderMap::new(), Body::from("{}"), 6).await;
        assert!(matches!(plain, Buffered::Unread(_)));
    }
}
