//! The run lifecycle behind the HTTP handlers (and the heartbeat's `createRun`): validate a
//! creation, start a run, cancel it, resolve its interrupt.

use std::sync::Arc;

use serde_json::{Map, Value, json};
use spec::openwop::payloads::{RunCancelled, RunStarted};
use spec::openwop::{CreateRunRequest, Owner, RunStatus};

use crate::log::AppendError;
use crate::openwop::infra::choices::{CancelAnswer, CancelledPayload, RunStartedTiming};
use crate::store::Surface;

use super::state::WState;
use crate::openwop::engine::ai::mock::MockProgram;
use crate::openwop::engine::ai::node::mock_provider_ids;
use crate::openwop::engine::ai::plan::AiPlan;
use crate::openwop::engine::envelopes::program::{ENVELOPE_PROGRAM_ID, EnvelopePlan};
use crate::openwop::engine::node_context::RunContext;
use crate::openwop::engine::runner as engine;
use crate::openwop::engine::workflow::Workflow;
use crate::openwop::infra::auth::Caller;
use crate::openwop::infra::error::{ApiError, details};
use crate::openwop::infra::projection::{RUN_META_KIND, RunMeta};
use crate::openwop::infra::recorder::Recorder;

/// A creation that passed validation.
pub(crate) struct NewRun {
    workflow: Workflow,
    owner: Owner,
    inputs: Map<String, Value>,
    variables: Map<String, Value>,
    tags: Option<Vec<String>>,
    metadata: Option<Map<String, Value>>,
    ai: AiPlan,
    transport: Option<&'static str>,
}

/// Checks a `POST /runs` body against the seeded workflows and the run options. Messages name
/// the member at fault, never its value.
pub(crate) fn validate_create(
    state: &WState,
    caller: &Caller,
    request: CreateRunRequest,
) -> Result<NewRun, ApiError> {
    let workflow = state
        .workflows
        .get(&request.workflow_id)
        .cloned()
        .ok_or_else(|| {
            ApiError::validation("workflowId does not name a workflow seeded in this host")
                .with_details(details([("workflows", json!(state.workflows.ids()))]))
        })?;
    if let Some(tags) = &request.tags
        && (tags.len() > 100 || tags.iter().any(|t| t.chars().count() > 256))
    {
        return Err(ApiError::validation(
            "tags allows at most 100 tags of at most 256 characters",
        ));
    }
    let inputs = request.inputs.unwrap_or_default();
    let variables = workflow
        .resolve_variables(&inputs)
        .map_err(ApiError::validation)?;
    let ai_options = match &request.configurable {
        Some(configurable) if configurable.version != 1 => {
            return Err(ApiError::validation("configurable.version must be 1"));
        }
        Some(configurable) => configurable.ai.clone().unwrap_or_default(),
        None => Default::default(),
    };
    let ai = match (&ai_options.mock_provider, &ai_options.provider) {
        (Some(_), Some(_)) => {
            return Err(ApiError::validation(
                "configurable.ai names both a mockProvider and a provider; choose one",
            ));
        }
        (Some(mock), None) => {
            if !caller.is_test_key {
                return Err(ApiError::new(
                    "mock_provider_forbidden",
                    "mock providers are available to test keys only",
                ));
            }
            let supported = || details([("supported", json!(mock_provider_ids()))]);
            if mock.id == ENVELOPE_PROGRAM_ID {
                let plan = EnvelopePlan::parse(&mock.config, &ai_options)
                    .map_err(|message| ApiError::validation(message).with_details(supported()))?;
                AiPlan::Envelope(plan)
            } else {
                let program = MockProgram::parse(&mock.id, &mock.config)
                    .map_err(|message| ApiError::validation(message).with_details(supported()))?;
                AiPlan::Mock(program)
            }
        }
        (None, Some(provider)) => {
            let providers = state.providers.as_ref().ok_or_else(|| {
                ApiError::validation(
                    "configurable.ai.provider: this host has no configured providers",
                )
            })?;
            let plan = providers
                .plan(provider, ai_options.model.as_deref())
                .map_err(|message| {
                    ApiError::validation(message)
                        .with_details(details([("providers", json!(providers.ids()))]))
                })?;
            AiPlan::Provider(plan)
        }
        (None, None) => AiPlan::Mock(
            MockProgram::parse("stream-text", &Map::new()).map_err(|_| ApiError::internal())?,
        ),
    };
    Ok(NewRun {
        workflow,
        owner: caller.owner(),
        inputs,
        variables,
        tags: request.tags,
        metadata: request.metadata,
        ai,
        transport: Some("rest"),
    })
}

impl NewRun {
    /// A run the host starts itself (a heartbeat's createRun, a schedule) with these inputs.
    pub(crate) fn for_host(
        state: &WState,
        workflow_id: &str,
        owner: Owner,
        inputs: Map<String, Value>,
    ) -> Result<NewRun, ApiError> {
        let workflow = state
            .workflows
            .get(workflow_id)
            .cloned()
            .ok_or_else(|| ApiError::validation("the host names an unseeded workflow"))?;
        let variables = workflow
            .resolve_variables(&inputs)
            .map_err(ApiError::validation)?;
        Ok(NewRun {
            workflow,
            owner,
            inputs,
            variables,
            tags: None,
            metadata: None,
            ai: AiPlan::Mock(
                MockProgram::parse("stream-text", &Map::new()).map_err(|_| ApiError::internal())?,
            ),
            transport: None,
        })
    }
}

/// Creates the run's log under `run_id`, appends `run.started` (with the owner block) and starts
/// the engine task.
pub(crate) fn start_run(state: &Arc<WState>, run_id: &str, run: NewRun) -> Result<(), ApiError> {
    let meta = RunMeta {
        kind: RUN_META_KIND.to_string(),
        run_id: run_id.to_string(),
        workflow_id: run.workflow.id.clone(),
        owner: run.owner.clone(),
        inputs: run.inputs.clone(),
        tags: run.tags.clone(),
        metadata: run.metadata.clone(),
        event_log_schema_version: None,
    };
    let meta = serde_json::to_value(&meta).map_err(|_| ApiError::internal())?;
    state
        .hub
        .create(run_id, Surface::Run, meta)
        .map_err(|error| {
            tracing::error!(%error, "creating a run log failed");
            ApiError::internal()
        })?;
    let cancelled = state.live.register(run_id);
    let recorder = Recorder::new(
        Arc::clone(&state.hub),
        run_id,
        &state.defects,
        &state.config.choices,
    );
    let started = RunStarted {
        workflow_id: run.workflow.id.clone(),
        inputs: Some(run.inputs.clone()),
        transport: run.transport.map(str::to_string),
        engine_version: None,
        owner: Some(run.owner.clone()),
        tags: run.tags,
        metadata: run.metadata,
    };
    let started = json!(started);
    let ctx = RunContext {
        env: Arc::clone(&state.nodes),
        recorder,
        tenant: run.owner.tenant,
        workflow: run.workflow,
        variables: run.variables,
        inputs: run.inputs,
        ai: run.ai,
        cancelled,
    };
    match state.config.choices.run_started {
        RunStartedTiming::BeforeResponse => {
            if let Err(error) = ctx.recorder.record("run.started", None, started) {
                state.live.finish(run_id);
                tracing::error!(%error, "appending run.started failed");
                return Err(ApiError::internal());
            }
            engine::spawn(ctx);
        }
        // The run's task appends `run.started` once the 201 is on its way (a poll right after
        // creation may find the log empty).
        RunStartedTiming::AfterResponse => engine::spawn_after_started(ctx, started),
    }
    Ok(())
}

/// Starts a validated run under a fresh id.
pub(crate) fn create_run(state: &Arc<WState>, run: NewRun) -> Result<String, ApiError> {
    let run_id = state.config.choices.run_id_form.mint(&run.owner.tenant);
    start_run(state, &run_id, run)?;
    Ok(run_id)
}

/// How long an asynchronous cancel ([`CancelAnswer::Asynchronous`]) waits after answering
/// before it appends `run.cancelled`.
const ASYNCHRONOUS_CANCEL_DELAY: std::time::Duration = std::time::Duration::from_millis(100);

/// Cancels a live run: stops it and appends `run.cancelled`, before answering (`cancelled`) or
/// just after (`cancelling`), as [`CancelAnswer`] says. A terminal run → 409 `run_terminal`.
pub(crate) fn cancel_run(
    state: &WState,
    caller: &Caller,
    meta: &RunMeta,
    reason: Option<String>,
) -> Result<RunStatus, ApiError> {
    let run_id = meta.run_id.as_str();
    let terminal = || ApiError::new("run_terminal", "the run is already terminal");
    let progress = state
        .hub
        .progress(run_id)
        .map_err(|_| ApiError::internal())?;
    if progress.terminal {
        tracing::info!(run_id, "refused a cancel for a terminal run");
        return Err(terminal());
    }
    let answer = state.config.choices.cancel;
    let duration_ms = state.hub.store().log(run_id).ok().flatten().map(|record| {
        let elapsed = state.hub.clock().now() - record.created_at;
        u64::try_from(elapsed.num_milliseconds()).unwrap_or(0)
    });
    let payload = match state.config.choices.cancelled_payload {
        CancelledPayload::Filled => RunCancelled {
            reason: Some(reason.unwrap_or_else(|| "cancelled-by-request".to_string())),
            cancelled_by: Some(caller.subject.clone()),
            duration_ms,
            parent_run_id: None,
        },
        CancelledPayload::AsRequested => RunCancelled {
            reason,
            cancelled_by: None,
            duration_ms,
            parent_run_id: None,
        },
    };
    let recorder = Recorder::new(
        Arc::clone(&state.hub),
        run_id,
        &state.defects,
        &state.config.choices,
    );
    match answer {
        CancelAnswer::Synchronous => match recorder.record("run.cancelled", None, json!(payload)) {
            Ok(_) => {}
            Err(AppendError::Terminal { .. }) => return Err(terminal()),
            Err(AppendError::Store(error)) => {
                tracing::error!(%error, "appending run.cancelled failed");
                return Err(ApiError::internal());
            }
        },
        CancelAnswer::Asynchronous => {
            tokio::spawn(async move {
                tokio::time::sleep(ASYNCHRONOUS_CANCEL_DELAY).await;
                match recorder.record("run.cancelled", None, json!(payload)) {
                    Ok(_) => {}
                    // A concurrent cancel (or the run's own end) got there first.
                    Err(AppendError::Terminal { .. }) => {
                        tracing::info!("an asynchronous cancel found the run terminal");
                    }
                    Err(AppendError::Store(error)) => {
                        tracing::error!(%error, "appending run.cancelled failed");
                    }
                }
            });
        }
    }
    state.live.cancel(run_id);
    Ok(match answer {
        CancelAnswer::Synchronous => RunStatus::Cancelled,
        CancelAnswer::Asynchronous => RunStatus::Cancelling,
    })
}

/// Resolves the open interrupt of `node_id` with `resume_value`; returns the interrupt id.
pub(crate) fn resolve_interrupt(
    state: &WState,
    caller: &Caller,
    meta: &RunMeta,
    node_id: &str,
    resume_value: Value,
) -> Result<String, ApiError> {
    let run_id = meta.run_id.as_str();
    let progress = state
        .hub
        .progress(run_id)
        .map_err(|_| ApiError::internal())?;
    if progress.terminal {
        tracing::info!(
            run_id,
            node_id,
            "refused an interrupt resolution for a terminal run"
        );
        return Err(ApiError::new("run_terminal", "the run is already terminal"));
    }
    let mut resolved_id = String::new();
    state.live.resolve(run_id, node_id, |pending| {
        let action = resume_value.get("action");
        let action = match action {
            None => None,
            Some(Value::String(a)) if pending.actions.contains(a) => Some(a.clone()),
            Some(_) => {
                return Err(ApiError::validation(
                    "resumeValue.action is not one of the interrupt's actions",
                )
                .with_details(details([("actions", json!(pending.actions))])));
            }
        };
        let mut payload = json!({
            "nodeId": pending.node_id,
            "interruptId": pending.interrupt_id,
            "kind": pending.kind,
            "resumeValue": resume_value,
            "resolvedBy": caller.as_subject(),
        });
        if let Some(action) = &action {
            payload["action"] = json!(action);
            payload["decision"] = json!(if action == "reject" {
                "rejected"
            } else {
                "granted"
            });
        }
        let recorder = Recorder::new(
            Arc::clone(&state.hub),
            run_id,
            &state.defects,
            &state.config.choices,
        );
        match recorder.record("interrupt.resolved", Some(&pending.node_id), payload) {
            Ok(_) => {
                resolved_id = pending.interrupt_id.clone();
                Ok(resume_value.clone())
            }
            Err(AppendError::Terminal { .. }) => {
                Err(ApiError::new("run_terminal", "the run is already terminal"))
            }
            Err(AppendError::Store(error)) => {
                tracing::error!(%error, "appending interrupt.resolved failed");
                Err(ApiError::internal())
            }
        }
    })?;
    Ok(resolved_id)
}
