//! The OpenWOP v2 identifier grammars: one kind per `$defs` entry of `openwop/openwop-sdks`
//! `schemas/v2/ids.schema.json` @ `04b5b6a0bd1855d8a9a25008bfda6719325de64c` (the copy with
//! `anon:` tenants and `_` in `typeId`), transcribed in `spec/upstream/facts/ids.json`.
//!
//! Each kind is a constant (its pattern) and a schema marker type: a field says "this is a
//! runId" with `#[schemars(with = "ids::RunId")]` (or `Option<ids::RunId>`), and the generated
//! schema `$ref`s one shared `$defs/runId` entry instead of repeating the grammar.
//!
//! One tolerance: upstream's tenant-bound kinds (`runId`, `interruptId`, `subscriptionId`,
//! `deliveryId`, `effectId`) have no `anon:` prefix in their tenant segment, while `tenantId`
//! admits it and the file's own prose says the prefix exists so an anonymous run can have a
//! valid tenant-bound `runId`. The tenant-bound grammars here admit `(anon:)?` (recorded in
//! `spec/upstream/deviations.json`), so a host following either side passes.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};

/// The upstream file these grammars transcribe.
pub const SOURCE: &str =
    "openwop/openwop-sdks schemas/v2/ids.schema.json @ 04b5b6a0bd1855d8a9a25008bfda6719325de64c";

/// Host-minted opaque token (`opaque`): 16–128 of `[A-Za-z0-9._~-]`.
pub const OPAQUE_PATTERN: &str = "^[A-Za-z0-9._~-]{16,128}$";
/// `tenantId`: the only colon admitted is the `anon:` prefix.
pub const TENANT_ID_PATTERN: &str = "^(anon:)?[A-Za-z0-9._~-]{1,128}$";
/// `workspaceId`.
pub const WORKSPACE_ID_PATTERN: &str = "^[A-Za-z0-9._~-]{1,128}$";
/// `subjectId`: issuer-scoped, opaque; no whitespace, no `/`.
pub const SUBJECT_ID_PATTERN: &str = r"^[^\s/]{1,256}$";
/// A tenant-bound id, `<tenantId>/<opaque>` (`runId`, `interruptId`, `subscriptionId`,
/// `deliveryId`, `effectId`), with the tolerated `anon:` tenant prefix (see the module doc).
pub const TENANT_BOUND_PATTERN: &str = "^(anon:)?[A-Za-z0-9._~-]{1,128}/[A-Za-z0-9._~-]{16,128}$";
/// Upstream's literal tenant-bound grammar (without `anon:`), for the record and for tests.
pub const TENANT_BOUND_PATTERN_UPSTREAM: &str = "^[A-Za-z0-9._~-]{1,128}/[A-Za-z0-9._~-]{16,128}$";
/// `eventId`: an opaque token.
pub const EVENT_ID_PATTERN: &str = OPAQUE_PATTERN;
/// `traceId`: a W3C trace-context trace-id.
pub const TRACE_ID_PATTERN: &str = "^[0-9a-f]{32}$";
/// `spanId`: a W3C trace-context parent-id.
pub const SPAN_ID_PATTERN: &str = "^[0-9a-f]{16}$";
/// `keyId`: a signing-key identifier.
pub const KEY_ID_PATTERN: &str = "^[A-Za-z0-9._~-]{1,128}$";
/// Author-chosen ids (`nodeId`, `workflowId`, `agentId`, `chainId`, `pluginId`, `templateId`,
/// `libraryId`): `:` admitted.
pub const AUTHOR_ID_PATTERN: &str = "^[A-Za-z0-9._~:-]{1,128}$";
/// `typeId`: a node type id (`core.ai.callPrompt`), `_` admitted.
pub const TYPE_ID_PATTERN: &str = r"^[a-z][a-z0-9_-]*(\.[a-z][a-zA-Z0-9_-]*)+$";
/// `typeId`'s length bound (the only kind bounded outside its pattern).
pub const TYPE_ID_MAX_LENGTH: u64 = 256;

macro_rules! id_kinds {
    ($( $(#[$doc:meta])* $ty:ident => $name:literal, $pattern:expr, $max:expr; )*) => {
        $(
            $(#[$doc])*
            ///
            /// A schema marker: `#[schemars(with = "ids::…")]` makes the field `$ref` this kind.
            #[derive(Debug, Clone, Copy, PartialEq, Eq)]
            pub struct $ty;

            impl JsonSchema for $ty {
                fn schema_name() -> Cow<'static, str> {
                    Cow::Borrowed($name)
                }

                fn json_schema(_: &mut SchemaGenerator) -> Schema {
                    let mut schema = json_schema!({
                        "type": "string",
                        "pattern": $pattern,
                        "description": concat!("The id grammar `", $name, "` of ids.schema.json @ 04b5b6a0."),
                    });
                    let max: Option<u64> = $max;
                    if let Some(max) = max {
                        schema.insert("maxLength".into(), max.into());
                    }
                    schema
                }
            }
        )*

        /// Every id kind: its upstream `$defs` name and its pattern.
        pub const ALL: &[(&str, &str)] = &[$(($name, $pattern)),*];
    };
}

id_kinds! {
    /// `opaque`.
    Opaque => "opaque", OPAQUE_PATTERN, None;
    /// `tenantId`.
    TenantId => "tenantId", TENANT_ID_PATTERN, None;
    /// `workspaceId`.
    WorkspaceId => "workspaceId", WORKSPACE_ID_PATTERN, None;
    /// `subjectId`.
    SubjectId => "subjectId", SUBJECT_ID_PATTERN, None;
    /// `runId` (tenant-bound).
    RunId => "runId", TENANT_BOUND_PATTERN, None;
    /// `interruptId` (tenant-bound).
    InterruptId => "interruptId", TENANT_BOUND_PATTERN, None;
    /// `subscriptionId` (tenant-bound).
    SubscriptionId => "subscriptionId", TENANT_BOUND_PATTERN, None;
    /// `deliveryId` (tenant-bound).
    DeliveryId => "deliveryId", TENANT_BOUND_PATTERN, None;
    /// `effectId` (tenant-bound).
    EffectId => "effectId", TENANT_BOUND_PATTERN, None;
    /// `eventId`.
    EventId => "eventId", EVENT_ID_PATTERN, None;
    /// `traceId`.
    TraceId => "traceId", TRACE_ID_PATTERN, None;
    /// `spanId`.
    SpanId => "spanId", SPAN_ID_PATTERN, None;
    /// `keyId`.
    KeyId => "keyId", KEY_ID_PATTERN, None;
    /// `nodeId` (author-chosen).
    NodeId => "nodeId", AUTHOR_ID_PATTERN, None;
    /// `workflowId` (author-chosen).
    WorkflowId => "workflowId", AUTHOR_ID_PATTERN, None;
    /// `agentId` (author-chosen).
    AgentId => "agentId", AUTHOR_ID_PATTERN, None;
    /// `chainId` (author-chosen).
    ChainId => "chainId", AUTHOR_ID_PATTERN, None;
    /// `pluginId` (author-chosen).
    PluginId => "pluginId", AUTHOR_ID_PATTERN, None;
    /// `templateId` (author-chosen).
    TemplateId => "templateId", AUTHOR_ID_PATTERN, None;
    /// `libraryId` (author-chosen).
    LibraryId => "libraryId", AUTHOR_ID_PATTERN, None;
    /// `typeId` (a node type id).
    TypeId => "typeId", TYPE_ID_PATTERN, Some(TYPE_ID_MAX_LENGTH);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, value: &str) -> bool {
        regex::Regex::new(pattern).unwrap().is_match(value)
    }

    #[test]
    fn every_grammar_compiles_and_is_anchored() {
        for (name, pattern) in ALL {
            assert!(pattern.starts_with('^') && pattern.ends_with('$'), "{name}");
            regex::Regex::new(pattern).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }

    #[test]
    fn tenant_bound_ids_admit_anonymous_tenants_and_upstream_form() {
        let upstream = "acme/0123456789abcdef";
        let anonymous = "anon:3f2a/0123456789abcdef";
        assert!(matches(TENANT_BOUND_PATTERN, upstream));
        assert!(matches(TENANT_BOUND_PATTERN, anonymous));
        assert!(matches(TENANT_BOUND_PATTERN_UPSTREAM, upstream));
        assert!(!matches(TENANT_BOUND_PATTERN_UPSTREAM, anonymous));
        assert!(!matches(TENANT_BOUND_PATTERN, "acme/short"));
    }

    #[test]
    fn type_ids_admit_underscores_and_need_a_dot() {
        assert!(matches(TYPE_ID_PATTERN, "vendor.acme.my_tools.echo"));
        assert!(matches(TYPE_ID_PATTERN, "core.ai.callPrompt"));
        assert!(!matches(TYPE_ID_PATTERN, "core"));
        assert!(!matches(TYPE_ID_PATTERN, "Core.x"));
    }
}
