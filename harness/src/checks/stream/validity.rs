//! `events_valid`: every event (and snapshot) validates against the published schemas.

use spec::registry::{TypeNameVerdict, orgs};
use spec::schema::{Published, validate, validate_run_event_payload};

use crate::case::CaseSurface;
use crate::checks::context::Outcome;
use crate::checks::events::Framing;
use crate::checks::response::preview;
use crate::transcript::StepRecord;
use crate::verdict::CheckOutcome;

/// Every event validates: envelope schema, registered or vendor type, payload definition;
/// every `state.snapshot` frame validates as a run snapshot.
pub(in crate::checks) fn events_valid(out: &Outcome<'_>, step: &StepRecord) -> CheckOutcome {
    let (_, observed) = observed!(out, step);
    let mut problems = Vec::new();
    for (index, data) in &observed.unparsable {
        problems.push(format!(
            "frame {index}: data is not JSON: {}",
            preview(data)
        ));
    }
    for event in &observed.events {
        let at = event.label();
        match out.ctx.surface {
            CaseSurface::Execution => {
                if let Err(v) = validate(Published::ExecutionEvent, &event.doc) {
                    problems.push(format!(
                        "{at}: {}",
                        v.iter()
                            .take(3)
                            .map(ToString::to_string)
                            .collect::<Vec<_>>()
                            .join("; ")
                    ));
                }
            }
            CaseSurface::Openwop if event.framing == Framing::ChunkPayload => {
                if let Err(v) = validate_run_event_payload("output.chunk", &event.doc) {
                    problems.push(format!(
                        "{at} ({} frame): {}",
                        event.frame_event.as_deref().unwrap_or("ai.message.chunk"),
                        v.iter()
                            .take(3)
                            .map(ToString::to_string)
                            .collect::<Vec<_>>()
                            .join("; ")
                    ));
                }
            }
            CaseSurface::Openwop => {
                if let Err(v) = validate(Published::RunEvent, &event.doc) {
                    problems.push(format!(
                        "{at}: {}",
                        v.iter()
                            .take(3)
                            .map(ToString::to_string)
                            .collect::<Vec<_>>()
                            .join("; ")
                    ));
                    continue;
                }
                let kind = event.event_type.as_deref().unwrap_or_default();
                if orgs().classify_type(kind) == TypeNameVerdict::Registered
                    && let Err(v) = validate_run_event_payload(kind, &event.doc["payload"])
                {
                    problems.push(format!(
                        "{at} ({kind}) payload: {}",
                        v.iter()
                            .take(3)
                            .map(ToString::to_string)
                            .collect::<Vec<_>>()
                            .join("; ")
                    ));
                }
            }
        }
    }
    for (index, _, snapshot) in &observed.snapshots {
        if let Err(v) = validate(Published::RunSnapshot, snapshot) {
            problems.push(format!(
                "state.snapshot frame {index}: {}",
                v.iter()
                    .take(3)
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; ")
            ));
        }
    }
    if problems.is_empty() {
        out.pass(format!(
            "{} event(s) and {} snapshot(s) validate",
            observed.events.len(),
            observed.snapshots.len()
        ))
    } else {
        out.fail(
            format!("{} invalid event(s) or frame(s)", problems.len()),
            "every event valid against the published schemas",
            problems.join("\n"),
        )
    }
}
