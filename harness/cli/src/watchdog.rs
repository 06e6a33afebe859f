//! A watchdog for long-running commands: a thread of its own (so a spinning or deadlocked
//! async runtime cannot starve it) that ends the process with a diagnostic on stderr when the
//! command has made no progress for too long, so no run can hang without output.
//!
//! The command calls [`Watchdog::progress`] whenever something happens (a case or a runtime
//! finished); the limit is the longest any single step may legitimately take.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The exit code of a run the watchdog ended: a harness or environment error.
pub const EXIT_CODE: i32 = 3;

#[derive(Debug)]
struct State {
    last: Instant,
    what: String,
}

/// Ends the process when no progress is reported for `limit`; stopped when dropped.
#[derive(Debug)]
pub struct Watchdog {
    state: Arc<Mutex<State>>,
    stopped: Arc<AtomicBool>,
}

impl Watchdog {
    /// Starts watching `command` (named in the diagnostic): no [`Watchdog::progress`] for
    /// `limit` ends the process with [`EXIT_CODE`].
    pub fn start(command: &str, limit: Duration) -> Watchdog {
        Watchdog::start_with(command, limit, |message| {
            eprintln!("{message}");
            std::process::exit(EXIT_CODE);
        })
    }

    /// As [`Watchdog::start`], calling `expire` with the diagnostic instead of exiting (tests).
    pub fn start_with(
        command: &str,
        limit: Duration,
        expire: impl FnOnce(String) + Send + 'static,
    ) -> Watchdog {
        let state = Arc::new(Mutex::new(State {
            last: Instant::now(),
            what: "started".into(),
        }));
        let stopped = Arc::new(AtomicBool::new(false));
        let (watched, stop) = (state.clone(), stopped.clone());
        let command = command.to_string();
        let tick = (limit / 10).clamp(Duration::from_millis(10), Duration::from_secs(1));
        std::thread::spawn(move || {
            loop {
                std::thread::sleep(tick);
                if stop.load(Ordering::Relaxed) {
                    return;
                }
                let (idle, what) = match watched.lock() {
                    Ok(s) => (s.last.elapsed(), s.what.clone()),
                    Err(poisoned) => {
                        let s = poisoned.into_inner();
                        (s.last.elapsed(), s.what.clone())
                    }
                };
                if idle >= limit {
                    expire(format!(
                        "error: watchdog: `conformance {command}` made no progress for {} s (the longest a step may take; last: {what}); ending it (exit {EXIT_CODE}) rather than hanging",
                        idle.as_secs()
                    ));
                    return;
                }
            }
        });
        Watchdog { state, stopped }
    }

    /// Something happened: the idle clock starts again.
    pub fn progress(&self, what: &str) {
        let mut state = match self.state.lock() {
            Ok(s) => s,
            Err(poisoned) => poisoned.into_inner(),
        };
        state.last = Instant::now();
        state.what = what.to_string();
    }
}

/// The longest a command running `cases` may go without progress: the longest case budget
/// (scaled by `time_scale`) plus 300 s for starting and probing a runtime.
pub fn limit_for(cases: &[harness::case::LoadedCase], time_scale: f64) -> Duration {
    let longest = cases
        .iter()
        .map(|c| {
            c.case
                .timeout_ms
                .unwrap_or(harness::case::DEFAULT_CASE_TIMEOUT_MS)
        })
        .max()
        .unwrap_or(harness::case::DEFAULT_CASE_TIMEOUT_MS);
    Duration::from_millis(longest).mul_f64(time_scale) + Duration::from_secs(300)
}

/// A run's cases starting and finishing are its progress (`selftest` and `tolerance` pass the
/// watchdog as the observer of every run they make).
impl harness::run::RunObserver for Watchdog {
    fn case_started(&self, id: &str) {
        self.progress(&format!("{id} started"));
    }

    fn case_finished(&self, result: &harness::report::CaseResult) {
        self.progress(&format!("{} {}", result.verdict, result.id));
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.stopped.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn fires_without_progress_and_names_the_last_step() {
        let (tx, rx) = mpsc::channel();
        let dog = Watchdog::start_with("try", Duration::from_millis(50), move |m| {
            let _ = tx.send(m);
        });
        dog.progress("profile standard: PASS");
        let message = rx.recv_timeout(Duration::from_secs(10)).unwrap();
        assert!(message.contains("conformance try"), "{message}");
        assert!(message.contains("profile standard: PASS"), "{message}");
    }

    #[test]
    fn a_run_observer_watchdog_hears_cases_start() {
        use harness::run::RunObserver;
        let (tx, rx) = mpsc::channel();
        let dog = Watchdog::start_with("selftest", Duration::from_millis(50), move |m| {
            let _ = tx.send(m);
        });
        dog.case_started("w.terminal.cancel");
        let message = rx.recv_timeout(Duration::from_secs(10)).unwrap();
        assert!(message.contains("conformance selftest"), "{message}");
        assert!(message.contains("w.terminal.cancel started"), "{message}");
    }

    #[test]
    fn stays_quiet_while_progress_comes_and_after_it_is_dropped() {
        let (tx, rx) = mpsc::channel();
        // Generous bounds: the loop's sleeps are far below the limit however loaded the
        // machine, and a dropped watchdog would have fired well within the wait.
        let dog = Watchdog::start_with("try", Duration::from_secs(3), move |m| {
            let _ = tx.send(m);
        });
        for _ in 0..5 {
            std::thread::sleep(Duration::from_millis(20));
            dog.progress("step");
        }
        drop(dog);
        assert!(rx.recv_timeout(Duration::from_secs(4)).is_err());
    }
}
