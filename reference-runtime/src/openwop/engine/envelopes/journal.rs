//! The `envelope-program` mock's call journal: what this host sent the mock provider on each
//! call (the output budget, the corrective fragment, the instructions), so a harness can judge
//! the reliability rules that live in the request rather than in the log.
//!
//! `GET /conformance/seams/mock-ai/runs/{runId}/calls` (`http::journal`; bearer; the run's tenant only, the same
//! 400/403/404 rules as `GET /runs/{runId}`) answers
//! `200 {runId, calls: [{nodeId, dispatch, turn, attempt, maxOutputTokens, correctiveFragment,
//! instructions}]}` in call order (`dispatch`, `turn` and `attempt` count from 1;
//! `correctiveFragment` is `null` when the call carried none). It reads only what the run's own
//! mock recorded, so it is served whenever the `envelope-program` mock is (test keys), whatever
//! the `seams_enabled` switch; a run without envelope calls answers `calls: []`. The journal is
//! kept in the store's key-value space, keyed by run id, never by node id.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::store::StoreView;

/// The store namespace of the journal.
const NAMESPACE: &str = "openwop.mock-ai-calls";

/// One call the node made to the mock provider.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CallRecord {
    /// The calling node.
    pub(crate) node_id: String,
    /// The node's dispatch (1 + the re-dispatches before it).
    pub(crate) dispatch: u32,
    /// The turn within the dispatch.
    pub(crate) turn: u32,
    /// The attempt within the turn.
    pub(crate) attempt: u32,
    /// The output budget sent.
    pub(crate) max_output_tokens: u32,
    /// The corrective fragment sent, if any.
    pub(crate) corrective_fragment: Option<String>,
    /// The instructions sent.
    pub(crate) instructions: Vec<String>,
}

/// Appends a call to the run's journal (a storage failure is logged: the journal is evidence,
/// never a reason to fail the run).
pub(crate) fn record(store: StoreView<'_>, run_id: &str, call: &CallRecord) {
    let mut calls = read(store, run_id);
    calls.push(call.clone());
    let value = serde_json::to_value(&calls).unwrap_or(Value::Null);
    if let Err(error) = store.kv_put(NAMESPACE, run_id, &value) {
        tracing::error!(run_id, %error, "recording a mock-AI call failed");
    }
}

/// The run's journal.
pub(crate) fn read(store: StoreView<'_>, run_id: &str) -> Vec<CallRecord> {
    store
        .kv_get(NAMESPACE, run_id)
        .ok()
        .flatten()
        .and_then(|v| serde_json::from_value(v).ok())
        .unwrap_or_default()
}
