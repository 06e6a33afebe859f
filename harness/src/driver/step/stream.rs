//! The `stream` action: one SSE subscription, read until its stop condition.

use std::time::Duration;

use tokio::time::Instant;

use super::come_back;
use super::context::StepContext;
use crate::case::{CaseSurface, StreamSpec};
use crate::checks;
use crate::checks::events::observe;
use crate::driver::http::ReadMode;
use crate::template::TemplateError;
use crate::transcript::{Exchange, StepRecord};

/// What a `run_ended` stream's read deadline leaves beyond its close window, so that the window
/// (not the deadline) ends the read.
const READ_SLACK: Duration = Duration::from_millis(250);

/// Subscribes and reads the stream. On surface W a subscription answered `429 rate_limited` or
/// `503` with `Retry-After` (the host's rate limit, subscriber limit or capacity: they answer
/// alike) is waited out as asked and sent again, while the wait and the step's reading window
/// still fit the case's budget ([`come_back::send_waiting_out`]); what is still refused then is
/// the case run's to settle (`case_run::Refusal`: SKIP for a subscriber limit). A re-sent
/// subscription reads the run at a later moment, which every case reading a live run tolerates
/// (premises on what it read, `harness/cli/tests/it/resubscribing_proxy.rs`).
pub(crate) async fn run(
    cx: &StepContext<'_>,
    stream: &StreamSpec,
) -> Result<StepRecord, TemplateError> {
    let (prepared, stop) = cx.prepare_stream(stream, cx.default_principal())?;
    let windowed = stop.duration.is_some();
    let window = stop.duration.unwrap_or_default();
    // A refusal is waited out while the wait and what the read needs of the budget still fit
    // it; a close window is not the budget's.
    let read_needs = if stream.run_ended {
        Duration::ZERO
    } else {
        window
    };
    let (exchange, waited_out) =
        come_back::send_waiting_out(cx.surface, cx.deadline, read_needs, || {
            // A stream on a run that ended, opened within the case's budget, is read to its
            // close window even past the budget: a stream still open then is the host's to
            // answer for, never the budget's. One opened after the budget ran out is not read
            // on. The time the read took, one close window at most, is added to the case's budget
            // (`CaseRunner::run_step`).
            let now = Instant::now();
            let read_deadline = if stream.run_ended && now < cx.deadline {
                cx.deadline.max(now + window + READ_SLACK)
            } else {
                cx.deadline
            };
            cx.driver.exchange(
                prepared.clone(),
                ReadMode::Stream(stop.clone()),
                read_deadline,
                cx.started,
            )
        })
        .await;
    let completed = stream_observed(cx.surface, windowed, &exchange, cx.deadline);
    let mut record = cx.record("stream", vec![exchange], completed);
    record.refusals_waited_out = waited_out;
    Ok(record)
}

/// Whether a stream step was observed as the case meant, so that its checks judge the host:
/// not when the case's budget ran out before any answer, nor when it cut a reading window
/// short, nor when it cut an unwindowed stream before the terminal event (a slow host and one
/// holding a stream open look the same until then; once the terminal event (or a terminal
/// snapshot) arrived, on this stream or another of the run in the case, the read went on for
/// one keep-alive interval after it (`StopCondition::close_after_terminal`), and a stream still
/// open then is the host's to answer for).
fn stream_observed(
    surface: CaseSurface,
    windowed: bool,
    exchange: &Exchange,
    deadline: Instant,
) -> bool {
    match &exchange.response {
        None => Instant::now() < deadline,
        Some(response) if matches!(response.end, crate::transcript::BodyEnd::Timeout) => {
            let observed = observe(response);
            // The end of the run shows as its terminal event, or (a `values` stream) as a
            // snapshot of the run in a terminal status.
            let ended = observed
                .events
                .iter()
                .any(|e| checks::is_terminal(surface, e.event_type.as_deref()))
                || (observed.snapshots.iter())
                    .any(|(_, _, snapshot)| checks::is_terminal_snapshot(snapshot));
            !windowed && ended
        }
        Some(_) => true,
    }
}
