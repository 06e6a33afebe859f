//! The `concurrent` action: `count` copies of one request or stream at once.

use futures::future::join_all;
use tokio::time::Instant;

use super::context::StepContext;
use super::request::answered_whole;
use crate::case::{ConcurrentCopy, ConcurrentSpec};
use crate::driver::http::ReadMode;
use crate::template::TemplateError;
use crate::transcript::StepRecord;

/// Sends the copies together and records every exchange.
pub(crate) async fn run(
    cx: &StepContext<'_>,
    concurrent: &ConcurrentSpec,
) -> Result<StepRecord, TemplateError> {
    let count = cx.scope.expand(&concurrent.count)?;
    let count = count
        .as_u64()
        .filter(|n| (2..=256).contains(n))
        .ok_or_else(|| {
            TemplateError::Missing(
                concurrent.count.to_string(),
                format!("`count` must be an integer in 2..=256, got {count}"),
            )
        })?;
    let (prepared, mode) = match &concurrent.copy {
        ConcurrentCopy::Request(request) => (
            cx.prepare(request, cx.default_principal())?,
            ReadMode::Whole,
        ),
        ConcurrentCopy::Stream(stream) => {
            let (prepared, stop) = cx.prepare_stream(stream, cx.default_principal())?;
            (prepared, ReadMode::Stream(stop))
        }
    };
    let exchanges = join_all((0..count).map(|_| {
        cx.driver
            .exchange(prepared.clone(), mode.clone(), cx.deadline, cx.started)
    }))
    .await;
    // Copies the case's budget cut off before any answer, or (requests) before the end of their
    // body, were not observed: the step is not judged (as a lone request's), never failed.
    let completed = match mode {
        ReadMode::Whole => exchanges
            .iter()
            .all(|exchange| answered_whole(exchange, cx.deadline)),
        ReadMode::Stream(_) => {
            Instant::now() < cx.deadline || exchanges.iter().all(|e| e.response.is_some())
        }
    };
    Ok(cx.record("concurrent", exchanges, completed))
}
