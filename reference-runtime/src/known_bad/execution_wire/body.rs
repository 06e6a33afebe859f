//! A submission's body buffered for the layer, within the runtime's body limit, without
//! changing what the service's admission reads: a body the admission would refuse unread
//! (not JSON, declared too large) is left unread, and one that turns out too large (or fails
//! while read) is handed on as the same bytes followed by the rest, or the same error.

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, header};
use futures::StreamExt;

/// What buffering a submission's body gave.
pub(super) enum Buffered {
    /// The whole body, within the limit.
    Whole(Bytes),
    /// A body the layer does not rewrite: yields what the original would have yielded.
    Unread(Body),
}

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
    let mut stream = body.into_data_stream();
    let mut chunks: Vec<Bytes> = Vec::new();
    let mut seen = 0usize;
    while let Some(chunk) = stream.next().await {
        match chunk {
            Ok(chunk) => {
                seen = seen.saturating_add(chunk.len());
                chunks.push(chunk);
                if seen > limit {
                    let read = futures::stream::iter(chunks.into_iter().map(Ok));
                    return Buffered::Unread(Body::from_stream(read.chain(stream)));
                }
            }
            Err(error) => {
                let read = futures::stream::iter(chunks.into_iter().map(Ok));
                let failed = futures::stream::once(std::future::ready(Err(error)));
                return Buffered::Unread(Body::from_stream(read.chain(failed)));
            }
        }
    }
    Buffered::Whole(Bytes::from(chunks.concat()))
}

/// `headers` for a body of `len` bytes (the length of a rewritten body).
pub(super) fn set_length(headers: &mut HeaderMap, len: usize) {
    headers.remove(header::TRANSFER_ENCODING);
    headers.insert(header::CONTENT_LENGTH, len.into());
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

    async fn text(body: Body) -> String {
        let bytes = axum::body::to_bytes(body, 1 << 20).await.expect("a body");
        String::from_utf8(bytes.to_vec()).expect("UTF-8")
    }

    #[tokio::test]
    async fn a_json_body_within_the_limit_is_read_whole() {
        let Buffered::Whole(bytes) = buffer(&json_headers(None), Body::from("{}"), 10).await else {
            panic!("not read");
        };
        assert_eq!(&bytes[..], b"{}");
    }

    #[tokio::test]
    async fn a_body_past_the_limit_or_not_json_is_handed_on_unchanged() {
        let chunks: Vec<Result<Bytes, std::convert::Infallible>> = ["{\"a\":", "\"long\"}"]
            .into_iter()
            .map(|c| Ok(Bytes::from_static(c.as_bytes())))
            .collect();
        let long = Body::from_stream(futures::stream::iter(chunks));
        let Buffered::Unread(body) = buffer(&json_headers(None), long, 6).await else {
            panic!("read past the limit");
        };
        assert_eq!(text(body).await, "{\"a\":\"long\"}");
        let declared = buffer(&json_headers(Some(100)), Body::from("{}"), 6).await;
        assert!(matches!(declared, Buffered::Unread(_)));
        let plain = buffer(&HeaderMap::new(), Body::from("{}"), 6).await;
        assert!(matches!(plain, Buffered::Unread(_)));
    }

    #[tokio::test]
    async fn a_body_that_fails_while_read_fails_the_same_way_for_admission() {
        let chunks: Vec<Result<Bytes, crate::server::BodyDeadlineExceeded>> = vec![
            Ok(Bytes::from_static(b"{\"a\":")),
            Err(crate::server::BodyDeadlineExceeded),
        ];
        let late = Body::from_stream(futures::stream::iter(chunks));
        let Buffered::Unread(body) = buffer(&json_headers(None), late, 100).await else {
            panic!("a failed body read whole");
        };
        let error = axum::body::to_bytes(body, 100)
            .await
            .expect_err("a failure");
        assert!(crate::server::is_body_deadline(&error), "{error}");
    }
}
