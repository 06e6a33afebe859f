//! `GET /host/events`: the host channel. Each frame's `data:` is a HostEvent document
//! `{eventId, type, timestamp, delivery, payload}` carrying a heartbeat message; durable frames
//! carry `id:`. No run data travels here.
//!
//! `?heartbeatId=<id>[,<id>…]` (this host's extension; unknown query parameters are otherwise
//! ignored) narrows the subscription to the named heartbeats: a host heartbeat by its id, a
//! per-subscription heartbeat by its configured id, which also starts a fresh instance of it for
//! this subscription (see `heartbeat`). A name that is neither answers 400 `validation_error`.
//! Without the parameter the subscription carries every host heartbeat and starts nothing.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::response::Response;
use futures::StreamExt;
use serde_json::json;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_stream::wrappers::{BroadcastStream, UnboundedReceiverStream};

use crate::sse::sse_response;

use crate::openwop::infra::auth::Caller;
use crate::openwop::infra::error::{ApiError, details};
use crate::openwop::services::heartbeat;
use crate::openwop::services::state::WState;

/// Stops a subscription's heartbeat instances when its stream is dropped.
struct Instances(Vec<JoinHandle<()>>);

impl Drop for Instances {
    fn drop(&mut self) {
        for task in &self.0 {
            task.abort();
        }
    }
}

/// `GET /host/events` (authenticated; any tenant's key).
pub(crate) async fn host_events(
    State(state): State<Arc<WState>>,
    _caller: Caller,
    query: Result<Query<HashMap<String, String>>, QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(query) = query.map_err(|_| ApiError::validation("the query string is malformed"))?;
    let settings = &state.config.heartbeat;
    // Which host heartbeats pass (all without a filter) and which templates to start.
    let (host_filter, templates) = match query.get("heartbeatId") {
        None => (None, Vec::new()),
        Some(list) => {
            let mut host = HashSet::new();
            let mut templates = Vec::new();
            for name in list.split(',').map(str::trim) {
                if settings.heartbeats.iter().any(|b| b.id == name) {
                    host.insert(name.to_string());
                } else if let Some(template) = settings
                    .subscription_heartbeats
                    .iter()
                    .find(|b| b.id == name)
                {
                    if !templates.contains(&template) {
                        templates.push(template);
                    }
                } else {
                    let known: Vec<&str> = settings
                        .heartbeats
                        .iter()
                        .chain(&settings.subscription_heartbeats)
                        .map(|b| b.id.as_str())
                        .collect();
                    return Err(ApiError::validation(
                        "heartbeatId names a heartbeat this host does not have",
                    )
                    .with_details(details([("heartbeats", json!(known))])));
                }
            }
            (Some(Arc::new(host)), templates)
        }
    };
    let host_frames = BroadcastStream::new(state.host_events.subscribe()).filter_map(move |item| {
        let host_filter = host_filter.clone();
        async move {
            match item {
                Ok(published) => host_filter
                    .is_none_or(|allowed| allowed.contains(&*published.heartbeat_id))
                    .then_some(published.frame),
                Err(lagged) => {
                    tracing::warn!(%lagged, "a host-event subscriber fell behind; events skipped");
                    None
                }
            }
        }
    });
    // The instances' channel exists before they start, so their first tick is never missed.
    let (own_sender, own_frames) = mpsc::unbounded_channel();
    let instances = Instances(
        templates
            .into_iter()
            .map(|template| heartbeat::start_instance(&state, template, own_sender.clone()))
            .collect(),
    );
    drop(own_sender);
    let frames = futures::stream::select(host_frames, UnboundedReceiverStream::new(own_frames))
        .map(move |frame| {
            let _alive = &instances;
            frame
        });
    Ok(sse_response(frames, state.keep_alive()))
}
