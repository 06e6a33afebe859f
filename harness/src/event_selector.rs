//! Event selectors, `type` or `type@field=value`: how `order` checks and a stream step's
//! `until.event` name events (the grammar is in `cases/README.md`).

use serde_json::Value;

use crate::checks::events::{ObservedEvent, field};
use crate::checks::json_match::json_equal;

/// A parsed selector: an event type and, optionally, a member that must have a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct EventSelector<'a> {
    /// The event type, exactly.
    event_type: &'a str,
    /// The member name (top level, then `payload`) and the value it must have.
    condition: Option<(&'a str, &'a str)>,
}

impl<'a> EventSelector<'a> {
    /// Reads a selector: the first `@` ends the type, the first `=` after it ends the member
    /// name; the value is the rest. A condition without `=` selects every event of the type.
    pub(crate) fn parse(text: &'a str) -> Self {
        match text.split_once('@') {
            Some((event_type, condition)) => EventSelector {
                event_type,
                condition: condition.split_once('='),
            },
            None => EventSelector {
                event_type: text,
                condition: None,
            },
        }
    }

    /// Whether the event is of the type and, with a condition, has the member with the value:
    /// a string member compared as text, any other compared as JSON (`attempt=1` names the
    /// number 1, `flag=true` the boolean).
    pub(crate) fn matches(&self, event: &ObservedEvent) -> bool {
        if event.event_type.as_deref() != Some(self.event_type) {
            return false;
        }
        match self.condition {
            Some((name, value)) => field(&event.doc, name).is_some_and(|member| match member {
                Value::String(text) => text == value,
                other => serde_json::from_str::<Value>(value)
                    .is_ok_and(|parsed| json_equal(other, &parsed)),
            }),
            None => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::EventSelector;
    use crate::checks::events::ObservedEvent;

    fn event(doc: serde_json::Value) -> ObservedEvent {
        ObservedEvent {
            sequence: doc["sequence"].as_u64(),
            event_type: doc["type"].as_str().map(str::to_string),
            doc,
            frame_index: None,
            frame_id: None,
            frame_event: None,
            batched: false,
            at_ms: None,
            framing: Default::default(),
        }
    }

    #[test]
    fn selects_by_type_then_by_member() {
        let node = event(json!({"type": "node.completed", "payload": {"nodeId": "B", "n": 2}}));
        assert!(EventSelector::parse("node.completed").matches(&node));
        assert!(!EventSelector::parse("node.started").matches(&node));
        // A string member is compared as text, another member as JSON; `payload` is searched.
        assert!(EventSelector::parse("node.completed@nodeId=B").matches(&node));
        assert!(!EventSelector::parse("node.completed@nodeId=C").matches(&node));
        assert!(EventSelector::parse("node.completed@n=2").matches(&node));
        assert!(EventSelector::parse("node.completed@n=2.0").matches(&node));
        assert!(!EventSelector::parse("node.completed@n=two").matches(&node));
        assert!(!EventSelector::parse("node.completed@absent=B").matches(&node));
    }

    #[test]
    fn the_value_runs_to_the_end_of_the_string() {
        let chunk = event(json!({"type": "output.chunk", "chunk": "{\"a\":\"x=y@z"}));
        assert!(EventSelector::parse("output.chunk@chunk={\"a\":\"x=y@z").matches(&chunk));
    }
}
