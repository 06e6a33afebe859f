//! The prompt and model-capability payloads: upstream defs `promptComposed`,
//! `modelCapabilitySubstituted` and `modelCapabilityInsufficient` of `openwop/openwop-sdks`
//! `schemas/v2/run-event-payloads.schema.json` @ `446c2f2c22ff059d475228b86395ff92d27329a1`:
//! all closed, no hatch. (`agentPromptResolved` `$ref`s `prompt-kind.schema.json`, not yet
//! transcribed.)

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
