//! How the host held the stream: `closed_by_server` (who ended it) and `keepalive` (comments,
//! no long silence).

use super::keepalive::KeepaliveSeen;
use crate::case::KeepaliveExpect;
use crate::checks::context::Outcome;
use crate::transcript::{BodyEnd, StepRecord};
use crate::verdict::CheckOutcome;

/// The server ended the stream (`want` true) or held it open (`want` false).
pub(in crate::checks) fn closed_by_server(
    out: &Outcome<'_>,
    step: &StepRecord,
    want: bool,
) -> CheckOutcome {
    let response = match out.received(step) {
        Ok(r) => r,
        Err(failure) => return *failure,
    };
    let closed = response.end == BodyEnd::ServerClosed;
    let actual = match &response.end {
        BodyEnd::ServerClosed => "the server closed the stream".to_string(),
        BodyEnd::ClientStopped if !response.headers_received() => {
            "the stream was still open, its headers not sent yet (the connection held open)"
                .to_string()
        }
        BodyEnd::ClientStopped => match response.run_end {
            Some(seen) => format!(
                "the stream was still open {} ms after its run ended (at {} ms, {}): the harness \
                 stopped reading",
                response.end_at_ms.saturating_sub(seen.at_ms),
                seen.at_ms,
                seen.witness.describe()
            ),
            None => "the harness stopped reading (the stream was still open)".to_string(),
        },
        BodyEnd::Timeout => "the stream was still open when the case's time ran out".to_string(),
        BodyEnd::Broken(why) => format!("the connection broke: {why}"),
        BodyEnd::TooLarge(why) => format!("the harness stopped: {why}"),
    };
    if closed == want {
        out.pass(actual)
    } else if want {
        out.fail(
            "the server did not close the stream",
            "the server closes the stream",
            actual,
        )
    } else {
        out.fail(
            "the server closed the stream",
            "the stream held open",
            actual,
        )
    }
}

/// At least `min_comments` `:` comments and no silence longer than `max_gap_ms`, until the body
/// ended (the rule: `keepalive.rs`).
pub(in crate::checks) fn keepalive(
    out: &Outcome<'_>,
    step: &StepRecord,
    expect: &KeepaliveExpect,
) -> CheckOutcome {
    let response = match out.received(step) {
        Ok(r) => r,
        Err(failure) => return *failure,
    };
    let last_frame_at = response.frames.last().map_or(0, |f| f.at_ms);
    let seen = KeepaliveSeen::of_frames(&response.frames)
        .with_silence(response.end_at_ms.saturating_sub(last_frame_at));
    let passed = format!(
        "{} keep-alive comment(s); longest silence {} ms",
        seen.comments, seen.longest_silence_ms
    );
    seen.verdict(out, expect, response.end_at_ms, passed)
}
