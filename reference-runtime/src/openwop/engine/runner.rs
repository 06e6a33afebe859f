//! The small workflow engine: runs a workflow's nodes in order on a tokio task, appending the
//! run's events. Waits (delays, mock token delays, suspensions) run on the tokio clock, so tests
//! drive them with virtual time.
//!
//! A cancel appends `run.cancelled` first (in the cancel handler) and then signals the task; the
//! task abandons its node and whatever it still tries to append is refused by the log and logged
//! (late work appends nothing).

use serde_json::{Map, Value, json};
use spec::openwop::payloads::{
    CapBreached, ErrorObject, NodeCompleted, NodeFailed, NodeStarted, RunCompleted, RunFailed,
};
use tokio::sync::oneshot;
use tokio::time::Instant;

use crate::openwop::infra::choices::{
    AfterTerminalEvents, NEGOTIATED_MCP_VERSION, UpstreamContradictions,
};

use super::ai::{self};
use super::envelopes;
use super::live::PendingInterrupt;
use super::node_context::{NodeError, NodeSuccess, RunContext};
use super::usage;
use super::workflow::{NodeDef, NodeKind, delay_ms};

/// Starts a run's task.
pub(crate) fn spawn(ctx: RunContext) {
    tokio::spawn(async move {
        run_within_ceiling(&ctx).await;
        ctx.env.live.finish(ctx.run_id());
    });
}

/// Starts a run's task that first appends `run.started` (after the creating request's
/// response: [`crate::openwop::infra::choices::RunStartedTiming::AfterResponse`]). A run cancelled before then
/// keeps its log as the cancel left it.
pub(crate) fn spawn_after_started(ctx: RunContext, started: Value) {
    tokio::spawn(async move {
        tokio::time::sleep(RUN_STARTED_DELAY).await;
        match ctx.recorder.record("run.started", None, started) {
            Ok(_) => run_within_ceiling(&ctx).await,
            Err(error) => tracing::info!(%error, "a run ended before its run.started"),
        }
        ctx.env.live.finish(ctx.run_id());
    });
}

/// How long after the 201 a host taking [`crate::openwop::infra::choices::RunStartedTiming::AfterResponse`]
/// appends `run.started`.
const RUN_STARTED_DELAY: std::time::Duration = std::time::Duration::from_millis(20);

/// Runs the workflow within the host's run ceiling (`limits.maxRunDurationMs`): a run still going
/// when it passes is stopped where it waits and fails with `cap.breached {kind: run-duration}`
/// then `run.failed` with error `run_timeout` (upstream's capabilities schema: "Breach emits
/// `cap.breached { kind: 'run-duration' }` + error `run_timeout`").
async fn run_within_ceiling(ctx: &RunContext) {
    let started = Instant::now();
    let Some(ceiling) = ctx.env.config.run_duration_ceiling() else {
        return run(ctx, started).await;
    };
    if tokio::time::timeout(ceiling, run(ctx, started))
        .await
        .is_ok()
    {
        return;
    }
    let observed = elapsed_ms(started);
    let breached = CapBreached {
        kind: "run-duration".into(),
        limit: json!(ceiling.as_millis()),
        observed: json!(observed),
        node_id: None,
    };
    // A run that ended on its own (or was cancelled) at the ceiling keeps its terminal event:
    // the log refuses both appends.
    if ctx.record("cap.breached", None, json!(breached)).is_err() {
        return;
    }
    let failed = RunFailed {
        error: ErrorObject {
            code: "run_timeout".into(),
            message: format!("the run passed its ceiling of {} ms", ceiling.as_millis()),
            details: None,
            retryable: Some(false),
        },
        failed_node_id: None,
        duration_ms: Some(observed),
    };
    let _ = ctx.record("run.failed", None, json!(failed));
}

async fn run(ctx: &RunContext, started: Instant) {
    if ctx.env.config.choices.upstream_contradictions == UpstreamContradictions::OtherSide
        && record_negotiation(ctx).is_err()
    {
        return;
    }
    let mut last_outputs = Map::new();
    for node in &ctx.workflow.nodes {
        match execute(ctx, node).await {
            Ok(outputs) => last_outputs = outputs,
            Err(NodeError::Failed(failure)) => {
                let payload = RunFailed {
                    error: failure.error,
                    failed_node_id: Some(node.id.clone()),
                    duration_ms: Some(elapsed_ms(started)),
                };
                let _ = ctx.record("run.failed", None, json!(payload));
                return;
            }
            Err(NodeError::Stopped) => return,
        }
    }
    let duration_ms = elapsed_ms(started);
    let payload = json!(RunCompleted {
        outputs: last_outputs,
        duration_ms: Some(duration_ms),
    });
    let completed = ctx.record("run.completed", None, payload).is_ok();
    if completed && ctx.env.config.choices.after_terminal == AfterTerminalEvents::VendorEvent {
        // A vendor type may follow the terminal event (the chapter's terminal rule).
        let _ = ctx.record("example.run-archived", None, json!({ "archived": true }));
    }
}

/// Records the run's tool-peer protocol negotiation as `negotiation.decided` (the type enum's
/// side of upstream's contradiction: the type has no codemap row). The payload follows
/// upstream's closed def: `protocol`, `outcome` and `at` required; `version` and `reason`
/// optional.
fn record_negotiation(ctx: &RunContext) -> Result<(), NodeError> {
    let at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    ctx.record(
        "negotiation.decided",
        None,
        json!({
            "protocol": "mcp",
            "outcome": "accepted",
            "version": NEGOTIATED_MCP_VERSION,
            "reason": "ok",
            "at": at,
        }),
    )
}

/// Runs one node: `node.started`, the node's work, then its provider usage and `node.completed`
/// (or `node.failed`).
async fn execute(ctx: &RunContext, node: &NodeDef) -> Result<Map<String, Value>, NodeError> {
    let started = Instant::now();
    let begin = NodeStarted {
        node_id: node.id.clone(),
        type_id: node.type_id.clone(),
        attempt: Some(0),
    };
    ctx.record("node.started", Some(&node.id), json!(begin))?;
    let result = match node.kind {
        NodeKind::Noop => Ok(success(Map::new())),
        NodeKind::Delay => delay(ctx, node).await,
        NodeKind::Fail => Err(fail(node)),
        NodeKind::ApprovalGate => approval_gate(ctx, node).await,
        NodeKind::AiCallPrompt => ai::node::run_node(ctx, node).await,
        NodeKind::AiStructuredOutput => envelopes::node::run_node(ctx, node).await,
        NodeKind::DebugNoise => debug_noise(ctx, node),
    };
    match result {
        Ok(NodeSuccess { outputs, usage }) => {
            let done = NodeCompleted {
                node_id: node.id.clone(),
                outputs: Some(outputs.clone()),
                duration_ms: Some(elapsed_ms(started)),
            };
            // The rule: one provider.usage per provider call, before the node's node.completed.
            usage::record(ctx, node, &usage, Some(&outputs))?;
            ctx.record("node.completed", Some(&node.id), json!(done))?;
            Ok(outputs)
        }
        Err(NodeError::Failed(failure)) => {
            usage::record(ctx, node, &failure.usage, None)?;
            let failed = NodeFailed {
                node_id: node.id.clone(),
                error: failure.error.clone(),
                attempts: Some(failure.attempts),
            };
            ctx.record("node.failed", Some(&node.id), json!(failed))?;
            Err(NodeError::Failed(failure))
        }
        Err(NodeError::Stopped) => {
            abandon(ctx, node);
            Err(NodeError::Stopped)
        }
    }
}

/// A cancelled run's node is abandoned. The cancel already appended `run.cancelled`, so the
/// `node.cancelled` this late worker reports is refused by the log and logged, never appended.
fn abandon(ctx: &RunContext, node: &NodeDef) {
    if !ctx.is_cancelled() {
        return;
    }
    let payload = json!({ "nodeId": node.id, "reason": "run-cancelled" });
    let _ = ctx.record("node.cancelled", Some(&node.id), payload);
}

fn success(outputs: Map<String, Value>) -> NodeSuccess {
    NodeSuccess {
        outputs,
        usage: Vec::new(),
    }
}

fn elapsed_ms(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX)
}

async fn delay(ctx: &RunContext, node: &NodeDef) -> Result<NodeSuccess, NodeError> {
    let ms = delay_ms(node, &ctx.variables).map_err(|message| {
        NodeError::failed(
            ErrorObject {
                code: "validation_error".into(),
                message,
                details: None,
                retryable: Some(false),
            },
            Vec::new(),
        )
    })?;
    tokio::select! {
        () = tokio::time::sleep(std::time::Duration::from_millis(ms)) => {}
        () = ctx.cancelled() => return Err(NodeError::Stopped),
    }
    let mut outputs = Map::new();
    outputs.insert("delayMs".into(), json!(ms));
    Ok(success(outputs))
}

fn fail(node: &NodeDef) -> NodeError {
    let text = |key: &str, default: &str| {
        node.config
            .get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .unwrap_or(default)
            .to_string()
    };
    NodeError::failed(
        ErrorObject {
            // Upstream's `core.fail` (conformance/fixtures.md, NodeModule registration).
            code: text("code", "conformance_test_failure"),
            message: text("message", "Intentional conformance failure"),
            details: None,
            retryable: Some(false),
        },
        Vec::new(),
    )
}

async fn approval_gate(ctx: &RunContext, node: &NodeDef) -> Result<NodeSuccess, NodeError> {
    let interrupt_id = ctx.env.config.choices.interrupt_id_form.mint(&ctx.tenant);
    let actions: Vec<String> = node
        .config
        .get("actions")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .filter(|a: &Vec<String>| !a.is_empty())
        .unwrap_or_else(|| vec!["accept".into(), "reject".into()]);
    let (resume, resumed) = oneshot::channel();
    let pending = PendingInterrupt {
        node_id: node.id.clone(),
        interrupt_id: interrupt_id.clone(),
        kind: "approval".into(),
        actions: actions.clone(),
        resume,
    };
    ctx.env.live.suspend(ctx.run_id(), pending, || {
        let suspended = json!({
            "nodeId": node.id, "interruptId": interrupt_id,
            "kind": "approval", "reason": "approval-required",
        });
        ctx.record("node.suspended", Some(&node.id), suspended)?;
        // suspend-request.schema.json: kind, key and the kind's data, plus the engine-assigned
        // identity members its description names.
        let mut requested = json!({
            "kind": "approval",
            "key": format!("{}:{}:0", ctx.run_id(), node.id),
            "data": {
                "artifactId": format!("{}:{}", ctx.run_id(), node.id),
                "artifactType": "conformance.approval",
                "title": format!("Approve node {}", node.id),
                "actions": actions,
            },
            "nodeId": node.id, "interruptId": interrupt_id,
        });
        if ctx.env.config.choices.upstream_contradictions == UpstreamContradictions::OtherSide {
            // The closed schema's side: kind, key and data only (node.suspended and the
            // envelope's nodeId still name the node and the interrupt).
            if let Some(r) = requested.as_object_mut() {
                r.remove("nodeId");
                r.remove("interruptId");
            }
        }
        ctx.record("interrupt.requested", Some(&node.id), requested)
    })?;
    let value = tokio::select! {
        value = resumed => value.map_err(|_| NodeError::Stopped)?,
        () = ctx.cancelled() => return Err(NodeError::Stopped),
    };
    let resumed = json!({
        "nodeId": node.id, "interruptId": interrupt_id, "resumeValue": value,
    });
    ctx.record("node.resumed", Some(&node.id), resumed)?;
    let mut outputs = Map::new();
    if let Some(action) = value.get("action") {
        outputs.insert("action".into(), action.clone());
    }
    outputs.insert("resumeValue".into(), value);
    Ok(success(outputs))
}

fn debug_noise(ctx: &RunContext, node: &NodeDef) -> Result<NodeSuccess, NodeError> {
    let id = Some(node.id.as_str());
    ctx.record(
        "log.appended",
        id,
        json!({ "level": "info", "message": "conformance debug noise", "nodeId": node.id }),
    )?;
    ctx.record(
        "variable.changed",
        id,
        json!({ "name": "noise", "previous": 0, "next": 1, "nodeId": node.id }),
    )?;
    ctx.record(
        "example.noise-emitted",
        id,
        json!({ "nodeId": node.id, "note": "a vendor event of the conformance org" }),
    )?;
    Ok(success(Map::new()))
}
