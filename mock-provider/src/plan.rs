//! A response as both backends serve it: status, headers and a body of timed steps.
//!
//! Encoders turn a script behaviour into a [`ResponsePlan`]; the wiremock backend serves plans
//! whose body is plain bytes, the streaming backend serves every plan.

use std::time::Duration;

use bytes::Bytes;

use crate::script::{StreamFault, Timing};

/// What to do with one request.
#[derive(Debug, Clone)]
pub(crate) struct ResponsePlan {
    /// Wait before anything is sent (or before the connection is reset).
    pub delay_before_headers: Duration,
    /// Then this.
    pub action: PlanAction,
}

/// The answer after the initial delay.
#[derive(Debug, Clone)]
pub(crate) enum PlanAction {
    /// Close the connection without a response.
    ResetConnection,
    /// Send a response.
    Respond(PlannedResponse),
}

/// Status, headers and body of a response.
#[derive(Debug, Clone)]
pub(crate) struct PlannedResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<BodyStep>,
}

/// One step of writing a body.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum BodyStep {
    /// Write these bytes as one chunk.
    Bytes(Bytes),
    /// Send nothing for this long.
    Pause(Duration),
    /// Send nothing until the client goes away or the server stops.
    StallUntilClosed,
    /// Abort the transport: the body is never terminated.
    Abort,
}

impl ResponsePlan {
    /// A response sent without delay.
    pub fn respond(response: PlannedResponse) -> Self {
        ResponsePlan {
            delay_before_headers: Duration::ZERO,
            action: PlanAction::Respond(response),
        }
    }

    /// The status code, or `None` for a reset.
    pub fn status(&self) -> Option<u16> {
        match &self.action {
            PlanAction::ResetConnection => None,
            PlanAction::Respond(response) => Some(response.status),
        }
    }

    /// True when only the streaming backend can serve this plan.
    pub fn needs_streaming_backend(&self) -> bool {
        match &self.action {
            PlanAction::ResetConnection => !self.delay_before_headers.is_zero(),
            PlanAction::Respond(response) => response
                .body
                .iter()
                .any(|step| !matches!(step, BodyStep::Bytes(_))),
        }
    }
}

impl PlannedResponse {
    /// A response whose body is one chunk.
    pub fn whole(status: u16, headers: Vec<(String, String)>, body: impl Into<Bytes>) -> Self {
        PlannedResponse {
            status,
            headers,
            body: vec![BodyStep::Bytes(body.into())],
        }
    }

    /// A JSON response.
    pub fn json(status: u16, mut headers: Vec<(String, String)>, body: &serde_json::Value) -> Self {
        headers.push(("content-type".into(), "application/json".into()));
        PlannedResponse::whole(status, headers, body.to_string())
    }

    /// All byte steps concatenated (what wiremock sends).
    pub fn concatenated_body(&self) -> Vec<u8> {
        let mut body = Vec::new();
        for step in &self.body {
            if let BodyStep::Bytes(bytes) = step {
                body.extend_from_slice(bytes);
            }
        }
        body
    }
}

/// The role of one SSE frame in an encoded stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FrameRole {
    /// Before any content (OpenAI role chunk, Anthropic `message_start`, `ping`).
    Opening,
    /// Frames between content that carry no script chunk (Anthropic block start/stop).
    Structure,
    /// Carries exactly one script chunk.
    Content,
    /// Finishing frames after the content (finish reason, usage).
    Closing,
    /// The terminator (`data: [DONE]`, `message_stop`), always last.
    Terminator,
}

/// One complete SSE frame, blank line included.
#[derive(Debug, Clone)]
pub(crate) struct WireFrame {
    pub bytes: Bytes,
    pub role: FrameRole,
}

/// Frames a provider uses to express stream faults.
pub(crate) struct FaultFrames {
    /// The in-band error frame.
    pub in_band_error: Bytes,
    /// A frame whose data is truncated JSON.
    pub malformed: Bytes,
}

/// Where `after_chunks: n` falls: the number of frames sent before the fault.
pub(crate) fn fault_position(frames: &[WireFrame], after_chunks: usize) -> usize {
    let openings = frames
        .iter()
        .take_while(|frame| frame.role == FrameRole::Opening)
        .count();
    let mut seen = 0;
    let mut last_content_end = openings;
    for (index, frame) in frames.iter().enumerate() {
        if frame.role == FrameRole::Content {
            seen += 1;
            last_content_end = index + 1;
            if seen == after_chunks {
                return index + 1;
            }
        }
    }
    if after_chunks == 0 {
        openings
    } else {
        last_content_end
    }
}

/// Turns encoded frames into body steps, applying a stream fault and the frame delays.
pub(crate) fn stream_body(
    frames: &[WireFrame],
    fault: Option<&StreamFault>,
    fault_frames: impl FnOnce() -> FaultFrames,
    timing: &Timing,
) -> Vec<BodyStep> {
    let mut items: Vec<BodyStep> = Vec::new();
    let all = |items: &mut Vec<BodyStep>, range: &[WireFrame]| {
        items.extend(
            range
                .iter()
                .map(|frame| BodyStep::Bytes(frame.bytes.clone())),
        );
    };
    match fault {
        None => all(&mut items, frames),
        Some(StreamFault::InBandError { after_chunks, .. }) => {
            let position = fault_position(frames, *after_chunks);
            all(&mut items, &frames[..position]);
            items.push(BodyStep::Bytes(fault_frames().in_band_error));
        }
        Some(StreamFault::MissingTerminator) => {
            let kept: Vec<WireFrame> = frames
                .iter()
                .filter(|frame| frame.role != FrameRole::Terminator)
                .cloned()
                .collect();
            all(&mut items, &kept);
        }
        Some(StreamFault::IncompleteFinalFrame) => {
            all(&mut items, frames);
            if let Some(BodyStep::Bytes(last)) = items.last_mut() {
                // Drop the final newline: the last line is complete, the frame is not.
                if last.ends_with(b"\n\n") {
                    *last = last.slice(..last.len() - 1);
                }
            }
        }
        Some(StreamFault::MalformedFrame { after_chunks }) => {
            let position = fault_position(frames, *after_chunks);
            all(&mut items, &frames[..position]);
            items.push(BodyStep::Bytes(fault_frames().malformed));
            all(&mut items, &frames[position..]);
        }
        Some(StreamFault::Cut {
            after_chunks,
            partial_bytes,
        }) => {
            let position = fault_position(frames, *after_chunks);
            all(&mut items, &frames[..position]);
            if let Some(next) = frames.get(position) {
                let keep = (*partial_bytes).min(next.bytes.len().saturating_sub(1));
                if keep > 0 {
                    items.push(BodyStep::Bytes(next.bytes.slice(..keep)));
                }
            }
            items.push(BodyStep::Abort);
        }
        Some(StreamFault::Stall {
            after_chunks,
            resume_after_ms,
        }) => {
            let position = fault_position(frames, *after_chunks);
            all(&mut items, &frames[..position]);
            items.push(match resume_after_ms {
                Some(ms) => BodyStep::Pause(Duration::from_millis(*ms)),
                None => BodyStep::StallUntilClosed,
            });
            all(&mut items, &frames[position..]);
        }
    }
    with_frame_delays(items, timing)
}

/// Inserts the first-frame delay and the delay between consecutive byte steps.
pub(crate) fn with_frame_delays(items: Vec<BodyStep>, timing: &Timing) -> Vec<BodyStep> {
    let mut steps = Vec::with_capacity(items.len() * 2 + 1);
    if timing.delay_before_first_frame_ms > 0 {
        steps.push(BodyStep::Pause(Duration::from_millis(
            timing.delay_before_first_frame_ms,
        )));
    }
    let between = Duration::from_millis(timing.delay_between_frames_ms);
    let mut wrote_bytes = false;
    for item in items {
        if matches!(item, BodyStep::Bytes(_)) {
            if wrote_bytes && !between.is_zero() {
                steps.push(BodyStep::Pause(between));
            }
            wrote_bytes = true;
        }
        steps.push(item);
    }
    steps
}

/// How a stream fault changes a non-streaming (JSON) body. An in-band error leaves the body
/// intact here: the caller answers it as an HTTP error instead.
pub(crate) fn whole_body_with_fault(body: Bytes, fault: &StreamFault) -> Vec<BodyStep> {
    let half = body.slice(..body.len() / 2);
    match fault {
        StreamFault::InBandError { .. } => vec![BodyStep::Bytes(body)],
        StreamFault::MissingTerminator
        | StreamFault::IncompleteFinalFrame
        | StreamFault::MalformedFrame { .. } => vec![BodyStep::Bytes(half)],
        StreamFault::Cut { partial_bytes, .. } => {
            let keep = if *partial_bytes == 0 {
                body.len() / 2
            } else {
                (*partial_bytes).min(body.len().saturating_sub(1))
            };
            vec![BodyStep::Bytes(body.slice(..keep)), BodyStep::Abort]
        }
        StreamFault::Stall {
            resume_after_ms, ..
        } => match resume_after_ms {
            Some(ms) => vec![
                BodyStep::Pause(Duration::from_millis(*ms)),
                BodyStep::Bytes(body),
            ],
            None => vec![BodyStep::StallUntilClosed],
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(text: &'static str, role: FrameRole) -> WireFrame {
        WireFrame {
            bytes: Bytes::from_static(text.as_bytes()),
            role,
        }
    }

    fn frames() -> Vec<WireFrame> {
        vec![
            frame("open\n\n", FrameRole::Opening),
            frame("a\n\n", FrameRole::Content),
            frame("b\n\n", FrameRole::Content),
            frame("end\n\n", FrameRole::Closing),
            frame("done\n\n", FrameRole::Terminator),
        ]
    }

    #[test]
    fn fault_positions_follow_the_chunks() {
        let frames = frames();
        assert_eq!(fault_position(&frames, 0), 1);
        assert_eq!(fault_position(&frames, 1), 2);
        assert_eq!(fault_position(&frames, 2), 3);
        assert_eq!(fault_position(&frames, 9), 3);
    }

    #[test]
    fn a_cut_keeps_partial_bytes_of_the_next_frame() {
        let fault = StreamFault::Cut {
            after_chunks: 1,
            partial_bytes: 1,
        };
        let steps = stream_body(&frames(), Some(&fault), unused, &Timing::default());
        assert_eq!(
            steps,
            vec![
                BodyStep::Bytes(Bytes::from_static(b"open\n\n")),
                BodyStep::Bytes(Bytes::from_static(b"a\n\n")),
                BodyStep::Bytes(Bytes::from_static(b"b")),
                BodyStep::Abort,
            ]
        );
    }

    #[test]
    fn frame_delays_go_between_byte_steps_only() {
        let timing = Timing {
            delay_before_headers_ms: 0,
            delay_before_first_frame_ms: 5,
            delay_between_frames_ms: 7,
        };
        let steps = with_frame_delays(
            vec![
                BodyStep::Bytes(Bytes::from_static(b"x")),
                BodyStep::Abort,
                BodyStep::Bytes(Bytes::from_static(b"y")),
            ],
            &timing,
        );
        assert_eq!(
            steps,
            vec![
                BodyStep::Pause(Duration::from_millis(5)),
                BodyStep::Bytes(Bytes::from_static(b"x")),
                BodyStep::Abort,
                BodyStep::Pause(Duration::from_millis(7)),
                BodyStep::Bytes(Bytes::from_static(b"y")),
            ]
        );
    }

    fn unused() -> FaultFrames {
        FaultFrames {
            in_band_error: Bytes::new(),
            malformed: Bytes::new(),
        }
    }
}
