//! The project's overlay: the one place project-only tightenings are applied to the generated
//! schemas.
//!
//! The types of this crate state what the upstream files state (`spec/upstream/`); where a
//! seed demands more than the file it defers to, the tightening is an [`Overlay`] here, with the
//! seed sentence that justifies it and the fact location (`<source>#<def>/<path>`) of the
//! deviation it produces. Each entry has a matching `overlay` entry in
//! `spec/upstream/deviations.json` (a test checks both ways), so a reader can tell "upstream
//! says" from "we read the seed as".
//!
//! Both surfaces' tightenings live here: surface X's readings of seed 000 and surface W's org
//! registry check on vendor event types (seed 002).

use serde_json::{Value, json};

use crate::execution::{CUSTOM_UNIT_PATTERN, KNOWN_UNITS};
use crate::published::Published;
use crate::registry::orgs;

/// One project-only tightening.
#[derive(Debug, Clone, Copy)]
pub struct Overlay {
    /// The fact location of the deviation it produces (`deviations.json`'s `where`).
    pub location: &'static str,
    /// The seed it rests on (`000`, `002`).
    pub seed: &'static str,
    /// The requirement (`spec/requirements.json`) whose quote is the justifying sentence.
    pub requirement: &'static str,
    /// The seed sentence that justifies it, verbatim.
    pub sentence: &'static str,
    /// What it adds to the schema.
    pub adds: &'static str,
    apply: fn(Published, &mut Value),
}

/// Every overlay entry.
pub const OVERLAYS: [Overlay; 8] = [
    Overlay {
        location: "execution-protocol#UsageFact/properties/unit",
        seed: "000",
        requirement: "exec.usage.custom-unit-namespaced",
        sentence: "Providers may emit a namespaced custom unit",
        adds: "unit ∈ the twelve known units (the origin's KnownUsageUnit) ∪ the namespaced pattern `<org>.<unit>` (the origin types unit as any string)",
        apply: usage_unit,
    },
    Overlay {
        location: "execution-protocol#UsageFact/properties/quantity/minimum",
        seed: "000",
        requirement: "exec.usage.quantity-non-negative",
        sentence: "Quantity must be finite and non-negative",
        adds: "quantity minimum 0 (JSON numbers are finite already)",
        apply: usage_quantity,
    },
    Overlay {
        location: "execution-protocol#RuntimeEvent:usage.reported/properties/facts/minItems",
        seed: "000",
        requirement: "exec.event-types.usage-reported",
        sentence: "usage.reported | One or more usage facts became available",
        adds: "facts minItems 1",
        apply: usage_reported_facts,
    },
    Overlay {
        location: "execution-protocol#EventBase/properties/execution_id/minLength",
        seed: "000",
        requirement: "exec.access.event-stream-by-execution-id",
        sentence: "Status, result, cancellation, and event-stream access use the execution ID",
        adds: "every event's execution_id minLength 1 (the origin types it `string`; an empty id names no execution in a URL)",
        apply: event_execution_id,
    },
    Overlay {
        location: "execution-protocol#ExecutionSubmission/properties/execution_id/minLength",
        seed: "000",
        requirement: "exec.access.status-by-execution-id",
        sentence: "Status, result, cancellation, and event-stream access use the execution ID",
        adds: "the submission's execution_id minLength 1 (the origin types it `string`)",
        apply: submission_execution_id,
    },
    Overlay {
        location: "execution-protocol#EventBase/properties/sequence",
        seed: "000",
        requirement: "exec.events.sequence-monotonic",
        sentence: "Events use an execution-scoped monotonic sequence and timestamp",
        adds: "sequence an integer, minimum 0 (the origin types it `number`; the seed's sequence numbers count events, and the cursor `after` names one)",
        apply: event_sequence,
    },
    Overlay {
        location: "execution-protocol#EventBase/properties/time/format",
        seed: "000",
        requirement: "exec.events.timestamp",
        sentence: "Events use an execution-scoped monotonic sequence and timestamp",
        adds: "time format date-time (the origin types it `string`; the project reads the seed's timestamp as an RFC 3339 date-time, which the origin writes)",
        apply: event_time,
    },
    Overlay {
        location: "run-event##/properties/type",
        seed: "002",
        requirement: "events.types.vendor-org-registered",
        sentence: "A vendor type's first segment MUST be an org registered in the extensions object of spec/v2/declaration.json",
        adds: "the vendor branch of RunEventDoc.type also requires its first segment to be an org of spec/registry/orgs.json (upstream's schema states the shape only)",
        apply: vendor_type_org,
    },
];

/// The title of the vendor branch of `RunEventDoc.type` (the overlay finds the branch by it).
pub(crate) const VENDOR_TYPE_BRANCH_TITLE: &str = "vendor type of a registered org";

/// `text` with every character a regex would read specially escaped.
fn regex_escape(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                vec![c]
            } else {
                vec!['\\', c]
            }
        })
        .collect()
}

/// Applies every overlay entry to a freshly generated schema.
pub fn apply(published: Published, schema: &mut Value) {
    for overlay in &OVERLAYS {
        (overlay.apply)(published, schema);
    }
}

fn usage_fact_def(schema: &mut Value) -> Option<&mut Value> {
    schema.get_mut("$defs")?.get_mut("UsageFact")
}

fn usage_unit(_: Published, schema: &mut Value) {
    if let Some(unit) = usage_fact_def(schema).and_then(|d| d.pointer_mut("/properties/unit")) {
        unit["anyOf"] = json!([
            {"enum": KNOWN_UNITS},
            {"type": "string", "pattern": CUSTOM_UNIT_PATTERN}
        ]);
    }
}

fn usage_quantity(_: Published, schema: &mut Value) {
    if let Some(quantity) =
        usage_fact_def(schema).and_then(|d| d.pointer_mut("/properties/quantity"))
    {
        quantity["minimum"] = json!(0);
    }
}

/// Every branch of the published event schema (one per event type).
fn event_branches(published: Published, schema: &mut Value) -> impl Iterator<Item = &mut Value> {
    let branches = if published == Published::ExecutionEvent {
        schema.get_mut("oneOf").and_then(Value::as_array_mut)
    } else {
        None
    };
    branches.into_iter().flat_map(|b| b.iter_mut())
}

fn event_execution_id(published: Published, schema: &mut Value) {
    for branch in event_branches(published, schema) {
        if let Some(id) = branch.pointer_mut("/properties/execution_id") {
            id["minLength"] = json!(1);
        }
    }
}

fn submission_execution_id(published: Published, schema: &mut Value) {
    if published != Published::ExecutionSubmission {
        return;
    }
    if let Some(id) = schema.pointer_mut("/properties/execution_id") {
        id["minLength"] = json!(1);
    }
}

fn event_sequence(published: Published, schema: &mut Value) {
    for branch in event_branches(published, schema) {
        if let Some(sequence) = branch.pointer_mut("/properties/sequence") {
            *sequence = json!({"type": "integer", "minimum": 0});
        }
    }
}

fn event_time(published: Published, schema: &mut Value) {
    for branch in event_branches(published, schema) {
        if let Some(time) = branch.pointer_mut("/properties/time") {
            time["format"] = json!("date-time");
        }
    }
}

/// Every `RunEventDoc.type` schema a published document carries (the event itself, or the
/// envelope the poll response and the payload registry embed).
fn run_event_type(published: Published, schema: &mut Value) -> Option<&mut Value> {
    match published {
        Published::RunEvent => schema.pointer_mut("/properties/type"),
        Published::PollResponse | Published::RunEventPayloads => {
            schema.pointer_mut("/$defs/RunEventDoc/properties/type")
        }
        _ => None,
    }
}

fn vendor_type_org(published: Published, schema: &mut Value) {
    let Some(branches) = run_event_type(published, schema)
        .and_then(|t| t.get_mut("anyOf"))
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    let registry = orgs();
    let alternatives: Vec<String> = registry
        .registered
        .iter()
        .map(|o| regex_escape(&o.org))
        .collect();
    for branch in branches {
        if branch["title"] != VENDOR_TYPE_BRANCH_TITLE {
            continue;
        }
        if let Some(object) = branch.as_object_mut() {
            let shape = object
                .remove("pattern")
                .unwrap_or_else(|| json!(registry.vendor_type_pattern));
            object.insert(
                "allOf".into(),
                json!([
                    {"pattern": shape},
                    {"pattern": format!("^({})\\.", alternatives.join("|"))}
                ]),
            );
        }
    }
}

fn usage_reported_facts(published: Published, schema: &mut Value) {
    if published != Published::ExecutionEvent {
        return;
    }
    let Some(branches) = schema.get_mut("oneOf").and_then(Value::as_array_mut) else {
        return;
    };
    for branch in branches {
        if branch["properties"]["type"]["const"] == "usage.reported"
            && let Some(facts) = branch.pointer_mut("/properties/facts")
        {
            facts["minItems"] = json!(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_overlay_quotes_the_seed_sentence_of_its_requirement() {
        for overlay in &OVERLAYS {
            let requirement = crate::requirements::registry()
                .get(overlay.requirement)
                .unwrap_or_else(|| {
                    panic!(
                        "{}: no requirement `{}`",
                        overlay.location, overlay.requirement
                    )
                });
            assert!(
                crate::requirements::normalise_whitespace(&requirement.quote)
                    .contains(&crate::requirements::normalise_whitespace(overlay.sentence)),
                "{}: `{}` is not the quote of {}",
                overlay.location,
                overlay.sentence,
                overlay.requirement
            );
        }
    }
}
