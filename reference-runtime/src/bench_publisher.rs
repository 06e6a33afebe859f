//! The bench publisher: a bench-only way to publish N events into one real log once S
//! subscribers are connected, so an outside SSE load client (the `sse-load` of
//! `../shared/bench/sse-anchor`) can measure the runtime's own event streams the way it measures
//! a bare tokio-broadcast server.
//!
//! It exists only when the binary is started with `--bench-publisher` ([`Config::bench_publisher`],
//! never read from a configuration file); a runtime started any other way has none of these
//! routes and answers them with the usual 404.
//!
//! | route | what it does |
//! |---|---|
//! | `POST /bench/logs?surface=x` | creates a live execution (its log holds `execution.accepted`), answers its `stream_path` and `start_path` |
//! | `POST /bench/logs?surface=w` | creates a live run (its log holds `run.started`), answers the same |
//! | `POST /bench/logs/{id}/publish?events=N&subscribers=S[&rate=R]` | waits (≤ 30 s) until S subscriptions of the log are open, appends N − 1 events (burst, or paced at R events/s), the last one terminal, waits (≤ 300 s) until every stream has ended, answers `{"published","publish_ms","drained"}` |
//!
//! The events are the surfaces' own, written through the one [`LogHub`] and served by the real
//! endpoints (`GET /v1/executions/{id}/events`, `GET /runs/{runId}/events`): surface X gets
//! `output.delta` events and ends with `execution.completed`; surface W gets `node.completed`
//! events (an updates-tier type, so the default `updates` stream carries them) and ends with
//! `run.completed`. Each published event carries `t_ns` (unix nanoseconds when it was
//! rendered) where its schema admits an extra member: at the top level of an execution event
//! (the execution event objects are open), in `outputs` of `node.completed` / `run.completed`
//! (an open object). The log's first event, written before anyone subscribed, carries none.
//! With the backlog event, a subscriber from the start reads exactly N frames.
//!
//! Surface W streams need a caller: the load client sends no `Authorization`, so on a runtime
//! with the bench publisher (and only there) a request without one is served as the first
//! configured API key's caller, the tenant the bench run belongs to. The key lookup, the run's
//! tenant check and the subscriber limit still run on every request.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::extract::{Path, Query, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{Value, json};
use spec::execution::{EventBody, ExecutionEvent, Target};
use spec::openwop::{RunEventDoc, SCHEMA_VERSION};

use crate::config::Config;
use crate::log::{AppendKind, LogHub};
use crate::openwop::Caller;
use crate::openwop::infra::recorder;
use crate::store::Surface;

/// How long `publish` waits for the subscribers it was told to expect.
const CONNECT_WAIT: Duration = Duration::from_secs(30);
/// How long `publish` waits for every stream to end after the terminal event.
const DRAIN_WAIT: Duration = Duration::from_secs(300);
/// How often `publish` looks at the subscriber count while it waits.
const WAIT_STEP: Duration = Duration::from_millis(5);
/// The workflow a bench run names.
const BENCH_WORKFLOW: &str = "bench-fan-out";
/// The node every `node.completed` of a bench run names.
const BENCH_NODE: &str = "tick";

/// What the bench routes share.
#[derive(Clone)]
struct BenchState {
    hub: Arc<LogHub>,
    config: Arc<Config>,
}

/// Adds the bench routes and the W caller default to `router` (only for a runtime started
/// with `--bench-publisher`).
pub(crate) fn install(router: Router, hub: Arc<LogHub>, config: Arc<Config>) -> Router {
    let default_key = config
        .openwop
        .api_keys
        .first()
        .and_then(|k| HeaderValue::from_str(&format!("Bearer {}", k.key)).ok());
    let state = BenchState { hub, config };
    let routes = Router::new()
        .route("/bench/logs", post(create_log))
        .route("/bench/logs/{id}/publish", post(publish))
        .with_state(state);
    let router = router.merge(routes);
    match default_key {
        Some(key) => router.layer(axum::middleware::from_fn(move |request, next| {
            default_caller(key.clone(), request, next)
        })),
        None => router,
    }
}

/// Requests to a run's event stream without `Authorization` get the bench tenant's key.
async fn default_caller(key: HeaderValue, mut request: Request, next: Next) -> Response {
    let is_run_stream = request.uri().path().starts_with("/runs/");
    if is_run_stream && !request.headers().contains_key(header::AUTHORIZATION) {
        request.headers_mut().insert(header::AUTHORIZATION, key);
    }
    next.run(request).await
}

fn unix_nanos() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

fn refusal(status: StatusCode, message: &str) -> Response {
    (status, Json(json!({ "error": message }))).into_response()
}

/// Which surface a bench log is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BenchSurface {
    /// An execution (surface X).
    Execution,
    /// A run (surface W).
    Run,
}

/// `POST /bench/logs?surface=x|w`.
async fn create_log(
    State(state): State<BenchState>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let surface = match query.get("surface").map(String::as_str) {
        Some("x") => BenchSurface::Execution,
        Some("w") => BenchSurface::Run,
        _ => return refusal(StatusCode::BAD_REQUEST, "surface must be x or w"),
    };
    let created = match surface {
        BenchSurface::Execution => create_execution(&state),
        BenchSurface::Run => create_run(&state),
    };
    match created {
        Ok((id, stream_path)) => {
            let start_path = format!("/bench/logs/{}/publish", encode_segment(&id));
            (
                StatusCode::CREATED,
                Json(json!({ "id": id, "stream_path": stream_path, "start_path": start_path })),
            )
                .into_response()
        }
        Err(message) => refusal(StatusCode::INTERNAL_SERVER_ERROR, &message),
    }
}

/// A path segment with `/` written `~2F` (the run-id form surface W reads).
fn encode_segment(id: &str) -> String {
    id.replace('/', "~2F")
}

fn create_execution(state: &BenchState) -> Result<(String, String), String> {
    let id = state.config.execution.id_form.mint();
    state
        .hub
        .create(&id, Surface::Execution, json!({}))
        .map_err(|e| e.to_string())?;
    state
        .hub
        .append(
            &id,
            "execution.accepted",
            AppendKind::Forward,
            |sequence, time| {
                render_execution_event(&id, sequence, time, EventBody::Accepted {}, None)
            },
        )
        .map_err(|e| e.to_string())?;
    let path = format!("/v1/executions/{id}/events");
    Ok((id, path))
}

fn create_run(state: &BenchState) -> Result<(String, String), String> {
    let key = state
        .config
        .openwop
        .api_keys
        .first()
        .ok_or("a bench run needs one configured API key")?;
    let caller = Caller {
        tenant: key.tenant.clone(),
        subject: key.subject.clone(),
        is_test_key: false,
    };
    let owner = caller.owner();
    let id = state
        .config
        .openwop
        .choices
        .run_id_form
        .mint(&caller.tenant);
    let meta = json!({
        "kind": "openwop-run",
        "runId": id,
        "workflowId": BENCH_WORKFLOW,
        "owner": owner,
        "inputs": {},
    });
    state
        .hub
        .create(&id, Surface::Run, meta)
        .map_err(|e| e.to_string())?;
    let payload = json!({ "workflowId": BENCH_WORKFLOW, "inputs": {}, "owner": owner });
    append_run_event(
        state,
        &id,
        "run.started",
        None,
        payload,
        AppendKind::Forward,
    )?;
    let path = format!("/runs/{}/events", encode_segment(&id));
    Ok((id, path))
}

/// An execution event's wire JSON, with `t_ns` as an extra top-level member when given.
fn render_execution_event(
    id: &str,
    sequence: u64,
    time: chrono::DateTime<chrono::Utc>,
    body: EventBody,
    t_ns: Option<u64>,
) -> String {
    let event = ExecutionEvent {
        execution_id: id.to_string(),
        sequence,
        time,
        body,
    };
    let Ok(mut value) = serde_json::to_value(&event) else {
        return String::new();
    };
    if let (Some(t_ns), Some(object)) = (t_ns, value.as_object_mut()) {
        object.insert("t_ns".into(), json!(t_ns));
    }
    value.to_string()
}

fn append_run_event(
    state: &BenchState,
    run_id: &str,
    event_type: &str,
    node_id: Option<&str>,
    payload: Value,
    kind: AppendKind,
) -> Result<(), String> {
    let event_id = state.config.openwop.choices.event_id_form.mint();
    state
        .hub
        .append(run_id, event_type, kind, |sequence, time| {
            let doc = RunEventDoc {
                event_id,
                run_id: run_id.to_string(),
                event_type: event_type.to_string(),
                payload,
                timestamp: time,
                sequence,
                schema_version: SCHEMA_VERSION,
                node_id: node_id.map(str::to_string),
                engine_version: None,
                causation_id: None,
            };
            recorder::wire_json(&doc, state.hub.wire_time(time))
        })
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// The `publish` query (the load client's `?events=N&subscribers=S[&rate=R]`).
#[derive(Debug, serde::Deserialize)]
struct PublishParams {
    events: u64,
    subscribers: usize,
    /// Events per second; absent or 0 publishes as fast as the log appends.
    rate: Option<f64>,
}

/// Waits until `done(count)` holds for the log's open subscriptions, or `limit` passes.
async fn wait_for_subscribers(
    hub: &LogHub,
    id: &str,
    limit: Duration,
    done: impl Fn(usize) -> bool,
) -> bool {
    let until = Instant::now() + limit;
    loop {
        match hub.subscriber_count(id) {
            Ok(count) if done(count) => return true,
            Ok(_) => {}
            Err(_) => return false,
        }
        if Instant::now() >= until {
            return false;
        }
        tokio::time::sleep(WAIT_STEP).await;
    }
}

/// `POST /bench/logs/{id}/publish?events=N&subscribers=S[&rate=R]`.
async fn publish(
    State(state): State<BenchState>,
    Path(id): Path<String>,
    Query(params): Query<PublishParams>,
) -> Response {
    let id = id.replace("~2F", "/");
    let surface = match state.hub.surface(&id) {
        Ok(Surface::Execution) => BenchSurface::Execution,
        Ok(Surface::Run) => BenchSurface::Run,
        Err(_) => return refusal(StatusCode::NOT_FOUND, "no such bench log"),
    };
    if params.events < 2 {
        return refusal(
            StatusCode::BAD_REQUEST,
            "events counts the backlog event and the terminal one: at least 2",
        );
    }
    let wanted = params.subscribers;
    if !wait_for_subscribers(&state.hub, &id, CONNECT_WAIT, |c| c >= wanted).await {
        return refusal(
            StatusCode::GATEWAY_TIMEOUT,
            "timed out waiting for subscribers",
        );
    }
    let rate = params.rate.filter(|r| *r > 0.0);
    let started = Instant::now();
    // The backlog event is the first of the N frames a subscriber reads.
    let to_publish = params.events - 1;
    for i in 0..to_publish {
        if let Some(rate) = rate {
            let due = started + Duration::from_secs_f64(i as f64 / rate);
            tokio::time::sleep_until(due.into()).await;
        }
        let terminal = i + 1 == to_publish;
        let appended = match surface {
            BenchSurface::Execution => publish_execution_event(&state, &id, i, terminal),
            BenchSurface::Run => publish_run_event(&state, &id, terminal),
        };
        if let Err(message) = appended {
            return refusal(StatusCode::INTERNAL_SERVER_ERROR, &message);
        }
    }
    let publish_ms = started.elapsed().as_secs_f64() * 1e3;
    let drained = wait_for_subscribers(&state.hub, &id, DRAIN_WAIT, |c| c == 0).await;
    (
        StatusCode::OK,
        Json(json!({
            "published": to_publish,
            "publish_ms": publish_ms,
            "drained": drained,
        })),
    )
        .into_response()
}

fn publish_execution_event(
    state: &BenchState,
    id: &str,
    index: u64,
    terminal: bool,
) -> Result<(), String> {
    let (event_type, kind, body) = if terminal {
        let target = Target {
            provider: "bench".into(),
            model: "bench".into(),
        };
        (
            "execution.completed",
            AppendKind::Terminal,
            EventBody::Completed { target },
        )
    } else {
        let body = EventBody::OutputDelta {
            output_index: 0,
            delta: format!("token {index} "),
        };
        ("output.delta", AppendKind::Forward, body)
    };
    state
        .hub
        .append(id, event_type, kind, |sequence, time| {
            render_execution_event(id, sequence, time, body, Some(unix_nanos()))
        })
        .map(|_| ())
        .map_err(|e| e.to_string())
}

fn publish_run_event(state: &BenchState, id: &str, terminal: bool) -> Result<(), String> {
    let outputs = json!({ "t_ns": unix_nanos() });
    if terminal {
        let payload = json!({ "outputs": outputs });
        append_run_event(
            state,
            id,
            "run.completed",
            None,
            payload,
            AppendKind::Terminal,
        )
    } else {
        let payload = json!({ "nodeId": BENCH_NODE, "outputs": outputs });
        append_run_event(
            state,
            id,
            "node.completed",
            Some(BENCH_NODE),
            payload,
            AppendKind::Forward,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use spec::schema::{Published, validate, validate_run_event_payload};

    fn bench_state() -> BenchState {
        let store = Arc::new(crate::store::MemoryEventStore::new());
        let hub = Arc::new(LogHub::new(store, Arc::new(crate::clock::SystemClock)));
        BenchState {
            hub,
            config: Arc::new(Config::default()),
        }
    }

    fn events_of(state: &BenchState, id: &str) -> Vec<Value> {
        state
            .hub
            .read_after(id, None)
            .unwrap()
            .iter()
            .map(|e| serde_json::from_str(&e.json).unwrap())
            .collect()
    }

    #[test]
    fn execution_events_follow_the_published_schema_and_carry_t_ns() {
        let state = bench_state();
        let (id, path) = create_execution(&state).unwrap();
        assert_eq!(path, format!("/v1/executions/{id}/events"));
        publish_execution_event(&state, &id, 0, false).unwrap();
        publish_execution_event(&state, &id, 1, true).unwrap();
        let events = events_of(&state, &id);
        let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
        assert_eq!(
            types,
            ["execution.accepted", "output.delta", "execution.completed"]
        );
        for event in &events {
            validate(Published::ExecutionEvent, event).unwrap();
        }
        assert!(
            events[0].get("t_ns").is_none(),
            "the backlog event is untimed"
        );
        assert!(events[1..].iter().all(|e| e["t_ns"].as_u64().is_some()));
        assert!(state.hub.progress(&id).unwrap().terminal);
    }

    #[test]
    fn run_events_follow_the_published_schemas_and_carry_t_ns() {
        let state = bench_state();
        let (id, path) = create_run(&state).unwrap();
        assert_eq!(path, format!("/runs/{}/events", id.replace('/', "~2F")));
        publish_run_event(&state, &id, false).unwrap();
        publish_run_event(&state, &id, true).unwrap();
        let events = events_of(&state, &id);
        let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
        assert_eq!(types, ["run.started", "node.completed", "run.completed"]);
        for event in &events {
            validate(Published::RunEvent, event).unwrap();
            assert!(
                validate_run_event_payload(event["type"].as_str().unwrap(), &event["payload"])
                    .unwrap()
            );
        }
        let sequences: Vec<u64> = events
            .iter()
            .map(|e| e["sequence"].as_u64().unwrap())
            .collect();
        assert_eq!(sequences, [0, 1, 2]);
        assert!(
            events[1..]
                .iter()
                .all(|e| e["payload"]["outputs"]["t_ns"].as_u64().is_some())
        );
    }
}
