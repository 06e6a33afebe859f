//! Judging a stream as it arrives: what the harness read of a stream past the frames it keeps.
//!
//! A stream's first frames are kept whole for the checks (up to the driver's kept bound,
//! [`crate::driver::Limits::max_stream_frames`] frames or
//! [`crate::driver::Limits::max_stream_bytes`] bytes). Past that bound the driver keeps reading
//! (up to its read bound) and folds each frame into a [`StreamFold`] as it arrives, then drops
//! it: memory holds the kept prefix and these counts, whatever the host sends. The checks that
//! need every frame read the fold for what they can judge from it (sequence rules, keep-alive
//! silences, frame counts, event types, JSON validity, the canary) and are ERROR ("judged on a
//! prefix") for what they cannot; never a PASS on frames no check saw.

use crate::checks::events::observe;
use crate::frame_kind::FrameKind;
use crate::transcript::{FrameRecord, ResponseRecord, StreamFold};

/// How the message of a check not judged because its stream was not kept or read whole begins
/// (such an ERROR does not hide a failure established on the frames that were judged).
pub(crate) const JUDGED_ON_A_PREFIX: &str = "not judged: the stream exceeded";

/// How many distinct event types a fold counts; more are counted in
/// [`StreamFold::types_overflow`].
pub(crate) const FOLD_TYPES: usize = 128;

impl StreamFold {
    /// A fold starting after the `kept` frames (its seam: their last sequence and arrival).
    pub fn after(kept: &[FrameRecord]) -> Self {
        let mut scratch = ResponseRecord::held_without_headers(0);
        let event_frames = kept
            .iter()
            .filter(|f| matches!(f.kind, FrameKind::Event { .. }))
            .count() as u64;
        // The seam's sequence: the last kept event frame that carries one.
        let last_sequence = kept
            .iter()
            .rev()
            .filter(|f| matches!(f.kind, FrameKind::Event { .. }))
            .find_map(|f| {
                scratch.frames = vec![f.clone()];
                observe(&scratch).sequences().last().copied()
            });
        StreamFold {
            first_frame_index: event_frames,
            last_at_ms: kept.last().map_or(0, |f| f.at_ms),
            last_sequence,
            ..Default::default()
        }
    }

    /// Folds one frame read past the kept ones; `canary` is looked for in its text.
    pub fn fold(&mut self, frame: FrameRecord, canary: Option<&str>) {
        self.max_silence_ms = self
            .max_silence_ms
            .max(frame.at_ms.saturating_sub(self.last_at_ms));
        self.last_at_ms = self.last_at_ms.max(frame.at_ms);
        let carries = |text: &str| canary.is_some_and(|c| !c.is_empty() && text.contains(c));
        let leaked = match &frame.kind {
            FrameKind::Comment { text } => carries(text),
            FrameKind::Event {
                data, id, event, ..
            } => {
                carries(data)
                    || id.as_deref().is_some_and(carries)
                    || event.as_deref().is_some_and(carries)
            }
        };
        if leaked && self.canary_frame.is_none() {
            self.canary_frame = Some(self.frames);
        }
        self.frames += 1;
        let FrameKind::Event { json, .. } = &frame.kind else {
            self.comments += 1;
            return;
        };
        let index = self.first_frame_index + self.event_frames;
        self.event_frames += 1;
        if json.is_none() {
            self.unparsable += 1;
            self.first_unparsable.get_or_insert(index);
            return;
        }
        let mut scratch = ResponseRecord::held_without_headers(0);
        scratch.frames = vec![frame];
        for event in observe(&scratch).events {
            self.events += 1;
            let kind = event.event_type.as_deref().unwrap_or("?");
            let room = self.types.len() < FOLD_TYPES;
            match self.types.get_mut(kind) {
                Some(count) => *count += 1,
                None if room => {
                    self.types.insert(kind.to_string(), 1);
                }
                None => self.types_overflow = true,
            }
            let Some(sequence) = event.sequence else {
                self.without_sequence += 1;
                continue;
            };
            if !event.batched
                && event.frame_id.is_some()
                && event
                    .frame_id
                    .as_deref()
                    .and_then(|i| i.parse::<u64>().ok())
                    != Some(sequence)
            {
                self.first_id_mismatch.get_or_insert(sequence);
            }
            if let Some(last) = self.last_sequence {
                let pair = [last, sequence];
                if sequence < last {
                    self.first_decrease.get_or_insert(pair);
                }
                if sequence <= last {
                    self.first_not_increasing.get_or_insert(pair);
                }
                if sequence != last.saturating_add(1) {
                    self.first_gap.get_or_insert(pair);
                }
            }
            self.last_sequence = Some(sequence);
        }
    }

    /// Whether an event of `kind` was folded (or may have been: the type count overflowed).
    pub fn may_hold_type(&self, kind: &str) -> bool {
        self.types.contains_key(kind) || self.types_overflow
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(at_ms: u64, sequence: u64, kind: &str) -> FrameRecord {
        let data = format!(r#"{{"sequence":{sequence},"type":"{kind}"}}"#);
        FrameRecord {
            at_ms,
            kind: FrameKind::Event {
                id: Some(sequence.to_string()),
                event: None,
                json: serde_json::from_str(&data).ok(),
                data,
                retry: None,
            },
        }
    }

    #[test]
    fn the_fold_continues_from_the_kept_frames_and_finds_what_breaks_the_rules() {
        let kept: Vec<_> = (1..=3).map(|s| event(s * 10, s, "a")).collect();
        let mut fold = StreamFold::after(&kept);
        assert_eq!((fold.first_frame_index, fold.last_sequence), (3, Some(3)));
        for frame in [event(40, 4, "a"), event(500, 6, "b"), event(510, 5, "b")] {
            fold.fold(frame, Some("CANARY"));
        }
        fold.fold(
            FrameRecord {
                at_ms: 520,
                kind: FrameKind::Comment {
                    text: "CANARY".into(),
                },
            },
            Some("CANARY"),
        );
        assert_eq!((fold.frames, fold.event_frames, fold.comments), (4, 3, 1));
        assert_eq!(fold.first_gap, Some([4, 6]));
        assert_eq!(fold.first_decrease, Some([6, 5]));
        assert_eq!(fold.first_not_increasing, Some([6, 5]));
        assert_eq!(fold.max_silence_ms, 460);
        assert_eq!(fold.types.get("b"), Some(&2));
        assert_eq!(fold.canary_frame, Some(3));
    }
}
