//! An SSE parser written from the WHATWG event-stream rules, independent of the crate's
//! encoders: events dispatch only on a blank line, `\r\n`, `\r` and `\n` all end lines,
//! `:` lines are comments, one space after the colon is dropped, `data:` lines are joined.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, if any.
    pub event: Option<String>,
    /// The joined `data:` lines.
    pub data: String,
}

/// A parsed body.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ParsedStream {
    /// Dispatched events, in order.
    pub events: Vec<SseEvent>,
    /// Comment lines seen.
    pub comments: usize,
    /// True when the body ended inside an event (fields seen but no blank line after them, or
    /// an unterminated last line): that event was discarded.
    pub incomplete_tail: bool,
}

/// Parses a whole SSE body.
pub fn parse(body: &[u8]) -> ParsedStream {
    let text = String::from_utf8_lossy(body);
    let mut parsed = ParsedStream::default();
    let mut event: Option<String> = None;
    let mut data = String::new();
    let mut has_data = false;
    let mut line = String::new();
    let mut chars = text.chars().peekable();
    let mut line_terminated = true;
    while let Some(c) = chars.next() {
        if c == '\r' || c == '\n' {
            if c == '\r' && chars.peek() == Some(&'\n') {
                chars.next();
            }
            line_terminated = true;
            if line.is_empty() {
                if has_data {
                    let mut joined = std::mem::take(&mut data);
                    if joined.ends_with('\n') {
                        joined.pop();
                    }
                    parsed.events.push(SseEvent {
                        event: event.take(),
                        data: joined,
                    });
                }
                event = None;
                data.clear();
                has_data = false;
            } else if line.starts_with(':') {
                parsed.comments += 1;
            } else {
                let (field, value) = match line.split_once(':') {
                    Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
                    None => (line.as_str(), ""),
                };
                match field {
                    "data" => {
                        data.push_str(value);
                        data.push('\n');
                        has_data = true;
                    }
                    "event" => event = Some(value.to_owned()),
                    _ => {}
                }
            }
            line.clear();
        } else {
            line_terminated = false;
            line.push(c);
        }
    }
    parsed.incomplete_tail = !line_terminated || has_data || event.is_some();
    parsed
}

#[test]
fn the_parser_dispatches_only_on_blank_lines() {
    let parsed =
        parse(b"data: a\n\n: comment\r\nevent: x\r\ndata:b\r\ndata: c\r\n\r\ndata: tail\n");
    assert_eq!(
        parsed.events,
        vec![
            SseEvent {
                event: None,
                data: "a".into()
            },
            SseEvent {
                event: Some("x".into()),
                data: "b\nc".into()
            },
        ]
    );
    assert_eq!(parsed.comments, 1);
    assert!(parsed.incomplete_tail);
    assert!(!parse(b"data: a\n\n").incomplete_tail);
}
