//! The heartbeats whose tick on request (upstream's tick seam) is being evaluated: a tick
//! requested while the prior one of the same heartbeat still runs is skipped, never queued.

use std::collections::HashSet;
use std::sync::Mutex;

/// The heartbeat ids with a requested tick under evaluation.
#[derive(Debug, Default)]
pub(crate) struct RequestedTicks(Mutex<HashSet<String>>);

impl RequestedTicks {
    fn ids(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether a requested tick of `id` is being evaluated.
    pub(crate) fn running(&self, id: &str) -> bool {
        self.ids().contains(id)
    }

    /// Marks a requested tick of `id` as started; `false` when one already runs.
    pub(crate) fn start(&self, id: &str) -> bool {
        self.ids().insert(id.to_string())
    }

    /// Marks the requested tick of `id` as over.
    pub(crate) fn finish(&self, id: &str) {
        self.ids().remove(id);
    }
}
