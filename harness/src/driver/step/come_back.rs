//! Answers in which a host asks to be asked again later: its request rate limit (`429` with
//! `Retry-After`) and, on surface W, its capacity (`503` with `Retry-After`: upstream's
//! `service_unavailable`, the answer of a host whose in-flight cap is reached; upstream's own
//! clients retry it as asked). Neither is a case's answer: no W case provokes one from a
//! `request` or a poll, so the harness waits them out instead of judging them, and a step still
//! so answered is not judged (the case run blocks the case, see `case_run::Refusal`).
//! A subscription so answered is waited out and sent again too (`step::stream`), while its
//! reading window still fits the case's budget: the re-sent one reads the run at a later
//! moment, which the cases tolerate (`harness/cli/tests/it/resubscribing_proxy.rs`); one still
//! refused is the case run's to settle (a `429`: the subscriber limit the seed allows, SKIP; a
//! `503`: the host's capacity, BLOCKED).

use std::time::Duration;

use tokio::time::Instant;

use crate::case::CaseSurface;
use crate::transcript::{Exchange, ResponseRecord};

/// The longest wait honoured: a poll keeps looking within its budget.
const LONGEST_WAIT: Duration = Duration::from_secs(5);

/// Why a host asked to be asked again later.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ComeBack {
    /// `429 rate_limited` with `Retry-After`: the host's request rate limit (or, to a
    /// subscription, its subscriber limit: they answer alike).
    RateLimited,
    /// `503` with `Retry-After`: the host at capacity.
    AtCapacity,
}

/// On surface W, what the answer asks and its `Retry-After`: `429` whose body says
/// `rate_limited`, or `503`, each with `Retry-After`. `None` for any other answer, and on
/// surface X (a provider's 503 or 429 may reach an execution host's answer: it stays the step's).
pub(crate) fn come_back(
    surface: CaseSurface,
    response: &ResponseRecord,
) -> Option<(ComeBack, &str)> {
    if surface != CaseSurface::Openwop {
        return None;
    }
    let retry_after = response.header("retry-after")?;
    match response.status {
        429 if response
            .json
            .as_ref()
            .and_then(|body| body.get("error"))
            .and_then(|code| code.as_str())
            == Some("rate_limited") =>
        {
            Some((ComeBack::RateLimited, retry_after))
        }
        503 => Some((ComeBack::AtCapacity, retry_after)),
        _ => None,
    }
}

/// The wait a repeated poll takes after this answer: any `429` (with or without `Retry-After`)
/// or what [`come_back`] reads waits out its `Retry-After` seconds (an HTTP date, or none,
/// reads as 1 s), at most [`LONGEST_WAIT`]. `None` for any other answer.
pub(super) fn poll_wait(surface: CaseSurface, exchange: &Exchange) -> Option<Duration> {
    let response = exchange.response.as_ref()?;
    (response.status == 429 || come_back(surface, response).is_some()).then(|| wait(response))
}

/// The wait before sending a `request` or `stream` step again: what [`come_back`] reads. `None`
/// for any other answer (the step's answer).
fn resend_wait(surface: CaseSurface, exchange: &Exchange) -> Option<Duration> {
    let response = exchange.response.as_ref()?;
    come_back(surface, response).map(|_| wait(response))
}

/// At most this many "come back later" answers are waited out for one request or subscription.
const RESEND_LIMIT: u64 = 3;

/// Sends with `send` until the host answers other than "come back later" ([`come_back`]),
/// waiting each such answer out as asked while the wait and `then` (what the answer still
/// needs of the case's budget: a stream's reading window) end before `deadline`, at most
/// [`RESEND_LIMIT`] times: the last exchange, and how many answers were waited out.
pub(super) async fn send_waiting_out<F, Fut>(
    surface: CaseSurface,
    deadline: Instant,
    then: Duration,
    mut send: F,
) -> (Exchange, u64)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Exchange>,
{
    let mut waited_out = 0;
    loop {
        let exchange = send().await;
        match resend_wait(surface, &exchange) {
            Some(wait) if waited_out < RESEND_LIMIT && Instant::now() + wait + then < deadline => {
                waited_out += 1;
                tokio::time::sleep(wait).await;
            }
            _ => return (exchange, waited_out),
        }
    }
}

fn wait(response: &ResponseRecord) -> Duration {
    let seconds = response
        .header("retry-after")
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(1);
    Duration::from_secs(seconds.max(1)).min(LONGEST_WAIT)
}
