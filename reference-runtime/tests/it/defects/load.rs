//! The scenario of the `w-drops-event-under-load` defect, on the log hub both surfaces share:
//! several subscribers of a live log each lose events with the defect on and none with it off;
//! a lone subscriber, and a read of the finished log, lose nothing either way (which is why the
//! single-subscriber cases cannot catch it and `conformance load` does).

use std::sync::Arc;

use reference_runtime::clock::SystemClock;
use reference_runtime::defects::Defect;
use reference_runtime::known_bad::KnownBad;
use reference_runtime::log::{AppendKind, LogHub, Subscription};
use reference_runtime::store::{MemoryEventStore, Surface};

/// Appends `events` events (the last one terminal) while `subscriptions` read live; returns
/// the sequences each subscription got.
async fn read_live(hub: &Arc<LogHub>, log: &str, readers: usize, events: u64) -> Vec<Vec<u64>> {
    hub.create(log, Surface::Execution, serde_json::json!({}))
        .unwrap();
    let subscriptions: Vec<Subscription> = (0..readers)
        .map(|_| hub.subscribe(log, None).unwrap())
        .collect();
    let tasks: Vec<_> = subscriptions
        .into_iter()
        .map(|mut subscription| {
            tokio::spawn(async move {
                let mut got = Vec::new();
                while let Some(batch) = subscription.next_batch().await {
                    got.extend(batch.unwrap().iter().map(|e| e.sequence));
                }
                got
            })
        })
        .collect();
    for i in 1..=events {
        let kind = if i == events {
            AppendKind::Terminal
        } else {
            AppendKind::Forward
        };
        hub.append(log, "output.delta", kind, |s, _| {
            format!("{{\"sequence\":{s}}}")
        })
        .unwrap();
        // Let every reader take each event on its own (a live tail, one event per read).
        for _ in 0..4 {
            tokio::task::yield_now().await;
        }
    }
    let mut out = Vec::new();
    for task in tasks {
        out.push(task.await.unwrap());
    }
    out
}

fn hub(defect: bool) -> Arc<LogHub> {
    Arc::new(
        LogHub::new(Arc::new(MemoryEventStore::new()), Arc::new(SystemClock))
            .with_delivery(KnownBad::of(defect.then_some(Defect::DropsEventUnderLoad)).delivery()),
    )
}

#[tokio::test]
pub(super) async fn drops_event_under_load() {
    let whole: Vec<u64> = (1..=50).collect();
    for defect in [false, true] {
        let hub = hub(defect);
        let many = read_live(&hub, "many", 3, 50).await;
        for got in &many {
            assert_eq!(
                got.last(),
                Some(&50),
                "every reader ends at the terminal event"
            );
            if defect {
                assert!(
                    got.len() < whole.len(),
                    "with the defect each of several readers loses events: {got:?}"
                );
            } else {
                assert_eq!(got, &whole, "without it every reader gets every event");
            }
        }
        let alone = read_live(&hub, "alone", 1, 50).await;
        assert_eq!(
            alone[0], whole,
            "a lone reader loses nothing (defect {defect})"
        );
        // A read of the finished log, even beside other readers, loses nothing.
        let _other = hub.subscribe("many", None).unwrap();
        let mut finished = hub.subscribe("many", None).unwrap();
        let mut got = Vec::new();
        while let Some(batch) = finished.next_batch().await {
            got.extend(batch.unwrap().iter().map(|e| e.sequence));
        }
        assert_eq!(got, whole);
    }
}
