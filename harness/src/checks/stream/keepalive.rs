//! The keep-alive rule: at least `min_comments` `:` comments and no silence longer than
//! `max_gap_ms`, silence measured from when the request was sent (a host that writes its
//! headers only with its first byte was silent until then). The `keepalive` check applies it to
//! the kept frames (`connection.rs`); a stream the harness did not keep whole, to the kept
//! frames and the fold together (`whole.rs`).

use crate::case::KeepaliveExpect;
use crate::checks::context::Outcome;
use crate::transcript::{FrameKind, FrameRecord};
use crate::verdict::CheckOutcome;

/// What a stream's keep-alive was over the frames read.
pub(super) struct KeepaliveSeen {
    /// The `:` comments.
    pub(super) comments: u64,
    /// The longest silence, in ms.
    pub(super) longest_silence_ms: u64,
}

impl KeepaliveSeen {
    /// The comments among `frames`, and the longest silence before one of them: from the
    /// request sent (0 ms) to the first, then between consecutive ones. The silence after the
    /// last is the caller's to add ([`Self::with_silence`]).
    pub(super) fn of_frames(frames: &[FrameRecord]) -> Self {
        let comments = frames
            .iter()
            .filter(|f| matches!(f.kind, FrameKind::Comment { .. }))
            .count() as u64;
        let mut marks: Vec<u64> = vec![0];
        marks.extend(frames.iter().map(|f| f.at_ms));
        let longest_silence_ms = marks
            .windows(2)
            .map(|w| w[1].saturating_sub(w[0]))
            .max()
            .unwrap_or(0);
        Self {
            comments,
            longest_silence_ms,
        }
    }

    /// `self` with one more silence of `ms` considered.
    pub(super) fn with_silence(self, ms: u64) -> Self {
        Self {
            longest_silence_ms: self.longest_silence_ms.max(ms),
            ..self
        }
    }

    /// The verdict: FAIL on fewer comments than `expect.min_comments` (in a body that ended at
    /// `end_at_ms`) or on a silence longer than `expect.max_gap_ms`, otherwise PASS saying
    /// `passed`.
    pub(super) fn verdict(
        &self,
        out: &Outcome<'_>,
        expect: &KeepaliveExpect,
        end_at_ms: u64,
        passed: String,
    ) -> CheckOutcome {
        let (comments, max_gap) = (self.comments, self.longest_silence_ms);
        if comments < u64::from(expect.min_comments) {
            return out.fail(
                format!("{comments} keep-alive comment(s) in {end_at_ms} ms"),
                format!("at least {} comment(s)", expect.min_comments),
                format!("{comments} comment(s); longest silence {max_gap} ms"),
            );
        }
        if max_gap > expect.max_gap_ms {
            return out.fail(
                format!("a silence of {max_gap} ms"),
                format!("no silence longer than {} ms", expect.max_gap_ms),
                format!("{max_gap} ms"),
            );
        }
        out.pass(passed)
    }
}
