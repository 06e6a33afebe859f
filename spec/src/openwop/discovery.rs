//! `GET /.well-known/openwop`: the fields of the discovery document the contract uses.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The discovery document. Capability families are root members (`providerUsage`,
/// `heartbeat`, `limits`, …), each a [`CapabilityRecord`]; presence is the claim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(title = "Discovery")]
pub struct Discovery {
    /// Supported `M.m` versions.
    #[schemars(length(min = 1))]
    pub protocol_versions: Vec<String>,
    /// The preferred version, a member of `protocolVersions`.
    pub preferred_version: String,
    /// Who implements the host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub implementation: Option<Implementation>,
    /// The fixture workflow ids the host has seeded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixtures: Option<Vec<String>>,
    /// Testing metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub testing: Option<Testing>,
    /// The log era the host writes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_log_schema_version: Option<u32>,
    /// Capability families and other metadata keys, by name.
    #[serde(flatten)]
    pub families: BTreeMap<String, Value>,
}

impl Discovery {
    /// The capability record of a family, when advertised.
    pub fn capability(&self, family: &str) -> Option<&Value> {
        self.families.get(family)
    }
}

/// `implementation`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Implementation {
    /// Product name.
    pub name: String,
    /// Product version.
    pub version: String,
    /// Vendor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vendor: Option<String>,
}

/// `testing`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Testing {
    /// Mock provider ids served through `configurable.ai.mockProvider`.
    #[serde(default)]
    pub mock_providers: Vec<String>,
    /// Prefix of test API keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_key_prefix: Option<String>,
}

/// A capability family record: `{status, since, witness, …facets}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CapabilityRecord {
    /// `stable`, `experimental` or `deprecated`.
    pub status: String,
    /// The `M.m` version the family appeared in.
    pub since: String,
    /// The witness class.
    pub witness: String,
    /// The family's facets.
    #[serde(flatten)]
    pub facets: Map<String, Value>,
}
