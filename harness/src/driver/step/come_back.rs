//! Answers in which a host asks to be asked again later: its request rate limit (`429` with
//! `Retry-After`) and, on surface W, its capacity (`503` with `Retry-After`: upstream's
//! `service_unavailable`, the answer of a host whose in-flight cap is reached; upstream's own
//! clients retry it as asked). Neither is a case's answer: no W case provokes one from a
//! `request` or a poll, so the harness waits them out instead of judging them. Subscriptions
//! are not sent again (a case reading a live run would read another moment of it): a `429` is
//! the subscriber limit the seed allows, a `503` the host's capacity (the case run blocks the
//! case, see `case_run::at_capacity`).

use std::time::Duration;

use crate::case::CaseSurface;
use crate::transcript::{Exchange, ResponseRecord};

/// The longest wait honoured: a poll keeps looking within its budget.
const LONGEST_WAIT: Duration = Duration::from_secs(5);

/// The wait a repeated poll takes after this answer: a `429` (with or without `Retry-After`) or,
/// on surface W, a `503` with `Retry-After`, waits out its `Retry-After` seconds (an HTTP date,
/// or none, reads as 1 s), at most [`LONGEST_WAIT`]. `None` for any other answer.
pub(super) fn poll_wait(surface: CaseSurface, exchange: &Exchange) -> Option<Duration> {
    let response = exchange.response.as_ref()?;
    (response.status == 429 || at_capacity(surface, response).is_some()).then(|| wait(response))
}

/// The wait before sending a `request` step again: on surface W, a `429 rate_limited` or a
/// `503` at capacity, each with `Retry-After`. `None` for any other answer (the step's answer).
pub(super) fn resend_wait(surface: CaseSurface, exchange: &Exchange) -> Option<Duration> {
    let response = exchange.response.as_ref()?;
    let rate_limited = surface == CaseSurface::Openwop
        && response.status == 429
        && response.header("retry-after").is_some()
        && response
            .json
            .as_ref()
            .and_then(|body| body.get("error"))
            .and_then(|code| code.as_str())
            == Some("rate_limited");
    (rate_limited || at_capacity(surface, response).is_some()).then(|| wait(response))
}

/// On surface W, the `Retry-After` of a `503` answer that carries one: the host is at capacity.
pub(crate) fn at_capacity(surface: CaseSurface, response: &ResponseRecord) -> Option<&str> {
    (surface == CaseSurface::Openwop && response.status == 503)
        .then(|| response.header("retry-after"))
        .flatten()
}

fn wait(response: &ResponseRecord) -> Duration {
    let seconds = response
        .header("retry-after")
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(1);
    Duration::from_secs(seconds.max(1)).min(LONGEST_WAIT)
}
