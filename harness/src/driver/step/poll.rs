//! Repeating a request: until a condition on its body holds (`poll_until`, `wait_terminal`),
//! or until a run's log stops growing (`wait_terminal` with `settled`).

use std::time::Duration;

use serde_json::Value;
use tokio::time::Instant;

use super::come_back;
use super::context::StepContext;
use crate::case::{JsonExpect, Principal, RequestSpec};
use crate::checks::json_condition;
use crate::driver::http::{PreparedRequest, ReadMode};
use crate::template::TemplateError;
use crate::transcript::{BodyEnd, Exchange};

impl StepContext<'_> {
    /// Repeats a request until a condition on its JSON body holds or the deadline passes.
    /// Returns the last exchange and whether the condition held.
    pub(crate) async fn poll(
        &self,
        request: &RequestSpec,
        until: &JsonExpect,
        interval_ms: Option<u64>,
    ) -> Result<(Option<Exchange>, bool), TemplateError> {
        let default_principal = if request.path.starts_with("/runs") {
            Principal::A
        } else {
            Principal::None
        };
        let prepared = self.prepare(request, default_principal)?;
        let interval = Duration::from_millis(interval_ms.unwrap_or(25));
        let mut last = None;
        let held = self
            .repeat_until(&prepared, interval, |exchange| {
                let body = exchange.response.as_ref().and_then(|r| r.json.as_ref());
                let held = matches!(json_condition(body, until, self.scope)?, Ok(()));
                // A request the deadline cut says nothing: the last answer stays the record,
                // so an ERROR can say what the host kept answering (a run's status, say).
                if !(exchange.cut_by_deadline() && last.is_some()) {
                    last = Some(exchange);
                }
                Ok(held)
            })
            .await?;
        Ok((last, held))
    }

    /// Reads a run's log (`log`, a poll) until two readings in a row end at the same
    /// `lastSequence`, recording every reading; whether it settled before the deadline. An
    /// answer without a `lastSequence` cannot say when the log settles: the wait ends there
    /// and the case's own steps judge the poll. A reading without an answer (cut by the
    /// deadline, refused) says nothing: it never settles the log, and an unreachable host ends
    /// the wait unsettled.
    pub(crate) async fn settle(
        &self,
        log: &RequestSpec,
        exchanges: &mut Vec<Exchange>,
    ) -> Result<bool, TemplateError> {
        let prepared = self.prepare(log, Principal::A)?;
        let mut previous: Option<Value> = None;
        let interval = Duration::from_millis(25);
        self.repeat_until(&prepared, interval, |exchange| {
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

    /// Sends `prepared` every `interval`, handing each exchange to `holds`, until it says the
    /// exchange holds the condition (true), the host is unreachable or the deadline is near
    /// (false).
    async fn repeat_until(
        &self,
        prepared: &PreparedRequest,
        interval: Duration,
        mut holds: impl FnMut(Exchange) -> Result<bool, TemplateError>,
    ) -> Result<bool, TemplateError> {
        loop {
            let exchange = self
                .driver
                .exchange(
                    prepared.clone(),
                    ReadMode::Whole,
                    self.deadline,
                    self.started,
                )
                .await;
            let unreachable = exchange
                .transport_error
                .as_ref()
                .is_some_and(|t| t.unreachable);
            // A host limiting its request rate, or at capacity, is waited out as it asks:
            // polling through its 429s would keep its bucket empty for every case of the run.
            let wait = come_back::poll_wait(self.surface, &exchange).unwrap_or(interval);
            if holds(exchange)? {
                return Ok(true);
            }
            if unreachable || Instant::now() + wait >= self.deadline {
                return Ok(false);
            }
            tokio::time::sleep(wait).await;
        }
    }
}
