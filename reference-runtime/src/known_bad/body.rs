//! A request's body buffered for a layer that rewrites it, within a byte limit, without
//! changing what the handler behind it reads: one that turns out too large (or fails while
//! read) is handed on as the same bytes followed by the rest, or the same error.

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, header};
use futures::StreamExt;

/// What buffering a body gave.
pub(super) enum Buffered {
    /// The whole body, within the limit.
    Whole(Bytes),
    /// A body the layer does not rewrite: yields what the original would have yielded.
    Unread(Body),
}

/// Reads `body` whole when it is at most `limit` bytes long.
pub(super) async fn buffer_within(body: Body, limit: usize) -> Buffered {
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

    async fn text(body: Body) -> String {
        let bytes = axum::body::to_bytes(body, 1 << 20).await.expect("a body");
        String::from_utf8(bytes.to_vec()).expect("UTF-8")
    }

    #[tokio::test]
    async fn a_body_within_the_limit_is_read_whole_and_one_past_it_handed_on_unchanged() {
        let Buffered::Whole(bytes) = buffer_within(Body::from("{}"), 10).await else {
            panic!("not read");
        };
        assert_eq!(&bytes[..], b"{}");
        let chunks: Vec<Result<Bytes, std::convert::Infallible>> = ["{\"a\":", "\"long\"}"]
            .into_iter()
            .map(|c| Ok(Bytes::from_static(c.as_bytes())))
            .collect();
        let long = Body::from_stream(futures::stream::iter(chunks));
        let Buffered::Unread(body) = buffer_within(long, 6).await else {
            panic!("read past the limit");
        };
        assert_eq!(text(body).await, "{\"a\":\"long\"}");
    }

    #[tokio::test]
    async fn a_body_that_fails_while_read_fails_the_same_way_for_the_handler() {
        let chunks: Vec<Result<Bytes, crate::server::BodyDeadlineExceeded>> = vec![
            Ok(Bytes::from_static(b"{\"a\":")),
            Err(crate::server::BodyDeadlineExceeded),
        ];
        let late = Body::from_stream(futures::stream::iter(chunks));
        let Buffered::Unread(body) = buffer_within(late, 100).await else {
            panic!("a failed body read whole");
        };
        let error = axum::body::to_bytes(body, 100)
            .await
            .expect_err("a failure");
        assert!(crate::server::is_body_deadline(&error), "{error}");
    }
}
