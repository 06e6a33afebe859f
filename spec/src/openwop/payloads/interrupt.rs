//! The interrupt request payload: upstream def `interruptRequested` (and its aliases
//! `approvalRequested`, `clarificationRequested`) of `schemas/v2/run-event-payloads.schema.json`
//! @ `446c2f2c`, which `$ref`s `openwop/openwop` `schemas/v2/suspend-request.schema.json` @
//! `ccb32779a3efdae90ab539104df77a23003e0711` (transcribed in
//! `spec/upstream/facts/suspend-request.json`): `kind`, `key` and `data` required, `data` bound to
//! `kind` by one conditional per kind, each per-kind shape closed.
//!
//! Upstream contradicts itself here: the file is closed and names no identity member, yet its
//! description says the recorded event carries the payload "plus engine-assigned identity
//! fields". The published payload therefore states every member upstream names and tolerates
//! others (a host following either side passes); `nodeId` and `interruptId`, the identity members
//! every other interrupt payload names, are checked against their grammars when present.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::super::ids;

/// The kinds of interrupt (`interrupt.md`'s full union).
pub const INTERRUPT_KINDS: [&str; 9] = [
    "approval",
    "clarification",
    "external-event",
    "custom",
    "conversation.start",
    "conversation.exchange",
    "conversation.close",
    "low-confidence",
    "credential",
];

/// `kind: approval` data (closed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ApprovalData {
    /// The artifact under approval (non-empty).
    #[schemars(length(min = 1))]
    pub artifact_id: String,
    /// Its type (non-empty).
    #[schemars(length(min = 1))]
    pub artifact_type: String,
    /// A title (non-empty).
    #[schemars(length(min = 1))]
    pub title: String,
    /// A hint recorded with the gate: `reject`, `approve` or `escalate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["reject", "approve", "escalate"]))]
    pub on_timeout: Option<String>,
    /// A description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The artifact's data (any value).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact_data: Option<Value>,
    /// The allowed actions (at least one, unique).
    #[schemars(length(min = 1), extend("uniqueItems" = true),
        extend("items" = {"type": "string", "enum": ["accept", "reject", "refine", "edit-accept", "ask"]}))]
    pub actions: Vec<String>,
    /// The quorum (≥ 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub required_approvals: Option<u64>,
    /// Who may resolve it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approvers_list: Option<Vec<String>>,
    /// `single-veto` or `majority`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["single-veto", "majority"]))]
    pub rejection_policy: Option<String>,
    /// Whether an override principal bypasses the quorum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub override_bypasses_quorum: Option<bool>,
    /// Eligible group refs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approver_group_refs: Option<Vec<String>>,
    /// Eligible role refs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approver_role_refs: Option<Vec<String>>,
    /// Who is told about the gate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<ApprovalAudience>,
}

/// Who an approval gate notifies (closed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApprovalAudience {
    /// Subject refs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subjects: Option<Vec<String>>,
    /// Group refs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub groups: Option<Vec<String>>,
    /// Role refs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roles: Option<Vec<String>>,
}

/// One clarification question (closed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClarificationQuestion {
    /// The question's id (non-empty).
    #[schemars(length(min = 1))]
    pub id: String,
    /// The question (non-empty).
    #[schemars(length(min = 1))]
    pub question: String,
    /// A JSON Schema for the answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<Map<String, Value>>,
}

/// `kind: clarification` data (closed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ClarificationData {
    /// The questions (at least one).
    #[schemars(length(min = 1))]
    pub questions: Vec<ClarificationQuestion>,
    /// The context type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_type: Option<String>,
}

/// `kind: external-event` data (closed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ExternalEventData {
    /// What is awaited.
    pub event_type: String,
    /// Opaque correlation data.
    pub correlation: Map<String, Value>,
}

/// `kind: custom` data (closed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CustomData {
    /// The custom kind (non-empty).
    #[schemars(length(min = 1))]
    pub custom_kind: String,
    /// Any payload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<Value>,
}

/// `kind: conversation.start` data (closed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ConversationStartData {
    /// The conversation (1–256 chars).
    #[schemars(length(min = 1, max = 256))]
    pub conversation_id: String,
    /// A title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The opening message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_prompt: Option<String>,
}

/// `kind: conversation.exchange` data (closed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ConversationExchangeData {
    /// The conversation (1–256 chars).
    #[schemars(length(min = 1, max = 256))]
    pub conversation_id: String,
    /// The question for this turn (non-empty).
    #[schemars(length(min = 1))]
    pub prompt: String,
    /// A JSON Schema for the answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome_schema: Option<Map<String, Value>>,
    /// The 0-indexed turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_index: Option<u64>,
}

/// `kind: conversation.close` data (closed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ConversationCloseData {
    /// The conversation (1–256 chars).
    #[schemars(length(min = 1, max = 256))]
    pub conversation_id: String,
    /// Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// `kind: low-confidence` data (closed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LowConfidenceData {
    /// The suspending agent.
    #[schemars(with = "ids::AgentId")]
    pub agent_id: String,
    /// The escalation threshold, in [0, 1].
    #[schemars(range(min = 0.0, max = 1.0))]
    pub threshold: f64,
    /// The observed confidence, in [0, 1].
    #[schemars(range(min = 0.0, max = 1.0))]
    pub observed: f64,
    /// The decision the agent would have taken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<Value>,
}

/// An opaque handle to a stored credential (`credential-reference.schema.json` @ `fd8e5544`;
/// closed, never key material).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CredentialReference {
    /// The host-issued id (non-empty).
    #[serde(rename = "ref")]
    #[schemars(length(min = 1))]
    pub reference: String,
    /// `user`, `workspace` or `tenant`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["user", "workspace", "tenant"]))]
    pub scope: Option<String>,
}

/// `kind: credential` data (closed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CredentialData {
    /// An advertised OAuth provider (non-empty).
    #[schemars(length(min = 1))]
    pub provider: String,
    /// The scopes (unique, non-empty each).
    #[schemars(extend("uniqueItems" = true), inner(length(min = 1)))]
    pub scopes: Vec<String>,
    /// `missing`, `expired` or `insufficient_scope`.
    #[schemars(extend("enum" = ["missing", "expired", "insufficient_scope"]))]
    pub reason: String,
    /// The host's https URL that begins the grant.
    #[schemars(extend("format" = "uri"), regex(pattern = "^https://"))]
    pub connect_url: String,
    /// The reference being re-authorized.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credential_ref: Option<CredentialReference>,
}

/// `interrupt.requested`: the interrupt payload (`kind`, `key`, `data` bound to `kind`) and the
/// identity members the engine adds. Its schema is [`InterruptRequested::json_schema`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InterruptRequested {
    /// One of [`INTERRUPT_KINDS`].
    pub kind: String,
    /// The re-entry key (1–256 characters).
    pub key: String,
    /// The per-kind data.
    pub data: Value,
    /// A JSON Schema for the resume value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume_schema: Option<Map<String, Value>>,
    /// Auto-reject after this many milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// The suspended node (an engine-assigned identity member).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_id: Option<String>,
    /// The interrupt (an engine-assigned identity member).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupt_id: Option<String>,
    /// Other engine-assigned members.
    #[serde(flatten)]
    pub identity: Map<String, Value>,
}

fn subschema<T: JsonSchema>(generator: &mut SchemaGenerator) -> Value {
    generator.subschema_for::<T>().to_value()
}

impl JsonSchema for InterruptRequested {
    fn schema_name() -> Cow<'static, str> {
        Cow::Borrowed("InterruptRequested")
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let per_kind: Vec<(&str, Value)> = vec![
            ("approval", subschema::<ApprovalData>(generator)),
            ("clarification", subschema::<ClarificationData>(generator)),
            ("external-event", subschema::<ExternalEventData>(generator)),
            ("custom", subschema::<CustomData>(generator)),
            (
                "conversation.start",
                subschema::<ConversationStartData>(generator),
            ),
            (
                "conversation.exchange",
                subschema::<ConversationExchangeData>(generator),
            ),
            (
                "conversation.close",
                subschema::<ConversationCloseData>(generator),
            ),
            ("low-confidence", subschema::<LowConfidenceData>(generator)),
            ("credential", subschema::<CredentialData>(generator)),
        ];
        let node_id = subschema::<ids::NodeId>(generator);
        let interrupt_id = subschema::<ids::InterruptId>(generator);
        let bindings: Vec<Value> = per_kind
            .iter()
            .map(|(kind, data)| {
                let mut then = json!({"properties": {"data": data}});
                if *kind == "credential" {
                    then["required"] = json!(["resumeSchema"]);
                    then["properties"]["resumeSchema"] = json!({"const": {
                        "type": "object", "additionalProperties": false,
                        "required": ["outcome"],
                        "properties": {"outcome": {"enum": ["authorized", "declined"]}}
                    }});
                }
                json!({"if": {"properties": {"kind": {"const": kind}}, "required": ["kind"]},
                       "then": then})
            })
            .collect();
        let alternatives: Vec<Value> = per_kind.into_iter().map(|(_, data)| data).collect();
        let shape = json!({
            "type": "object",
            "description": "suspend-request.schema.json @ ccb32779 (kind, key, data bound to kind) plus the engine-assigned identity members its description names: other members are tolerated, nodeId and interruptId checked when present.",
            "required": ["kind", "key", "data"],
            "properties": {
                "kind": {"type": "string", "enum": INTERRUPT_KINDS},
                "key": {"type": "string", "minLength": 1, "maxLength": 256},
                "resumeSchema": {"type": "object", "additionalProperties": true},
                "timeoutMs": {"type": "integer", "minimum": 0},
                "data": {"anyOf": alternatives},
                "nodeId": node_id,
                "interruptId": interrupt_id,
            },
            "allOf": bindings,
        });
        Schema::try_from(shape).unwrap_or_else(|_| json_schema!({"type": "object"}))
    }
}
