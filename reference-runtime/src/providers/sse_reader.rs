//! A strict reader of a provider's `text/event-stream` body: a message is dispatched only at a
//! blank line; `\n`, `\r\n` and `\r` end lines; `:` comments are skipped; an incomplete final
//! message is discarded (truncation, which the adapter then reports as a missing completion
//! signal); lines and messages are capped.

use std::pin::Pin;

use bytes::Bytes;
use futures::{Stream, StreamExt};

use super::AttemptFailure;

/// Largest message (or pending line) accepted from a provider, in bytes.
const MAX_MESSAGE_BYTES: usize = 1024 * 1024;

/// One dispatched SSE message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseMessage {
    /// The `event:` field, when any.
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
}

type ByteStream = Pin<Box<dyn Stream<Item = Result<Bytes, reqwest::Error>> + Send>>;

/// Reads messages from a response body.
pub(crate) struct SseReader {
    body: ByteStream,
    buffer: Vec<u8>,
    event: Option<String>,
    data: String,
    has_data: bool,
    finished: bool,
}

impl SseReader {
    /// A reader over a streaming response.
    pub fn new(response: reqwest::Response) -> Self {
        Self::from_stream(Box::pin(response.bytes_stream()))
    }

    fn from_stream(body: ByteStream) -> Self {
        SseReader {
            body,
            buffer: Vec::new(),
            event: None,
            data: String::new(),
            has_data: false,
            finished: false,
        }
    }

    /// The next complete message; `Ok(None)` at the end of the body (a partial final message is
    /// dropped).
    pub async fn next(&mut self) -> Result<Option<SseMessage>, AttemptFailure> {
        loop {
            while let Some(line) = self.take_line() {
                let line = String::from_utf8(line)
                    .map_err(|_| AttemptFailure::protocol("Provider stream is not valid UTF-8"))?;
                if let Some(message) = self.process_line(&line)? {
                    return Ok(Some(message));
                }
            }
            if self.finished {
                return Ok(None);
            }
            match self.body.next().await {
                Some(Ok(chunk)) => {
                    self.buffer.extend_from_slice(&chunk);
                    if self.buffer.len() > MAX_MESSAGE_BYTES {
                        return Err(AttemptFailure::protocol(
                            "Provider stream frame exceeds the size limit",
                        ));
                    }
                }
                Some(Err(error)) => {
                    tracing::debug!(
                        timeout = error.is_timeout(),
                        body = error.is_body(),
                        "provider stream read failed"
                    );
                    return Err(AttemptFailure::transport("Provider stream was interrupted"));
                }
                None => self.finished = true,
            }
        }
    }

    /// Takes one complete line off the buffer, without its terminator.
    fn take_line(&mut self) -> Option<Vec<u8>> {
        let end = self.buffer.iter().position(|&b| b == b'\n' || b == b'\r')?;
        let terminator_len = if self.buffer[end] == b'\r' {
            match self.buffer.get(end + 1) {
                Some(b'\n') => 2,
                Some(_) => 1,
                // A `\r` at the end of what arrived may be the first half of `\r\n`.
                None if !self.finished => return None,
                None => 1,
            }
        } else {
            1
        };
        let line = self.buffer[..end].to_vec();
        self.buffer.drain(..end + terminator_len);
        Some(line)
    }

    fn process_line(&mut self, line: &str) -> Result<Option<SseMessage>, AttemptFailure> {
        if line.is_empty() {
            let message = if self.has_data {
                Some(SseMessage {
                    event: self.event.take(),
                    data: std::mem::take(&mut self.data),
                })
            } else {
                None
            };
            self.event = None;
            self.data.clear();
            self.has_data = false;
            return Ok(message);
        }
        if line.starts_with(':') {
            return Ok(None);
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
                if self.data.len() > MAX_MESSAGE_BYTES {
                    return Err(AttemptFailure::protocol(
                        "Provider stream frame exceeds the size limit",
                    ));
                }
            }
            "event" => self.event = Some(value.to_string()),
            _ => {}
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reader(chunks: &[&'static str]) -> SseReader {
        let items: Vec<Result<Bytes, reqwest::Error>> = chunks
            .iter()
            .map(|c| Ok(Bytes::from_static(c.as_bytes())))
            .collect();
        SseReader::from_stream(Box::pin(futures::stream::iter(items)))
    }

    async fn all(mut reader: SseReader) -> Vec<SseMessage> {
        let mut out = Vec::new();
        while let Some(message) = reader.next().await.unwrap() {
            out.push(message);
        }
        out
    }

    #[tokio::test]
    async fn dispatches_on_blank_lines_across_chunk_boundaries() {
        let messages = all(reader(&[
            "event: a\r",
            "\ndata: {\"x\"",
            ":1}\r\n\r\n: comment\n\ndata:no-space\ndata: two\n\n",
            "data: partial",
        ]))
        .await;
        assert_eq!(
            messages,
            vec![
                SseMessage {
                    event: Some("a".into()),
                    data: "{\"x\":1}".into()
                },
                SseMessage {
                    event: None,
                    data: "no-space\ntwo".into()
                },
            ]
        );
    }

    #[tokio::test]
    async fn an_incomplete_final_message_is_dropped() {
        assert!(all(reader(&["data: [DONE]\n"])).await.is_empty());
    }
}
