//! The execution event log: [`ExecutionEvent`] (the runtime-owned envelope) and [`EventBody`]
//! (what happened).
//!
//! On the wire an event is one flat object: `execution_id`, `sequence`, `time`, `type`,
//! `status`, then the fields of its type. Only the runtime assigns `execution_id`, `sequence`
//! (from 1, +1, no gaps) and `time`; provider adapters produce bodies.

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::error::{ErrorCode, PortableError};
use super::usage::UsageFact;

/// The status an event carries, and the status of an execution (the status of its last event).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ExecutionStatus {
    /// The request was accepted.
    Accepted,
    /// The runtime is choosing or changing provider attempts.
    Routing,
    /// A provider attempt is producing output.
    Running,
    /// Terminal: the execution succeeded.
    Succeeded,
    /// Terminal: the execution failed.
    Failed,
    /// Terminal: the execution was cancelled.
    Cancelled,
}

impl ExecutionStatus {
    /// The terminal statuses.
    pub const TERMINAL: [ExecutionStatus; 3] = [Self::Succeeded, Self::Failed, Self::Cancelled];

    /// Whether this status is terminal.
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Succeeded | Self::Failed | Self::Cancelled)
    }

    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Accepted => "accepted",
            Self::Routing => "routing",
            Self::Running => "running",
            Self::Succeeded => "succeeded",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }
}

/// The eleven event types of the execution protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ExecutionEventType {
    /// `execution.accepted`: the runtime accepted the request.
    Accepted,
    /// `route.selected`: the runtime selected one provider/model attempt.
    RouteSelected,
    /// `route.attempt_failed`: a retryable attempt failed before fallback.
    RouteAttemptFailed,
    /// `output.delta`: incremental output data.
    OutputDelta,
    /// `tool.call.started`: a provider began a named tool call.
    ToolCallStarted,
    /// `tool.call.arguments.delta`: partial tool argument JSON or text.
    ToolCallArgumentsDelta,
    /// `execution.progress`: an asynchronous provider reports queued or processing progress.
    Progress,
    /// `output.result`: a normalised asynchronous result and optional artifact references.
    OutputResult,
    /// `usage.reported`: one or more usage facts became available.
    UsageReported,
    /// `execution.completed`: the execution succeeded and is terminal.
    Completed,
    /// `execution.failed`: the execution failed or was cancelled and is terminal.
    Failed,
}

impl ExecutionEventType {
    /// Every type, in the order of the protocol's table.
    pub const ALL: [ExecutionEventType; 11] = [
        Self::Accepted,
        Self::RouteSelected,
        Self::RouteAttemptFailed,
        Self::OutputDelta,
        Self::ToolCallStarted,
        Self::ToolCallArgumentsDelta,
        Self::Progress,
        Self::OutputResult,
        Self::UsageReported,
        Self::Completed,
        Self::Failed,
    ];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Accepted => "execution.accepted",
            Self::RouteSelected => "route.selected",
            Self::RouteAttemptFailed => "route.attempt_failed",
            Self::OutputDelta => "output.delta",
            Self::ToolCallStarted => "tool.call.started",
            Self::ToolCallArgumentsDelta => "tool.call.arguments.delta",
            Self::Progress => "execution.progress",
            Self::OutputResult => "output.result",
            Self::UsageReported => "usage.reported",
            Self::Completed => "execution.completed",
            Self::Failed => "execution.failed",
        }
    }

    /// Parses a wire name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == name)
    }

    /// The statuses an event of this type may carry.
    pub fn statuses(self) -> &'static [ExecutionStatus] {
        use ExecutionStatus as S;
        match self {
            Self::Accepted => &[S::Accepted],
            Self::RouteSelected | Self::RouteAttemptFailed => &[S::Routing],
            Self::OutputDelta
            | Self::ToolCallStarted
            | Self::ToolCallArgumentsDelta
            | Self::Progress
            | Self::OutputResult
            | Self::UsageReported => &[S::Running],
            Self::Completed => &[S::Succeeded],
            Self::Failed => &[S::Failed, S::Cancelled],
        }
    }

    /// Whether this type ends an execution.
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Failed)
    }

    /// Whether an event of this type exposes output to the caller (after which the runtime
    /// must not fall back to another provider).
    pub fn exposes_output(self) -> bool {
        matches!(
            self,
            Self::OutputDelta
                | Self::ToolCallStarted
                | Self::ToolCallArgumentsDelta
                | Self::OutputResult
        )
    }
}

/// A provider and model pair.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub struct Target {
    /// The provider id as configured in the runtime (a `string` at the origin).
    pub provider: String,
    /// The provider's model id (a `string` at the origin).
    pub model: String,
}

/// Async-provider progress phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProgressPhase {
    /// Waiting in the provider's queue.
    Queued,
    /// Being processed.
    Processing,
}

/// A reference to an artifact an asynchronous provider produced (the origin's `OutputArtifact`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Artifact {
    /// Where the artifact can be fetched (a `string` at the origin).
    pub uri: String,
    /// The artifact's media type, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    /// A display name, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// When the artifact stops being fetchable, when the provider says (the origin types it as a
    /// string: `OutputArtifact.expires_at?` of the protocol package).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
}

/// What an event says happened: its `type` and the fields of that type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type")]
pub enum EventBody {
    /// The runtime accepted the request.
    #[serde(rename = "execution.accepted")]
    Accepted {},
    /// The runtime selected one provider/model attempt.
    #[serde(rename = "route.selected")]
    RouteSelected {
        /// The chosen provider and model.
        target: Target,
        /// The attempt number (a `number` at the origin; the runtime counts from 1).
        #[schemars(with = "f64")]
        attempt: u32,
    },
    /// A retryable attempt failed before fallback.
    #[serde(rename = "route.attempt_failed")]
    RouteAttemptFailed {
        /// The provider and model that failed.
        target: Target,
        /// The attempt number (a `number` at the origin; the runtime counts from 1).
        #[schemars(with = "f64")]
        attempt: u32,
        /// Why it failed.
        error: PortableError,
    },
    /// Incremental output data.
    #[serde(rename = "output.delta")]
    OutputDelta {
        /// Which output this delta extends (a `number` at the origin).
        #[schemars(with = "f64")]
        output_index: u32,
        /// The text to append.
        delta: String,
    },
    /// A provider began a named tool call.
    #[serde(rename = "tool.call.started")]
    ToolCallStarted {
        /// The call's id, unique within the execution (a `string` at the origin).
        call_id: String,
        /// The tool's name (a `string` at the origin).
        name: String,
    },
    /// Partial tool argument JSON or text; callers accumulate before parsing.
    #[serde(rename = "tool.call.arguments.delta")]
    ToolCallArgumentsDelta {
        /// The call the fragment belongs to (a `string` at the origin).
        call_id: String,
        /// A fragment of the arguments' JSON text.
        delta: String,
    },
    /// An asynchronous provider reports queued or processing progress.
    #[serde(rename = "execution.progress")]
    Progress {
        /// The phase.
        phase: ProgressPhase,
        /// Provider-reported progress, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        progress: Option<f64>,
    },
    /// A normalised asynchronous result and optional artifact references.
    #[serde(rename = "output.result")]
    OutputResult {
        /// The provider's own result JSON, unchanged.
        result: Value,
        /// Artifacts, listed separately from the result.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        artifacts: Option<Vec<Artifact>>,
    },
    /// One or more usage facts became available.
    #[serde(rename = "usage.reported")]
    UsageReported {
        /// The facts (at least one: `overlay` states it in the schema).
        facts: Vec<UsageFact>,
    },
    /// The execution succeeded and is terminal.
    #[serde(rename = "execution.completed")]
    Completed {
        /// The provider and model that produced the result.
        target: Target,
    },
    /// The execution failed or was cancelled and is terminal.
    #[serde(rename = "execution.failed")]
    Failed {
        /// Why. `code: cancelled` makes the event's status `cancelled`.
        error: PortableError,
    },
}

impl EventBody {
    /// The event type.
    pub fn event_type(&self) -> ExecutionEventType {
        use ExecutionEventType as T;
        match self {
            EventBody::Accepted {} => T::Accepted,
            EventBody::RouteSelected { .. } => T::RouteSelected,
            EventBody::RouteAttemptFailed { .. } => T::RouteAttemptFailed,
            EventBody::OutputDelta { .. } => T::OutputDelta,
            EventBody::ToolCallStarted { .. } => T::ToolCallStarted,
            EventBody::ToolCallArgumentsDelta { .. } => T::ToolCallArgumentsDelta,
            EventBody::Progress { .. } => T::Progress,
            EventBody::OutputResult { .. } => T::OutputResult,
            EventBody::UsageReported { .. } => T::UsageReported,
            EventBody::Completed { .. } => T::Completed,
            EventBody::Failed { .. } => T::Failed,
        }
    }

    /// The status an event with this body carries.
    pub fn status(&self) -> ExecutionStatus {
        match self {
            EventBody::Failed { error } if error.code == ErrorCode::Cancelled => {
                ExecutionStatus::Cancelled
            }
            other => other.event_type().statuses()[0],
        }
    }
}

/// One event of an execution's log, as stored and as sent over SSE.
#[derive(Debug, Clone, PartialEq)]
pub struct ExecutionEvent {
    /// The execution this event belongs to.
    pub execution_id: String,
    /// Position in the log: 1 for the first event, +1 each, no gaps.
    pub sequence: u64,
    /// When the runtime appended the event.
    pub time: DateTime<Utc>,
    /// What happened.
    pub body: EventBody,
}

impl ExecutionEvent {
    /// The event's status (derived from its body).
    pub fn status(&self) -> ExecutionStatus {
        self.body.status()
    }

    /// The event's type.
    pub fn event_type(&self) -> ExecutionEventType {
        self.body.event_type()
    }
}

#[derive(Serialize)]
struct EnvelopeOut<'a> {
    execution_id: &'a str,
    sequence: u64,
    time: String,
    status: ExecutionStatus,
}

impl Serialize for ExecutionEvent {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let envelope = EnvelopeOut {
            execution_id: &self.execution_id,
            sequence: self.sequence,
            time: self
                .time
                .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            status: self.status(),
        };
        let mut object = match serde_json::to_value(&envelope).map_err(serde::ser::Error::custom)? {
            Value::Object(map) => map,
            _ => unreachable!("a struct serialises to an object"),
        };
        let body = match serde_json::to_value(&self.body).map_err(serde::ser::Error::custom)? {
            Value::Object(map) => map,
            _ => unreachable!("an internally tagged enum serialises to an object"),
        };
        // Wire order: envelope, type, status, then the type's fields.
        let status = object.remove("status");
        let mut out = Map::with_capacity(object.len() + body.len() + 1);
        out.extend(object);
        let mut body = body;
        if let Some(kind) = body.remove("type") {
            out.insert("type".into(), kind);
        }
        if let Some(status) = status {
            out.insert("status".into(), status);
        }
        out.extend(body);
        out.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ExecutionEvent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut object = Map::<String, Value>::deserialize(deserializer)?;
        let execution_id = match object.remove("execution_id") {
            Some(Value::String(id)) => id,
            _ => return Err(D::Error::custom("`execution_id` must be a string")),
        };
        let sequence = object
            .remove("sequence")
            .and_then(|v| v.as_u64())
            .ok_or_else(|| D::Error::custom("`sequence` must be a non-negative integer"))?;
        let time = match object.remove("time") {
            Some(Value::String(t)) => DateTime::parse_from_rfc3339(&t)
                .map_err(|e| D::Error::custom(format!("`time` is not RFC 3339: {e}")))?
                .with_timezone(&Utc),
            _ => return Err(D::Error::custom("`time` must be a string")),
        };
        let status: ExecutionStatus = match object.remove("status") {
            Some(v) => serde_json::from_value(v).map_err(D::Error::custom)?,
            None => return Err(D::Error::custom("missing field `status`")),
        };
        let body: EventBody =
            serde_json::from_value(Value::Object(object)).map_err(D::Error::custom)?;
        if body.status() != status {
            return Err(D::Error::custom(format!(
                "status `{}` does not match event type `{}`",
                status.as_str(),
                body.event_type().as_str()
            )));
        }
        Ok(ExecutionEvent {
            execution_id,
            sequence,
            time,
            body,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn serialises_flat_and_round_trips() {
        let event = ExecutionEvent {
            execution_id: "e1".into(),
            sequence: 3,
            time: DateTime::parse_from_rfc3339("2026-01-02T03:04:05.006Z")
                .unwrap()
                .with_timezone(&Utc),
            body: EventBody::OutputDelta {
                output_index: 0,
                delta: "hi".into(),
            },
        };
        let wire = serde_json::to_value(&event).unwrap();
        assert_eq!(
            wire,
            json!({"execution_id":"e1","sequence":3,"time":"2026-01-02T03:04:05.006Z",
                   "type":"output.delta","status":"running","output_index":0,"delta":"hi"})
        );
        let back: ExecutionEvent = serde_json::from_value(wire).unwrap();
        assert_eq!(back, event);
    }

    #[test]
    fn cancelled_failure_carries_cancelled_status() {
        let body = EventBody::Failed {
            error: PortableError::new(ErrorCode::Cancelled, "Execution was cancelled", false),
        };
        assert_eq!(body.status(), ExecutionStatus::Cancelled);
        let body = EventBody::Failed {
            error: PortableError::new(ErrorCode::DeadlineExceeded, "deadline", false),
        };
        assert_eq!(body.status(), ExecutionStatus::Failed);
    }

    #[test]
    fn rejects_a_status_that_does_not_match_the_type() {
        let wire = json!({"execution_id":"e1","sequence":1,"time":"2026-01-02T03:04:05Z",
                          "type":"execution.accepted","status":"running"});
        assert!(serde_json::from_value::<ExecutionEvent>(wire).is_err());
    }
}
