//! Writing one execution's log: rendering events (the runtime owns `execution_id`, `sequence`
//! and `time`), the usage gate, the per-execution event capacity, and tracking whether output
//! was exposed (after which the router must not fall back).
//!
//! The host choices of the event wire live here too: the sequence form, whether errors carry
//! `provider_code`, the wording of error messages, the optional fields of artifact references,
//! and the runtime-derived usage fact.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use spec::execution::{
    ErrorCode, EventBody, ExecutionEvent, PortableError, UsageFact, UsageSource, is_valid_unit,
};

use super::choices::{
    ArtifactFields, ExecutionChoices, ProviderCodeChoice, RUNTIME_FACT_UNIT, UsageFacts,
};
use crate::known_bad::{ExecutionRecordRewrites, KnownBad};
use crate::log::{AppendError, AppendKind, LogHub};
use crate::providers::{AttemptFailure, Emit};

/// An error as the host's choices write it: without `provider_code` when omitted, in the
/// chosen wording.
pub(crate) fn wire_error(mut error: PortableError, choices: &ExecutionChoices) -> PortableError {
    if choices.provider_code == ProviderCodeChoice::Omitted {
        error.provider_code = None;
    }
    error.message = choices
        .error_wording
        .message(error.code.as_str(), &error.message);
    error
}

/// An event body as the host's choices write it.
fn wire_body(body: EventBody, choices: &ExecutionChoices) -> EventBody {
    match body {
        EventBody::Failed { error } => EventBody::Failed {
            error: wire_error(error, choices),
        },
        EventBody::RouteAttemptFailed {
            target,
            attempt,
            error,
        } => EventBody::RouteAttemptFailed {
            target,
            attempt,
            error: wire_error(error, choices),
        },
        EventBody::OutputResult {
            result,
            artifacts: Some(artifacts),
        } if choices.artifact_fields == ArtifactFields::UriOnly => EventBody::OutputResult {
            result,
            artifacts: Some(
                artifacts
                    .into_iter()
                    .map(|mut artifact| {
                        artifact.media_type = None;
                        artifact.name = None;
                        artifact
                    })
                    .collect(),
            ),
        },
        other => other,
    }
}

/// Renders one event's wire JSON. The only place an event envelope is built.
pub(crate) fn render(
    execution_id: &str,
    sequence: u64,
    time: DateTime<Utc>,
    wire_time: Option<String>,
    body: EventBody,
    choices: &ExecutionChoices,
) -> String {
    let event = ExecutionEvent {
        execution_id: execution_id.to_string(),
        sequence: choices.sequence_form.wire(sequence),
        time,
        body: wire_body(body, choices),
    };
    if let Some(wire_time) = wire_time
        && let Ok(mut wire) = serde_json::to_value(&event)
    {
        wire["time"] = serde_json::Value::String(wire_time);
        return wire.to_string();
    }
    serde_json::to_string(&event).unwrap_or_else(|_| String::from("{}"))
}

/// The usage gate: every fact is a known or namespaced unit with a finite, non-negative
/// quantity; a violation fails the attempt with `provider_protocol_error`.
pub(crate) fn admit_usage(facts: Vec<UsageFact>) -> Result<Vec<UsageFact>, AttemptFailure> {
    let invalid = || AttemptFailure::protocol("Provider reported an invalid usage fact");
    for fact in &facts {
        if !is_valid_unit(&fact.unit) || !fact.quantity.is_finite() || fact.quantity < 0.0 {
            return Err(invalid());
        }
    }
    Ok(facts)
}

/// Appends the events of one execution.
pub(crate) struct LogWriter {
    hub: Arc<LogHub>,
    execution_id: String,
    /// A known-bad runtime's record layer; `None` in a clean one.
    rewrites: Option<Arc<ExecutionRecordRewrites>>,
    choices: ExecutionChoices,
    max_events: u64,
    appended: u64,
    output_exposed: bool,
}

impl LogWriter {
    /// A writer for an existing log that already holds `appended` events.
    pub fn new(
        hub: Arc<LogHub>,
        execution_id: String,
        defects: &KnownBad,
        choices: ExecutionChoices,
        max_events: u64,
        appended: u64,
    ) -> Self {
        LogWriter {
            hub,
            execution_id,
            rewrites: defects.execution_record_rewrites().map(Arc::new),
            choices,
            max_events,
            appended,
            output_exposed: false,
        }
    }

    /// Whether any output (`output.delta`, `output.result`, `tool.call.*`) was appended.
    pub fn output_exposed(&self) -> bool {
        self.output_exposed
    }

    /// Appends a runtime event (accepted, route.*) with no capacity check beyond the store's.
    pub fn append(&mut self, body: EventBody) -> Result<(), AppendError> {
        self.append_as(body, AppendKind::Forward)
    }

    /// Appends the terminal event.
    pub fn finish(&mut self, body: EventBody) -> Result<(), AppendError> {
        let completed = matches!(body, EventBody::Completed { .. });
        let copies = self
            .rewrites
            .as_ref()
            .map_or(1, |rewrites| rewrites.terminal_copies(completed));
        self.append_as(body.clone(), AppendKind::Terminal)?;
        for _ in 1..copies {
            // The record layer's repeated terminal event, past the terminal rule.
            self.append_as(body.clone(), AppendKind::AfterTerminal)?;
        }
        Ok(())
    }

    fn append_as(&mut self, body: EventBody, kind: AppendKind) -> Result<(), AppendError> {
        let event_type = body.event_type();
        let rewrites = self.rewrites.clone();
        let choices = self.choices.clone();
        let execution_id = self.execution_id.clone();
        let hub = Arc::clone(&self.hub);
        self.hub.append(
            &self.execution_id,
            event_type.as_str(),
            kind,
            |sequence, time| {
                let wire_time = hub.wire_time(time);
                let wire = render(&execution_id, sequence, time, wire_time, body, &choices);
                match &rewrites {
                    None => wire,
                    Some(rewrites) => {
                        rewrites.rewrite(wire, sequence, choices.sequence_form.wire(1))
                    }
                }
            },
        )?;
        self.appended += 1;
        if event_type.exposes_output() {
            self.output_exposed = true;
        }
        Ok(())
    }
}

impl Emit for LogWriter {
    fn emit(&mut self, body: EventBody) -> Result<(), AttemptFailure> {
        let body = match body {
            EventBody::UsageReported { facts } => {
                let mut facts = admit_usage(facts)?;
                if self.choices.usage_facts == UsageFacts::WithRuntimeFacts {
                    // A fact the runtime derived, under a namespaced custom unit.
                    facts.push(UsageFact {
                        unit: RUNTIME_FACT_UNIT.into(),
                        quantity: facts.len() as f64,
                        source: UsageSource::Runtime,
                        complete: None,
                    });
                }
                EventBody::UsageReported { facts }
            }
            other => other,
        };
        // One slot stays free for the terminal event.
        if self.appended + 1 >= self.max_events {
            return Err(AttemptFailure::new(
                ErrorCode::QueueFull,
                "Execution event capacity exhausted",
                false,
            ));
        }
        self.append(body).map_err(|error| {
            tracing::error!(execution_id = %self.execution_id, %error, "append failed");
            AttemptFailure::new(
                ErrorCode::InternalError,
                "Execution event storage failed",
                false,
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fact(unit: &str, quantity: f64) -> UsageFact {
        UsageFact {
            unit: unit.into(),
            quantity,
            source: UsageSource::Provider,
            complete: None,
        }
    }

    #[test]
    fn usage_gate_refuses_bad_facts() {
        assert!(admit_usage(vec![fact("input_token", 3.0), fact("acme.gpu_second", 0.5)]).is_ok());
        for bad in [
            fact("tokens", 1.0),
            fact("input_token", -1.0),
            fact("input_token", f64::NAN),
        ] {
            assert!(admit_usage(vec![bad]).is_err());
        }
    }
}
