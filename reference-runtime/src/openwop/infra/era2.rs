//! Era-2 logs (`eventLogSchemaVersion: 2`, written by a v1 host) and the test seam that seeds
//! one.
//!
//! **The reader rule.** Every reader of a run (snapshot, poll, every stream mode) reads its log
//! through [`translate`]: each row's v1 `type` is mapped through the event-type registry's `v1`
//! column (a type with no recorded rename maps to itself), a vendor type whose org is registered
//! passes unchanged, and any other type fails the read `500 event_type_unmapped`; the payload is
//! projected onto the v2 definition of the mapped type: a property the definition declares, or
//! one its hatch `^(openwop-|x-|vendor\.)` admits, or any property of an open definition, is
//! carried; any other property fails the read `500 payload_unprojectable` with `details {type,
//! keys, eventId, sequence}` (never dropped), or, under `unprojectable_property =
//! "carried-under-hatch"` ([`reader`]), is carried renamed `x-<name>` where the definition has
//! the hatch. `sequence`, `eventId`, `timestamp`, `causationId` pass through; rows are never
//! rewritten in place.
//!
//! **The seam** (off unless `[openwop] seams_enabled = true`; then bearer-authenticated, the run
//! owned by the caller's tenant): `POST /conformance/seams/sample/event-log/seed` with the
//! closed body `{eventLogSchemaVersion: 2, status: completed|failed|cancelled|running, events:
//! [{type, sequence, payload, timestamp?, causationId?}] (1–1000), workflowId?}` → `201 {runId}`.
//! Rows are persisted verbatim in v1 vocabulary; `sequence` must run 0, 1, 2, … (the log's own
//! numbering); a terminal `status` must match the log's last event (`running`: no terminal
//! event); nothing may follow the terminal event but what the terminal rule allows;
//! `causationId` must fit the event-id grammar. Off, the path answers 404 `not_found` whatever
//! the credentials.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, LazyLock};

use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use spec::openwop::RunStatus;
use spec::registry::{TypeNameVerdict, event_types, orgs};

use crate::log::AppendKind;
use crate::store::StoredEvent;

use super::choices::UnprojectableProperty;
use super::error::{ApiError, details};
use super::recorder::append_kind;

/// The seams profile this host serves when the seams are mounted.
pub(crate) const SEAMS_PROFILE: &str = "openwop-conformance-seams-v2";

/// The era of logs written by a v1 host.
pub(crate) const ERA_2: u32 = 2;

const HATCH_PREFIXES: [&str; 3] = ["openwop-", "x-", "vendor."];
const MAX_SEEDED_EVENTS: usize = 1000;

/// What a payload definition admits.
struct DefShape {
    properties: BTreeSet<String>,
    open: bool,
    hatch: bool,
}

static DEFS: LazyLock<BTreeMap<String, DefShape>> = LazyLock::new(|| {
    let doc: Value =
        serde_json::from_str(spec::schema::Published::RunEventPayloads.committed_text())
            .unwrap_or(Value::Null);
    doc["$defs"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(name, def)| {
            let shape = DefShape {
                properties: def["properties"]
                    .as_object()
                    .map(|p| p.keys().cloned().collect())
                    .unwrap_or_default(),
                open: def.get("additionalProperties") != Some(&Value::Bool(false)),
                hatch: def["patternProperties"]
                    .as_object()
                    .is_some_and(|p| p.keys().any(|k| k.contains("openwop-"))),
            };
            (name.clone(), shape)
        })
        .collect()
});

/// The v2 type of an era-2 row, or `None` when it is unmapped.
pub(crate) fn v2_type(v1: &str) -> Option<String> {
    if let Some(entry) = event_types().translate_v1(v1) {
        return Some(entry.name.clone());
    }
    (orgs().classify_type(v1) == TypeNameVerdict::Vendor).then(|| v1.to_string())
}

/// The shape of the v2 payload definition of the type `v2`, when it has one.
fn def_of(v2: &str) -> Option<&'static DefShape> {
    event_types()
        .get(v2)
        .and_then(|entry| DEFS.get(&entry.payload_def))
}

/// The properties of `payload` the v2 definition of `v2` cannot carry.
pub(crate) fn unprojectable(v2: &str, payload: &Value) -> Vec<String> {
    let Some(def) = def_of(v2) else {
        return Vec::new();
    };
    match payload.as_object() {
        None => vec!["(payload is not an object)".to_string()],
        Some(_) if def.open => Vec::new(),
        Some(object) => object
            .keys()
            .filter(|k| {
                let hatched = def.hatch && HATCH_PREFIXES.iter().any(|h| k.starts_with(h));
                !(def.properties.contains(k.as_str()) || hatched)
            })
            .cloned()
            .collect(),
    }
}

/// How a host reads an era-2 log: [`reader`]'s choice of [`translate`] or
/// [`translate_carrying`]; a known-bad host's composition root may hand its state another
/// reader (`known_bad/era2_reading.rs`).
pub(crate) type Era2Reader = fn(Vec<StoredEvent>) -> Result<Vec<StoredEvent>, ApiError>;

/// The reader rule as the host's `unprojectable_property` choice reads it.
pub(crate) fn reader(choice: UnprojectableProperty) -> Era2Reader {
    match choice {
        UnprojectableProperty::Fails => translate,
        UnprojectableProperty::CarriedUnderHatch => translate_carrying,
    }
}

/// Reads an era-2 log through the codemap, failing on an unprojectable property (see the module
/// documentation).
pub(crate) fn translate(events: Vec<StoredEvent>) -> Result<Vec<StoredEvent>, ApiError> {
    translate_with(events, UnprojectableProperty::Fails)
}

/// Reads an era-2 log through the codemap, carrying an unprojectable property under the hatch
/// where its definition has one (see the module documentation).
pub(crate) fn translate_carrying(events: Vec<StoredEvent>) -> Result<Vec<StoredEvent>, ApiError> {
    translate_with(events, UnprojectableProperty::CarriedUnderHatch)
}

/// The name an unprojectable property is carried under: the hatch's `x-` prefix.
fn hatched_name(key: &str) -> String {
    format!("x-{key}")
}

/// Moves each of `keys` of `payload` to its hatched name, when the definition of `v2` has the
/// hatch and no such name is taken; `false` (and `payload` untouched) otherwise.
fn carry_under_hatch(v2: &str, payload: &mut Value, keys: &[String]) -> bool {
    let has_hatch = def_of(v2).is_some_and(|def| def.hatch);
    let Some(object) = payload.as_object_mut().filter(|_| has_hatch) else {
        return false;
    };
    if keys
        .iter()
        .any(|key| object.contains_key(&hatched_name(key)))
    {
        return false;
    }
    for key in keys {
        if let Some(value) = object.remove(key) {
            object.insert(hatched_name(key), value);
        }
    }
    true
}

fn translate_with(
    events: Vec<StoredEvent>,
    unprojectable_property: UnprojectableProperty,
) -> Result<Vec<StoredEvent>, ApiError> {
    events
        .into_iter()
        .map(|event| {
            let mut row: Map<String, Value> = serde_json::from_str(&event.json).map_err(|_| {
                tracing::error!(sequence = event.sequence, "an era-2 row does not parse");
                ApiError::internal()
            })?;
            let identity = |row: &Map<String, Value>, type_name: &str| {
                details([
                    ("type", json!(type_name)),
                    (
                        "eventId",
                        row.get("eventId").cloned().unwrap_or(Value::Null),
                    ),
                    ("sequence", json!(event.sequence)),
                ])
            };
            let Some(v2) = v2_type(&event.event_type) else {
                return Err(ApiError::new(
                    "event_type_unmapped",
                    "an era-2 event's type is neither in the codemap nor a registered vendor type",
                )
                .with_details(identity(&row, &event.event_type)));
            };
            let keys = unprojectable(&v2, row.get("payload").unwrap_or(&Value::Null));
            let carried = !keys.is_empty()
                && unprojectable_property == UnprojectableProperty::CarriedUnderHatch
                && row
                    .get_mut("payload")
                    .is_some_and(|payload| carry_under_hatch(&v2, payload, &keys));
            if !keys.is_empty() && !carried {
                let mut found = identity(&row, &v2);
                found.insert("keys".into(), json!(keys));
                return Err(ApiError::new(
                    "payload_unprojectable",
                    "an era-2 payload property has no place in the v2 payload",
                )
                .with_details(found));
            }
            row.insert("type".into(), json!(v2));
            Ok(StoredEvent {
                event_type: Arc::from(v2.as_str()),
                json: Arc::from(Value::Object(row).to_string()),
                ..event
            })
        })
        .collect()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct SeedRequest {
    event_log_schema_version: u32,
    status: String,
    pub(crate) events: Vec<SeedEvent>,
    #[serde(default)]
    pub(crate) workflow_id: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct SeedEvent {
    #[serde(rename = "type")]
    pub(crate) event_type: String,
    sequence: u64,
    pub(crate) payload: Value,
    #[serde(default)]
    pub(crate) timestamp: Option<DateTime<Utc>>,
    #[serde(default)]
    pub(crate) causation_id: Option<String>,
}

fn is_event_id(value: &str) -> bool {
    (16..=128).contains(&value.len())
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._~-".contains(&b))
}

/// The append kind of a seeded row (by its v2 type; an unmapped type is forward execution).
pub(crate) fn seeded_kind(v1: &str) -> AppendKind {
    v2_type(v1).map_or(AppendKind::Forward, |v2| append_kind(&v2))
}

/// Checks a seed request; returns the terminal status it declares (`None` for `running`).
pub(crate) fn check_seed(request: &SeedRequest) -> Result<Option<RunStatus>, ApiError> {
    if request.event_log_schema_version != ERA_2 {
        return Err(ApiError::validation("eventLogSchemaVersion must be 2"));
    }
    if request.events.is_empty() || request.events.len() > MAX_SEEDED_EVENTS {
        return Err(ApiError::validation("events must hold 1..=1000 rows"));
    }
    let status = match request.status.as_str() {
        "completed" => Some(RunStatus::Completed),
        "failed" => Some(RunStatus::Failed),
        "cancelled" => Some(RunStatus::Cancelled),
        "running" => None,
        _ => {
            return Err(ApiError::validation(
                "status must be completed, failed, cancelled or running",
            ));
        }
    };
    let mut terminal_at = None;
    for (i, event) in request.events.iter().enumerate() {
        if event.sequence != i as u64 {
            return Err(ApiError::validation(
                "events[].sequence must run 0, 1, 2, … in order",
            ));
        }
        if event
            .causation_id
            .as_deref()
            .is_some_and(|c| !is_event_id(c))
        {
            return Err(ApiError::validation(
                "events[].causationId must match ^[A-Za-z0-9._~-]{16,128}$",
            ));
        }
        match (seeded_kind(&event.event_type), terminal_at) {
            (AppendKind::Terminal, None) => terminal_at = Some(i),
            (AppendKind::AfterTerminal, _) | (_, None) => {}
            (_, Some(_)) => {
                return Err(ApiError::validation(
                    "the seeded log has an event the terminal rule forbids after the terminal event",
                ));
            }
        }
    }
    let terminal_type = terminal_at.and_then(|i| v2_type(&request.events[i].event_type));
    let expected = status.map(|s| format!("run.{}", s.as_str()));
    if terminal_type != expected {
        return Err(ApiError::validation(
            "status must match the log's terminal event (running: none)",
        ));
    }
    Ok(status)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn stored(sequence: u64, event_type: &str, payload: Value) -> StoredEvent {
        let json = json!({"eventId": "evt-0000000000000000", "runId": "t/run-0000000000000000",
            "type": event_type, "payload": payload, "timestamp": "2026-01-01T00:00:00Z",
            "sequence": sequence, "schemaVersion": 1});
        StoredEvent {
            sequence,
            time: Utc.timestamp_opt(0, 0).single().unwrap(),
            event_type: Arc::from(event_type),
            terminal: false,
            json: Arc::from(json.to_string()),
        }
    }

    #[test]
    fn rows_are_translated_and_carried_or_refused() {
        let out = translate(vec![
            stored(0, "run.resuming", json!({"fromStatus": "paused"})),
            stored(
                1,
                "envelope.retry.attempted",
                json!({"nodeId": "n", "attempt": 2, "reason": "truncation"}),
            ),
            stored(
                2,
                "run.completed",
                json!({"outputs": {}, "x-trace": "kept"}),
            ),
            stored(3, "example.noted", json!({"free": true})),
        ])
        .unwrap();
        let types: Vec<&str> = out.iter().map(|e| &*e.event_type).collect();
        assert_eq!(
            types,
            [
                "run.resume-started",
                "envelope.retry-attempted",
                "run.completed",
                "example.noted"
            ]
        );
        assert!(out[2].json.contains("x-trace"));
        let refused = translate(vec![stored(
            0,
            "run.completed",
            json!({"outputs": {}, "legacyTotal": 3}),
        )])
        .unwrap_err();
        assert_eq!(refused.code(), "payload_unprojectable");
        // envelope.* defs have no hatch: a hatch key is unprojectable there.
        let no_hatch = translate(vec![stored(
            0,
            "envelope.refusal",
            json!({"nodeId": "n", "provider": "p", "model": "m", "x-a": 1}),
        )]);
        assert_eq!(no_hatch.unwrap_err().code(), "payload_unprojectable");
        let unmapped = translate(vec![stored(0, "acme.thing", json!({}))]).unwrap_err();
        assert_eq!(unmapped.code(), "event_type_unmapped");
    }

    #[test]
    fn carrying_moves_an_unprojectable_property_under_the_hatch_where_the_definition_has_one() {
        let out = translate_carrying(vec![stored(
            0,
            "run.completed",
            json!({"outputs": {}, "legacyTotal": 3}),
        )])
        .unwrap();
        let row: Value = serde_json::from_str(&out[0].json).unwrap();
        assert_eq!(row["payload"], json!({"outputs": {}, "x-legacyTotal": 3}));
        // No hatch (envelope.*), or the hatched name taken: the read still fails.
        let no_hatch = translate_carrying(vec![stored(
            0,
            "envelope.refusal",
            json!({"nodeId": "n", "provider": "p", "model": "m", "legacy": 1}),
        )]);
        assert_eq!(no_hatch.unwrap_err().code(), "payload_unprojectable");
        let taken = translate_carrying(vec![stored(
            0,
            "run.completed",
            json!({"outputs": {}, "legacyTotal": 3, "x-legacyTotal": 4}),
        )]);
        assert_eq!(taken.unwrap_err().code(), "payload_unprojectable");
    }
}
