//! Idempotency-Key defects as a stateful rewrite of submissions: the layer remembers, per key,
//! the first submission it saw answered with an execution (its body, its fingerprint, the
//! execution's id), and rewrites a later submission under the same key so that the clean
//! service, deciding on what it receives, does what the defective one did:
//!
//! - `x-mismatched-key-accepted`: a different (admissible) request under a bound key is sent
//!   on with the bound body, so the service replays the bound execution;
//! - `x-replay-creates-new-execution`: the same request under a key whose execution has
//!   finished is sent on without its key, so the service runs it again, unbound;
//! - `x-concurrent-duplicates-call-twice`: the same request under a key whose first submission
//!   is still being answered, or whose execution is still live, is sent on without its key.
//!
//! Memory is bounded: at most [`MAX_REMEMBERED_KEYS`] keys, the oldest forgotten first (a
//! forgotten key is answered the clean way until it is seen answered again).

use std::collections::{HashMap, VecDeque};

use axum::body::Bytes;

use super::rewrites::ExecutionWireRewrites;

/// How many keys the layer remembers.
pub(super) const MAX_REMEMBERED_KEYS: usize = 1024;

/// Where the execution a key is bound to stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Bound {
    /// Still running: its terminal event is not in the log.
    Live,
    /// Ended, its key still bound.
    Finished,
    /// Ended long enough ago that its key is free again (or gone).
    Expired,
}

/// What the layer remembers of a key.
#[derive(Debug, Clone)]
enum Memory {
    /// The key's first submission, still being answered (`token` names it).
    Pending { fingerprint: String, token: u64 },
    /// The submission the key is bound to and its execution.
    Bound {
        fingerprint: String,
        body: Bytes,
        execution_id: String,
    },
}

/// What the layer does to a keyed submission.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum KeyedRewrite {
    /// Sent on as it came; `Some(token)` when it is the key's first submission (its answer is
    /// to be [`settled`](RememberedKeys::settle)).
    AsSent(Option<u64>),
    /// Sent on without its Idempotency-Key: a new execution, bound to no key.
    Unkeyed,
    /// Sent on with the bound submission's body instead of its own: a replay.
    BoundBody(Bytes),
}

/// The keys the layer remembers.
#[derive(Debug, Default)]
pub(super) struct RememberedKeys {
    memory: HashMap<String, Memory>,
    /// The remembered keys, oldest first.
    order: VecDeque<String>,
    next_token: u64,
}

impl RememberedKeys {
    /// What to do to a submission under `key` with `fingerprint`. `bound` says where an
    /// execution stands; `admissible` whether the submission itself passes admission (the
    /// schema, and a provider to route it to when the host refuses unsatisfiable requests).
    pub(super) fn rewrite(
        &mut self,
        key: &str,
        fingerprint: &str,
        rewrites: &ExecutionWireRewrites,
        bound: impl FnOnce(&str) -> Bound,
        admissible: impl FnOnce() -> bool,
    ) -> KeyedRewrite {
        match self.memory.get(key) {
            None => self.pending(key, fingerprint),
            Some(Memory::Pending {
                fingerprint: first, ..
            }) => {
                if first == fingerprint && rewrites.concurrent_duplicates_race() {
                    // The defect: a duplicate of a submission still being answered runs again.
                    KeyedRewrite::Unkeyed
                } else {
                    KeyedRewrite::AsSent(None)
                }
            }
            Some(Memory::Bound {
                fingerprint: first,
                body,
                execution_id,
            }) => {
                let body = body.clone();
                let same = first == fingerprint;
                match bound(execution_id) {
                    Bound::Expired => {
                        self.forget(key);
                        self.pending(key, fingerprint)
                    }
                    _ if !same => {
                        if rewrites.mismatched_key_accepted() && admissible() {
                            // The defect: a different request under the key replays its execution.
                            KeyedRewrite::BoundBody(body)
                        } else {
                            KeyedRewrite::AsSent(None)
                        }
                    }
                    Bound::Finished if rewrites.replay_creates_new_execution() => {
                        // The defect: a replay of a finished execution runs the request again.
                        KeyedRewrite::Unkeyed
                    }
                    Bound::Live if rewrites.concurrent_duplicates_race() => {
                        // The defect: a duplicate arriving while the first is live runs again.
                        KeyedRewrite::Unkeyed
                    }
                    _ => KeyedRewrite::AsSent(None),
                }
            }
        }
    }

    /// The answer to the key's first submission (`token`): the execution it was answered with
    /// binds the key to `body`; no execution (a refusal) forgets the key.
    pub(super) fn settle(
        &mut self,
        key: &str,
        token: u64,
        fingerprint: &str,
        body: Bytes,
        execution_id: Option<String>,
    ) {
        let ours =
            matches!(self.memory.get(key), Some(Memory::Pending { token: t, .. }) if *t == token);
        if !ours {
            return;
        }
        match execution_id {
            Some(execution_id) => {
                let bound = Memory::Bound {
                    fingerprint: fingerprint.to_string(),
                    body,
                    execution_id,
                };
                self.memory.insert(key.to_string(), bound);
            }
            None => self.forget(key),
        }
    }

    /// The key's first submission (`token`) was never answered: the key is forgotten.
    pub(super) fn abandon(&mut self, key: &str, token: u64) {
        if matches!(self.memory.get(key), Some(Memory::Pending { token: t, .. }) if *t == token) {
            self.forget(key);
        }
    }

    /// Remembers `key`'s first submission as pending, forgetting the oldest key when full.
    fn pending(&mut self, key: &str, fingerprint: &str) -> KeyedRewrite {
        while self.memory.len() >= MAX_REMEMBERED_KEYS {
            let Some(oldest) = self.order.pop_front() else {
                break;
            };
            self.memory.remove(&oldest);
        }
        self.next_token += 1;
        let token = self.next_token;
        let pending = Memory::Pending {
            fingerprint: fingerprint.to_string(),
            token,
        };
        self.memory.insert(key.to_string(), pending);
        self.order.push_back(key.to_string());
        KeyedRewrite::AsSent(Some(token))
    }

    fn forget(&mut self, key: &str) {
        self.memory.remove(key);
        self.order.retain(|k| k != key);
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::policy::KnownBad;
    use super::*;
    use crate::defects::Defect;

    fn rewrites(defect: Defect) -> ExecutionWireRewrites {
        ExecutionWireRewrites::of(&KnownBad::of([defect])).expect("a layer defect")
    }

    /// `keys` with `key` bound to execution `e1` for a submission of fingerprint `fp`.
    fn bound(keys: &mut RememberedKeys, rewrites: &ExecutionWireRewrites, key: &str) {
        let first = keys.rewrite(key, "fp", rewrites, |_| Bound::Live, || true);
        let KeyedRewrite::AsSent(Some(token)) = first else {
            panic!("not a first submission: {first:?}");
        };
        keys.settle(
            key,
            token,
            "fp",
            Bytes::from_static(b"{}"),
            Some("e1".into()),
        );
    }

    #[test]
    fn a_mismatched_admissible_request_is_sent_with_the_bound_body() {
        let on = rewrites(Defect::XMismatchedKeyAccepted);
        let mut keys = RememberedKeys::default();
        bound(&mut keys, &on, "k");
        let other = keys.rewrite("k", "fp2", &on, |_| Bound::Finished, || true);
        assert_eq!(other, KeyedRewrite::BoundBody(Bytes::from_static(b"{}")));
        let refused = keys.rewrite("k", "fp2", &on, |_| Bound::Finished, || false);
        assert_eq!(refused, KeyedRewrite::AsSent(None));
        let off = rewrites(Defect::XReplayCreatesNewExecution);
        let mut keys = RememberedKeys::default();
        bound(&mut keys, &off, "k");
        let other = keys.rewrite("k", "fp2", &off, |_| Bound::Live, || true);
        assert_eq!(other, KeyedRewrite::AsSent(None));
    }

    #[test]
    fn a_replay_of_a_finished_execution_loses_its_key_and_of_a_live_one_does_not() {
        let on = rewrites(Defect::XReplayCreatesNewExecution);
        let mut keys = RememberedKeys::default();
        bound(&mut keys, &on, "k");
        let finished = keys.rewrite("k", "fp", &on, |_| Bound::Finished, || true);
        assert_eq!(finished, KeyedRewrite::Unkeyed);
        let live = keys.rewrite("k", "fp", &on, |_| Bound::Live, || true);
        assert_eq!(live, KeyedRewrite::AsSent(None));
        let off = rewrites(Defect::XMismatchedKeyAccepted);
        let finished = keys.rewrite("k", "fp", &off, |_| Bound::Finished, || true);
        assert_eq!(finished, KeyedRewrite::AsSent(None));
    }

    #[test]
    fn duplicates_of_a_pending_or_live_submission_lose_their_key() {
        let on = rewrites(Defect::XConcurrentDuplicatesCallTwice);
        let mut keys = RememberedKeys::default();
        let first = keys.rewrite("k", "fp", &on, |_| Bound::Live, || true);
        assert!(matches!(first, KeyedRewrite::AsSent(Some(_))));
        let duplicate = keys.rewrite("k", "fp", &on, |_| Bound::Live, || true);
        assert_eq!(duplicate, KeyedRewrite::Unkeyed);
        let KeyedRewrite::AsSent(Some(token)) = first else {
            unreachable!()
        };
        keys.settle("k", token, "fp", Bytes::new(), Some("e1".into()));
        let live = keys.rewrite("k", "fp", &on, |_| Bound::Live, || true);
        assert_eq!(live, KeyedRewrite::Unkeyed);
        let finished = keys.rewrite("k", "fp", &on, |_| Bound::Finished, || true);
        assert_eq!(finished, KeyedRewrite::AsSent(None));
        let off = rewrites(Defect::XReplayCreatesNewExecution);
        let mut keys = RememberedKeys::default();
        keys.rewrite("k", "fp", &off, |_| Bound::Live, || true);
        let duplicate = keys.rewrite("k", "fp", &off, |_| Bound::Live, || true);
        assert_eq!(duplicate, KeyedRewrite::AsSent(None));
    }

    #[test]
    fn refused_abandoned_and_expired_keys_are_forgotten_and_memory_is_bounded() {
        let on = rewrites(Defect::XConcurrentDuplicatesCallTwice);
        let mut keys = RememberedKeys::default();
        let KeyedRewrite::AsSent(Some(token)) =
            keys.rewrite("k", "fp", &on, |_| Bound::Live, || true)
        else {
            panic!("not first");
        };
        keys.settle("k", token, "fp", Bytes::new(), None);
        assert!(matches!(
            keys.rewrite("k", "fp", &on, |_| Bound::Live, || true),
            KeyedRewrite::AsSent(Some(_))
        ));
        keys.abandon("k", token + 1);
        assert!(keys.memory.is_empty());
        bound(&mut keys, &on, "k");
        assert!(matches!(
            keys.rewrite("k", "fp", &on, |_| Bound::Expired, || true),
            KeyedRewrite::AsSent(Some(_))
        ));
        for i in 0..MAX_REMEMBERED_KEYS + 10 {
            keys.rewrite(&format!("k{i}"), "fp", &on, |_| Bound::Live, || true);
        }
        assert_eq!(keys.memory.len(), MAX_REMEMBERED_KEYS);
        assert_eq!(keys.order.len(), MAX_REMEMBERED_KEYS);
        assert!(!keys.memory.contains_key("k0"));
    }
}
