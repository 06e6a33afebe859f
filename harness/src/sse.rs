//! A strict SSE tokenizer over the raw bytes a host sends.
//!
//! It follows the WHATWG event-stream grammar, and keeps what a lenient client throws away,
//! because judging a host needs it: an absent `id:` is told from an empty one, comments
//! (keep-alives) are recorded with their arrival time, CRLF / CR / LF line ends and a leading
//! BOM are handled (also when split across chunks), invalid UTF-8 is noticed, a final frame
//! without its blank line is reported as truncated, and the size of one frame and of the whole
//! stream is bounded so a hostile host cannot exhaust memory.

use serde_json::Value;

use crate::transcript::{FrameKind, FrameRecord};

/// Size bounds of one stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SseLimits {
    /// Largest frame (sum of its field lines) in bytes.
    pub max_frame_bytes: usize,
    /// Largest single line in bytes (a line without an end is buffered up to this).
    pub max_line_bytes: usize,
}

impl Default for SseLimits {
    fn default() -> Self {
        SseLimits {
            max_frame_bytes: 1024 * 1024,
            max_line_bytes: 1024 * 1024,
        }
    }
}

/// A bound was exceeded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SseError {
    /// One frame grew past [`SseLimits::max_frame_bytes`].
    #[error("an SSE frame exceeded {limit} bytes")]
    FrameTooLarge {
        /// The bound.
        limit: usize,
    },
    /// One line grew past [`SseLimits::max_line_bytes`] without a line end.
    #[error("an SSE line exceeded {limit} bytes without a line end")]
    LineTooLong {
        /// The bound.
        limit: usize,
    },
}

/// The tokenizer's state between chunks.
#[derive(Debug)]
pub(crate) struct SseTokenizer {
    limits: SseLimits,
    line: Vec<u8>,
    after_cr: bool,
    at_stream_start: bool,
    utf8_valid: bool,
    frame: PendingFrame,
}

#[derive(Debug, Default)]
struct PendingFrame {
    id: Option<String>,
    event: Option<String>,
    data: Option<String>,
    retry: Option<u64>,
    bytes: usize,
    raw: String,
}

impl SseTokenizer {
    /// A tokenizer at the start of a stream.
    pub(crate) fn new(limits: SseLimits) -> Self {
        SseTokenizer {
            limits,
            line: Vec::new(),
            after_cr: false,
            at_stream_start: true,
            utf8_valid: true,
            frame: PendingFrame::default(),
        }
    }

    /// Feeds the next chunk; returns the frames and comments it completed.
    pub(crate) fn feed(
        &mut self,
        mut bytes: &[u8],
        at_ms: u64,
    ) -> Result<Vec<FrameRecord>, SseError> {
        let mut out = Vec::new();
        if self.at_stream_start && !bytes.is_empty() {
            // A BOM is only meaningful as the very first bytes; it may arrive split.
            let bom = [0xEF, 0xBB, 0xBF];
            let have = self.line.len();
            let mut probe = self.line.clone();
            probe.extend_from_slice(&bytes[..bytes.len().min(3 - have.min(3))]);
            if probe.len() < 3 && bom.starts_with(&probe) {
                self.line = probe;
                return Ok(out);
            }
            self.at_stream_start = false;
            if probe.starts_with(&bom) {
                bytes = &bytes[3 - have..];
                self.line.clear();
            }
        }
        for &byte in bytes {
            match byte {
                b'\n' if self.after_cr => self.after_cr = false,
                b'\n' | b'\r' => {
                    self.after_cr = byte == b'\r';
                    let line = std::mem::take(&mut self.line);
                    self.process_line(&line, at_ms, &mut out)?;
                }
                _ => {
                    self.after_cr = false;
                    if self.line.len() >= self.limits.max_line_bytes {
                        return Err(SseError::LineTooLong {
                            limit: self.limits.max_line_bytes,
                        });
                    }
                    self.line.push(byte);
                }
            }
        }
        Ok(out)
    }

    /// Ends the stream: returns the text of a final frame (or line) that never got its blank
    /// line, which a conforming client discards.
    pub(crate) fn finish(self) -> Option<String> {
        let mut trailing = self.frame.raw;
        if !self.line.is_empty() {
            trailing.push_str(&String::from_utf8_lossy(&self.line));
        }
        (!trailing.is_empty()).then_some(trailing)
    }

    /// Whether every byte so far was valid UTF-8.
    pub(crate) fn utf8_valid(&self) -> bool {
        self.utf8_valid
    }

    fn process_line(
        &mut self,
        bytes: &[u8],
        at_ms: u64,
        out: &mut Vec<FrameRecord>,
    ) -> Result<(), SseError> {
        let line = match std::str::from_utf8(bytes) {
            Ok(text) => text.to_string(),
            Err(_) => {
                self.utf8_valid = false;
                String::from_utf8_lossy(bytes).into_owned()
            }
        };
        if line.is_empty() {
            let mut frame = std::mem::take(&mut self.frame);
            if let Some(data) = frame.data.as_mut() {
                data.pop();
            }
            // A block with no `data:` field dispatches no event (WHATWG SSE: its `retry:` or
            // `id:` lines only set the reconnection time or the last event id), so it is no
            // frame: a host may open a stream with `retry: 2500` alone.
            if frame.data.is_some() {
                let json = frame
                    .data
                    .as_deref()
                    .and_then(|d| serde_json::from_str::<Value>(d).ok());
                out.push(FrameRecord {
                    at_ms,
                    kind: FrameKind::Event {
                        id: frame.id,
                        event: frame.event,
                        data: frame.data.unwrap_or_default(),
                        json,
                        retry: frame.retry,
                    },
                });
            }
            return Ok(());
        }
        if let Some(comment) = line.strip_prefix(':') {
            out.push(FrameRecord {
                at_ms,
                kind: FrameKind::Comment {
                    text: comment.trim_start().to_string(),
                },
            });
            return Ok(());
        }
        self.frame.bytes += line.len() + 1;
        if self.frame.bytes > self.limits.max_frame_bytes {
            return Err(SseError::FrameTooLarge {
                limit: self.limits.max_frame_bytes,
            });
        }
        self.frame.raw.push_str(&line);
        self.frame.raw.push('\n');
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line.as_str(), ""),
        };
        match field {
            "data" => {
                // The grammar appends value + LF per line and drops one trailing LF at dispatch.
                let data = self.frame.data.get_or_insert_with(String::new);
                data.push_str(value);
                data.push('\n');
            }
            "id" if !value.contains('\0') => self.frame.id = Some(value.to_string()),
            "event" => self.frame.event = Some(value.to_string()),
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                self.frame.retry = value.parse().ok();
            }
            _ => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(frames: &[FrameRecord]) -> Vec<(Option<String>, Option<String>, String)> {
        frames
            .iter()
            .filter_map(|f| match &f.kind {
                FrameKind::Event {
                    id, event, data, ..
                } => Some((id.clone(), event.clone(), data.clone())),
                FrameKind::Comment { .. } => None,
            })
            .collect()
    }

    fn tokenize(chunks: &[&[u8]]) -> (Vec<FrameRecord>, Option<String>, bool) {
        let mut tokenizer = SseTokenizer::new(SseLimits::default());
        let mut frames = Vec::new();
        for (i, chunk) in chunks.iter().enumerate() {
            frames.extend(tokenizer.feed(chunk, i as u64).unwrap());
        }
        let utf8 = tokenizer.utf8_valid();
        (frames, tokenizer.finish(), utf8)
    }

    #[test]
    fn tells_absent_id_from_empty_id() {
        let (frames, trailing, _) = tokenize(&[b"data: a\n\nid:\ndata: b\n\nid: 7\ndata: c\n\n"]);
        assert_eq!(
            events(&frames),
            [
                (None, None, "a".into()),
                (Some(String::new()), None, "b".into()),
                (Some("7".into()), None, "c".into())
            ]
        );
        assert_eq!(trailing, None);
    }

    #[test]
    fn handles_every_line_ending_and_chunk_splits() {
        let (frames, _, _) = tokenize(&[
            b"event: x\r",
            b"\ndata: 1\r\r",
            b"data: 2\n",
            b"\n",
            b"data: 3\r\n\r\n",
        ]);
        assert_eq!(
            events(&frames),
            [
                (None, Some("x".into()), "1".into()),
                (None, None, "2".into()),
                (None, None, "3".into())
            ]
        );
    }

    #[test]
    fn strips_a_leading_bom_even_split_across_chunks() {
        let (frames, _, _) = tokenize(&[&[0xEF], &[0xBB, 0xBF, b'd'], b"ata: x\n\n"]);
        assert_eq!(events(&frames), [(None, None, "x".into())]);
    }

    #[test]
    fn records_comments_and_joins_multi_line_data() {
        let (frames, _, _) = tokenize(&[b": keep-alive\n\ndata: a\ndata: b\ndata\n\n"]);
        assert!(matches!(&frames[0].kind, FrameKind::Comment { text } if text == "keep-alive"));
        assert_eq!(events(&frames), [(None, None, "a\nb\n".into())]);
    }

    #[test]
    fn reports_a_truncated_final_frame() {
        let (frames, trailing, _) = tokenize(&[b"id: 1\ndata: {\"a\":1}\n\nid: 2\ndata: {\"a\""]);
        assert_eq!(events(&frames).len(), 1);
        assert_eq!(trailing.as_deref(), Some("id: 2\ndata: {\"a\""));
    }

    #[test]
    fn notices_invalid_utf8() {
        let (frames, _, utf8) = tokenize(&[b"data: \xff\xfe\n\n"]);
        assert!(!utf8);
        assert_eq!(events(&frames).len(), 1);
    }

    #[test]
    fn bounds_frames_and_lines() {
        let limits = SseLimits {
            max_frame_bytes: 64,
            max_line_bytes: 32,
        };
        let mut tokenizer = SseTokenizer::new(limits);
        assert_eq!(
            tokenizer.feed(&[b'a'; 40], 0),
            Err(SseError::LineTooLong { limit: 32 })
        );
        let mut tokenizer = SseTokenizer::new(limits);
        let many_lines = "data: 0123456789\n".repeat(5);
        assert_eq!(
            tokenizer.feed(many_lines.as_bytes(), 0),
            Err(SseError::FrameTooLarge { limit: 64 })
        );
    }

    #[test]
    fn a_block_without_data_dispatches_no_frame() {
        let (frames, _, _) = tokenize(&[b"retry: 2500\n\n: hello\n\nid: 1\ndata: {}\n\n"]);
        assert_eq!(events(&frames), [(Some("1".into()), None, "{}".into())]);
    }

    #[test]
    fn parses_json_data_and_retry() {
        let (frames, _, _) =
            tokenize(&[b"retry: 1500\nid: 3\nevent: run.started\ndata: {\"sequence\":3}\n\n"]);
        match &frames[0].kind {
            FrameKind::Event { json, retry, .. } => {
                assert_eq!(json.as_ref().unwrap()["sequence"], 3);
                assert_eq!(*retry, Some(1500));
            }
            FrameKind::Comment { .. } => panic!("expected an event"),
        }
    }
}
