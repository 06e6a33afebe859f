//! The `request` action: one request, its whole response (a run-events poll answered in pages
//! read to its end, see [`poll_pages`](super::poll_pages)).

use std::time::Duration;

use tokio::time::Instant;

use super::context::StepContext;
use super::{come_back, poll_pages};
use crate::case::RequestSpec;
use crate::driver::http::ReadMode;
use crate::template::TemplateError;
use crate::transcript::{BodyEnd, Exchange, StepRecord};

/// Sends the request and reads the whole response.
pub(crate) async fn run(
    cx: &StepContext<'_>,
    request: &RequestSpec,
) -> Result<StepRecord, TemplateError> {
    let mut waited_out = 0;
    let mut exchanges = vec![send(cx, request, &mut waited_out).await?];
    let mut pages_read = true;
    if poll_pages::is_events_poll(cx.surface, request) {
        pages_read = read_on(cx, request, &mut exchanges, &mut waited_out).await?;
    }
    let completed = pages_read
        && exchanges
            .last()
            .is_some_and(|exchange| answered_whole(exchange, cx.deadline));
    let mut record = cx.record("request", exchanges, completed);
    record.refusals_waited_out = waited_out;
    Ok(record)
}

/// Whether an exchange of a whole-body read is the host's whole answer: its body read to its
/// end, or a transport failure before the case's budget ran out. A body the budget cut
/// (`BodyEnd::Timeout`) is not: the checks would judge a prefix of what the host was sending.
pub(super) fn answered_whole(exchange: &Exchange, deadline: Instant) -> bool {
    match &exchange.response {
        Some(response) => response.end != BodyEnd::Timeout,
        None => Instant::now() < deadline,
    }
}

/// Sends the request. On surface W a `429 rate_limited` or a `503` with `Retry-After` is the
/// host's rate limit or capacity, never a case's answer (see [`come_back`]): it is waited out as
/// asked and the request sent again, within the case's budget; `waited_out` counts those answers.
async fn send(
    cx: &StepContext<'_>,
    request: &RequestSpec,
    waited_out: &mut u64,
) -> Result<Exchange, TemplateError> {
    let prepared = cx.prepare(request, cx.default_principal())?;
    let (exchange, waited) =
        come_back::send_waiting_out(cx.surface, cx.deadline, Duration::ZERO, || {
            cx.driver
                .exchange(prepared.clone(), ReadMode::Whole, cx.deadline, cx.started)
        })
        .await;
    *waited_out += waited;
    Ok(exchange)
}

/// Reads the poll's further pages while its answers stop short of their `lastSequence`, then
/// appends the pages joined (the step's response) when there was more than one. Whether the
/// read reached its last page: `false` when the case's budget ran out with pages still to
/// read (the joined answer is then a prefix of the log, not the host's answer). A host paging
/// past [`poll_pages::MAX_PAGES`] is judged on what was read.
pub(super) async fn read_on(
    cx: &StepContext<'_>,
    request: &RequestSpec,
    pages: &mut Vec<Exchange>,
    waited_out: &mut u64,
) -> Result<bool, TemplateError> {
    let mut after = None;
    let reached_end = loop {
        let Some(cursor) = pages
            .last()
            .and_then(|page| page.response.as_ref())
            .and_then(|response| poll_pages::next_cursor(response, after))
        else {
            break true;
        };
        if pages.len() >= poll_pages::MAX_PAGES {
            break true;
        }
        if Instant::now() >= cx.deadline {
            break false;
        }
        let mut next = request.clone();
        next.query
            .insert("afterSequence".to_string(), cursor.to_string());
        pages.push(send(cx, &next, waited_out).await?);
        after = Some(cursor);
    };
    let whole = pages
        .last()
        .and_then(|page| page.response.as_ref())
        .is_some_and(|response| response.status == 200);
    if pages.len() > 1
        && whole
        && let Some(joined) = poll_pages::joined(pages)
    {
        pages.push(joined);
    }
    Ok(reached_end)
}
