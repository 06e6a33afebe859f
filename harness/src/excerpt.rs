//! Bounded evidence: what a report keeps of a transcript once its checks have judged it.
//!
//! The driver bounds what one exchange may hold while it is judged (`driver::Limits`);
//! once a case is judged its transcript only serves the report, so it is cut to an excerpt: the
//! head and the tail of each body, the first and the last frames of each stream, the first and
//! the last exchanges of each step, each cut counted in the record ([`Excerpt`],
//! [`StepRecord::exchanges_dropped`]). A case's excerpt is at most [`CASE_REPORT_BYTES`] of
//! JSON: the bounds tighten ([`ExcerptBounds::LEVELS`]) until it fits. A whole run then holds
//! (and its `report.json` writes) at most that much per case, whatever the host sent.

use crate::transcript::{Excerpt, FrameKind, FrameRecord, ResponseRecord, StepRecord};

/// The most JSON one case's transcript takes in a report (the excerpt tightens until it fits).
pub(crate) const CASE_REPORT_BYTES: usize = 192 * 1024;

/// Past this much transcript held by one running case ([`retained_bytes`]), its judged records
/// are cut to excerpts (the driver bounds each exchange; this bounds their number).
pub(crate) const CASE_RETAINED_BYTES: usize = 16 * 1024 * 1024;

/// How much of a transcript an excerpt keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ExcerptBounds {
    /// Bytes kept at each end of a body's text.
    pub body_end_bytes: usize,
    /// Frames kept at each end of a stream.
    pub frames_each_end: usize,
    /// Bytes of text kept of one frame (its data, or a comment).
    pub frame_text_bytes: usize,
    /// Exchanges kept at each end of a step.
    pub exchanges_each_end: usize,
}

impl ExcerptBounds {
    /// The levels tried in turn, loosest first, until a case's excerpt fits
    /// [`CASE_REPORT_BYTES`]; the last one always fits in practice (its bounds alone give a
    /// few KiB per exchange).
    pub(crate) const LEVELS: [ExcerptBounds; 4] = [
        ExcerptBounds {
            body_end_bytes: 16 * 1024,
            frames_each_end: 100,
            frame_text_bytes: 4 * 1024,
            exchanges_each_end: 20,
        },
        ExcerptBounds {
            body_end_bytes: 4 * 1024,
            frames_each_end: 25,
            frame_text_bytes: 1024,
            exchanges_each_end: 8,
        },
        ExcerptBounds {
            body_end_bytes: 1024,
            frames_each_end: 8,
            frame_text_bytes: 256,
            exchanges_each_end: 3,
        },
        ExcerptBounds {
            body_end_bytes: 256,
            frames_each_end: 2,
            frame_text_bytes: 128,
            exchanges_each_end: 1,
        },
    ];
}

/// Cuts a judged case's transcript to an excerpt that fits [`CASE_REPORT_BYTES`] (a transcript
/// already within the first level's bounds is left as it is).
pub(crate) fn excerpt_case(transcript: &mut [StepRecord]) {
    for bounds in ExcerptBounds::LEVELS {
        for record in transcript.iter_mut() {
            excerpt_step(record, bounds);
        }
        if json_size(transcript) <= CASE_REPORT_BYTES {
            return;
        }
    }
}

fn json_size(transcript: &[StepRecord]) -> usize {
    struct Counter(usize);
    impl std::io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0);
    let _ = serde_json::to_writer(&mut counter, transcript);
    counter.0
}

/// Cuts one step's record to `bounds`.
pub(crate) fn excerpt_step(record: &mut StepRecord, bounds: ExcerptBounds) {
    record.exchanges_dropped += drop_middle(&mut record.exchanges, bounds.exchanges_each_end);
    for exchange in &mut record.exchanges {
        if let Some(body) = &mut exchange.request.body {
            cut_text(body, bounds.body_end_bytes);
        }
        if let Some(response) = &mut exchange.response {
            excerpt_response(response, bounds);
        }
    }
}

/// Keeps the first and last `each_end` items of `items`, dropping those between; how many were
/// dropped.
fn drop_middle<T>(items: &mut Vec<T>, each_end: usize) -> u64 {
    let Some(dropped) = items.len().checked_sub(each_end * 2).filter(|&d| d > 0) else {
        return 0;
    };
    items.drain(each_end..each_end + dropped);
    dropped as u64
}

/// Cuts one response to `bounds`, counting what was left out in its `excerpt`.
pub(crate) fn excerpt_response(response: &mut ResponseRecord, bounds: ExcerptBounds) {
    let mut excerpt = response.excerpt.take().unwrap_or_default();
    excerpt.body_bytes_dropped += cut_text(&mut response.body, bounds.body_end_bytes) as u64;
    if response.json.is_some() && excerpt.body_bytes_dropped > 0 {
        response.json = None;
        excerpt.json_dropped = true;
    }
    if let Some(partial) = &mut response.trailing_partial_frame {
        excerpt.body_bytes_dropped += cut_text(partial, bounds.frame_text_bytes) as u64;
    }
    excerpt.frames_dropped += drop_middle(&mut response.frames, bounds.frames_each_end);
    for frame in &mut response.frames {
        if cut_frame(frame, bounds.frame_text_bytes) {
            excerpt.frames_cut += 1;
        }
    }
    if excerpt != Excerpt::default() {
        response.excerpt = Some(excerpt);
    }
}

/// Cuts a frame's text; whether it was cut (its parsed JSON then goes with it).
fn cut_frame(frame: &mut FrameRecord, limit: usize) -> bool {
    match &mut frame.kind {
        FrameKind::Event {
            data,
            json,
            id,
            event,
            ..
        } => {
            let mut cut = cut_text(data, limit) > 0;
            for field in [id, event].into_iter().flatten() {
                cut |= cut_text(field, limit) > 0;
            }
            if cut {
                *json = None;
            }
            cut
        }
        FrameKind::Comment { text } => cut_text(text, limit) > 0,
    }
}

/// Keeps `each_end` bytes at both ends of `text` (on character boundaries) around a marker
/// naming how many bytes were cut; returns that count (0 when the text was short enough).
pub(crate) fn cut_text(text: &mut String, each_end: usize) -> usize {
    // A text already cut carries its marker: cutting it again counts only the new cut.
    if text.len() <= each_end * 2 + 64 {
        return 0;
    }
    let mut head = each_end;
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len() - each_end;
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    let dropped = tail - head;
    let marker = format!("\n…[{dropped} bytes cut]…\n");
    let mut out = String::with_capacity(head + marker.len() + text.len() - tail);
    out.push_str(&text[..head]);
    out.push_str(&marker);
    out.push_str(&text[tail..]);
    *text = out;
    dropped
}

/// Replaces every secret in `text` with `[REDACTED]`.
pub(crate) fn scrub_text(text: &mut String, secrets: &[String]) {
    for secret in secrets.iter().filter(|s| !s.is_empty()) {
        if text.contains(secret.as_str()) {
            *text = text.replace(secret.as_str(), crate::transcript::REDACTED);
        }
    }
}

/// Replaces every secret (and the canary) in what a step recorded.
pub(crate) fn scrub_record(record: &mut StepRecord, secrets: &[String]) {
    if secrets.is_empty() {
        return;
    }
    let clean = |text: &mut String| scrub_text(text, secrets);
    for exchange in &mut record.exchanges {
        clean(&mut exchange.request.url);
        exchange.request.body.as_mut().map(clean);
        for header in &mut exchange.request.headers {
            clean(&mut header.value);
        }
        if let Some(response) = &mut exchange.response {
            clean(&mut response.body);
            for header in &mut response.headers {
                clean(&mut header.value);
            }
            if let Some(json) = &mut response.json {
                let mut text = json.to_string();
                if secrets.iter().any(|s| text.contains(s.as_str())) {
                    clean(&mut text);
                    *json = serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text));
                }
            }
            response.trailing_partial_frame.as_mut().map(clean);
            // The event types a fold counted are the host's text too.
            if let Some(fold) = &mut response.folded
                && fold
                    .types
                    .keys()
                    .any(|k| secrets.iter().any(|s| k.contains(s.as_str())))
            {
                let types = std::mem::take(&mut fold.types);
                for (mut kind, count) in types {
                    clean(&mut kind);
                    *fold.types.entry(kind).or_default() += count;
                }
            }
            for frame in &mut response.frames {
                match &mut frame.kind {
                    FrameKind::Event {
                        data,
                        json,
                        id,
                        event,
                        ..
                    } => {
                        let dirty = secrets.iter().any(|s| data.contains(s.as_str()));
                        clean(data);
                        id.as_mut().map(clean);
                        event.as_mut().map(clean);
                        if dirty && json.is_some() {
                            *json = serde_json::from_str(data).ok();
                        }
                    }
                    FrameKind::Comment { text } => clean(text),
                }
            }
        }
    }
}

/// A rough size of what a step's record holds in memory (text and frames; parsed JSON is
/// counted as its text again): what the case's retention budget counts.
pub(crate) fn retained_bytes(record: &StepRecord) -> usize {
    record
        .exchanges
        .iter()
        .map(|exchange| {
            let request = exchange.request.body.as_ref().map_or(0, String::len);
            let response = exchange.response.as_ref().map_or(0, |r| {
                let json = if r.json.is_some() { r.body.len() } else { 0 };
                let frames: usize = r
                    .frames
                    .iter()
                    .map(|f| match &f.kind {
                        FrameKind::Event { data, json, .. } => {
                            96 + data.len() * if json.is_some() { 3 } else { 1 }
                        }
                        FrameKind::Comment { text } => 64 + text.len(),
                    })
                    .sum();
                r.body.len() + json + frames
            });
            256 + request + response
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::{BodyEnd, Exchange, RequestRecord};

    fn frame(i: u64, data: String) -> FrameRecord {
        FrameRecord {
            at_ms: i,
            kind: FrameKind::Event {
                id: Some(i.to_string()),
                event: None,
                json: serde_json::from_str(&data).ok(),
                data,
                retry: None,
            },
        }
    }

    fn exchange(body: String, frames: Vec<FrameRecord>) -> Exchange {
        Exchange {
            request: RequestRecord {
                method: "GET".into(),
                url: "http://h/x".into(),
                headers: Vec::new(),
                body: None,
            },
            response: Some(ResponseRecord {
                status: 200,
                headers: Vec::new(),
                headers_at_ms: 1,
                json: serde_json::from_str(&body).ok(),
                body_bytes: body.len() as u64,
                body,
                body_utf8: true,
                frames,
                trailing_partial_frame: None,
                end: BodyEnd::ServerClosed,
                end_at_ms: 2,
                excerpt: None,
                folded: None,
                run_end: None,
            }),
            transport_error: None,
            sent_at_ms: 0,
        }
    }

    fn step(exchanges: Vec<Exchange>) -> StepRecord {
        StepRecord {
            not_taken: None,
            step: "s".into(),
            location: "/steps/0".into(),
            action: "stream".into(),
            exchanges,
            bindings: Vec::new(),
            completed: true,
            provider_calls: Vec::new(),
            exchanges_dropped: 0,
            refusals_waited_out: 0,
        }
    }

    #[test]
    fn a_small_transcript_is_left_whole() {
        let small = step(vec![exchange(
            r#"{"a":1}"#.into(),
            vec![frame(1, r#"{"sequence":1}"#.into())],
        )]);
        let mut transcript = vec![small.clone()];
        excerpt_case(&mut transcript);
        assert_eq!(transcript, vec![small]);
    }

    #[test]
    fn a_huge_transcript_fits_the_case_bound_and_says_what_it_left_out() {
        let frames = (0..50_000)
            .map(|i| {
                frame(
                    i,
                    format!(r#"{{"sequence":{i},"pad":"{}"}}"#, "p".repeat(100)),
                )
            })
            .collect();
        let huge_body = format!("\"{}\"", "é".repeat(128 * 1024));
        let exchanges = (0..50)
            .map(|_| exchange(huge_body.clone(), Vec::new()))
            .chain([exchange(String::new(), frames)])
            .collect();
        let mut transcript = vec![step(exchanges)];
        excerpt_case(&mut transcript);
        assert!(json_size(&transcript) <= CASE_REPORT_BYTES);
        let record = &transcript[0];
        assert!(record.exchanges_dropped > 0);
        let first = record.exchanges[0].response.as_ref().unwrap();
        let excerpt = first.excerpt.as_ref().unwrap();
        assert!(excerpt.body_bytes_dropped > 200 * 1024);
        assert!(excerpt.json_dropped && first.json.is_none());
        assert!(first.body.contains("bytes cut]"));
        let stream = record.exchanges.last().unwrap().response.as_ref().unwrap();
        let excerpt = stream.excerpt.as_ref().unwrap();
        assert_eq!(
            excerpt.frames_dropped as usize + stream.frames.len(),
            50_000
        );
        // The first and the last frames are the ones kept.
        assert_eq!(stream.frames.first().unwrap().at_ms, 0);
        assert_eq!(stream.frames.last().unwrap().at_ms, 49_999);
    }

    #[test]
    fn cutting_keeps_character_boundaries_and_counts_once() {
        let mut text = "é".repeat(1000);
        let dropped = cut_text(&mut text, 101);
        assert!(dropped > 0 && text.contains("bytes cut"));
        assert_eq!(cut_text(&mut text, 101), 0, "a cut text is not cut again");
    }
}
