//! The published JSON Schemas (`spec/schema/*.json`): generated from the types of this crate,
//! committed, and compiled into validators.
//!
//! [`generate_all`] produces every schema this crate owns; `cargo schemas` (an alias for the
//! harness's `conformance schemas write`, which adds the case and report schemas) writes them to
//! `spec/schema/`. A test regenerates them and fails on any difference ("CI rejects drift").
//! [`validator`] compiles the **committed** files, which is what the harness judges against.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use schemars::generate::SchemaSettings;
use schemars::transform::Transform;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::{Map, Value, json};

use crate::execution::{
    self, ErrorEnvelope as ExecutionErrorEnvelope, EventBody, ExecutionEventType, ExecutionRequest,
};
use crate::openwop::{self, payloads};
pub use crate::published::Published;
use crate::registry::{event_types, orgs};

/// The command that regenerates every published schema.
pub const REGENERATE_COMMAND: &str = "cargo schemas";

impl Published {
    /// Every published schema.
    pub const ALL: [Published; 20] = [
        Self::ExecutionRequest,
        Self::ExecutionEvent,
        Self::ExecutionError,
        Self::ExecutionSubmission,
        Self::ExecutionSnapshot,
        Self::ExecutionResult,
        Self::RuntimeInfo,
        Self::ProviderManifests,
        Self::RunEvent,
        Self::RunEventPayloads,
        Self::PollResponse,
        Self::RunSnapshot,
        Self::OpenWopError,
        Self::CreateRunRequest,
        Self::CreateRunResponse,
        Self::CancelRunResponse,
        Self::Discovery,
        Self::HostEvent,
        Self::HeartbeatEvaluated,
        Self::HeartbeatStateChanged,
    ];

    /// The file name under `spec/schema/`.
    pub fn file_name(self) -> &'static str {
        match self {
            Self::ExecutionRequest => "execution-request.json",
            Self::ExecutionEvent => "execution-event.json",
            Self::ExecutionError => "execution-error.json",
            Self::ExecutionSubmission => "execution-submission.json",
            Self::ExecutionSnapshot => "execution-snapshot.json",
            Self::ExecutionResult => "execution-result.json",
            Self::RuntimeInfo => "runtime-info.json",
            Self::ProviderManifests => "provider-manifests.json",
            Self::RunEvent => "run-event.json",
            Self::RunEventPayloads => "run-event-payloads.json",
            Self::PollResponse => "poll-response.json",
            Self::RunSnapshot => "run-snapshot.json",
            Self::OpenWopError => "openwop-error.json",
            Self::CreateRunRequest => "create-run-request.json",
            Self::CreateRunResponse => "create-run-response.json",
            Self::CancelRunResponse => "cancel-run-response.json",
            Self::Discovery => "discovery.json",
            Self::HostEvent => "host-event.json",
            Self::HeartbeatEvaluated => "heartbeat-evaluated.json",
            Self::HeartbeatStateChanged => "heartbeat-state-changed.json",
        }
    }

    /// The name case files use for it: the file name without `.json`.
    pub fn name(self) -> &'static str {
        self.file_name().trim_end_matches(".json")
    }

    /// Looks a schema up by [`Published::name`].
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The committed file's text (embedded at compile time).
    pub fn committed_text(self) -> &'static str {
        match self {
            Self::ExecutionRequest => include_str!("../schema/execution-request.json"),
            Self::ExecutionEvent => include_str!("../schema/execution-event.json"),
            Self::ExecutionError => include_str!("../schema/execution-error.json"),
            Self::ExecutionSubmission => include_str!("../schema/execution-submission.json"),
            Self::ExecutionSnapshot => include_str!("../schema/execution-snapshot.json"),
            Self::ExecutionResult => include_str!("../schema/execution-result.json"),
            Self::RuntimeInfo => include_str!("../schema/runtime-info.json"),
            Self::ProviderManifests => include_str!("../schema/provider-manifests.json"),
            Self::RunEvent => include_str!("../schema/run-event.json"),
            Self::RunEventPayloads => include_str!("../schema/run-event-payloads.json"),
            Self::PollResponse => include_str!("../schema/poll-response.json"),
            Self::RunSnapshot => include_str!("../schema/run-snapshot.json"),
            Self::OpenWopError => include_str!("../schema/openwop-error.json"),
            Self::CreateRunRequest => include_str!("../schema/create-run-request.json"),
            Self::CreateRunResponse => include_str!("../schema/create-run-response.json"),
            Self::CancelRunResponse => include_str!("../schema/cancel-run-response.json"),
            Self::Discovery => include_str!("../schema/discovery.json"),
            Self::HostEvent => include_str!("../schema/host-event.json"),
            Self::HeartbeatEvaluated => include_str!("../schema/heartbeat-evaluated.json"),
            Self::HeartbeatStateChanged => include_str!("../schema/heartbeat-state-changed.json"),
        }
    }

    /// Generates the schema from the types.
    pub fn generate(self) -> Value {
        let schema = match self {
            Self::ExecutionRequest => root::<ExecutionRequest>(),
            Self::ExecutionEvent => execution_event_schema(),
            Self::ExecutionError => root::<ExecutionErrorEnvelope>(),
            Self::ExecutionSubmission => root::<execution::ExecutionSubmission>(),
            Self::ExecutionSnapshot => root::<execution::ExecutionSnapshot>(),
            Self::ExecutionResult => root::<execution::ExecutionResult>(),
            Self::RuntimeInfo => root::<execution::RuntimeInfo>(),
            Self::ProviderManifests => root::<execution::ProviderManifests>(),
            Self::RunEvent => run_event_schema(),
            Self::RunEventPayloads => run_event_payloads_schema(),
            Self::PollResponse => poll_response_schema(),
            Self::RunSnapshot => root::<openwop::RunSnapshot>(),
            Self::OpenWopError => root::<openwop::ErrorEnvelope>(),
            Self::CreateRunRequest => root::<openwop::CreateRunRequest>(),
            Self::CreateRunResponse => root::<openwop::CreateRunResponse>(),
            Self::CancelRunResponse => root::<openwop::CancelRunResponse>(),
            Self::Discovery => discovery_schema(),
            Self::HostEvent => root::<openwop::HostEvent>(),
            Self::HeartbeatEvaluated => root::<openwop::HeartbeatEvaluated>(),
            Self::HeartbeatStateChanged => root::<openwop::HeartbeatStateChanged>(),
        };
        let mut schema = with_id(self, schema);
        crate::overlay::apply(self, &mut schema);
        schema
    }
}

/// One generated schema and the file it belongs in.
#[derive(Debug, Clone, PartialEq)]
pub struct GeneratedSchema {
    /// The file name under `spec/schema/`.
    pub file_name: &'static str,
    /// The schema.
    pub schema: Value,
}

impl GeneratedSchema {
    /// The exact file text: pretty JSON with a trailing newline.
    pub fn file_text(&self) -> String {
        to_file_text(&self.schema)
    }
}

/// Renders a schema as the committed files are written: two-space pretty JSON plus a newline.
pub fn to_file_text(schema: &Value) -> String {
    let mut text = serde_json::to_string_pretty(schema).expect("a JSON value always serialises");
    text.push('\n');
    text
}

/// Every schema this crate publishes, generated from the types.
pub fn generate_all() -> Vec<GeneratedSchema> {
    Published::ALL
        .into_iter()
        .map(|p| GeneratedSchema {
            file_name: p.file_name(),
            schema: p.generate(),
        })
        .collect()
}

/// Why a document does not validate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaViolation {
    /// JSON pointer into the instance.
    pub instance_path: String,
    /// JSON pointer into the schema (the keyword that failed).
    pub schema_path: String,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for SchemaViolation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = if self.instance_path.is_empty() {
            "/"
        } else {
            &self.instance_path
        };
        write!(f, "at `{at}`: {}", self.message)
    }
}

/// The compiled validator of a committed schema (formats are asserted).
pub fn validator(published: Published) -> &'static jsonschema::Validator {
    static VALIDATORS: LazyLock<BTreeMap<Published, jsonschema::Validator>> = LazyLock::new(|| {
        Published::ALL
            .into_iter()
            .map(|p| {
                let schema: Value = serde_json::from_str(p.committed_text())
                    .unwrap_or_else(|e| panic!("spec/schema/{} is valid JSON: {e}", p.file_name()));
                (
                    p,
                    compile(&schema)
                        .unwrap_or_else(|e| panic!("spec/schema/{} compiles: {e}", p.file_name())),
                )
            })
            .collect()
    });
    &VALIDATORS[&published]
}

/// Compiles every committed schema's validators now (they are otherwise compiled on first
/// use). Compiling them takes seconds in a debug build: a caller on an async runtime runs this
/// on a blocking thread before work whose timing matters, so no worker thread (nor one waiting
/// for the same lazy compile) stalls the tasks it shares the runtime with.
pub fn warm() {
    let _ = validator(Published::ALL[0]);
    let _ = definition_validator(Published::ALL[0], "");
}

/// Compiles any draft 2020-12 schema with format assertion on and no remote resolution.
pub fn compile(schema: &Value) -> Result<jsonschema::Validator, String> {
    jsonschema::draft202012::options()
        .should_validate_formats(true)
        .build(schema)
        .map_err(|e| e.to_string())
}

/// Validates `instance` against a committed schema; every violation is reported.
pub fn validate(published: Published, instance: &Value) -> Result<(), Vec<SchemaViolation>> {
    violations_of(validator(published), instance)
}

/// Validates against any compiled validator; every violation is reported.
pub fn violations_of(
    validator: &jsonschema::Validator,
    instance: &Value,
) -> Result<(), Vec<SchemaViolation>> {
    let violations: Vec<SchemaViolation> = validator
        .iter_errors(instance)
        .map(|e| SchemaViolation {
            instance_path: e.instance_path().to_string(),
            schema_path: e.schema_path().to_string(),
            message: e.to_string(),
        })
        .collect();
    if violations.is_empty() {
        Ok(())
    } else {
        Err(violations)
    }
}

/// Validates a run event's payload against the definition `_typeIndex` names for its type.
/// Vendor and unregistered types have no definition: `Ok(false)` says nothing was checked.
pub fn validate_run_event_payload(
    event_type: &str,
    payload: &Value,
) -> Result<bool, Vec<SchemaViolation>> {
    let Some(entry) = event_types().get(event_type) else {
        return Ok(false);
    };
    match definition_validator(Published::RunEventPayloads, &entry.payload_def) {
        Some(validator) => violations_of(validator, payload).map(|()| true),
        None => Ok(false),
    }
}

/// Validates `instance` against one `$defs` entry of a committed schema (`def` as named in its
/// `$defs`). `Ok(false)` says the schema has no such definition, so nothing was checked.
pub fn validate_definition(
    published: Published,
    def: &str,
    instance: &Value,
) -> Result<bool, Vec<SchemaViolation>> {
    match definition_validator(published, def) {
        Some(validator) => violations_of(validator, instance).map(|()| true),
        None => Ok(false),
    }
}

/// The compiled validator of every `$defs` entry of every committed schema, each resolved
/// inside its own document (so its `$ref`s to sibling definitions hold).
fn definition_validator(published: Published, def: &str) -> Option<&'static jsonschema::Validator> {
    static BY_DEF: LazyLock<BTreeMap<(Published, String), jsonschema::Validator>> =
        LazyLock::new(|| {
            let mut validators = BTreeMap::new();
            for published in Published::ALL {
                let doc: Value =
                    serde_json::from_str(published.committed_text()).unwrap_or_else(|e| {
                        panic!("spec/schema/{} is valid JSON: {e}", published.file_name())
                    });
                let Some(defs) = doc.get("$defs").and_then(Value::as_object) else {
                    continue;
                };
                for name in defs.keys() {
                    let wrapper = json!({
                        "$schema": "https://json-schema.org/draft/2020-12/schema",
                        "$ref": format!("#/$defs/{name}"),
                        "$defs": defs,
                    });
                    let validator = compile(&wrapper).unwrap_or_else(|e| {
                        panic!(
                            "spec/schema/{} $defs/{name} compiles: {e}",
                            published.file_name()
                        )
                    });
                    validators.insert((published, name.clone()), validator);
                }
            }
            validators
        });
    BY_DEF.get(&(published, def.to_string()))
}

fn settings() -> SchemaSettings {
    let mut settings = SchemaSettings::draft2020_12();
    settings.transforms.push(Box::new(OptionalMeansAbsent));
    settings
}

fn root<T: JsonSchema>() -> Value {
    root_schema::<T>()
}

/// Generates the root schema of any type with this crate's conventions (draft 2020-12; an
/// optional member may be absent but is never `null` unless marked `x-nullable`; no Rust
/// number formats). The harness uses it for the case and report schemas.
pub fn root_schema<T: JsonSchema>() -> Value {
    settings()
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

fn with_id(published: Published, mut schema: Value) -> Value {
    if let Value::Object(object) = &mut schema {
        let mut out = Map::new();
        out.insert(
            "$schema".into(),
            json!("https://json-schema.org/draft/2020-12/schema"),
        );
        out.insert(
            "$id".into(),
            json!(format!(
                "https://conformance-harness.invalid/spec/schema/{}",
                published.file_name()
            )),
        );
        for (key, value) in std::mem::take(object) {
            if key != "$schema" {
                out.insert(key, value);
            }
        }
        *object = out;
    }
    schema
}

/// An optional member may be absent but, unless marked `x-nullable`, is never `null` on the
/// wire: strip the `null` branch schemars adds for `Option<T>` from non-required properties.
#[derive(Debug, Clone)]
struct OptionalMeansAbsent;

impl Transform for OptionalMeansAbsent {
    fn transform(&mut self, schema: &mut Schema) {
        if let Some(object) = schema.as_object_mut() {
            strip_optional_nulls(object);
            strip_rust_number_format(object);
        }
        schemars::transform::transform_subschemas(self, schema);
    }
}

/// Removes the `format` schemars writes for a Rust number type (`uint32`, `double`, …) from one
/// schema object: not a JSON Schema format, and meaningless to other validators.
pub fn strip_rust_number_format(object: &mut Map<String, Value>) {
    if object
        .get("format")
        .and_then(Value::as_str)
        .is_some_and(is_rust_number_format)
    {
        object.remove("format");
    }
}

/// [`strip_rust_number_format`] over every object of a schema document.
pub fn strip_rust_number_formats(value: &mut Value) {
    match value {
        Value::Object(object) => {
            strip_rust_number_format(object);
            object.values_mut().for_each(strip_rust_number_formats);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_rust_number_formats),
        _ => {}
    }
}

fn is_rust_number_format(format: &str) -> bool {
    matches!(
        format,
        "int8"
            | "int16"
            | "int32"
            | "int64"
            | "uint"
            | "uint8"
            | "uint16"
            | "uint32"
            | "uint64"
            | "float"
            | "double"
    )
}

fn strip_optional_nulls(object: &mut Map<String, Value>) {
    let required: Vec<String> = object
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    let Some(Value::Object(properties)) = object.get_mut("properties") else {
        return;
    };
    for (name, property) in properties.iter_mut() {
        let Value::Object(property) = property else {
            continue;
        };
        if property.remove("x-nullable").is_some() || required.contains(name) {
            continue;
        }
        if let Some(Value::Array(types)) = property.get_mut("type") {
            types.retain(|t| t != "null");
            if types.len() == 1 {
                let only = types.remove(0);
                property.insert("type".into(), only);
            }
        }
        if let Some(Value::Array(branches)) = property.get_mut("anyOf") {
            branches.retain(|b| b.get("type").and_then(Value::as_str) != Some("null"));
            if branches.len() == 1 {
                let Some(Value::Object(only)) = branches.pop() else {
                    continue;
                };
                property.remove("anyOf");
                property.extend(only);
            }
        }
    }
}

/// The execution event schema: each variant of [`EventBody`] as an object (open, as the
/// origin's TypeScript types are) with the runtime-owned envelope (`execution_id`,
/// `sequence` ≥ 1, `time`) and the status its type allows.
fn execution_event_schema() -> Value {
    let mut body = root::<EventBody>();
    let defs = body
        .as_object_mut()
        .and_then(|o| o.remove("$defs"))
        .unwrap_or_else(|| json!({}));
    let variants = body
        .get_mut("oneOf")
        .and_then(Value::as_array_mut)
        .map(std::mem::take)
        .unwrap_or_default();
    let variants: Vec<Value> = variants
        .into_iter()
        .map(|mut variant| {
            let event_type = variant["properties"]["type"]["const"]
                .as_str()
                .map(String::from)
                .unwrap_or_default();
            let statuses: Vec<&str> = ExecutionEventType::from_name(&event_type)
                .map(|t| t.statuses().iter().map(|s| s.as_str()).collect())
                .unwrap_or_default();
            let object = variant
                .as_object_mut()
                .expect("variant schema is an object");
            let properties = object.entry("properties").or_insert_with(|| json!({}));
            let mut envelope = Map::new();
            // The origin's `EventBase`: `execution_id: string`, `sequence: number`,
            // `time: string`; the seed's readings of them are overlays (`crate::overlay`).
            envelope.insert("execution_id".into(), json!({"type": "string"}));
            envelope.insert("sequence".into(), json!({"type": "number"}));
            envelope.insert("time".into(), json!({"type": "string"}));
            if let Value::Object(props) = properties {
                envelope.extend(std::mem::take(props));
                envelope.insert("status".into(), json!({"enum": statuses}));
                *props = envelope;
            }
            let mut required: Vec<Value> = ["execution_id", "sequence", "time", "type", "status"]
                .iter()
                .map(|s| json!(s))
                .collect();
            if let Some(Value::Array(existing)) = object.get("required") {
                for name in existing {
                    if !required.contains(name) {
                        required.push(name.clone());
                    }
                }
            }
            object.insert("required".into(), Value::Array(required));
            variant
        })
        .collect();
    json!({
        "title": "ExecutionEvent",
        "description": "One event of an execution's log. Only the runtime assigns execution_id, sequence and time.",
        "oneOf": variants,
        "$defs": defs,
    })
}

/// The `type` member of `RunEventDoc`: a registered protocol type, or the exact vendor branch
/// whose first segment is a registered org. `anyOf` rather than the chapter's `oneOf`, because
/// every registered type also matches the vendor pattern's shape.
fn run_event_type_schema() -> Value {
    let registered: Vec<&str> = event_types()
        .types
        .iter()
        .map(|t| t.name.as_str())
        .collect();
    // The org registry check the seed demands on the vendor branch is an overlay
    // (`crate::overlay`): here the branch is the chapter's vendor pattern only.
    json!({
        "anyOf": [
            {"title": "registered protocol type", "enum": registered},
            {"title": crate::overlay::VENDOR_TYPE_BRANCH_TITLE, "type": "string", "pattern": orgs().vendor_type_pattern}
        ]
    })
}

fn run_event_schema() -> Value {
    let mut schema = root::<openwop::RunEventDoc>();
    schema["properties"]["type"] = run_event_type_schema();
    schema["description"] = json!(
        "The closed run event envelope. The payload validates against the run-event-payloads.json definition that _typeIndex names for the type."
    );
    schema
}

/// The discovery document, with the capability record every family member `$ref`s.
fn discovery_schema() -> Value {
    let mut schema = root::<openwop::Discovery>();
    let mut record = root::<openwop::CapabilityRecord>();
    let record_defs = record
        .as_object_mut()
        .and_then(|o| {
            o.remove("$schema");
            o.remove("$defs")
        })
        .and_then(|d| d.as_object().cloned())
        .unwrap_or_default();
    if let Some(defs) = schema
        .as_object_mut()
        .map(|o| o.entry("$defs").or_insert_with(|| json!({})))
        .and_then(Value::as_object_mut)
    {
        defs.extend(record_defs);
        defs.extend(openwop::family_records(&record));
        defs.insert("CapabilityRecord".into(), record);
    }
    schema
}

fn poll_response_schema() -> Value {
    let mut schema = root::<openwop::PollResponse>();
    if let Some(defs) = schema.get_mut("$defs").and_then(Value::as_object_mut) {
        let mut event = run_event_schema();
        if let Some(event) = event.as_object_mut() {
            event.remove("$schema");
            event.remove("$id");
        }
        defs.insert("RunEventDoc".into(), event);
    }
    schema
}

fn run_event_payloads_schema() -> Value {
    let mut generator: SchemaGenerator = settings().into_generator();
    let mut defs = Map::new();
    for (name, closure, generate) in payloads::definitions() {
        let mut def = generate(&mut generator);
        OptionalMeansAbsent.transform(&mut def);
        let mut def = def.to_value();
        if let Value::Object(object) = &mut def {
            match closure {
                payloads::Closure::Closed => {
                    object.insert("additionalProperties".into(), json!(false));
                }
                payloads::Closure::ClosedWithHatch => {
                    object.insert("additionalProperties".into(), json!(false));
                    object.insert(
                        "patternProperties".into(),
                        json!({ payloads::EXTENSION_HATCH_PATTERN: {} }),
                    );
                }
                payloads::Closure::Open => {
                    object.insert("additionalProperties".into(), json!(true));
                }
                payloads::Closure::Tolerant => {
                    object.insert(
                        "$comment".into(),
                        json!("Upstream contradicts itself about this def's members (spec/upstream/deviations.json): every member upstream names is stated, others are tolerated."),
                    );
                }
            }
        }
        defs.insert(name.to_string(), def);
    }
    for (name, target) in payloads::ALIASES {
        defs.insert(
            (*name).to_string(),
            json!({ "$ref": format!("#/$defs/{target}") }),
        );
    }
    // Every id grammar a payload def of upstream references is published, including those no
    // transcribed def uses yet (so the grammar itself is compared with ids.schema.json).
    generator.subschema_for::<openwop::ids::AgentId>();
    generator.subschema_for::<openwop::ids::EffectId>();
    for (name, def) in generator.take_definitions(true) {
        defs.entry(name).or_insert(def);
    }
    let type_index: Map<String, Value> = event_types()
        .types
        .iter()
        .map(|t| (t.name.clone(), json!(t.payload_def)))
        .collect();
    json!({
        "title": "RunEventPayloads",
        "description": "One $defs entry per payload, named as upstream run-event-payloads.schema.json @ 446c2f2c names it. _typeIndex is the normative map from v2 type to $defs key (118 types), generated from spec/registry/event-types.json.",
        "_typeIndex": type_index,
        "type": "object",
        "additionalProperties": false,
        "$defs": defs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_type_index_entry_names_a_definition() {
        let doc = Published::RunEventPayloads.generate();
        let defs = doc["$defs"].as_object().unwrap();
        for (event_type, def) in doc["_typeIndex"].as_object().unwrap() {
            assert!(
                defs.contains_key(def.as_str().unwrap()),
                "{event_type} -> {def}"
            );
        }
    }

    #[test]
    fn optional_members_are_never_null() {
        let schema = Published::ExecutionRequest.generate();
        assert_eq!(schema["properties"]["deadline_ms"]["type"], "integer");
        let request =
            json!({"ability": "a", "input": [{"type": "text", "text": ""}], "deadline_ms": null});
        assert!(compile(&schema).unwrap().validate(&request).is_err());
    }
}
