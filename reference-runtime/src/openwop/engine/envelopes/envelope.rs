//! Reading what a model emitted as an AI envelope (`schemas/v2/ai-envelope.schema.json`):
//! `{type, envelopeId?, correlationId, schemaVersion?, nodeId?, payload, meta {source, ts?, …},
//! partial? {isPartial, index, total}}`.
//!
//! - **Lenient parse** (consumes no retry): the text as one JSON document (`direct`), else the
//!   body of a Markdown code fence (`markdown-fence`), else the first balanced `{…}`
//!   (`brace-walker`); the byte offset of the document is reported, never its content.
//! - **Required members**: an envelope without `correlationId` or without `meta.source` is
//!   rejected; nothing is synthesized. A `correlationId` becomes the `causationId` of the events
//!   the envelope produces, so it must fit the event-id grammar `^[A-Za-z0-9._~-]{16,128}$`;
//!   one that does not is rejected too (rather than replaced).
//! - **E1 partial reassembly**: the chunks of one emission carry the same `type` and
//!   `correlationId`, `partial.index` 0, 1, 2, … in order, `partial.isPartial: true` on every
//!   chunk but the last; each chunk's `payload` is a string fragment and the fragments
//!   concatenated are the payload's JSON text.

use std::borrow::Borrow;

use serde_json::Value;

/// How the document was found in the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Recovery {
    /// The text is the document.
    Direct,
    /// The document is the body of a Markdown code fence starting at this byte.
    MarkdownFence(usize),
    /// The document is the first balanced `{…}`, starting at this byte.
    BraceWalker(usize),
}

impl Recovery {
    /// The `envelope.recovery-applied` path and byte offset (`None` for `direct`).
    pub(crate) fn applied(self) -> Option<(&'static str, usize)> {
        match self {
            Recovery::Direct => None,
            Recovery::MarkdownFence(offset) => Some(("markdown-fence", offset)),
            Recovery::BraceWalker(offset) => Some(("brace-walker", offset)),
        }
    }
}

/// Finds a JSON document in model text.
pub(crate) fn lenient_parse(text: &str) -> Option<(Value, Recovery)> {
    if let Ok(value) = serde_json::from_str::<Value>(text.trim()) {
        return Some((value, Recovery::Direct));
    }
    if let Some(start) = text.find("```") {
        let after = start + 3;
        let body_start = text[after..]
            .find('\n')
            .map_or(after, |newline| after + newline + 1);
        if let Some(len) = text[body_start..].find("```")
            && let Ok(value) =
                serde_json::from_str::<Value>(text[body_start..body_start + len].trim())
        {
            return Some((value, Recovery::MarkdownFence(body_start)));
        }
    }
    let start = text.find('{')?;
    let end = balanced_end(&text[start..])?;
    serde_json::from_str::<Value>(&text[start..start + end])
        .ok()
        .map(|value| (value, Recovery::BraceWalker(start)))
}

/// The length of the balanced `{…}` at the start of `text` (strings and escapes respected).
fn balanced_end(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' => depth += 1,
            '}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// An envelope the host can process.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Envelope {
    /// `type`: the kind.
    pub(crate) kind: String,
    /// `correlationId`.
    pub(crate) correlation_id: String,
    /// `schemaVersion` (absent = 0).
    pub(crate) schema_version: u32,
    /// The payload (reassembled for a partial emission).
    pub(crate) payload: Value,
    /// The texts the events record: one for a whole envelope (the payload's JSON), one per
    /// chunk (its fragment) for a partial emission.
    pub(crate) chunks: Vec<String>,
}

/// Why an emission is not an acceptable envelope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Fault {
    /// No JSON document in the text: retried as `parse-error`.
    Unparsable(&'static str),
    /// Not an envelope (a required member missing or mistyped, an incomplete partial emission):
    /// retried as `schema-violation`.
    Malformed(&'static str),
    /// `correlationId` absent: rejected, never synthesized.
    MissingCorrelationId,
    /// `meta.source` absent: rejected, never synthesized.
    MissingMetaSource,
    /// `correlationId` outside the event-id grammar: rejected.
    UnusableCorrelationId,
}

impl Fault {
    /// What the host says about it (never quoting the emission).
    pub(crate) fn describe(&self) -> &'static str {
        match self {
            Fault::Unparsable(what) | Fault::Malformed(what) => what,
            Fault::MissingCorrelationId => "the envelope has no correlationId",
            Fault::MissingMetaSource => "the envelope has no meta.source",
            Fault::UnusableCorrelationId => {
                "the envelope's correlationId does not fit ^[A-Za-z0-9._~-]{16,128}$"
            }
        }
    }
}

/// One chunk's `partial`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Partial {
    is_partial: bool,
    index: u64,
}

fn is_event_id(value: &str) -> bool {
    (16..=128).contains(&value.len())
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._~-".contains(&b))
}

/// The members every envelope (and every chunk) must carry.
fn head(value: &Value) -> Result<(String, String, u32, Option<Partial>), Fault> {
    let object = value
        .as_object()
        .ok_or(Fault::Malformed("the output is not a JSON object"))?;
    let kind = object
        .get("type")
        .and_then(Value::as_str)
        .filter(|k| !k.is_empty())
        .ok_or(Fault::Malformed("the envelope has no string `type`"))?
        .to_string();
    if !object.contains_key("payload") {
        return Err(Fault::Malformed("the envelope has no `payload`"));
    }
    let correlation_id = match object.get("correlationId").and_then(Value::as_str) {
        Some(id) if !id.is_empty() => id.to_string(),
        _ => return Err(Fault::MissingCorrelationId),
    };
    if !is_event_id(&correlation_id) {
        return Err(Fault::UnusableCorrelationId);
    }
    let source = value.pointer("/meta/source").and_then(Value::as_str);
    match source {
        Some("ai-generation" | "user" | "system") => {}
        Some(_) => {
            return Err(Fault::Malformed(
                "meta.source is not ai-generation, user or system",
            ));
        }
        None => return Err(Fault::MissingMetaSource),
    }
    let schema_version = match object.get("schemaVersion") {
        None => 0,
        Some(v) => v
            .as_u64()
            .and_then(|v| u32::try_from(v).ok())
            .ok_or(Fault::Malformed(
                "schemaVersion is not a non-negative integer",
            ))?,
    };
    let partial = match object.get("partial") {
        None => None,
        Some(p) => Some(Partial {
            is_partial: p
                .get("isPartial")
                .and_then(Value::as_bool)
                .ok_or(Fault::Malformed("partial.isPartial is not a boolean"))?,
            index: p
                .get("index")
                .and_then(Value::as_u64)
                .ok_or(Fault::Malformed(
                    "partial.index is not a non-negative integer",
                ))?,
        }),
    };
    Ok((kind, correlation_id, schema_version, partial))
}

/// Reads one whole envelope.
pub(crate) fn read_whole(value: &Value) -> Result<Envelope, Fault> {
    let (kind, correlation_id, schema_version, partial) = head(value)?;
    if partial.is_some_and(|p| p.is_partial) {
        return Err(Fault::Malformed(
            "a lone chunk of a partial emission is not a complete envelope",
        ));
    }
    let payload = value.get("payload").cloned().unwrap_or(Value::Null);
    Ok(Envelope {
        kind,
        correlation_id,
        schema_version,
        chunks: vec![payload.to_string()],
        payload,
    })
}

/// Reassembles the chunks of one partial emission (E1).
pub(crate) fn reassemble<C: Borrow<Value>>(chunks: &[C]) -> Result<Envelope, Fault> {
    let mut first: Option<(String, String, u32)> = None;
    let mut fragments = Vec::with_capacity(chunks.len());
    for (position, chunk) in chunks.iter().enumerate() {
        let chunk: &Value = chunk.borrow();
        let (kind, correlation_id, version, partial) = head(chunk)?;
        let partial = partial.ok_or(Fault::Malformed("a chunk has no `partial`"))?;
        match &first {
            None => first = Some((kind, correlation_id, version)),
            Some((k, c, _)) if *k == kind && *c == correlation_id => {}
            Some(_) => {
                return Err(Fault::Malformed(
                    "the chunks of one emission disagree on type or correlationId",
                ));
            }
        }
        let last = position + 1 == chunks.len();
        if partial.index != position as u64 || partial.is_partial == last {
            return Err(Fault::Malformed(
                "the partial emission is out of order or does not end with isPartial false",
            ));
        }
        let fragment = chunk
            .get("payload")
            .and_then(Value::as_str)
            .ok_or(Fault::Malformed(
                "a chunk's payload is not a string fragment",
            ))?;
        fragments.push(fragment.to_string());
    }
    let (kind, correlation_id, schema_version) =
        first.ok_or(Fault::Malformed("the partial emission has no chunk"))?;
    let payload = serde_json::from_str::<Value>(&fragments.concat())
        .map_err(|_| Fault::Unparsable("the reassembled payload is not JSON"))?;
    Ok(Envelope {
        kind,
        correlation_id,
        schema_version,
        payload,
        chunks: fragments,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn envelope(extra: Value) -> Value {
        let mut base = json!({
            "type": "example.answer", "correlationId": "corr-0000000000000001",
            "payload": {"answer": "a", "confidence": 1}, "meta": {"source": "ai-generation"}
        });
        if let (Some(b), Some(e)) = (base.as_object_mut(), extra.as_object()) {
            for (k, v) in e {
                if v.is_null() {
                    b.remove(k);
                } else {
                    b.insert(k.clone(), v.clone());
                }
            }
        }
        base
    }

    #[test]
    fn lenient_parse_reports_path_and_offset() {
        assert_eq!(lenient_parse(" {\"a\":1} ").unwrap().1, Recovery::Direct);
        let fenced = "Here:\n```json\n{\"a\":1}\n```\n";
        let (value, recovery) = lenient_parse(fenced).unwrap();
        assert_eq!(value, json!({"a": 1}));
        assert_eq!(recovery, Recovery::MarkdownFence(14));
        let prose = "Sure! {\"a\": \"}\"} hope that helps";
        assert_eq!(lenient_parse(prose).unwrap().1, Recovery::BraceWalker(6));
        assert!(lenient_parse("no json here").is_none());
        assert!(lenient_parse("{\"a\": ").is_none());
    }

    #[test]
    fn required_members_are_never_synthesized() {
        assert!(read_whole(&envelope(json!({}))).is_ok());
        assert_eq!(
            read_whole(&envelope(json!({"correlationId": null}))),
            Err(Fault::MissingCorrelationId)
        );
        assert_eq!(
            read_whole(&envelope(json!({"meta": {"ts": "x"}}))),
            Err(Fault::MissingMetaSource)
        );
        assert_eq!(
            read_whole(&envelope(json!({"correlationId": "short"}))),
            Err(Fault::UnusableCorrelationId)
        );
    }

    #[test]
    fn chunks_reassemble_in_order() {
        let chunk = |i: u64, partial: bool, text: &str| {
            envelope(
                json!({"partial": {"isPartial": partial, "index": i, "total": -1}, "payload": text}),
            )
        };
        let whole = reassemble(&[
            chunk(0, true, "{\"answer\":"),
            chunk(1, true, "\"a\",\"confidence\""),
            chunk(2, false, ":1}"),
        ])
        .unwrap();
        assert_eq!(whole.payload, json!({"answer": "a", "confidence": 1}));
        assert_eq!(whole.chunks.len(), 3);
        assert!(reassemble(&[chunk(0, true, "{"), chunk(1, true, "}")]).is_err());
        assert!(reassemble(&[chunk(1, false, "{}")]).is_err());
    }
}
