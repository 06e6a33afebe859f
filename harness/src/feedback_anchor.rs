//! Where a case's annotation is attached, for the cases that annotate a run to judge something
//! other than the target (the signal kinds, tenant isolation, redaction, a terminal run
//! annotated). The chapter: "feedback.targets names the resources an annotation may be attached
//! to", and a host refuses one outside them. Upstream's `annotation-create.schema.json` anchors
//! an annotation to the run by default and finer with `target: {eventId}` or `target: {nodeId}`.
//! The targets a host lists are its choice, so the probe reads one off discovery as the fact
//! [`FEEDBACK_ANCHOR_FACT`] (an operator's fact of the name wins), and those cases send
//! `"target": "${anchor.<step>|absent}"`: no anchor for the run, else the first node or event
//! of the run's log as step `<step>` read it.

use serde_json::{Value, json};

/// The fact naming the kind of resource the cases attach their annotations to: `run`, `node`
/// or `event`.
pub(crate) const FEEDBACK_ANCHOR_FACT: &str = "feedback_anchor";

/// The resources upstream's annotations may be attached to (`feedback.targets` items).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AnchorKind {
    /// The run itself: no `target` member.
    Run,
    /// One node of the run: `target: {nodeId}`.
    Node,
    /// One event of the run's log: `target: {eventId}`.
    Event,
}

impl AnchorKind {
    /// In the order one is chosen: the run needs nothing read from the log.
    const ALL: [AnchorKind; 3] = [AnchorKind::Run, AnchorKind::Node, AnchorKind::Event];

    /// The `feedback.targets` member naming this kind.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            AnchorKind::Run => "run",
            AnchorKind::Node => "node",
            AnchorKind::Event => "event",
        }
    }

    /// The kind a `feedback.targets` member (or the fact) names.
    pub(crate) fn parse(text: &str) -> Option<AnchorKind> {
        AnchorKind::ALL.into_iter().find(|k| k.as_str() == text)
    }

    /// The first kind `feedback` (discovery's record) lists: the run when it lists no
    /// `targets` (an annotation's anchor is optional, and the run is what it defaults to);
    /// none when it lists only other members.
    pub(crate) fn accepted(feedback: &Value) -> Option<AnchorKind> {
        let Some(listed) = feedback.get("targets").and_then(Value::as_array) else {
            return Some(AnchorKind::Run);
        };
        AnchorKind::ALL
            .into_iter()
            .find(|kind| listed.iter().any(|m| m.as_str() == Some(kind.as_str())))
    }

    /// The `target` member of an annotation of this kind, on what a step read of the run's log
    /// (its `events`): `null` for the run (the member is left out), the first event naming a
    /// node for a node, the first event with an id for an event. `Err` says what is missing.
    pub(crate) fn target(self, events: &[Value]) -> Result<Value, String> {
        let first = |member: &str, read: &dyn Fn(&Value) -> Option<Value>| {
            events
                .iter()
                .find_map(read)
                .ok_or_else(|| format!("the log read has no event with {member}"))
        };
        Ok(match self {
            AnchorKind::Run => Value::Null,
            AnchorKind::Node => first("a `payload.nodeId`", &|e| {
                e.pointer("/payload/nodeId")
                    .and_then(Value::as_str)
                    .map(|node| json!({"nodeId": node}))
            })?,
            AnchorKind::Event => first("an `eventId`", &|e| {
                e.get("eventId")
                    .and_then(Value::as_str)
                    .map(|event| json!({"eventId": event}))
            })?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_anchor_is_of_a_kind_the_host_lists() {
        assert_eq!(AnchorKind::accepted(&json!({})), Some(AnchorKind::Run));
        let listed = |targets: Value| AnchorKind::accepted(&json!({ "targets": targets }));
        assert_eq!(
            listed(json!(["event", "node", "run"])),
            Some(AnchorKind::Run)
        );
        assert_eq!(listed(json!(["event", "node"])), Some(AnchorKind::Node));
        assert_eq!(listed(json!(["event"])), Some(AnchorKind::Event));
        assert_eq!(listed(json!(["acme.thread"])), None);
    }

    #[test]
    fn the_target_is_read_from_the_log() {
        let log = [
            json!({"eventId": "e-0", "type": "run.started", "payload": {}}),
            json!({"eventId": "e-1", "type": "node.started", "payload": {"nodeId": "n-1"}}),
        ];
        assert_eq!(AnchorKind::Run.target(&log), Ok(Value::Null));
        assert_eq!(AnchorKind::Node.target(&log), Ok(json!({"nodeId": "n-1"})));
        assert_eq!(
            AnchorKind::Event.target(&log),
            Ok(json!({"eventId": "e-0"}))
        );
        assert!(AnchorKind::Node.target(&log[..1]).is_err());
    }
}
