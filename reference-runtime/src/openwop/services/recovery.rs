//! What a starting host does with the runs a previous process left unfinished in a durable
//! store: each one ends `run.failed`, appended after the last stored event (never a
//! renumbering), and is never run again.
//!
//! The rule (ARCHITECTURE.md, "Restarts"): this host keeps a run's continuation (the engine
//! task, the mock or provider plan of `configurable`, an open interrupt's resume channel) in
//! process memory; only the log is durable. A run found non-terminal at start can therefore not
//! go on: its node may have been half done (a provider called, output streamed) and nothing
//! could finish it. Ending it `run.failed` with `internal_error`, `retryable: false` and
//! `details.reason = "host-restarted"` is the chapter's terminal rule applied honestly: exactly
//! one terminal event, after everything already served. This includes a run suspended at an
//! approval gate: its log says it waits for a decision, but a resolution would find no task to
//! resume (`interrupt_not_found`), so leaving it `waiting-approval` would keep it open forever;
//! a host that persisted its continuation could rightly keep such a run suspended and
//! resumable. Logs the era-2 seam seeded (`eventLogSchemaVersion` set) are samples no engine
//! ran: they are left as seeded.

use std::sync::Arc;

use serde_json::{Map, Value, json};
use spec::openwop::payloads::{ErrorObject, RunFailed};

use crate::known_bad::KnownBad;
use crate::log::LogHub;
use crate::openwop::infra::choices::OpenWopChoices;
use crate::store::{StoreError, Surface};

use crate::openwop::infra::projection::{RUN_META_KIND, RunMeta, parse_event};
use crate::openwop::infra::recorder::Recorder;

/// The `run.failed` error code of a run a restart interrupted.
pub const INTERRUPTED_RUN_CODE: &str = "internal_error";
/// Its `details.reason`.
pub const INTERRUPTED_RUN_REASON: &str = "host-restarted";

/// Ends every run a previous process left non-terminal (see the module documentation).
/// Returns how many were ended; a log whose append fails is logged and skipped.
pub fn recover_runs(
    hub: &Arc<LogHub>,
    defects: &Arc<KnownBad>,
    choices: &OpenWopChoices,
) -> Result<usize, StoreError> {
    let mut ended = 0;
    for record in hub.store().logs(Surface::Run)? {
        if record.terminal {
            continue;
        }
        let Ok(meta) = serde_json::from_value::<RunMeta>(record.meta.clone()) else {
            continue;
        };
        if meta.kind != RUN_META_KIND || meta.event_log_schema_version.is_some() {
            continue;
        }
        let events = hub.read_after(&record.id, None)?;
        let payload = RunFailed {
            error: ErrorObject {
                code: INTERRUPTED_RUN_CODE.into(),
                message: "Run outcome unknown: the host restarted while the run was unfinished"
                    .into(),
                details: Some(Map::from_iter([(
                    "reason".to_string(),
                    Value::from(INTERRUPTED_RUN_REASON),
                )])),
                retryable: Some(false),
            },
            failed_node_id: unfinished_node(&events),
            duration_ms: None,
        };
        let recorder = Recorder::new(Arc::clone(hub), &record.id, defects, choices);
        match recorder.record("run.failed", None, json!(payload)) {
            Ok(_) => ended += 1,
            Err(error) => {
                tracing::error!(run_id = %record.id, %error, "ending an interrupted run failed")
            }
        }
    }
    Ok(ended)
}

/// The node the run was in when the process stopped: started (or suspended) and neither
/// completed nor failed.
fn unfinished_node(events: &[crate::store::StoredEvent]) -> Option<String> {
    let mut open: Option<String> = None;
    for event in events {
        let Some(doc) = parse_event(&event.json) else {
            continue;
        };
        let node = doc.payload["nodeId"]
            .as_str()
            .map(str::to_string)
            .or(doc.node_id.clone());
        match doc.event_type.as_str() {
            "node.started" | "node.suspended" | "node.resumed" => open = node,
            "node.completed" | "node.failed" | "node.cancelled" if open == node => open = None,
            _ => {}
        }
    }
    open
}
