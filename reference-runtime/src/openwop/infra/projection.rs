//! `RunSnapshot` as a projection of the log: the run's creation record plus a fold over its
//! events. `GET /runs/{runId}`, poll's `status` and `values`-mode `state.snapshot` frames all
//! come from here, so they can never disagree with the log.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use spec::openwop::{
    EVENT_LOG_SCHEMA_VERSION, Owner, RunError, RunEventDoc, RunSnapshot, RunStatus,
};

/// What a run's log record carries from creation (the `meta` of its [`crate::store::LogRecord`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RunMeta {
    /// Marks a surface-W run record.
    pub(crate) kind: String,
    pub(crate) run_id: String,
    pub(crate) workflow_id: String,
    pub(crate) owner: Owner,
    pub(crate) inputs: Map<String, Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) tags: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) metadata: Option<Map<String, Value>>,
    /// The log's era when it is not the one this host writes (`2`: a seeded v1-written log).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) event_log_schema_version: Option<u32>,
}

/// The `kind` of a surface-W run record.
pub(crate) const RUN_META_KIND: &str = "openwop-run";

/// A snapshot being folded.
#[derive(Debug, Clone)]
pub(crate) struct Projection {
    meta: RunMeta,
    status: RunStatus,
    started_at: Option<DateTime<Utc>>,
    completed_at: Option<DateTime<Utc>>,
    current_node_id: Option<String>,
    error: Option<RunError>,
    node_states: Map<String, Value>,
    last_sequence: Option<u64>,
}

impl Projection {
    /// The state before any event.
    pub(crate) fn new(meta: RunMeta) -> Self {
        Projection {
            meta,
            status: RunStatus::Pending,
            started_at: None,
            completed_at: None,
            current_node_id: None,
            error: None,
            node_states: Map::new(),
            last_sequence: None,
        }
    }

    /// Folds one event (unknown types are ignored).
    pub(crate) fn apply(&mut self, event: &RunEventDoc) {
        self.last_sequence = Some(event.sequence);
        let p = &event.payload;
        let node = p["nodeId"].as_str().map(str::to_string);
        let mut node_state = |status: &str| {
            if let Some(node) = &node {
                self.node_states
                    .insert(node.clone(), json!({ "status": status }));
            }
        };
        match event.event_type.as_str() {
            "run.started" => {
                self.status = RunStatus::Running;
                self.started_at = Some(event.timestamp);
            }
            "node.started" => node_state("running"),
            "node.completed" => node_state("completed"),
            "node.failed" => node_state("failed"),
            "node.cancelled" => node_state("cancelled"),
            "node.suspended" => {
                node_state("suspended");
                self.status = match p["kind"].as_str() {
                    Some("approval") => RunStatus::WaitingApproval,
                    Some("clarification") => RunStatus::WaitingInput,
                    _ => RunStatus::WaitingExternal,
                };
                self.current_node_id = node;
            }
            "node.resumed" => {
                node_state("running");
                self.status = RunStatus::Running;
                self.current_node_id = None;
            }
            "interrupt.resolved" => {
                self.status = RunStatus::Running;
                self.current_node_id = None;
            }
            "run.completed" => self.finish(RunStatus::Completed, event.timestamp),
            "run.cancelled" => self.finish(RunStatus::Cancelled, event.timestamp),
            "run.failed" => {
                self.finish(RunStatus::Failed, event.timestamp);
                self.error = Some(RunError {
                    code: p["error"]["code"]
                        .as_str()
                        .unwrap_or("internal_error")
                        .to_string(),
                    message: p["error"]["message"]
                        .as_str()
                        .filter(|m| !m.is_empty())
                        .unwrap_or("the run failed")
                        .to_string(),
                    details: p["error"]["details"].as_object().cloned(),
                });
            }
            _ => {}
        }
    }

    fn finish(&mut self, status: RunStatus, at: DateTime<Utc>) {
        if !self.status.is_terminal() {
            self.status = status;
            self.completed_at = Some(at);
            self.current_node_id = None;
        }
    }

    /// The status so far.
    pub(crate) fn status(&self) -> RunStatus {
        self.status
    }

    /// The highest sequence folded.
    pub(crate) fn last_sequence(&self) -> Option<u64> {
        self.last_sequence
    }

    /// The snapshot.
    pub(crate) fn snapshot(&self) -> RunSnapshot {
        RunSnapshot {
            run_id: self.meta.run_id.clone(),
            workflow_id: self.meta.workflow_id.clone(),
            status: self.status,
            // This host does not advertise `compensation`, so the rollup is omitted.
            compensation_status: None,
            owner: self.meta.owner.clone(),
            event_log_schema_version: self
                .meta
                .event_log_schema_version
                .unwrap_or(EVENT_LOG_SCHEMA_VERSION),
            started_at: self.started_at,
            completed_at: self.completed_at,
            current_node_id: self.current_node_id.clone(),
            agent: None,
            run_orchestrator: None,
            error: self.error.clone(),
            node_states: (!self.node_states.is_empty()).then(|| self.node_states.clone()),
            variables: None,
            channels: None,
            // This host has no engine version of its own to report.
            engine_version: None,
            inputs: Some(self.meta.inputs.clone()),
            tags: self.meta.tags.clone(),
            metadata: self.meta.metadata.clone(),
            configurable: None,
            metrics: None,
            // Runs are never forked here: every run is a root run.
            parent_run_id: None,
            extensions: None,
        }
    }
}

/// Parses a stored event's wire JSON.
pub(crate) fn parse_event(json: &str) -> Option<RunEventDoc> {
    serde_json::from_str(json)
        .inspect_err(|error| tracing::error!(%error, "a stored run event does not parse"))
        .ok()
}
