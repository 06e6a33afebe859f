//! Repeating a request: until a condition on its body holds (`poll_until`, `wait_terminal`; a
//! run-events poll read to its end each time),
//! or until a run's log stops growing (`wait_terminal` with `settled`).

use std::time::Duration;

use serde_json::Value;
use tokio::time::Instant;

use super::context::StepContext;
use super::request::read_on;
use super::{come_back, poll_pages};
use crate::case::{JsonExpect, Principal, RequestSpec};
use crate::checks::json_condition;
use crate::driver::http::{PreparedRequest, ReadMode};
use crate::template::TemplateError;
use crate::transcript::{BodyEnd, Exchange};

impl StepContext<'_> {
    /// Repeats a request until a condition on its JSON body holds or the deadline passes.
    /// Returns the last attempt's exchanges and whether the condition held. A run-events poll
    /// is read to its end at each attempt, as a `request` step reads it (a host may page, see
    /// [`poll_pages`]): the condition is on the pages joined, whose exchange ends the attempt.
    pub(crate) async fn poll(
        &self,
        request: &RequestSpec,
        until: &JsonExpect,
        interval_ms: Option<u64>,
    ) -> Result<(Vec<Exchange>, bool), TemplateError> {
        let default_principal = if request.path.starts_with("/runs") {
            Principal::A
        } else {
            Principal::None
        };
        let prepared = self.prepare(request, default_principal)?;
        let paged = poll_pages::is_events_poll(self.surface, request);
        let interval = Duration::from_millis(interval_ms.unwrap_or(25));
        let mut last: Vec<Exchange> = Vec::new();
        let held = self
            .repeat_until(
                &prepared,
                paged.then_some(request),
                interval,
                |attempt, whole| {
                    let answer = attempt.last().and_then(|e| e.response.as_ref());
                    let body = answer.and_then(|r| r.json.as_ref());
                    // A prefix of a paged log cut by the deadline is not the host's answer.
                    let held = whole && matches!(json_condition(body, until, self.scope)?, Ok(()));
                    // A request the deadline cut says nothing: the last answer stays the record,
                    // so an ERROR can say what the host kept answering (a run's status, say).
                    let cut = attempt.iter().any(Exchange::cut_by_deadline);
                    if !cut || last.is_empty() {
                        last = attempt;
                    }
                    Ok(held)
                },
            )
            .await?;
        Ok((last, held))
    }

    /// Reads a run's log (`log`, a poll) until two readings in a row end at the same
    /// `lastSequence`, recording every reading; whether it settled before the deadline. An
    /// answer without a `lastSequence` cannot say when the log settles: the wait ends there
    /// and the case's own steps judge the poll. A reading without an answer (cut by the
    /// deadline, refused) says nothing: it never settles the log, and an unreachable host ends
    /// the wait unsettled. One page of the log says how far it goes (`lastSequence`), so the
    /// readings are not read on.
    pub(crate) async fn settle(
        &self,
        log: &RequestSpec,
        exchanges: &mut Vec<Exchange>,
    ) -> Result<bool, TemplateError> {
        let prepared = self.prepare(log, Principal::A)?;
        let mut previous: Option<Value> = None;
        let interval = Duration::from_millis(25);
        self.repeat_until(&prepared, None, interval, |attempt, _| {
            let Some(exchange) = attempt.into_iter().next() else {
                return Ok(false);
            };
            let reachable = !exchange
                .transport_error
                .as_ref()
                .is_some_and(|t| t.unreachable);
            // A whole answer: one cut by the deadline or a broken connection says nothing.
            let answered = exchange
                .response
                .as_ref()
                .is_some_and(|r| r.end == BodyEnd::ServerClosed);
            let last = exchange
                .response
                .as_ref()
                .and_then(|r| r.json.as_ref())
                .and_then(|body| body.get("lastSequence"))
                .filter(|v| v.is_i64())
                .cloned();
            exchanges.push(exchange);
            let settled = reachable && answered && (last.is_none() || last == previous);
            previous = last;
            Ok(settled)
        })
        .await
    }

    /// Sends `prepared` every `interval` (a run-events poll `paged` read to its end each time),
    /// handing each attempt's exchanges, and whether they are the host's whole answer, to
    /// `holds`, until it says the attempt holds the condition (true), the host is unreachable
    /// or the deadline is near (false).
    async fn repeat_until(
        &self,
        prepared: &PreparedRequest,
        paged: Option<&RequestSpec>,
        interval: Duration,
        mut holds: impl FnMut(Vec<Exchange>, bool) -> Result<bool, TemplateError>,
    ) -> Result<bool, TemplateError> {
        loop {
            let mut exchanges = vec![
                self.driver
                    .exchange(
                        prepared.clone(),
                        ReadMode::Whole,
                        self.deadline,
                        self.started,
                    )
                    .await,
            ];
            let whole = match paged {
                Some(request) => read_on(self, request, &mut exchanges, &mut 0).await?,
                None => true,
            };
            let unreachable = exchanges.iter().any(|exchange| {
                exchange
                    .transport_error
                    .as_ref()
                    .is_some_and(|t| t.unreachable)
            });
            // A host limiting its request rate, or at capacity, is waited out as it asks:
            // polling through its 429s would keep its bucket empty for every case of the run.
            let wait = exchanges
                .last()
                .and_then(|exchange| come_back::poll_wait(self.surface, exchange))
                .unwrap_or(interval);
            if holds(exchanges, whole)? {
                return Ok(true);
            }
            if unreachable || Instant::now() + wait >= self.deadline {
                return Ok(false);
            }
            tokio::time::sleep(wait).await;
        }
    }
}
