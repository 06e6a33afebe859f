//! Writing run events: the closed `RunEventDoc` is rendered under the log's lock with the
//! sequence and time the [`LogHub`] assigns, and the terminal rule is applied at append.

use std::sync::Arc;

use serde_json::Value;
use spec::openwop::{RunEventDoc, SCHEMA_VERSION};
use spec::registry::{AfterTerminal, event_types};

use super::event_draft::EventDraft;
use crate::known_bad::{KnownBad, RunRecordRewrites};
use crate::log::{AppendError, AppendKind, LogHub};

use crate::openwop::infra::choices::{EnvelopeFields, EventIdForm, OpenWopChoices};

/// A run event's wire JSON: the document as serialised, with `timestamp` written as
/// `wire_time` when the host writes times in another offset (`[server] timestamp_offset_minutes`).
pub(crate) fn wire_json(doc: &RunEventDoc, wire_time: Option<String>) -> String {
    match wire_time {
        Some(wire_time) => match serde_json::to_value(doc) {
            Ok(mut wire) => {
                wire["timestamp"] = Value::String(wire_time);
                wire.to_string()
            }
            Err(_) => String::new(),
        },
        None => serde_json::to_string(doc).unwrap_or_default(),
    }
}

/// How the terminal rule treats a type: terminal run events close the log; `compensation.*`,
/// `run.dead-lettered` and vendor types may follow the terminal event; everything else is
/// forward execution, refused (and logged by the hub) once the log is terminal.
pub(crate) fn append_kind(event_type: &str) -> AppendKind {
    match event_types().get(event_type) {
        Some(entry) if entry.terminal => AppendKind::Terminal,
        Some(entry) if entry.after_terminal == AfterTerminal::Allowed => AppendKind::AfterTerminal,
        Some(_) => AppendKind::Forward,
        None => AppendKind::AfterTerminal,
    }
}

/// Appends events to one run's log.
#[derive(Clone)]
pub(crate) struct Recorder {
    hub: Arc<LogHub>,
    run_id: Arc<str>,
    /// A known-bad runtime's record layer (shared by the recorder's clones, since it may hold
    /// events back); `None` in a clean one.
    rewrites: Option<Arc<RunRecordRewrites>>,
    event_id_form: EventIdForm,
    envelope_fields: EnvelopeFields,
}

/// The `engineVersion` of a host that stamps it ([`EnvelopeFields::WithEngineVersion`]).
const ENGINE_VERSION: u64 = 1;

impl Recorder {
    pub(crate) fn new(
        hub: Arc<LogHub>,
        run_id: &str,
        defects: &KnownBad,
        choices: &OpenWopChoices,
    ) -> Self {
        Recorder {
            hub,
            run_id: Arc::from(run_id),
            rewrites: defects.record_rewrites().map(Arc::new),
            event_id_form: choices.event_id_form,
            envelope_fields: choices.envelope_fields,
        }
    }

    /// The run.
    pub(crate) fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Appends one event with the kind [`append_kind`] gives its type.
    pub(crate) fn record(
        &self,
        event_type: &str,
        node_id: Option<&str>,
        payload: Value,
    ) -> Result<(), AppendError> {
        self.append(event_type, node_id, payload, append_kind(event_type), None)
    }

    /// Appends one event caused by an AI envelope: its `causationId` is the envelope's
    /// `correlationId` (E2).
    pub(crate) fn record_caused(
        &self,
        event_type: &str,
        node_id: Option<&str>,
        payload: Value,
        causation_id: Option<&str>,
    ) -> Result<(), AppendError> {
        self.append(
            event_type,
            node_id,
            payload,
            append_kind(event_type),
            causation_id,
        )
    }

    fn append(
        &self,
        event_type: &str,
        node_id: Option<&str>,
        payload: Value,
        kind: AppendKind,
        causation_id: Option<&str>,
    ) -> Result<(), AppendError> {
        let draft = EventDraft {
            event_type: event_type.to_string(),
            event_id: self.event_id_form.mint(),
            node_id: node_id.map(str::to_string),
            payload,
            kind,
            causation_id: causation_id.map(str::to_string),
        };
        match &self.rewrites {
            None => self.append_draft(draft),
            Some(rewrites) => rewrites
                .rewrite(draft)
                .into_iter()
                .try_for_each(|draft| self.append_draft(draft)),
        }
    }

    fn append_draft(&self, draft: EventDraft) -> Result<(), AppendError> {
        let engine_version =
            (self.envelope_fields == EnvelopeFields::WithEngineVersion).then_some(ENGINE_VERSION);
        let EventDraft {
            event_type,
            event_id,
            node_id,
            payload,
            kind,
            causation_id,
        } = draft;
        self.hub
            .append(&self.run_id, &event_type, kind, |sequence, time| {
                let doc = RunEventDoc {
                    event_id,
                    run_id: self.run_id.to_string(),
                    event_type: event_type.clone(),
                    payload,
                    timestamp: time,
                    sequence,
                    schema_version: SCHEMA_VERSION,
                    node_id,
                    engine_version,
                    causation_id,
                };
                wire_json(&doc, self.hub.wire_time(time))
            })
            .map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_follow_the_registry() {
        assert_eq!(append_kind("run.completed"), AppendKind::Terminal);
        assert_eq!(append_kind("run.cancelled"), AppendKind::Terminal);
        assert_eq!(append_kind("node.completed"), AppendKind::Forward);
        // A cancelled run's late node.cancelled is refused (the abandon path relies on it).
        assert_eq!(append_kind("node.cancelled"), AppendKind::Forward);
        assert_eq!(append_kind("interrupt.resolved"), AppendKind::Forward);
        assert_eq!(append_kind("run.dead-lettered"), AppendKind::AfterTerminal);
        assert_eq!(
            append_kind("compensation.started"),
            AppendKind::AfterTerminal
        );
        assert_eq!(
            append_kind("example.noise-emitted"),
            AppendKind::AfterTerminal
        );
    }
}
