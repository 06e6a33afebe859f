//! The orchestrator decision payloads: upstream defs `runOrchestratorDecided` and
//! `coreWorkflowChainConfidenceEscalated` of `openwop/openwop-sdks`
//! `schemas/v2/run-event-payloads.schema.json` @ `446c2f2c22ff059d475228b86395ff92d27329a1`
//! (closed, no hatch), and the `OrchestratorDecision` both embed,
//! `schemas/v2/orchestrator-decision.schema.json` @ `fd8e5544c9fe9b63ac2672d64770173f32d13844`.
//!
//! Upstream's `OrchestratorDecision` contradicts itself: its root is `additionalProperties:
//! false` without declaring any property while it requires `kind`, so no document validates.
//! The project takes the reading that fails no host: the three closed `kind` branches as
//! upstream states them, without the root closedness (a `tolerance` deviation in
//! `spec/upstream/deviations.json`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::super::ids;

/// A worker id in a next-worker decision (1–256 characters).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct WorkerId(#[schemars(length(min = 1, max = 256))] pub String);

/// One convergence criterion of a terminate decision (closed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SuccessCriterion {
    /// The criterion key (non-empty).
    #[schemars(length(min = 1))]
    pub key: String,
    /// Whether it was met.
    pub met: bool,
}

/// An orchestrator's routing decision, one of three closed kinds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", deny_unknown_fields)]
#[schemars(extend("type" = "object", "required" = ["kind"]))]
pub enum OrchestratorDecision {
    /// Dispatch one or more next workers.
    #[serde(rename = "next-worker", rename_all = "camelCase")]
    NextWorker {
        /// The workers, in order (at least one).
        #[schemars(length(min = 1))]
        next_worker_ids: Vec<WorkerId>,
        /// Per-worker inputs, index-aligned with `nextWorkerIds`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        next_worker_inputs: Option<Vec<Map<String, Value>>>,
        /// The stated confidence, in [0, 1].
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(range(min = 0.0, max = 1.0))]
        confidence: Option<f64>,
    },
    /// Route a question to the human party.
    #[serde(rename = "ask-user")]
    AskUser {
        /// The question (non-empty).
        #[schemars(length(min = 1))]
        prompt: String,
    },
    /// End the run cleanly.
    #[serde(rename = "terminate", rename_all = "camelCase")]
    Terminate {
        /// Why (non-empty when present).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(length(min = 1))]
        reason: Option<String>,
        /// The stated confidence, in [0, 1].
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(range(min = 0.0, max = 1.0))]
        confidence: Option<f64>,
        /// The criteria judged.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        success_criteria: Option<Vec<SuccessCriterion>>,
    },
}

/// `runOrchestrator.decided` (def `runOrchestratorDecided`, closed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunOrchestratorDecided {
    /// The orchestrator.
    #[schemars(with = "ids::AgentId")]
    pub agent_id: String,
    /// The decision.
    pub decision: OrchestratorDecision,
    /// The 1-based orchestrator turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub iteration: Option<u64>,
    /// The causing event's host, when another.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub causation_host_id: Option<String>,
}

/// Which interrupt a confidence escalation fired.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum EscalationKind {
    /// A clarification.
    Clarify,
    /// An escalation.
    Escalate,
}

/// `core.workflowChain.confidence-escalated` (def `coreWorkflowChainConfidenceEscalated`,
/// closed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkflowChainConfidenceEscalated {
    /// The decision's confidence, in [0, 1].
    #[schemars(range(min = 0.0, max = 1.0))]
    pub confidence: f64,
    /// The floor that triggered escalation, in [0.5, 1].
    #[schemars(range(min = 0.5, max = 1.0))]
    pub floor: f64,
    /// The interrupt fired.
    pub escalation_kind: EscalationKind,
    /// The intended next worker (non-empty; absent for terminate decisions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub worker_id: Option<String>,
    /// The parent run.
    #[schemars(with = "ids::RunId")]
    pub parent_run_id: String,
    /// The escalated decision, verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original_decision: Option<OrchestratorDecision>,
    /// The causing event's host, when another.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub causation_host_id: Option<String>,
}
