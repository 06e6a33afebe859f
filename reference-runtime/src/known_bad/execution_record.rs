//! [`ExecutionRecordRewrites`]: surface X's record layer, rewrites of an execution's events as
//! they are stored (the `EXECUTION_RECORDS` table).
//!
//! The log writer renders the clean event; a known-bad runtime's writer hands the rendered
//! JSON to this layer before the log stores it, so the event stream, replay and the
//! execution's snapshot all read the same defective event. Like the run record layer
//! (`run_record.rs`), it covers the defects the event itself says enough to apply.

use serde_json::{Value, json};

use super::decisions::decisions;
use super::policy::KnownBad;
use crate::defects::{Defect, Defects};

/// The record rewrites of a known-bad runtime's surface X.
#[derive(Debug, Clone, Default)]
pub(crate) struct ExecutionRecordRewrites {
    defects: Defects,
}

decisions! {
    ExecutionRecordRewrites, EXECUTION_RECORDS {
        second_sequence_repeated => XSequenceRepeated,
        execution_second_terminal => XSecondTerminal,
        provider_code_as_portable => XProviderCodeAsPortable,
        http_status_as_code => XHttpStatusAsCode,
        usage_quantity_negated => XNegativeUsage,
        later_usage_facts_negated => XLaterUsageFactNegative,
        usage_unit_unknown => XUnknownUsageUnit,
    }
}

impl KnownBad {
    /// The record layer of an execution's log writer, or `None` when no surface-X record
    /// defect is on.
    pub(crate) fn execution_record_rewrites(&self) -> Option<ExecutionRecordRewrites> {
        let defects = self.layered_in(EXECUTION_RECORDS);
        (!defects.is_empty()).then(|| ExecutionRecordRewrites::new(defects))
    }
}

impl ExecutionRecordRewrites {
    /// The rewrites of `defects` (the policy's surface-X record defects).
    pub(super) fn new(defects: Defects) -> Self {
        ExecutionRecordRewrites { defects }
    }

    /// How often a terminal event is stored: a succeeded execution's twice under the defect
    /// (the second past the terminal rule), any other once.
    pub(crate) fn terminal_copies(&self, completed: bool) -> usize {
        if completed && self.execution_second_terminal() {
            2
        } else {
            1
        }
    }

    /// The stored JSON of the event numbered `stored_sequence` (1-based), rewritten;
    /// `first_wire_sequence` is the wire number of the first event.
    pub(crate) fn rewrite(
        &self,
        wire: String,
        stored_sequence: u64,
        first_wire_sequence: u64,
    ) -> String {
        let Ok(mut event) = serde_json::from_str::<Value>(&wire) else {
            return wire;
        };
        if self.second_sequence_repeated() && stored_sequence == 2 {
            // The defect: the second event repeats the first event's sequence.
            event["sequence"] = json!(first_wire_sequence);
        }
        if let Some(error) = event.get_mut("error").and_then(Value::as_object_mut) {
            if self.provider_code_as_portable()
                && let Some(native) = error.get("provider_code").cloned()
            {
                // The defect: a provider failure's portable code is replaced by the provider's.
                error.insert("code".into(), native);
            }
            if self.http_status_as_code()
                && error.get("code").and_then(Value::as_str) == Some("provider_unavailable")
            {
                // The defect: an unavailable provider reported with a provider-native code.
                error.insert("code".into(), json!("http_503"));
            }
        }
        if let Some(facts) = event.get_mut("facts").and_then(Value::as_array_mut) {
            self.rewrite_facts(facts);
        }
        event.to_string()
    }

    /// The provider's usage facts, as published (the runtime's own fact is left alone).
    fn rewrite_facts(&self, facts: &mut [Value]) {
        let provided = facts
            .iter_mut()
            .filter(|fact| fact.get("source").and_then(Value::as_str) != Some("runtime"));
        for (index, fact) in provided.enumerate() {
            let positive = fact
                .get("quantity")
                .and_then(Value::as_f64)
                .filter(|q| *q > 0.0);
            let negate =
                self.usage_quantity_negated() || (index > 0 && self.later_usage_facts_negated());
            if let Some(quantity) = positive.filter(|_| negate) {
                // The defects: quantities (or every one after the first) published negated.
                fact["quantity"] = json!(-quantity);
            }
            if self.usage_unit_unknown()
                && let Some(unit) = fact.get("unit").and_then(Value::as_str)
            {
                // The defect: units published under an unknown, un-namespaced name.
                fact["unit"] = json!(format!("{}s", unit.replace('.', "_")));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_surface_x_record_defect_gives_the_log_writer_a_layer() {
        assert!(KnownBad::clean().execution_record_rewrites().is_none());
        assert!(
            KnownBad::of([Defect::WShortEventId])
                .execution_record_rewrites()
                .is_none()
        );
        let stored = KnownBad::of([Defect::XSequenceRepeated]);
        assert!(
            stored
                .execution_record_rewrites()
                .is_some_and(|r| r.second_sequence_repeated() && !r.usage_unit_unknown())
        );
    }

    fn layer(defects: impl IntoIterator<Item = Defect>) -> ExecutionRecordRewrites {
        ExecutionRecordRewrites::new(Defects::of(defects))
    }

    fn facts(event: &str) -> Value {
        serde_json::from_str::<Value>(event).unwrap()["facts"].clone()
    }

    const USAGE: &str = r#"{"type":"usage.reported","sequence":3,"facts":[
        {"unit":"input_token","quantity":3,"source":"provider"},
        {"unit":"output_token","quantity":2,"source":"provider"},
        {"unit":"acme.runtime_fact","quantity":2,"source":"runtime"}]}"#;

    #[test]
    fn later_facts_are_negated_but_never_the_runtimes_own() {
        let rewritten = layer([Defect::XLaterUsageFactNegative]).rewrite(USAGE.into(), 3, 1);
        let quantities: Vec<f64> = facts(&rewritten)
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["quantity"].as_f64().unwrap())
            .collect();
        assert_eq!(quantities, [3.0, -2.0, 2.0]);
    }

    #[test]
    fn the_second_event_repeats_the_first_events_wire_sequence() {
        let layer = layer([Defect::XSequenceRepeated]);
        let second = layer.rewrite(r#"{"sequence":4}"#.into(), 2, 2);
        assert_eq!(
            serde_json::from_str::<Value>(&second).unwrap()["sequence"],
            2
        );
        let third = layer.rewrite(r#"{"sequence":6}"#.into(), 3, 2);
        assert_eq!(
            serde_json::from_str::<Value>(&third).unwrap()["sequence"],
            6
        );
        assert_eq!(layer.terminal_copies(true), 1);
    }

    #[test]
    fn only_an_unavailable_providers_code_becomes_an_http_status() {
        let layer = layer([Defect::XHttpStatusAsCode, Defect::XSecondTerminal]);
        let unavailable = r#"{"error":{"code":"provider_unavailable"}}"#;
        let limited = r#"{"error":{"code":"rate_limited"}}"#;
        assert!(layer.rewrite(unavailable.into(), 5, 1).contains("http_503"));
        assert!(layer.rewrite(limited.into(), 5, 1).contains("rate_limited"));
        assert_eq!(
            (layer.terminal_copies(true), layer.terminal_copies(false)),
            (2, 1)
        );
    }
}
