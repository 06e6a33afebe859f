//! [`DeliveryRewrites`]: what a known-bad hub withholds from the subscribers of a live log (the
//! `DELIVERIES` table). The log hub hands each batch it is about to deliver to this layer, which
//! only a known-bad runtime's hub has; the stored log is untouched.

use std::sync::Arc;

use super::decisions::decisions;
use super::policy::KnownBad;
use crate::defects::{Defect, Defects};
use crate::log::DeliveryFilter;
use crate::store::StoredEvent;

/// One event in this many is withheld under [`DeliveryRewrites::drops_events_under_load`].
const DROP_UNDER_LOAD_EVERY: u64 = 7;

/// The delivery rewrites of a known-bad runtime's hub.
#[derive(Debug, Clone, Default)]
pub(crate) struct DeliveryRewrites {
    defects: Defects,
}

decisions! {
    DeliveryRewrites, DELIVERIES {
        drops_events_under_load => DropsEventUnderLoad,
    }
}

impl KnownBad {
    /// The log hub's delivery layer: what it withholds from a live log's subscribers, or
    /// `None` when no delivery defect is on ([`LogHub::with_delivery`](crate::log::LogHub)).
    pub fn delivery(&self) -> Option<Arc<dyn DeliveryFilter>> {
        let defects = self.layered_in(DELIVERIES);
        (!defects.is_empty())
            .then(|| Arc::new(DeliveryRewrites::new(defects)) as Arc<dyn DeliveryFilter>)
    }
}

impl DeliveryRewrites {
    /// The rewrites of `defects` (the policy's delivery defects).
    pub(super) fn new(defects: Defects) -> Self {
        DeliveryRewrites { defects }
    }
}

impl DeliveryFilter for DeliveryRewrites {
    /// Under the defect, while the log is live and read by several subscribers, every seventh
    /// event handed to the subscriber (`sent` counts them) is silently left out, never the
    /// terminal one, so streams still end.
    fn withhold(
        &self,
        events: &mut Vec<StoredEvent>,
        sent: &mut u64,
        subscribers: usize,
        log_terminal: bool,
    ) {
        if !self.drops_events_under_load() || log_terminal || subscribers < 2 {
            return;
        }
        events.retain(|event| {
            *sent += 1;
            event.terminal || !sent.is_multiple_of(DROP_UNDER_LOAD_EVERY)
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(count: u64) -> Vec<StoredEvent> {
        (1..=count)
            .map(|sequence| StoredEvent {
                sequence,
                time: chrono::Utc::now(),
                event_type: "node.completed".into(),
                terminal: false,
                json: "{}".into(),
            })
            .collect()
    }

    #[test]
    fn every_seventh_event_is_withheld_only_from_a_shared_live_log() {
        let layer = DeliveryRewrites::new(Defects::of([Defect::DropsEventUnderLoad]));
        let (mut shared, mut sent) = (batch(14), 0);
        layer.withhold(&mut shared, &mut sent, 2, false);
        let kept: Vec<u64> = shared.iter().map(|e| e.sequence).collect();
        assert_eq!(kept, [1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13]);
        for (subscribers, terminal) in [(1, false), (2, true)] {
            let (mut events, mut sent) = (batch(14), 0);
            layer.withhold(&mut events, &mut sent, subscribers, terminal);
            assert_eq!(events.len(), 14);
        }
        let (mut clean, mut sent) = (batch(14), 0);
        DeliveryRewrites::default().withhold(&mut clean, &mut sent, 2, false);
        assert_eq!(clean.len(), 14);
    }
}
