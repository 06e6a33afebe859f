//! Host state a case writes that is global rather than the case's own: a test seam keyed by
//! something other than the run the case creates. A case names each one it writes in its
//! `exclusive` list; cases naming the same seam run one at a time against a target (whoever
//! drives them: `conformance run`'s scheduler, `conformance try`, the corpus's test trials),
//! while every other case still runs in parallel.
//!
//! The vocabulary is closed: a seam is added here when a fixture needs one, with the reason.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, LazyLock, Mutex};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A global seam of the host, shared by every case that programs it.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
pub enum SharedSeam {
    /// Upstream's mock-AI program seam (`POST /conformance/seams/sample/test/mock-ai/program`,
    /// `{nodeId, program}`): one program per node id, which the next run of any fixture with
    /// that node takes. Upstream's envelope fixtures at the transcribed commit all name their
    /// node `structured-call` (later ones give each its own, still driven by several cases), so
    /// two cases programming it at once would replace each other's program (upstream's own
    /// suite runs those scenario files one at a time for the same reason).
    #[serde(rename = "mock-ai-program")]
    MockAiProgram,
    /// Upstream's heartbeat tick seam (`POST /conformance/seams/sample/heartbeat/tick`): it
    /// evaluates heartbeats on demand, and a host may deliver those evaluations on its host
    /// channel beside its scheduled ticks (independent host R: its seam's heartbeat ticked
    /// twice in 3 ms there). A case reading the spacing of scheduled ticks off the channel and
    /// the cases driving the seam run one at a time.
    #[serde(rename = "heartbeat-tick")]
    HeartbeatTick,
}

impl SharedSeam {
    /// The name a case file uses.
    pub fn name(self) -> &'static str {
        match self {
            SharedSeam::MockAiProgram => "mock-ai-program",
            SharedSeam::HeartbeatTick => "heartbeat-tick",
        }
    }
}

impl std::fmt::Display for SharedSeam {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One lock per (target base URL, seam), shared by everything in the process that drives
/// cases: separate targets never wait on each other.
type Locks = Mutex<HashMap<(String, SharedSeam), Arc<tokio::sync::Mutex<()>>>>;

static LOCKS: LazyLock<Locks> = LazyLock::new(Locks::default);

/// Holds the seams a case writes on one target until dropped.
#[derive(Debug)]
pub struct SeamGuard {
    _held: Vec<tokio::sync::OwnedMutexGuard<()>>,
}

/// Waits until no other case holds any of `seams` on the target at `base_url`, then holds
/// them. Seams are taken in their order (a `BTreeSet`), so two cases naming the same seams
/// never deadlock. An empty set returns at once.
pub async fn hold(base_url: &str, seams: &BTreeSet<SharedSeam>) -> SeamGuard {
    let mut held = Vec::with_capacity(seams.len());
    for seam in seams {
        let lock = {
            let mut locks = LOCKS.lock().unwrap_or_else(|e| e.into_inner());
            locks
                .entry((base_url.to_string(), *seam))
                .or_default()
                .clone()
        };
        held.push(lock.lock_owned().await);
    }
    SeamGuard { _held: held }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    #[test]
    fn the_names_are_the_case_file_s() {
        assert_eq!(
            serde_json::to_value(SharedSeam::MockAiProgram).unwrap(),
            "mock-ai-program"
        );
        assert_eq!(SharedSeam::MockAiProgram.to_string(), "mock-ai-program");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn holders_of_one_seam_on_one_target_run_one_at_a_time() {
        let seams: BTreeSet<SharedSeam> = [SharedSeam::MockAiProgram].into();
        let inside = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let tasks: Vec<_> = (0..6)
            .map(|_| {
                let (seams, inside, most) = (seams.clone(), inside.clone(), most.clone());
                tokio::spawn(async move {
                    let _guard = hold("http://seam-test.invalid", &seams).await;
                    let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(5)).await;
                    inside.fetch_sub(1, Ordering::SeqCst);
                })
            })
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
        assert_eq!(most.load(Ordering::SeqCst), 1);
        // Another target, or no seam, never waits on a holder.
        let _held = hold("http://seam-test.invalid", &seams).await;
        let other = tokio::time::timeout(
            Duration::from_secs(5),
            hold("http://other-target.invalid", &seams),
        )
        .await;
        assert!(other.is_ok());
        let none = tokio::time::timeout(
            Duration::from_secs(5),
            hold("http://seam-test.invalid", &BTreeSet::new()),
        )
        .await;
        assert!(none.is_ok());
    }
}
