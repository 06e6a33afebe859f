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

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::{Map, Value};

/// One posted program: upstream's `MockBehavior` entries, one per provider call.
pub(crate) type Program = Vec<Map<String, Value>>;

/// The programs posted and not yet taken, by (tenant, node id).
#[derive(Debug, Default)]
pub(crate) struct MockPrograms {
    by_node: Mutex<HashMap<(String, String), Program>>,
}

impl MockPrograms {
    pub(crate) fn set(&self, tenant: &str, node_id: &str, program: Program) {
        let mut programs = self.by_node.lock().unwrap_or_else(|p| p.into_inner());
        programs.insert((tenant.to_string(), node_id.to_string()), program);
    }

    /// Takes the program posted for the tenant's node id, if any.
    pub(crate) fn take(&self, tenant: &str, node_id: &str) -> Option<Program> {
        let mut programs = self.by_node.lock().unwrap_or_else(|p| p.into_inner());
        programs.remove(&(tenant.to_string(), node_id.to_string()))
    }
}
