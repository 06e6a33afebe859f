//! `GET /.well-known/openwop`: the discovery document.
//!
//! States `schemas/v2/capabilities.schema.json` of `openwop/openwop` at commit
//! `046ac537f727c15cbf55df8d86f6fe33f6e63900` (generated upstream from `spec/v2/declaration.json`
//! at `0a845654ef20fb40204e2d88df2f450fe3c8db84`; transcribed in
//! `spec/upstream/facts/capabilities.json`): a closed root of metadata keys and 73 capability
//! families. Each family is a [`CapabilityRecord`] closed over that family's own facets, as the
//! upstream file closes it: the facet schemas are stated in `discovery_facets.json` (JSON Schema,
//! one entry per family: `properties`, `required`, `allOf`) and composed into one
//! `$defs/<Family>Record` per family by [`family_records`].

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// The `M.m` grammar of a protocol version.
pub const VERSION_PATTERN: &str = r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$";

/// The capability families that are root members of the discovery document: the declaration's
/// 72 families anchored `core`, plus `auditLogIntegrity`, which the schema's closed root also
/// admits although the declaration @ `0a845654` it says it is generated from does not list it
/// (admitting it fails no host following either file). `ext` families live under `extensions`.
pub const CORE_FAMILIES: [&str; 73] = [
    "supportedEnvelopes",
    "schemaVersions",
    "limits",
    "envelopeStrictness",
    "envelopeContracts",
    "envelopes",
    "prompts",
    "nodePackRuntimes",
    "secrets",
    "connections",
    "selfHostedRunner",
    "purposePropagation",
    "dataResidency",
    "anonymousActor",
    "credentials",
    "feedback",
    "replay",
    "oauth",
    "authorization",
    "multiPartyConversation",
    "conversationTurnModelProvenance",
    "channelPresence",
    "multiAgent",
    "modelCapabilities",
    "providerUsage",
    "aiProviders",
    "agents",
    "memory",
    "conversationPrimitive",
    "subWorkflow",
    "fs",
    "kvStorage",
    "tableStorage",
    "queueBus",
    "scheduling",
    "heartbeat",
    "toolHooks",
    "toolCatalog",
    "httpClient",
    "artifactTypes",
    "forms",
    "aiEnvelope",
    "promptLibrary",
    "agentRuntime",
    "deadLetter",
    "webhooks",
    "triggerBridge",
    "a2a",
    "budget",
    "nondeterminismPolicy",
    "workspace",
    "uiPlugins",
    "sql",
    "nosql",
    "vectorStore",
    "searchIndex",
    "blobStorage",
    "cache",
    "workflowChainPacks",
    "packs",
    "mcp",
    "sandbox",
    "compensation",
    "idempotency",
    "eventLog",
    "production",
    "auth",
    "auditLogIntegrity",
    "i18n",
    "content",
    "portability",
    "runList",
    "interrupt",
];

/// Families named by other upstream files but absent from the declaration this document states:
/// `host-event.schema.json` makes `delivery` equal "the class the host advertises for `type` in
/// its `hostEvents` record". Upstream contradicts itself; a host advertising the record is not
/// failed for it (a recorded tolerance).
pub const FAMILIES_NAMED_ELSEWHERE: [&str; 1] = ["hostEvents"];

/// The discovery document. Capability families are root members (`providerUsage`,
/// `heartbeat`, `limits`, …), each a [`CapabilityRecord`]; presence is the claim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(title = "Discovery", transform = close_root)]
pub struct Discovery {
    /// Every `M.m` version the host serves (unique, at least one).
    #[schemars(
        length(min = 1),
        inner(regex(pattern = r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$"))
    )]
    #[schemars(extend("uniqueItems" = true))]
    pub protocol_versions: Vec<String>,
    /// The preferred version, a member of `protocolVersions`.
    pub preferred_version: String,
    /// The v1 twin of `preferredVersion`, kept through the overlap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$"))]
    pub protocol_version: Option<String>,
    /// Who implements the host (informational).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub implementation: Option<Implementation>,
    /// The engine version (integer ≥ 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_version: Option<u64>,
    /// The lowest `M.m` client the host serves.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$"))]
    pub min_client_version: Option<String>,
    /// Vendor/host extension records, keyed `<org>.<name>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = super::snapshot::extensions_schema)]
    pub extensions: Option<Map<String, Value>>,
    /// The fixture workflow ids the host has seeded (unique, non-empty strings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(inner(length(min = 1)), extend("uniqueItems" = true))]
    pub fixtures: Option<Vec<String>>,
    /// Testing metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub testing: Option<Testing>,
    /// The log era the host writes (≥ 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 2))]
    pub event_log_schema_version: Option<u32>,
    /// The run options a host accepts (`configurable.schema.json`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configurable: Option<super::runs::Configurable>,
    /// Span, metric and log hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observability: Option<super::discovery_metadata::Observability>,
    /// Opaque runtime capability ids nodes may require (unique, non-empty strings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(inner(length(min = 1)), extend("uniqueItems" = true))]
    pub runtime_capabilities: Option<Vec<String>>,
    /// The conformance-only block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conformance: Option<super::discovery_metadata::ConformanceBlock>,
    /// The masking behaviour.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compliance: Option<super::discovery_metadata::Compliance>,
    /// The keys the host signs certification bundles with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signing_keys: Option<Vec<super::discovery_metadata::SigningKey>>,
    /// The discovery advertisement (auth-scoped views).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discovery: Option<super::discovery_metadata::DiscoveryAdvertisement>,
    /// Capability families, by name.
    #[serde(flatten)]
    pub families: BTreeMap<String, Value>,
}

impl Discovery {
    /// The capability record of a family, when advertised.
    pub fn capability(&self, family: &str) -> Option<&Value> {
        self.families.get(family)
    }
}

/// The facet schemas of every family, as upstream closes them (JSON Schema fragments keyed by
/// family: `properties`, and `required` / `allOf` when the family has them).
const FAMILY_FACETS: &str = include_str!("discovery_facets.json");

/// The facets a family of [`CORE_FAMILIES`] publishes beyond the common record (its own
/// `properties` in `discovery_facets.json`), each with its JSON Schema; `None` for a name that
/// is no core family. `conformance lint` checks a case's `capability:<family>.<facet>` needs
/// against it.
pub fn family_facets(family: &str) -> Option<&'static Map<String, Value>> {
    static FACETS: std::sync::LazyLock<BTreeMap<String, Map<String, Value>>> =
        std::sync::LazyLock::new(|| {
            let all: Map<String, Value> = serde_json::from_str(FAMILY_FACETS)
                .expect("discovery_facets.json is a JSON object");
            CORE_FAMILIES
                .iter()
                .map(|family| {
                    let own = all
                        .get(*family)
                        .and_then(|f| f.get("properties"))
                        .and_then(Value::as_object)
                        .cloned()
                        .unwrap_or_default();
                    (family.to_string(), own)
                })
                .collect()
        });
    FACETS.get(family)
}

/// The name of a family's record in the published `$defs` (`limits` → `LimitsRecord`).
pub fn family_record_name(family: &str) -> String {
    let mut chars = family.chars();
    match chars.next() {
        Some(first) => format!("{}{}Record", first.to_ascii_uppercase(), chars.as_str()),
        None => "Record".into(),
    }
}

/// One published record per family of [`CORE_FAMILIES`], keyed by [`family_record_name`]: the
/// common `record` (the generated [`CapabilityRecord`]: status, since, until, witness and the
/// until conditionals) plus the family's facets, closed (`additionalProperties: false`), with
/// the facets' own required members and conditionals.
pub fn family_records(record: &Value) -> Map<String, Value> {
    let facets: Map<String, Value> =
        serde_json::from_str(FAMILY_FACETS).expect("discovery_facets.json is a JSON object");
    let mut out = Map::new();
    for family in CORE_FAMILIES {
        let own = facets.get(family).cloned().unwrap_or_else(|| json!({}));
        let mut properties = record["properties"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        properties.extend(own["properties"].as_object().cloned().unwrap_or_default());
        let mut required = record["required"].as_array().cloned().unwrap_or_default();
        required.extend(own["required"].as_array().cloned().unwrap_or_default());
        let mut conditionals = record["allOf"].as_array().cloned().unwrap_or_default();
        conditionals.extend(own["allOf"].as_array().cloned().unwrap_or_default());
        out.insert(
            family_record_name(family),
            json!({
                "type": "object",
                "description": format!("The `{family}` capability record: the common record plus the family's own facets, closed."),
                "properties": properties,
                "required": required,
                "additionalProperties": false,
                "allOf": conditionals,
            }),
        );
    }
    out
}

/// The root is closed: the metadata keys and one record per family; nothing else. A family of
/// [`CORE_FAMILIES`] is its own closed record; one of [`FAMILIES_NAMED_ELSEWHERE`] is the common
/// [`CapabilityRecord`] with open facets (no upstream facet schema exists for it).
fn close_root(schema: &mut schemars::Schema) {
    let Some(object) = schema.as_object_mut() else {
        return;
    };
    object.insert("additionalProperties".into(), Value::Bool(false));
    let properties = object
        .entry("properties")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .expect("properties is an object");
    for family in CORE_FAMILIES {
        let reference = format!("#/$defs/{}", family_record_name(family));
        properties.insert(family.into(), json!({ "$ref": reference }));
    }
    for family in FAMILIES_NAMED_ELSEWHERE {
        properties.insert(family.into(), json!({ "$ref": "#/$defs/CapabilityRecord" }));
    }
}

/// `implementation` (closed; nothing required; informational).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Implementation {
    /// Product name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Product version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Vendor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vendor: Option<String>,
    /// The operator's site.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "uri"))]
    pub url: Option<String>,
}

/// `testing` (open upstream).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Testing {
    /// Mock provider ids served through `configurable.ai.mockProvider` (unique).
    #[serde(default)]
    #[schemars(inner(length(min = 1)), extend("uniqueItems" = true))]
    pub mock_providers: Vec<String>,
    /// Prefix of test API keys (1–32 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 32))]
    pub test_key_prefix: Option<String>,
    /// The engine versions `OpenWOP-Force-Engine-Version` may select.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub force_engine_version_range: Option<ForceEngineVersionRange>,
}

/// `testing.forceEngineVersionRange` (closed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ForceEngineVersionRange {
    /// Lowest forceable engine version.
    pub min: u64,
    /// Highest forceable engine version.
    pub max: u64,
}

/// How stable the host's offering of a family is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CapabilityStatus {
    /// Stable (`until` forbidden).
    Stable,
    /// Experimental (`until` required).
    Experimental,
    /// Deprecated (`until` required).
    Deprecated,
}

/// The witness class of a family (declaration `witnessClasses`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum WitnessClass {
    /// Observable without help.
    WitnessableUnaided,
    /// Observable once gated on the advert.
    WitnessableGated,
    /// Observable only through the conformance seams.
    SeamGated,
    /// Only the claim can be checked.
    ClaimsCheck,
    /// Witnessed by absence.
    NegativeExistence,
}

/// A capability family record: `{status, since, until?, witness, …facets}`. This type reads any
/// family (its facets as a map); the published schema closes each family over its own facets
/// ([`family_records`]), and admits open facets only for [`FAMILIES_NAMED_ELSEWHERE`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(transform = until_conditionals)]
pub struct CapabilityRecord {
    /// The host's stability claim.
    pub status: CapabilityStatus,
    /// The `M.m` of the host's own contract at which it began serving the family.
    #[schemars(regex(pattern = r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$"))]
    pub since: String,
    /// The end of an experimental or deprecated offering: `M.m` or `YYYY-MM-DD`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^((0|[1-9][0-9]*)\.(0|[1-9][0-9]*)|\d{4}-\d{2}-\d{2})$"))]
    pub until: Option<String>,
    /// The witness class.
    pub witness: WitnessClass,
    /// The family's facets.
    #[serde(flatten)]
    pub facets: Map<String, Value>,
}

/// `until` is forbidden when `stable` and required when `experimental` or `deprecated`.
fn until_conditionals(schema: &mut schemars::Schema) {
    schema.insert(
        "allOf".into(),
        json!([
            {"if": {"properties": {"status": {"const": "stable"}}},
             "then": {"not": {"required": ["until"]}}},
            {"if": {"properties": {"status": {"enum": ["experimental", "deprecated"]}}},
             "then": {"required": ["until"]}}
        ]),
    );
}
