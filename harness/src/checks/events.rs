//! The events a step observed, normalised across surfaces and frame kinds: plain frames,
//! `batch` frames (flattened), `ai.message.chunk` frames (their `id:` is the sequence, their data
//! the chunk payload), and poll bodies (`events` array). `state.snapshot` frames are snapshots,
//! not events, and are kept apart.
//!
//! Every framing a host may choose is read ([`Framing`], open points `w.sse.mixed-messages-data`
//! and `w.host-events.framing`): a mixed-mode frame admitted by `messages` (`event: messages`)
//! whose data is the outputChunk payload (what `ai.message.chunk` carries) rather than the
//! RunEventDoc is the chunk framing; a host-channel frame named `heartbeat.evaluated` or
//! `heartbeat.stateChanged` whose data is the bare heartbeat message (no `type` member) is read
//! as `{type: <event:>, payload: <data>}`, so every check reads both framings the same way.

use serde_json::Value;

use crate::transcript::{FrameKind, ResponseRecord};

/// The names of the host-channel messages (asyncapi's `hostEvents` channel lists exactly these):
/// a frame so named may carry the bare message as its data.
pub(crate) const HOST_MESSAGE_NAMES: [&str; 2] = ["heartbeat.evaluated", "heartbeat.stateChanged"];

/// How a frame carried its event.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Framing {
    /// The data is the whole document (a RunEventDoc, an execution event, a HostEvent).
    #[default]
    Document,
    /// The data is the outputChunk payload of an `output.chunk` event: an `ai.message.chunk`
    /// frame, or a mixed-mode frame named `messages` whose data is not a RunEventDoc. The
    /// frame's `id:` is the sequence.
    ChunkPayload,
    /// The data is a bare host-channel message named by the frame's `event:`; the observed
    /// document is `{type: <event:>, payload: <data>}`.
    BareMessage,
}

/// One observed event.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ObservedEvent {
    /// The event's sequence (from the document, else the frame's numeric `id:`).
    pub sequence: Option<u64>,
    /// The event type (`type` in the document; `output.chunk` for an `ai.message.chunk` frame).
    pub event_type: Option<String>,
    /// The document (the RunEventDoc / execution event; for `ai.message.chunk`, the payload).
    pub doc: Value,
    /// Which frame carried it (index among event frames), `None` for poll bodies.
    pub frame_index: Option<usize>,
    /// The frame's `id:`.
    pub frame_id: Option<String>,
    /// The frame's `event:`.
    pub frame_event: Option<String>,
    /// Whether it arrived inside a `batch` frame.
    pub batched: bool,
    /// When its frame arrived (ms after the request was sent), for streams.
    pub at_ms: Option<u64>,
    /// How its frame carried it.
    pub framing: Framing,
}

impl ObservedEvent {
    /// Names the event in a message: by its sequence, else by the frame that carried it (a
    /// host-channel message has no sequence), with its type when known.
    pub(crate) fn label(&self) -> String {
        let at = match (self.sequence, self.frame_index) {
            (Some(sequence), _) => format!("event {sequence}"),
            (None, Some(frame)) => format!("the event in frame {frame}"),
            (None, None) => "an event without a sequence".to_owned(),
        };
        match &self.event_type {
            Some(event_type) => format!("{at} ({event_type})"),
            None => at,
        }
    }
}

/// What a response carried: events and snapshots, in arrival order.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Observed {
    /// The events.
    pub events: Vec<ObservedEvent>,
    /// `state.snapshot` frames: `(frame index, frame id, data)`.
    pub snapshots: Vec<(usize, Option<String>, Value)>,
    /// Event frames whose data is not JSON: `(frame index, data)`.
    pub unparsable: Vec<(usize, String)>,
}

impl Observed {
    /// The sequences of the events, in order (events without one are skipped).
    pub(crate) fn sequences(&self) -> Vec<u64> {
        self.events.iter().filter_map(|e| e.sequence).collect()
    }

    /// The types of the events, in order.
    #[cfg(test)]
    pub fn types(&self) -> Vec<&str> {
        self.events
            .iter()
            .map(|e| e.event_type.as_deref().unwrap_or("?"))
            .collect()
    }
}

/// Extracts the observed events of a response.
pub(crate) fn observe(response: &ResponseRecord) -> Observed {
    let mut observed = Observed::default();
    if response.frames.is_empty() {
        if let Some(events) = response
            .json
            .as_ref()
            .and_then(|j| j.get("events"))
            .and_then(Value::as_array)
        {
            observed.events = events
                .iter()
                .map(|doc| from_doc(doc.clone(), None, None, None, false))
                .collect();
        }
        return observed;
    }
    let mut index = 0;
    let mut arrivals: Vec<u64> = Vec::new();
    for frame in &response.frames {
        let FrameKind::Event {
            id,
            event,
            data,
            json,
            ..
        } = &frame.kind
        else {
            continue;
        };
        let frame_index = index;
        arrivals.push(frame.at_ms);
        index += 1;
        let Some(json) = json else {
            observed.unparsable.push((frame_index, data.clone()));
            continue;
        };
        match read_frame(frame_index, id.as_deref(), event.as_deref(), json) {
            FrameContent::Snapshot => {
                observed
                    .snapshots
                    .push((frame_index, id.clone(), json.clone()))
            }
            FrameContent::Events(events) => observed.events.extend(events),
        }
    }
    for event in &mut observed.events {
        event.at_ms = event.frame_index.and_then(|i| arrivals.get(i).copied());
    }
    observed
}

/// What an event frame with JSON data carries.
pub(crate) enum FrameContent {
    /// A `state.snapshot` (a `values` stream's state, not an event).
    Snapshot,
    /// The events it carries (several for a `batch` frame).
    Events(Vec<ObservedEvent>),
}

/// Reads one event frame (the `frame_index`-th, with its `id:`, `event:` and JSON data) the way
/// every framing a host may choose is read: the one reading of a frame, for [`observe`] and for
/// a stream step's stop on an event.
pub(crate) fn read_frame(
    frame_index: usize,
    id: Option<&str>,
    event: Option<&str>,
    json: &Value,
) -> FrameContent {
    let (id, name) = (id.map(String::from), event.map(String::from));
    FrameContent::Events(match (event, json) {
        (Some("state.snapshot"), _) => return FrameContent::Snapshot,
        (Some("batch"), Value::Array(docs)) => docs
            .iter()
            .map(|doc| {
                from_doc(
                    doc.clone(),
                    Some(frame_index),
                    id.clone(),
                    name.clone(),
                    true,
                )
            })
            .collect(),
        // The chunk payload: named `ai.message.chunk`, or in a mixed mode named by the
        // `messages` mode that admitted it.
        (Some(event), doc)
            if event == "ai.message.chunk" || (event == "messages" && is_bare(doc)) =>
        {
            vec![ObservedEvent {
                sequence: id.as_deref().and_then(|i| i.parse().ok()),
                event_type: Some("output.chunk".into()),
                doc: doc.clone(),
                frame_index: Some(frame_index),
                frame_id: id,
                frame_event: name,
                batched: false,
                at_ms: None,
                framing: Framing::ChunkPayload,
            }]
        }
        (Some(event), doc) if HOST_MESSAGE_NAMES.contains(&event) && is_bare(doc) => {
            let mut observed_event = from_doc(
                serde_json::json!({"type": event, "payload": doc}),
                Some(frame_index),
                id,
                name,
                false,
            );
            observed_event.framing = Framing::BareMessage;
            vec![observed_event]
        }
        (_, doc) => vec![from_doc(doc.clone(), Some(frame_index), id, name, false)],
    })
}

fn from_doc(
    doc: Value,
    frame_index: Option<usize>,
    frame_id: Option<String>,
    frame_event: Option<String>,
    batched: bool,
) -> ObservedEvent {
    let sequence = doc.get("sequence").and_then(Value::as_u64).or_else(|| {
        if batched {
            None
        } else {
            frame_id.as_deref().and_then(|i| i.parse().ok())
        }
    });
    let event_type = doc.get("type").and_then(Value::as_str).map(String::from);
    ObservedEvent {
        sequence,
        event_type,
        doc,
        frame_index,
        frame_id,
        frame_event,
        batched,
        at_ms: None,
        framing: Framing::Document,
    }
}

/// Whether a frame's data is an object that is no document of its own (no `type` member): a
/// bare payload or message the frame's name qualifies.
fn is_bare(data: &Value) -> bool {
    data.as_object().is_some_and(|o| !o.contains_key("type"))
}

/// Looks a member up in an event document: top level first, then inside `payload`.
pub(crate) fn field<'a>(doc: &'a Value, name: &str) -> Option<&'a Value> {
    doc.get(name)
        .or_else(|| doc.get("payload").and_then(|p| p.get(name)))
}
