//! The discovery document's metadata members other than versions and families:
//! `observability`, `runtimeCapabilities`, `conformance`, `compliance`, `signingKeys` and
//! `discovery`, as `openwop/openwop` `schemas/v2/capabilities.schema.json` @
//! `046ac537f727c15cbf55df8d86f6fe33f6e63900` states them (transcribed in
//! `spec/upstream/facts/capabilities.json`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::ids;

/// An OTLP export protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum OtlpProtocol {
    /// OTLP over HTTP, JSON.
    #[serde(rename = "http/json")]
    HttpJson,
    /// OTLP over HTTP, protobuf.
    #[serde(rename = "http/protobuf")]
    HttpProtobuf,
    /// OTLP over gRPC.
    #[serde(rename = "grpc")]
    Grpc,
}

/// `observability.otel` (open: upstream admits other members).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("additionalProperties" = true))]
pub struct OtelAdvertisement {
    /// The OTLP export protocols the host emits (unique).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("uniqueItems" = true))]
    pub export_protocols: Option<Vec<OtlpProtocol>>,
    /// Other members.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// `observability.testSeams` (closed; deprecated upstream, removed in 3.0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TestSeams {
    /// The OTel span scrape seam.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub otel_scrape: Option<bool>,
    /// The debug-bundle export seam.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub debug_bundle_export: Option<bool>,
}

/// `observability` (closed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Observability {
    /// The OTel advertisement.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub otel: Option<OtelAdvertisement>,
    /// Conformance test seams.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_seams: Option<TestSeams>,
}

/// `conformance`: the conformance-only block (closed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ConformanceBlock {
    /// Whether `core.conformance.mock-agent` is registered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mock_agent: Option<bool>,
    /// The latest certification bundle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "uri"))]
    pub certification_bundle_url: Option<String>,
    /// `openwop-conformance-seams-v2` when the seams profile is served.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("const" = "openwop-conformance-seams-v2"))]
    pub seams_profile: Option<String>,
}

/// A masking mode for sensitive fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MaskingMode {
    /// Replace with `"[REDACTED]"`.
    Mask,
    /// Drop the field.
    Omit,
    /// Replace with a hash.
    Hash,
    /// Record as is.
    Passthrough,
}

/// A compliance class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ComplianceClass {
    /// Public data.
    Public,
    /// Personal data.
    Pii,
    /// Health data.
    Phi,
    /// Card data.
    Pci,
    /// Other regulated data.
    Regulated,
}

/// `compliance` (open: upstream admits other members).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("additionalProperties" = true))]
pub struct Compliance {
    /// The default masking mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_mode: Option<MaskingMode>,
    /// The classes handled specially (unique).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("uniqueItems" = true))]
    pub supported_classes: Option<Vec<ComplianceClass>>,
    /// Other members.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// One certification-bundle signing key (closed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SigningKey {
    /// The key id a bundle signature names.
    #[schemars(with = "ids::KeyId")]
    pub key_id: String,
    /// Always `ed25519`.
    #[schemars(extend("const" = "ed25519"))]
    pub alg: String,
    /// The public key, base64url unpadded (43 characters).
    #[schemars(regex(pattern = "^[A-Za-z0-9_-]{43}$"))]
    pub public_key: String,
    /// What it signs: `certification-bundle`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["certification-bundle"]))]
    pub r#use: Option<String>,
    /// When it stopped signing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "date-time"))]
    pub retired_at: Option<String>,
}

/// How a host exposes its auth-scoped discovery view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum AuthScopedMode {
    /// `/.well-known/openwop` itself answers differently when authenticated.
    SameEndpoint,
    /// Another route (`endpointPath`) serves the scoped view.
    ExtensionEndpoint,
}

/// `discovery.authScoped` (closed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AuthScoped {
    /// The mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<AuthScopedMode>,
    /// The relative path of the scoped view (leading slash).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = "^/"))]
    pub endpoint_path: Option<String>,
}

/// `discovery`: the discovery advertisement (closed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DiscoveryAdvertisement {
    /// The auth-scoped view, when the host has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_scoped: Option<AuthScoped>,
}
