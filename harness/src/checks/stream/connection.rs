//! How the host held the stream: `closed_by_server` (who ended it) and `keepalive` (comments,
//! no long silence).

use crate::case::KeepaliveExpect;
use crate::checks::context::Outcome;
use crate::transcript::{BodyEnd, FrameKind, StepRecord};
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
        BodyEnd::ClientStopped => {
            "the harness stopped reading (the stream was still open)".to_string()
        }
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

/// At least `min_comments` `:` comments and no silence longer than `max_gap_ms`.
pub(in crate::checks) fn keepalive(
    out: &Outcome<'_>,
    step: &StepRecord,
    expect: &KeepaliveExpect,
) -> CheckOutcome {
    let response = match out.received(step) {
        Ok(r) => r,
        Err(failure) => return *failure,
    };
    let comments = response
        .frames
        .iter()
        .filter(|f| matches!(f.kind, FrameKind::Comment { .. }))
        .count() as u32;
    // Silence is measured from when the request was sent: a host that writes its headers only
    // with its first byte was silent until then.
    let mut marks: Vec<u64> = vec![0];
    marks.extend(response.frames.iter().map(|f| f.at_ms));
    marks.push(response.end_at_ms);
    let max_gap = marks
        .windows(2)
        .map(|w| w[1].saturating_sub(w[0]))
        .max()
        .unwrap_or(0);
    if comments < expect.min_comments {
        return out.fail(
            format!(
                "{comments} keep-alive comment(s) in {} ms",
                response.end_at_ms
            ),
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
    out.pass(format!(
        "{comments} keep-alive comment(s); longest silence {max_gap} ms"
    ))
}
