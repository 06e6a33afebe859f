//! The prompt and model-capability payloads: upstream defs `promptComposed`,
//! `modelCapabilitySubstituted` and `modelCapabilityInsufficient` of `openwop/openwop-sdks`
//! `schemas/v2/run-event-payloads.schema.json` @ `446c2f2c22ff059d475228b86395ff92d27329a1`:
//! plus `agentPromptResolved`, whose `kind` is `prompt-kind.schema.json` @
//! `33f1a23f7a305b6dcbd00979f6296838dcee2994` (a four-value enum, inlined here). All closed, no
//! hatch.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::openwop::ids;

/// The stringy PromptRef grammar (`prompt:<id>[@<semver>]`).
pub const PROMPT_REF_PATTERN: &str = r"^prompt:[a-z0-9][a-z0-9._-]{0,127}(@\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?)?$";
/// A `sha256:`-prefixed lowercase hex digest.
pub const SHA256_DIGEST_PATTERN: &str = "^sha256:[0-9a-f]{64}$";

/// `prompt.composed` (def `promptComposed`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PromptComposed {
    /// The node.
    #[schemars(with = "ids::NodeId")]
    pub node_id: String,
    /// The PromptRefs that contributed, in order.
    #[schemars(inner(regex(pattern = PROMPT_REF_PATTERN)))]
    pub refs: Vec<String>,
    /// The composition shape.
    #[schemars(extend("enum" = ["system+user", "system-only", "user-only", "agent-reasoning"]))]
    pub kind: String,
    /// Digest of the composed body.
    #[schemars(regex(pattern = SHA256_DIGEST_PATTERN))]
    pub hash: String,
    /// The composed body (full observability only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub composed: Option<String>,
    /// The system prompt body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// The user prompt body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_prompt: Option<String>,
    /// Variable bindings (an open object).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variable_bindings: Option<Map<String, Value>>,
    /// Variable name → digest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("additionalProperties" = {"type": "string", "pattern": "^sha256:[0-9a-f]{64}$"}))]
    pub variable_hashes: Option<BTreeMap<String, String>>,
    /// `trusted` or `untrusted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["trusted", "untrusted"]))]
    pub content_trust: Option<String>,
    /// Cross-host causation pointer (non-empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub causation_host_id: Option<String>,
}

/// `model.capability-substituted` (def `modelCapabilitySubstituted`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelCapabilitySubstituted {
    /// The node.
    #[schemars(with = "ids::NodeId")]
    pub node_id: String,
    /// The active provider.
    pub original_provider: String,
    /// The active model.
    pub original_model: String,
    /// The substitute provider (or `[REDACTED]`).
    pub fallback_provider: String,
    /// The substitute model (or `[REDACTED]`).
    pub fallback_model: String,
    /// The capabilities not satisfied (unique).
    #[schemars(extend("uniqueItems" = true))]
    pub missing_capabilities: Vec<String>,
}

/// `model.capability-insufficient` (def `modelCapabilityInsufficient`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelCapabilityInsufficient {
    /// The node.
    #[schemars(with = "ids::NodeId")]
    pub node_id: String,
    /// The active provider.
    pub provider: String,
    /// The active model.
    pub model: String,
    /// The capabilities not satisfied (unique).
    #[schemars(extend("uniqueItems" = true))]
    pub missing_capabilities: Vec<String>,
    /// Whether a fallback was attempted (upstream default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback_attempted: Option<bool>,
}

/// One layer of `agent.prompt-resolved.chain` (closed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PromptResolutionStep {
    /// The precedence layer.
    #[schemars(extend("enum" = [
        "run-configurable",
        "node",
        "agent-intrinsic",
        "agent-overrides",
        "agent-library-default",
        "workflow-defaults",
        "host-defaults"
    ]))]
    pub layer: String,
    /// The PromptRef this layer would have applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Whether this layer's ref was selected.
    pub applied: bool,
    /// A human-readable explanation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// `agent.prompt-resolved` (def `agentPromptResolved`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentPromptResolved {
    /// The node.
    #[schemars(with = "ids::NodeId")]
    pub node_id: String,
    /// The prompt kind (`prompt-kind.schema.json`).
    #[schemars(extend("enum" = ["system", "user", "few-shot", "schema-hint"]))]
    pub kind: String,
    /// The agent, when the node names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ids::AgentId>")]
    pub agent_id: Option<String>,
    /// The layers traversed, in order.
    pub chain: Vec<PromptResolutionStep>,
    /// The winning PromptRef, or null when no layer yielded one (required, nullable).
    #[schemars(required, extend("type" = ["string", "null"]))]
    pub resolved: Option<String>,
    /// Cross-host causation pointer (non-empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub causation_host_id: Option<String>,
}
