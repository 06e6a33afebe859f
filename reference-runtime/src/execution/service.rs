//! The execution service: creation (capability matching, admission limit, idempotency), the
//! registry of live executions (cancel signals and driver tasks), snapshots, recovery after a
//! restart, and shutdown.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};
use spec::execution::{
    ErrorCode, EventBody, ExecutionEvent, ExecutionSnapshot, ExecutionStatus, ExecutionSubmission,
    ModelCapability, PortableError, ProviderLimits, ProviderManifest, RuntimeInfo, RuntimeState,
};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::admission::Admitted;
use super::choices::{
    AcceptedAppend, CancelTerminal, ExecutionCancel, ManifestFields, SubmissionStatus,
    UnsatisfiableRequirements,
};
use super::driver::{self, DriveContext, DriverHost};
use super::errors::ApiError;
use super::fold::fold;
use super::idempotency::{self, Decision};
use super::log_writer::LogWriter;
use super::routing;
use crate::config::{Config, ProviderConfig};
use crate::execution::config::ExecutionConfig;
use crate::known_bad::KnownBad;
use crate::log::LogHub;
use crate::providers::Adapter;
use crate::providers::calls::ProviderCalls;
use crate::redact::{CredentialSource, Redactor};
use crate::store::{StoreError, Surface};

/// The protocol version this runtime implements.
pub const PROTOCOL_VERSION: &str = "0.1.0";

/// How long a submission waits for its execution to move past `accepted` when the host choice
/// reports the current status.
const SUBMISSION_STATUS_WAIT: std::time::Duration = std::time::Duration::from_millis(250);
/// How long a synchronous cancel waits for the terminal event before answering 202.
const SYNCHRONOUS_CANCEL_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// What a cancel request did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CancelOutcome {
    /// The driver was asked to stop; its terminal event follows.
    Requested,
    /// The driver stopped; the log ended with this status.
    Ended(ExecutionStatus),
    /// The execution had already ended with this status; nothing was appended.
    AlreadyTerminal(ExecutionStatus),
}

/// A live execution: how to cancel it and the task driving it.
struct Live {
    cancel: watch::Sender<bool>,
    task: Option<JoinHandle<()>>,
}

/// Surface X's state: everything the handlers and drivers share.
pub struct Executions {
    /// Surface X's configuration, built once from the runtime's.
    pub(crate) config: ExecutionConfig,
    pub(crate) hub: Arc<LogHub>,
    pub(crate) defects: Arc<KnownBad>,
    /// The provider-call service (shared with surface W's AI node).
    pub(crate) calls: Arc<ProviderCalls>,
    live: Mutex<HashMap<String, Live>>,
    /// Serialises idempotency decisions with execution creation.
    create_lock: Mutex<()>,
    stopping: AtomicBool,
    stop_signal: watch::Sender<bool>,
}

impl std::fmt::Debug for Executions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Executions").finish_non_exhaustive()
    }
}

impl Executions {
    /// Builds the service over a hub and the provider-call service (the composition root's,
    /// shared with surface W), with its configuration built from the runtime's.
    pub fn new(
        config: &Config,
        hub: Arc<LogHub>,
        defects: Arc<KnownBad>,
        calls: Arc<ProviderCalls>,
    ) -> Arc<Executions> {
        Arc::new(Executions {
            config: ExecutionConfig::from_config(config),
            hub,
            defects,
            calls,
            live: Mutex::new(HashMap::new()),
            create_lock: Mutex::new(()),
            stopping: AtomicBool::new(false),
            stop_signal: watch::Sender::new(false),
        })
    }

    /// A refusal as the host's choices write it (the wording of its message, no
    /// `provider_code` when omitted).
    pub(crate) fn refusal(&self, mut error: ApiError) -> ApiError {
        error.error = super::log_writer::wire_error(error.error, &self.config.choices);
        error
    }

    /// The redactor that knows every configured credential.
    pub fn redactor(&self) -> &Redactor {
        &self.calls.redactor
    }

    /// Ends every execution left in flight by a previous process: an appended
    /// `execution.failed` (`internal_error`, retryable false: the provider may or may not have
    /// done the work), never a renumbering and never a new provider call. A log the previous
    /// process created but left empty (killed before `execution.accepted`) gets
    /// `execution.accepted` first, so every log still opens with it. Returns how many were
    /// ended.
    pub fn recover(&self) -> Result<usize, StoreError> {
        let mut ended = 0;
        for record in self.hub.store().logs(Surface::Execution)? {
            if record.terminal {
                continue;
            }
            let appended = record.last_sequence.unwrap_or(0);
            let mut writer = LogWriter::new(
                Arc::clone(&self.hub),
                record.id.clone(),
                &self.defects,
                self.config.choices.clone(),
                self.config.limits.max_events_per_execution,
                appended,
            );
            let error = PortableError::new(
                ErrorCode::InternalError,
                "Execution outcome unknown: the runtime restarted while it was in flight",
                false,
            );
            let opened = if record.last_sequence.is_none() {
                writer.append(EventBody::Accepted {})
            } else {
                Ok(())
            };
            match opened.and_then(|()| writer.finish(EventBody::Failed { error })) {
                Ok(()) => ended += 1,
                Err(error) => {
                    tracing::error!(execution_id = %record.id, %error, "recovery append failed")
                }
            }
        }
        Ok(ended)
    }

    /// `GET /v1/runtime`.
    pub fn runtime_info(&self) -> RuntimeInfo {
        let mut features = Map::new();
        for (name, on) in [
            ("routing", true),
            ("flow_control", true),
            ("usage_facts", true),
            ("billing", false),
            ("durable_event_store", self.hub.store().is_durable()),
        ] {
            features.insert(name.into(), Value::Bool(on));
        }
        RuntimeInfo {
            name: "reference-runtime".into(),
            protocol_version: PROTOCOL_VERSION.into(),
            state: Some(if self.stopping.load(Ordering::SeqCst) {
                RuntimeState::Stopping
            } else {
                RuntimeState::Ready
            }),
            provider_count: self.calls.providers.len() as u64,
            features,
        }
    }

    /// `GET /v1/providers`, as JSON.
    pub fn manifests(&self) -> Value {
        let data: Vec<Value> = self
            .calls
            .providers
            .iter()
            .map(|provider| {
                let manifest = ProviderManifest {
                    provider: provider.id.clone(),
                    protocol_version: PROTOCOL_VERSION.into(),
                    models: provider
                        .models
                        .iter()
                        .map(|m| ModelCapability {
                            model: m.model.clone(),
                            abilities: m.abilities.clone(),
                            input_modalities: m.input_modalities.clone(),
                            output_modalities: m.output_modalities.clone(),
                            stream: m.stream,
                            tools: m.tools,
                            structured_output: m.structured_output,
                            asynchronous: m.asynchronous,
                            cancel: m.cancel,
                        })
                        .collect(),
                    // The configuration states no per-provider limits, so none are advertised
                    // unless the host choice says to advertise the runtime's admission limit.
                    limits: match self.config.choices.manifest_fields {
                        ManifestFields::Contract => None,
                        ManifestFields::WithLimits => Some(ProviderLimits {
                            max_concurrency: u64::try_from(
                                self.config.limits.max_active_executions,
                            )
                            .ok(),
                            max_queue_depth: Some(0),
                        }),
                    },
                };
                serde_json::to_value(manifest).unwrap_or(Value::Null)
            })
            .collect();
        json!({ "data": data })
    }

    /// Creates (or replays) an execution. `Ok((submission, replay))`.
    pub(crate) async fn create(
        self: &Arc<Self>,
        admitted: Admitted,
    ) -> Result<(ExecutionSubmission, bool), ApiError> {
        if self.stopping.load(Ordering::SeqCst) {
            return Err(ApiError::new(
                ErrorCode::ProviderUnavailable,
                "Runtime is shutting down",
                true,
            ));
        }
        let candidates = routing::candidates(&admitted.request, &self.calls.providers);
        let refuse_at_admission =
            self.config.choices.unsatisfiable_requirements == UnsatisfiableRequirements::Refuse;
        // Otherwise the execution is accepted and its driver fails it before any provider call.
        if candidates.is_empty() && refuse_at_admission {
            return Err(ApiError::new(
                ErrorCode::CapabilityUnavailable,
                "No provider satisfies the requested ability and capabilities",
                false,
            ));
        }
        let fingerprint = idempotency::fingerprint(&admitted.json);
        let creating = self.create_lock.lock().unwrap_or_else(|p| p.into_inner());
        let key_hash = admitted
            .idempotency_key
            .as_deref()
            .map(idempotency::key_hash);
        let decision = match &key_hash {
            Some(key_hash) => idempotency::decide(
                &self.hub,
                key_hash,
                &fingerprint,
                self.config.choices.idempotency_mismatch,
            )?,
            None => Decision::CreateUnbound,
        };
        let bind_key = match decision {
            Decision::Replay(execution_id) => {
                return Ok((self.submission(&execution_id, true)?, true));
            }
            Decision::CreateAndBind => key_hash,
            Decision::CreateUnbound => None,
        };
        self.admit_capacity()?;
        let execution_id = self.config.choices.id_form.mint();
        if let Some(key_hash) = &bind_key {
            idempotency::bind(&self.hub, key_hash, &fingerprint, &execution_id)?;
        }
        match self.start_execution(&execution_id, admitted, candidates) {
            Ok(mut submission) => {
                drop(creating);
                if self.config.choices.submission_status == SubmissionStatus::Current {
                    self.wait_past_accepted(&execution_id).await;
                    submission.status = self.current_status(&execution_id)?;
                }
                Ok((submission, false))
            }
            Err(error) => {
                // A refused creation does not use up its key.
                if let Some(key_hash) = &bind_key
                    && let Err(unbind_error) = idempotency::unbind(&self.hub, key_hash)
                {
                    tracing::error!(%unbind_error, "failed to free an idempotency key");
                }
                Err(error)
            }
        }
    }

    /// Waits (at most [`SUBMISSION_STATUS_WAIT`]) until the log holds more than
    /// `execution.accepted`.
    async fn wait_past_accepted(&self, execution_id: &str) {
        let Ok(mut subscription) = self.hub.subscribe(execution_id, Some(1)) else {
            return;
        };
        let _ = tokio::time::timeout(SUBMISSION_STATUS_WAIT, subscription.next_batch()).await;
    }

    /// Waits (at most [`SYNCHRONOUS_CANCEL_WAIT`]) until the log is terminal; whether it is.
    async fn wait_terminal(&self, execution_id: &str) -> Result<bool, ApiError> {
        let progress = self.hub.progress(execution_id)?;
        let mut subscription = self.hub.subscribe(execution_id, progress.last_sequence)?;
        let drained = async { while let Some(Ok(_)) = subscription.next_batch().await {} };
        let _ = tokio::time::timeout(SYNCHRONOUS_CANCEL_WAIT, drained).await;
        Ok(self.hub.progress(execution_id)?.terminal)
    }

    fn admit_capacity(&self) -> Result<(), ApiError> {
        let live = self.live.lock().unwrap_or_else(|p| p.into_inner()).len();
        if live >= self.config.limits.max_active_executions {
            return Err(ApiError::new(
                ErrorCode::QueueFull,
                "Too many executions are in flight",
                true,
            )
            .with_retry_after(1));
        }
        Ok(())
    }

    fn start_execution(
        self: &Arc<Self>,
        execution_id: &str,
        admitted: Admitted,
        candidates: Vec<routing::Candidate>,
    ) -> Result<ExecutionSubmission, ApiError> {
        let record = self
            .hub
            .create(execution_id, Surface::Execution, json!({}))?;
        let mut writer = LogWriter::new(
            Arc::clone(&self.hub),
            execution_id.to_string(),
            &self.defects,
            self.config.choices.clone(),
            self.config.limits.max_events_per_execution,
            0,
        );
        let accepted_after_response =
            self.config.choices.accepted_append == AcceptedAppend::AfterResponse;
        if !accepted_after_response {
            writer.append(EventBody::Accepted {}).map_err(|error| {
                tracing::error!(%error, "failed to append execution.accepted");
                ApiError::internal()
            })?;
        }
        let (cancel, cancel_rx) = watch::channel(false);
        let mut live = self.live.lock().unwrap_or_else(|p| p.into_inner());
        live.insert(execution_id.to_string(), Live { cancel, task: None });
        let context = DriveContext {
            service: Arc::clone(self) as Arc<dyn DriverHost>,
            execution_id: execution_id.to_string(),
            request: admitted.request,
            candidates,
            cancel: cancel_rx,
            accepted_after_response,
        };
        let task = tokio::spawn(driver::drive(context, writer));
        if let Some(entry) = live.get_mut(execution_id) {
            entry.task = Some(task);
        }
        Ok(ExecutionSubmission {
            execution_id: execution_id.to_string(),
            status: ExecutionStatus::Accepted,
            created_at: record.created_at,
            idempotent_replay: false,
        })
    }

    fn submission(
        &self,
        execution_id: &str,
        replay: bool,
    ) -> Result<ExecutionSubmission, ApiError> {
        let record = self
            .hub
            .store()
            .log(execution_id)?
            .ok_or_else(ApiError::execution_not_found)?;
        Ok(ExecutionSubmission {
            execution_id: execution_id.to_string(),
            status: self.current_status(execution_id)?,
            created_at: record.created_at,
            idempotent_replay: replay,
        })
    }

    fn current_status(&self, execution_id: &str) -> Result<ExecutionStatus, ApiError> {
        let progress = self.hub.progress(execution_id)?;
        let last = progress.last_sequence.and_then(|s| s.checked_sub(1));
        let events = self.hub.read_after(execution_id, last)?;
        Ok(events
            .last()
            .and_then(|e| serde_json::from_str::<ExecutionEvent>(&e.json).ok())
            .map_or(ExecutionStatus::Accepted, |e| e.status()))
    }

    /// Whether `execution_id` names an execution (not a run of the other surface).
    pub(crate) fn exists(&self, execution_id: &str) -> Result<bool, ApiError> {
        match self.hub.surface(execution_id) {
            Ok(surface) => Ok(surface == Surface::Execution),
            Err(StoreError::UnknownLog(_)) => Ok(false),
            Err(other) => Err(other.into()),
        }
    }

    /// `GET /v1/executions/{id}`.
    pub(crate) fn snapshot(&self, execution_id: &str) -> Result<ExecutionSnapshot, ApiError> {
        if !self.exists(execution_id)? {
            return Err(ApiError::execution_not_found());
        }
        let record = self
            .hub
            .store()
            .log(execution_id)?
            .ok_or_else(ApiError::execution_not_found)?;
        let events = self.hub.read_after(execution_id, None)?;
        let mut snapshot = fold(&record, &events);
        snapshot.last_sequence = self
            .config
            .choices
            .sequence_form
            .wire(snapshot.last_sequence);
        Ok(snapshot)
    }

    /// `POST /v1/executions/{id}/cancel`: asks the driver to stop. 404 unknown; a terminal
    /// execution → 409 (or a no-op, as the host choice says); with a synchronous cancel, waits
    /// for the terminal event.
    pub(crate) async fn cancel(&self, execution_id: &str) -> Result<CancelOutcome, ApiError> {
        if !self.exists(execution_id)? {
            return Err(ApiError::execution_not_found());
        }
        let choices = &self.config.choices;
        if self.hub.progress(execution_id)?.terminal {
            return match choices.cancel_terminal {
                CancelTerminal::Conflict => Err(ApiError::new(
                    ErrorCode::Conflict,
                    "Execution is already terminal",
                    false,
                )),
                CancelTerminal::NoOp => Ok(CancelOutcome::AlreadyTerminal(
                    self.current_status(execution_id)?,
                )),
            };
        }
        {
            let live = self.live.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(entry) = live.get(execution_id) {
                entry.cancel.send_replace(true);
            }
        }
        if choices.cancel == ExecutionCancel::Synchronous
            && self.wait_terminal(execution_id).await?
        {
            return Ok(CancelOutcome::Ended(self.current_status(execution_id)?));
        }
        Ok(CancelOutcome::Requested)
    }

    /// Called by a driver when it is done.
    pub(crate) fn forget(&self, execution_id: &str) {
        self.live
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(execution_id);
    }

    /// A receiver that turns `true` when the runtime stops (SSE streams end on it).
    pub(crate) fn stop_signal(&self) -> watch::Receiver<bool> {
        self.stop_signal.subscribe()
    }

    /// Stops: refuses new executions, ends every SSE stream, and aborts in-flight drivers
    /// without appending anything (like a crash: a durable store ends them at the next start
    /// with `internal_error`, outcome unknown).
    pub async fn shutdown(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        self.stop_signal.send_replace(true);
        let tasks: Vec<JoinHandle<()>> = {
            let mut live = self.live.lock().unwrap_or_else(|p| p.into_inner());
            live.drain().filter_map(|(_, entry)| entry.task).collect()
        };
        for task in &tasks {
            task.abort();
        }
        for task in tasks {
            let _ = task.await;
        }
    }
}

impl DriverHost for Executions {
    fn config(&self) -> &ExecutionConfig {
        &self.config
    }

    fn providers(&self) -> &[ProviderConfig] {
        &self.calls.providers
    }

    fn defects(&self) -> &KnownBad {
        &self.defects
    }

    fn credentials(&self) -> &CredentialSource {
        &self.calls.credentials
    }

    fn redactor(&self) -> &Redactor {
        &self.calls.redactor
    }

    fn adapters(&self) -> &[Adapter] {
        &self.calls.adapters
    }

    fn forget(&self, execution_id: &str) {
        Executions::forget(self, execution_id);
    }
}
