//! The `request` action: one request, its whole response.

use tokio::time::Instant;

use super::context::StepContext;
use crate::case::RequestSpec;
use crate::driver::http::ReadMode;
use crate::template::TemplateError;
use crate::transcript::StepRecord;

/// Sends the request and reads the whole response.
pub(crate) async fn run(
    cx: &StepContext<'_>,
    request: &RequestSpec,
) -> Result<StepRecord, TemplateError> {
    let prepared = cx.prepare(request, cx.default_principal())?;
    let exchange = cx
        .driver
        .exchange(prepared, ReadMode::Whole, cx.deadline, cx.started)
        .await;
    let completed = Instant::now() < cx.deadline || exchange.response.is_some();
    Ok(cx.record("request", vec![exchange], completed))
}
