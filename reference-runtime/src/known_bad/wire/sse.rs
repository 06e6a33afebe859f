//! The event-stream rewrites: an SSE answer's body changed frame by frame (keep-alive comments
//! dropped, a batch frame's `id:`), or kept open after the handler ended it.

use axum::body::{Body, Bytes};
use axum::response::Response;
use futures::StreamExt;
use serde_json::Value;

/// An event stream without its keep-alive comments: every chunk of the body that holds only
/// comment lines (the keep-alives; an event frame never carries a comment) is dropped.
pub(super) fn without_comments(response: Response) -> Response {
    let (parts, body) = response.into_parts();
    let frames = body.into_data_stream().filter(|chunk| {
        let keep_alive = chunk.as_ref().is_ok_and(|bytes| is_comment_only(bytes));
        std::future::ready(!keep_alive)
    });
    Response::from_parts(parts, Body::from_stream(frames))
}

/// Whether `chunk` holds comment lines (`:`…) and blank lines alone.
fn is_comment_only(chunk: &[u8]) -> bool {
    chunk.first() == Some(&b':')
        && chunk
            .split(|b| *b == b'\n')
            .all(|line| line.is_empty() || line.starts_with(b":"))
}

/// An event stream kept open once the handler ends it: the clean stream ends after the run's
/// terminal event (or a failed read of its log), the defective one never does.
pub(super) fn held_open(response: Response) -> Response {
    let (parts, body) = response.into_parts();
    let frames = body.into_data_stream().chain(futures::stream::pending());
    Response::from_parts(parts, Body::from_stream(frames))
}

/// An event stream whose batch frames carry the lowest sequence of their events as `id:`
/// instead of the highest.
pub(super) fn batch_ids_lowest(response: Response) -> Response {
    map_frames(response, |frame| {
        let lines: Vec<&str> = frame.split('\n').collect();
        if !lines.iter().any(|l| field(l, "event") == Some("batch")) {
            return None;
        }
        let data: Vec<&str> = lines.iter().filter_map(|l| field(l, "data")).collect();
        let events: Vec<Value> = serde_json::from_str(&data.join("\n")).ok()?;
        let lowest = events
            .iter()
            .filter_map(|e| e.get("sequence").and_then(Value::as_u64))
            .min()?;
        let lines: Vec<String> = lines
            .iter()
            .map(|l| match field(l, "id") {
                Some(_) => format!("id: {lowest}"),
                None => l.to_string(),
            })
            .collect();
        Some(lines.join("\n"))
    })
}

/// The value of the SSE field `name` on `line`, if the line is that field.
fn field<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    let value = line.strip_prefix(name)?.strip_prefix(':')?;
    Some(value.strip_prefix(' ').unwrap_or(value))
}

/// `response` with each whole frame of its event stream (its lines, without the blank line
/// ending it) replaced by what `edit` returns for it (`None`: kept as is). Bytes after the last
/// whole frame of a chunk wait for the next chunk.
fn map_frames(
    response: Response,
    edit: impl Fn(&str) -> Option<String> + Send + 'static,
) -> Response {
    let (parts, body) = response.into_parts();
    let mut body = body.into_data_stream();
    let frames = async_stream::stream! {
        let mut carry: Vec<u8> = Vec::new();
        while let Some(chunk) = body.next().await {
            let bytes = match chunk {
                Ok(bytes) => bytes,
                Err(error) => {
                    yield Err(error);
                    return;
                }
            };
            carry.extend_from_slice(&bytes);
            let Some(end) = carry.windows(2).rposition(|w| w == b"\n\n") else {
                continue;
            };
            let rest = carry.split_off(end + 2);
            let whole = std::mem::replace(&mut carry, rest);
            yield Ok(Bytes::from(edit_frames(&whole, &edit)));
        }
        if !carry.is_empty() {
            yield Ok(Bytes::from(carry));
        }
    };
    Response::from_parts(parts, Body::from_stream(frames))
}

/// `whole` (frames each ending with a blank line) with each frame edited.
fn edit_frames(whole: &[u8], edit: &impl Fn(&str) -> Option<String>) -> Vec<u8> {
    let Ok(text) = std::str::from_utf8(whole) else {
        return whole.to_vec();
    };
    let mut out = String::with_capacity(text.len());
    for frame in text.split_terminator("\n\n") {
        match edit(frame) {
            Some(edited) => out.push_str(&edited),
            None => out.push_str(frame),
        }
        out.push_str("\n\n");
    }
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn body_of(response: Response) -> String {
        let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
            .await
            .expect("a body");
        String::from_utf8(bytes.to_vec()).expect("UTF-8")
    }

    fn sse(chunks: &[&'static str]) -> Response {
        let chunks: Vec<Result<Bytes, std::convert::Infallible>> = chunks
            .iter()
            .map(|c| Ok(Bytes::from_static(c.as_bytes())))
            .collect();
        Response::new(Body::from_stream(futures::stream::iter(chunks)))
    }

    #[tokio::test]
    async fn a_batch_frame_gets_its_lowest_sequence_and_other_frames_are_kept() {
        let batch = "data: [{\"sequence\":3},{\"sequence\":4}]\nid: 4\nevent: batch\n\n";
        let single = "data: {\"sequence\":5}\nid: 5\nevent: run.completed\n\n";
        let split = "data: [{\"sequence\":6},\ndata: {\"sequence\":7}]\nid: 7\nevent: batch\n\n";
        let response = batch_ids_lowest(sse(&[
            batch,
            ": keep-alive\n\n",
            single,
            &split[..10],
            &split[10..],
        ]));
        assert_eq!(
            body_of(response).await,
            format!(
                "data: [{{\"sequence\":3}},{{\"sequence\":4}}]\nid: 3\nevent: batch\n\n: keep-alive\n\n{single}{}",
                split.replace("id: 7", "id: 6")
            )
        );
    }

    #[tokio::test]
    async fn keep_alives_are_dropped_and_a_held_stream_does_not_end() {
        let frame = "data: {}\nid: 1\nevent: run.completed\n\n";
        let response = without_comments(sse(&[": keep-alive\n\n", frame, ":\n\n"]));
        assert_eq!(body_of(response).await, frame);
        let held = held_open(sse(&[frame]));
        let read = tokio::time::timeout(std::time::Duration::from_millis(50), body_of(held)).await;
        assert!(read.is_err(), "a held stream never ends");
    }
}
