//! The `stream` action: one SSE subscription, read until its stop condition.

use tokio::time::Instant;

use super::context::StepContext;
use crate::case::{CaseSurface, StreamSpec};
use crate::checks;
use crate::checks::events::observe;
use crate::driver::http::ReadMode;
use crate::template::TemplateError;
use crate::transcript::{Exchange, StepRecord};

/// Subscribes and reads the stream.
pub(crate) async fn run(
    cx: &StepContext<'_>,
    stream: &StreamSpec,
) -> Result<StepRecord, TemplateError> {
    let (prepared, stop) = cx.prepare_stream(stream, cx.default_principal())?;
    let windowed = stop.duration.is_some();
    let exchange = cx
        .driver
        .exchange(prepared, ReadMode::Stream(stop), cx.deadline, cx.started)
        .await;
    let completed = stream_observed(cx.surface, windowed, &exchange, cx.deadline);
    Ok(cx.record("stream", vec![exchange], completed))
}

/// Whether a stream step was observed as the case meant, so that its checks judge the host:
/// not when the case's budget ran out before any answer, nor when it cut a reading window
/// short, nor when it cut an unwindowed stream before the terminal event (a slow host and one
/// holding a stream open look the same until then; once the terminal event (or a terminal
/// snapshot) arrived, a stream still open when the budget ran out is the host's to answer for).
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
                || observed.snapshots.iter().any(|(_, _, snapshot)| {
                    snapshot
                        .get("status")
                        .cloned()
                        .and_then(|s| serde_json::from_value::<spec::openwop::RunStatus>(s).ok())
                        .is_some_and(spec::openwop::RunStatus::is_terminal)
                });
            !windowed && ended
        }
        Some(_) => true,
    }
}
