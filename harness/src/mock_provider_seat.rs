//! Where a host reads a run's mock provider in `POST /runs` (open point
//! `w.fixtures.mock-provider-seat`). Upstream's suite starts `conformance-stream-text` with
//! `configurable.mockProvider` (v1's run options: flat, no `version`), and so do the cases;
//! v2's closed `configurable.schema.json` seats it at `configurable.ai.mockProvider` under
//! `version: 1`. The probe finds a host that takes only the schema's spelling (fact
//! [`MOCK_PROVIDER_SEAT_FACT`]), and every run-creation body is then written so.

use serde_json::{Map, Value};

/// The fact naming the seat the host reads: `configurable-ai` when it takes only the v2
/// schema's; absent (or `suite`) when it takes the suite's flat spelling.
pub(crate) const MOCK_PROVIDER_SEAT_FACT: &str = "mock_provider_seat";

/// Where a host reads a run's mock provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MockProviderSeat {
    /// `configurable.mockProvider`, as upstream's suite writes it (what the cases write).
    Suite,
    /// `configurable.ai.mockProvider` with `configurable.version: 1` (v2's schema).
    ConfigurableAi,
}

impl MockProviderSeat {
    /// The fact's value.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            MockProviderSeat::Suite => "suite",
            MockProviderSeat::ConfigurableAi => "configurable-ai",
        }
    }

    /// The seat a target's facts name (the suite's without the fact).
    pub(crate) fn of(facts: &std::collections::BTreeMap<String, Value>) -> MockProviderSeat {
        match facts.get(MOCK_PROVIDER_SEAT_FACT).and_then(Value::as_str) {
            Some("configurable-ai") => MockProviderSeat::ConfigurableAi,
            _ => MockProviderSeat::Suite,
        }
    }

    /// Whether a run-creation answer of `status` refuses the body as written (400 or 422), so
    /// that the other seat is worth a try: not a rate limit, not a 5xx.
    pub(crate) fn refuses_the_body(status: u16) -> bool {
        matches!(status, 400 | 422)
    }

    /// Writes a `POST /runs` body for this seat: at `ConfigurableAi`, a flat
    /// `configurable.mockProvider` moves to `configurable.ai.mockProvider` and `version: 1` is
    /// added when absent. A body without the flat member, or naming the mock at both seats, is
    /// left as the case wrote it.
    pub(crate) fn write(self, body: &mut Value) {
        if self == MockProviderSeat::Suite {
            return;
        }
        let Some(configurable) = body.get_mut("configurable").and_then(Value::as_object_mut) else {
            return;
        };
        let taken = configurable
            .get("ai")
            .is_some_and(|ai| !ai.is_object() || ai.get("mockProvider").is_some());
        if taken {
            return;
        }
        let Some(mock) = configurable.remove("mockProvider") else {
            return;
        };
        configurable.entry("version").or_insert(Value::from(1));
        if let Some(ai) = configurable
            .entry("ai")
            .or_insert_with(|| Value::Object(Map::new()))
            .as_object_mut()
        {
            ai.insert("mockProvider".into(), mock);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_suites_body_is_written_at_the_schemas_seat_for_a_host_reading_only_that() {
        let mock = json!({"id": "stream-text", "config": {"tokens": ["a"]}});
        let suite = json!({"workflowId": "conformance-stream-text",
                           "configurable": {"mockProvider": mock.clone()}});
        let mut body = suite.clone();
        MockProviderSeat::Suite.write(&mut body);
        assert_eq!(body, suite);
        MockProviderSeat::ConfigurableAi.write(&mut body);
        assert_eq!(
            body,
            json!({"workflowId": "conformance-stream-text",
                   "configurable": {"version": 1, "ai": {"mockProvider": mock.clone()}}})
        );
        // Other members of `configurable` and `ai` stay; a body already at the seat, or naming
        // the mock at both, or without `configurable`, is left as written.
        let mut beside =
            json!({"configurable": {"mockProvider": mock.clone(), "ai": {"maxTokens": 5}}});
        MockProviderSeat::ConfigurableAi.write(&mut beside);
        assert_eq!(
            beside,
            json!({"configurable": {"version": 1, "ai": {"maxTokens": 5, "mockProvider": mock.clone()}}})
        );
        for unchanged in [
            json!({"configurable": {"version": 1, "ai": {"mockProvider": mock.clone()}}}),
            json!({"configurable": {"mockProvider": mock.clone(), "ai": {"mockProvider": mock.clone()}}}),
            json!({"configurable": {"mockProvider": mock, "ai": "not an object"}}),
            json!({"workflowId": "conformance-noop"}),
        ] {
            let mut body = unchanged.clone();
            MockProviderSeat::ConfigurableAi.write(&mut body);
            assert_eq!(body, unchanged);
        }
    }

    #[test]
    fn the_seat_is_read_from_the_fact() {
        let mut facts = std::collections::BTreeMap::new();
        assert_eq!(MockProviderSeat::of(&facts), MockProviderSeat::Suite);
        facts.insert(
            MOCK_PROVIDER_SEAT_FACT.into(),
            Value::from(MockProviderSeat::ConfigurableAi.as_str()),
        );
        assert_eq!(
            MockProviderSeat::of(&facts),
            MockProviderSeat::ConfigurableAi
        );
    }
}
