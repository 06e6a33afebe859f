//! The fold of an execution's log into its snapshot: the one place where events are
//! materialised.
//!
//! `route.selected` and `execution.completed` set the target (the latest wins);
//! `execution.failed` sets the error; usage facts accumulate in log order across attempts;
//! `output.delta` is concatenated per `output_index`; `tool.call.started` opens (or resets) a
//! call and its argument fragments are concatenated in log order (a fragment for an unknown
//! call is dropped); `output.result` sets the provider's own result and artifacts (the latest
//! wins) and then takes precedence over streamed text.

use std::collections::BTreeMap;

use serde_json::Value;
use spec::execution::{
    Artifact, EventBody, ExecutionEvent, ExecutionSnapshot, ExecutionStatus, MaterialisedOutput,
    MaterialisedToolCall, PortableError, Target, TextResult, UsageFact,
};

use crate::store::{LogRecord, StoredEvent};

struct ToolCall {
    call_id: String,
    name: String,
    fragments: Vec<String>,
}

/// Folds a log into its snapshot. Events that do not parse are skipped (and logged): the log
/// only ever holds what the runtime rendered.
pub(crate) fn fold(record: &LogRecord, events: &[StoredEvent]) -> ExecutionSnapshot {
    let mut status = ExecutionStatus::Accepted;
    let mut updated_at = record.created_at;
    let mut target: Option<Target> = None;
    let mut error: Option<PortableError> = None;
    let mut usage: Vec<UsageFact> = Vec::new();
    let mut outputs: BTreeMap<u32, String> = BTreeMap::new();
    let mut tools: Vec<ToolCall> = Vec::new();
    let mut provider_result: Option<(Value, Option<Vec<Artifact>>)> = None;
    for stored in events {
        let event: ExecutionEvent = match serde_json::from_str(&stored.json) {
            Ok(event) => event,
            Err(parse_error) => {
                tracing::error!(log_id = %record.id, sequence = stored.sequence, %parse_error, "unreadable stored event");
                continue;
            }
        };
        status = event.status();
        updated_at = stored.time;
        match event.body {
            EventBody::RouteSelected { target: t, .. } | EventBody::Completed { target: t } => {
                target = Some(t);
            }
            EventBody::Failed { error: e } => error = Some(e),
            EventBody::UsageReported { facts } => usage.extend(facts),
            EventBody::OutputDelta {
                output_index,
                delta,
            } => {
                outputs.entry(output_index).or_default().push_str(&delta);
            }
            EventBody::ToolCallStarted { call_id, name } => {
                match tools.iter_mut().find(|c| c.call_id == call_id) {
                    Some(call) => {
                        call.name = name;
                        call.fragments.clear();
                    }
                    None => tools.push(ToolCall {
                        call_id,
                        name,
                        fragments: Vec::new(),
                    }),
                }
            }
            EventBody::ToolCallArgumentsDelta { call_id, delta } => {
                if let Some(call) = tools.iter_mut().find(|c| c.call_id == call_id) {
                    call.fragments.push(delta);
                }
            }
            EventBody::OutputResult { result, artifacts } => {
                provider_result = Some((result, artifacts));
            }
            EventBody::Accepted {}
            | EventBody::RouteAttemptFailed { .. }
            | EventBody::Progress { .. } => {}
        }
    }
    let (result, artifacts) = match provider_result {
        Some((result, artifacts)) => (Some(result), artifacts),
        None if outputs.is_empty() && tools.is_empty() => (None, None),
        None => {
            let text = TextResult {
                outputs: outputs
                    .into_iter()
                    .map(|(index, text)| MaterialisedOutput {
                        index,
                        kind: "text".into(),
                        text,
                    })
                    .collect(),
                tool_calls: tools
                    .into_iter()
                    .map(|call| MaterialisedToolCall {
                        arguments: call.fragments.concat(),
                        call_id: call.call_id,
                        name: call.name,
                    })
                    .collect(),
            };
            (serde_json::to_value(text).ok(), None)
        }
    };
    ExecutionSnapshot {
        execution_id: record.id.clone(),
        status,
        created_at: record.created_at,
        updated_at,
        last_sequence: events.last().map_or(0, |e| e.sequence),
        usage,
        target,
        error,
        result,
        artifacts,
    }
}
