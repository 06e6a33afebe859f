//! The per-run subscriber limit (resource protection): a slot per open event stream, released
//! when the stream ends or the client goes away.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Open event streams per run.
#[derive(Default)]
pub(crate) struct SubscriberSlots {
    counts: Arc<Mutex<HashMap<String, usize>>>,
}

/// One held slot; dropping it frees the slot.
pub(crate) struct SubscriberSlot {
    counts: Arc<Mutex<HashMap<String, usize>>>,
    run_id: String,
}

impl SubscriberSlots {
    /// Takes a slot unless `limit` streams are open (0 = unlimited).
    pub(crate) fn try_acquire(&self, run_id: &str, limit: usize) -> Option<SubscriberSlot> {
        let mut counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        let open = counts.entry(run_id.to_string()).or_insert(0);
        if limit != 0 && *open >= limit {
            return None;
        }
        *open += 1;
        Some(SubscriberSlot {
            counts: Arc::clone(&self.counts),
            run_id: run_id.to_string(),
        })
    }
}

impl Drop for SubscriberSlot {
    fn drop(&mut self) {
        let mut counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(open) = counts.get_mut(&self.run_id) {
            *open = open.saturating_sub(1);
            if *open == 0 {
                counts.remove(&self.run_id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_limited_per_run_and_freed_on_drop() {
        let slots = SubscriberSlots::default();
        let a = slots.try_acquire("r", 2).unwrap();
        let _b = slots.try_acquire("r", 2).unwrap();
        assert!(slots.try_acquire("r", 2).is_none());
        assert!(slots.try_acquire("other", 2).is_some());
        drop(a);
        assert!(slots.try_acquire("r", 2).is_some());
        assert!(slots.try_acquire("r", 0).is_some());
    }
}
