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
/// or what [`come_back`] reads waits out its `Retry-After` ([`wait`]), at most
/// [`LONGEST_WAIT`]. `None` for any other answer.
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

/// What an answer's `Retry-After` asks for, at least 1 s and at most [`LONGEST_WAIT`]. RFC 9110
/// gives it two forms: a number of seconds, or an HTTP date, read against the answer's own
/// `Date` (the host's clock; the harness's when the answer has none). Without either, 1 s.
fn wait(response: &ResponseRecord) -> Duration {
    let asked = response
        .header("retry-after")
        .map(str::trim)
        .and_then(|value| match value.parse::<u64>() {
            Ok(seconds) => Some(Duration::from_secs(seconds)),
            Err(_) => {
                let until = httpdate::parse_http_date(value).ok()?;
                let now = response
                    .header("date")
                    .and_then(|date| httpdate::parse_http_date(date.trim()).ok())
                    .unwrap_or_else(std::time::SystemTime::now);
                Some(until.duration_since(now).unwrap_or_default())
            }
        })
        .unwrap_or_default();
    asked.clamp(Duration::from_secs(1), LONGEST_WAIT)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::Header;

    fn answer(headers: &[(&str, &str)]) -> ResponseRecord {
        let mut response = ResponseRecord::held_without_headers(0);
        response.status = 429;
        response.headers = headers
            .iter()
            .map(|(name, value)| Header {
                name: name.to_string(),
                value: value.to_string(),
            })
            .collect();
        response
    }

    #[test]
    fn retry_after_is_read_in_seconds_or_as_an_http_date_against_the_answers_date() {
        let seconds = |s| Duration::from_secs(s);
        assert_eq!(wait(&answer(&[("retry-after", "3")])), seconds(3));
        assert_eq!(wait(&answer(&[("retry-after", "0")])), seconds(1));
        assert_eq!(wait(&answer(&[("retry-after", "90")])), LONGEST_WAIT);
        assert_eq!(wait(&answer(&[])), seconds(1));
        assert_eq!(wait(&answer(&[("retry-after", "soon")])), seconds(1));
        let dated = |retry_after| {
            wait(&answer(&[
                ("date", "Mon, 07 Dec 2026 23:56:00 GMT"),
                ("retry-after", retry_after),
            ]))
        };
        // The host's own clock: three seconds after its `Date`, whatever the harness's clock.
        assert_eq!(dated("Mon, 07 Dec 2026 23:56:03 GMT"), seconds(3));
        assert_eq!(dated("Mon, 07 Dec 2026 23:58:00 GMT"), LONGEST_WAIT);
        // A date already past asks for no wait: the least wait.
        assert_eq!(dated("Mon, 07 Dec 2026 23:55:00 GMT"), seconds(1));
        // Without a `Date`, against the harness's clock: a date long past.
        assert_eq!(
            wait(&answer(&[("retry-after", "Sun, 06 Nov 1994 08:49:37 GMT")])),
            seconds(1)
        );
    }
}
