//! [`EventDraft`]: a run event on its way into the log, before the hub numbers and times it.

use serde_json::Value;

use crate::log::AppendKind;

/// A run event the engine or a service asked to record, not yet numbered: everything of the
/// `RunEventDoc` but its `sequence` and `timestamp` (the log hub assigns them under the log's
/// lock) and the run (the recorder's).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct EventDraft {
    /// The event's `type`.
    pub(crate) event_type: String,
    /// The event's `eventId`.
    pub(crate) event_id: String,
    /// The node the event is about.
    pub(crate) node_id: Option<String>,
    /// The event's `payload`.
    pub(crate) payload: Value,
    /// How the terminal rule treats it.
    pub(crate) kind: AppendKind,
    /// The AI envelope's `correlationId` the event was caused by (E2).
    pub(crate) causation_id: Option<String>,
}

impl EventDraft {
    /// Whether the event is of `event_type`.
    pub(crate) fn is(&self, event_type: &str) -> bool {
        self.event_type == event_type
    }
}
