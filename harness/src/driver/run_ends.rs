//! When the runs a case follows ended, as its surface-W streams saw them: one stream's terminal
//! event starts the close window of every other stream of the same run in the case.
//!
//! The events chapter: the host "MUST close the connection after the run's terminal event". A
//! stream whose mode does not show the terminal event (`messages`), or one that lost it in a
//! race, cannot tell by itself that its run ended; a sibling stream of the same run that showed
//! it can. From that moment each open stream of the run is read for one keep-alive interval of
//! the host at most ([`StepContext::close_window`](super::step)), so one still open then is the
//! host's FAIL, never cut by the case's budget (ERROR).
//!
//! A host may also lose the end on every stream of the run (a wake-up lost between its backlog
//! and its live tail): then no stream can show it. A stream read to its close therefore keeps a
//! lookout ([`RunLookout`]): every second or so it asks the run's log (its poll) whether the run
//! is terminal, and the first answer saying so is an end too, with the poll as its witness.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

/// What showed that a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EndWitness {
    /// A stream of the run: its terminal event, or a `values` snapshot of the run terminal.
    Stream,
    /// The run's poll, answering `isTerminal: true` (the lookout).
    Poll,
}

/// The runs of one case whose end was seen, when it first was and by what. Cheap to clone:
/// every clone is the same board.
#[derive(Debug, Clone)]
pub(crate) struct RunEnds {
    board: Arc<watch::Sender<BTreeMap<String, (Instant, EndWitness)>>>,
}

impl Default for RunEnds {
    fn default() -> RunEnds {
        RunEnds {
            board: Arc::new(watch::Sender::new(BTreeMap::new())),
        }
    }
}

impl RunEnds {
    /// Records that `run` ended at `at`, as `witness` showed (its first sighting stands).
    pub(crate) fn ended(&self, run: &str, at: Instant, witness: EndWitness) {
        self.board.send_if_modified(|ends| {
            let first = !ends.contains_key(run);
            ends.entry(run.to_string()).or_insert((at, witness));
            first
        });
    }

    /// Resolves with when `run` ended and what showed it, once seen (at once if it was).
    pub(crate) async fn wait_for(&self, run: &str) -> (Instant, EndWitness) {
        let mut seen = self.board.subscribe();
        loop {
            if let Some(at) = seen.borrow_and_update().get(run) {
                return *at;
            }
            if seen.changed().await.is_err() {
                // The board lives as long as `self`: never reached.
                return std::future::pending().await;
            }
        }
    }
}

/// A surface-W stream's duty to close after its run's terminal event: the stream's run (its
/// request path without the query, the same for every stream of one run in a case) and the
/// case's board, and how long after the end the host has to close.
#[derive(Debug, Clone)]
pub(crate) struct CloseAfterRunEnd {
    /// One keep-alive interval of the host and a margin, times `--time-scale`.
    pub(crate) grace: Duration,
    /// The stream's run, as the board names it.
    pub(crate) run: String,
    /// The case's board.
    pub(crate) ends: RunEnds,
    /// For a stream read to its close: how to ask the run's log whether the run ended.
    pub(crate) lookout: Option<Box<RunLookout>>,
}

impl CloseAfterRunEnd {
    /// The board's name of the run a stream request reads: its URL's path.
    pub(crate) fn run_of(url: &str) -> String {
        reqwest::Url::parse(url).map_or_else(|_| url.to_string(), |url| url.path().to_string())
    }
}

/// How a stream read to its close asks whether its run ended: the run's poll, sent every
/// `every` with the stream's own credential and version.
#[derive(Debug, Clone)]
pub(crate) struct RunLookout {
    /// `{stream path}/poll`, no query: a `GET`.
    pub(crate) poll_url: String,
    /// The stream's headers (real values) but `Accept` and `Last-Event-ID`.
    pub(crate) headers: Vec<(String, String)>,
    /// The pause before each poll.
    pub(crate) every: Duration,
}

impl RunLookout {
    /// The lookout of a stream request (its URL and headers) on a run's events
    /// (`…/runs/{runId}/events`); `None` for any other path.
    pub(crate) fn of(
        stream_url: &str,
        stream_headers: &[(String, String)],
        every: Duration,
    ) -> Option<RunLookout> {
        let mut url = reqwest::Url::parse(stream_url).ok()?;
        if !(url.path().contains("/runs/") && url.path().ends_with("/events")) {
            return None;
        }
        url.set_query(None);
        let path = format!("{}/poll", url.path());
        url.set_path(&path);
        let headers = stream_headers
            .iter()
            .filter(|(name, _)| {
                !name.eq_ignore_ascii_case("accept") && !name.eq_ignore_ascii_case("last-event-id")
            })
            .cloned()
            .collect();
        Some(RunLookout {
            poll_url: url.to_string(),
            headers,
            every,
        })
    }

    /// Whether a poll answer (its JSON body) says the run ended: `isTerminal` is `true`.
    pub(crate) fn says_ended(body: &serde_json::Value) -> bool {
        body.get("isTerminal").and_then(serde_json::Value::as_bool) == Some(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_is_named_by_its_stream_path_whatever_the_query() {
        assert_eq!(
            CloseAfterRunEnd::run_of("http://h:1/runs/t~2Fr/events?streamMode=values"),
            "/runs/t~2Fr/events"
        );
        assert_eq!(
            CloseAfterRunEnd::run_of("http://h:1/runs/t~2Fr/events"),
            "/runs/t~2Fr/events"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_waiting_stream_learns_the_first_end_of_its_run_only() {
        let ends = RunEnds::default();
        let waiting = tokio::spawn({
            let ends = ends.clone();
            async move { ends.wait_for("/runs/a/events").await }
        });
        let first = Instant::now();
        ends.ended("/runs/b/events", first, EndWitness::Stream);
        tokio::time::advance(Duration::from_millis(5)).await;
        let a_end = Instant::now();
        ends.ended("/runs/a/events", a_end, EndWitness::Poll);
        ends.ended(
            "/runs/a/events",
            a_end + Duration::from_secs(1),
            EndWitness::Stream,
        );
        assert_eq!(waiting.await.unwrap(), (a_end, EndWitness::Poll));
        assert_eq!(
            ends.wait_for("/runs/a/events").await,
            (a_end, EndWitness::Poll)
        );
    }

    fn stream_headers() -> Vec<(String, String)> {
        vec![
            ("Accept".into(), "text/event-stream".into()),
            ("Authorization".into(), "Bearer k".into()),
            ("Last-Event-ID".into(), "3".into()),
            ("OpenWOP-Version".into(), "2.0".into()),
        ]
    }

    #[test]
    fn the_lookout_polls_the_streams_run_with_its_credential() {
        let lookout = RunLookout::of(
            "http://h:1/base/runs/t~2Fr/events?streamMode=values",
            &stream_headers(),
            Duration::from_secs(1),
        )
        .unwrap();
        assert_eq!(lookout.poll_url, "http://h:1/base/runs/t~2Fr/events/poll");
        let names: Vec<&str> = lookout.headers.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["Authorization", "OpenWOP-Version"]);
        // Not a run's events: no lookout.
        assert!(
            RunLookout::of("http://h:1/host/events", &stream_headers(), Duration::ZERO).is_none()
        );
    }
}
