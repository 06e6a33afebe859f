//! The `poll_until` action: a request repeated until a condition on its body holds.

use super::context::StepContext;
use crate::case::PollUntilSpec;
use crate::template::TemplateError;
use crate::transcript::StepRecord;

/// Polls until the condition holds or the case's budget runs out.
pub(crate) async fn run(
    cx: &StepContext<'_>,
    poll: &PollUntilSpec,
) -> Result<StepRecord, TemplateError> {
    let (exchanges, completed) = cx
        .poll(&poll.request, &poll.until, poll.interval_ms)
        .await?;
    Ok(cx.record("poll_until", exchanges, completed))
}
