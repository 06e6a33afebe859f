//! Upstream's mock-AI program seam, which drives upstream's envelope fixtures
//! (`conformance-envelope-refusal`): `POST /conformance/seams/sample/test/mock-ai/program`
//! (upstream's v1 `POST /v1/host/sample/test/mock-ai/program`, moved by its seams-v2 profile)
//! `{nodeId, program: [MockBehavior…]}` programs the conformance-only `mock` provider of the
//! `core.ai.structuredOutput` nodes with that id (`config.provider: "mock"`) before a run
//! starts. A program replaces the previous one for the node id; the next run whose node calls
//! the mock takes it (so it is never played twice). Programs are the caller's tenant's, never
//! another's.
//!
//! A `MockBehavior` (upstream's conformance mock provider, one per provider call):
//! `stopReason` (`end_turn`, `stop_sequence`: a clean stop; `max_tokens`, `length`: truncated;
//! `safety`: a refusal), `content` (the raw text), `refusalText` (a refusal), `inputTokens`,
//! `outputTokens` (upstream's defaults 100 and 50). The reference runtime reads `content` as it
//! reads any model output (an AI envelope's JSON, or raw text for the reliability loop).
//!
//! Test keys only (403 `mock_provider_forbidden`, as the mock providers are), whatever the
//! `seams_enabled` switch: it programs only the caller's own runs. Answers
//! `200 {nodeId, entries}`.
//!
//! Its companion, upstream's last-dispatch-budget seam:
//! `GET /conformance/seams/sample/test/mock-ai/last-dispatch-budget?nodeId=…` (upstream's v1
//! `GET /v1/host/sample/test/mock-ai/last-dispatch-budget`, moved by the seams-v2 profile's
//! `/v1/host/sample/` → `/conformance/seams/sample/` rule) answers `200 {maxTokens}`: the output
//! budget the most recent mock call for that node id carried to the provider, `null` when no call
//! was made since the node's program was last posted (posting a program clears it, as upstream's
//! `programMock` does) or the node id was never programmed.

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::{Map, Value};

/// One posted program: upstream's `MockBehavior` entries, one per provider call.
pub(crate) type Program = Vec<Map<String, Value>>;

/// The programs posted and not yet taken, and the budget of each programmed node's most
/// recent mock call, by (tenant, node id).
#[derive(Debug, Default)]
pub(crate) struct MockPrograms {
    by_node: Mutex<HashMap<(String, String), Program>>,
    last_budget: Mutex<HashMap<(String, String), u32>>,
}

impl MockPrograms {
    /// Posts a program for the tenant's node id, replacing the previous one and clearing the
    /// node's last call budget.
    pub(crate) fn set(&self, tenant: &str, node_id: &str, program: Program) {
        let key = (tenant.to_string(), node_id.to_string());
        let mut budgets = self.last_budget.lock().unwrap_or_else(|p| p.into_inner());
        budgets.remove(&key);
        drop(budgets);
        let mut programs = self.by_node.lock().unwrap_or_else(|p| p.into_inner());
        programs.insert(key, program);
    }

    /// Records the output budget a mock call of the tenant's node carried to the provider.
    pub(crate) fn record_budget(&self, tenant: &str, node_id: &str, max_output_tokens: u32) {
        let mut budgets = self.last_budget.lock().unwrap_or_else(|p| p.into_inner());
        budgets.insert((tenant.to_string(), node_id.to_string()), max_output_tokens);
    }

    /// The output budget of the tenant's node's most recent mock call since its program was
    /// posted, if any.
    pub(crate) fn last_budget(&self, tenant: &str, node_id: &str) -> Option<u32> {
        let budgets = self.last_budget.lock().unwrap_or_else(|p| p.into_inner());
        budgets
            .get(&(tenant.to_string(), node_id.to_string()))
            .copied()
    }

    /// Takes the program posted for the tenant's node id, if any.
    pub(crate) fn take(&self, tenant: &str, node_id: &str) -> Option<Program> {
        let mut programs = self.by_node.lock().unwrap_or_else(|p| p.into_inner());
        programs.remove(&(tenant.to_string(), node_id.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::MockPrograms;

    #[test]
    fn the_last_budget_is_the_most_recent_call_since_the_program_was_posted() {
        let programs = MockPrograms::default();
        assert_eq!(programs.last_budget("t", "structured-call"), None);
        programs.set("t", "structured-call", Vec::new());
        programs.record_budget("t", "structured-call", 50);
        programs.record_budget("t", "structured-call", 100);
        assert_eq!(programs.last_budget("t", "structured-call"), Some(100));
        assert_eq!(programs.last_budget("other", "structured-call"), None);
        programs.set("t", "structured-call", Vec::new());
        assert_eq!(programs.last_budget("t", "structured-call"), None);
    }
}
