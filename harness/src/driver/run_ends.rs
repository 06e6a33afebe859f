//! When the runs a case follows ended, as its surface-W streams saw them: one stream's terminal
//! event starts the close window of every other stream of the same run in the case.
//!
//! The events chapter: the host "MUST close the connection after the run's terminal event". A
//! stream whose mode does not show the terminal event (`messages`), or one that lost it in a
//! race, cannot tell by itself that its run ended; a sibling stream of the same run that showed
//! it can. From that moment each open stream of the run is read for one keep-alive interval of
//! the host at most ([`StepContext::close_window`](super::step)), so one still open then is the
//! host's FAIL, never cut by the case's budget (ERROR).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

/// The runs of one case whose end a stream showed, and when it first did. Cheap to clone: every
/// clone is the same board.
#[derive(Debug, Clone)]
pub(crate) struct RunEnds {
    board: Arc<watch::Sender<BTreeMap<String, Instant>>>,
}

impl Default for RunEnds {
    fn default() -> RunEnds {
        RunEnds {
            board: Arc::new(watch::Sender::new(BTreeMap::new())),
        }
    }
}

impl RunEnds {
    /// Records that `run` ended at `at` (its first sighting stands).
    pub(crate) fn ended(&self, run: &str, at: Instant) {
        self.board.send_if_modified(|ends| {
            let first = !ends.contains_key(run);
            ends.entry(run.to_string()).or_insert(at);
            first
        });
    }

    /// Resolves with when `run` ended, once a stream showed it (at once if one already had).
    pub(crate) async fn wait_for(&self, run: &str) -> Instant {
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
}

impl CloseAfterRunEnd {
    /// The board's name of the run a stream request reads: its URL's path.
    pub(crate) fn run_of(url: &str) -> String {
        reqwest::Url::parse(url).map_or_else(|_| url.to_string(), |url| url.path().to_string())
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
        ends.ended("/runs/b/events", first);
        tokio::time::advance(Duration::from_millis(5)).await;
        let a_end = Instant::now();
        ends.ended("/runs/a/events", a_end);
        ends.ended("/runs/a/events", a_end + Duration::from_secs(1));
        assert_eq!(waiting.await.unwrap(), a_end);
        assert_eq!(ends.wait_for("/runs/a/events").await, a_end);
    }
}
