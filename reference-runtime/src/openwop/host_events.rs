//! `GET /host/events`: the host channel. Each frame's `data:` is a HostEvent document
//! `{eventId, type, timestamp, delivery, payload}` carrying a heartbeat message; durable frames
//! carry `id:`. No run data travels here.

use std::sync::Arc;

use axum::extract::State;
use axum::response::Response;
use futures::StreamExt;
use spec::openwop::{HostEvent, HostEventDelivery};
use tokio::sync::broadcast;
use tokio_stream::wrappers::BroadcastStream;

use crate::sse::{SseFrame, sse_response};

use super::auth::Caller;
use super::state::WState;

/// How many host events a slow subscriber may fall behind before it skips some.
const CAPACITY: usize = 1024;

/// Fans host events out to every open `/host/events` stream.
pub(crate) struct HostEventBus {
    sender: broadcast::Sender<SseFrame>,
}

impl Default for HostEventBus {
    fn default() -> Self {
        HostEventBus {
            sender: broadcast::channel(CAPACITY).0,
        }
    }
}

impl HostEventBus {
    /// Sends one host event to every current subscriber (none is fine).
    pub(crate) fn publish(&self, event: &HostEvent) {
        let Ok(data) = serde_json::to_string(event) else {
            return;
        };
        let frame = SseFrame {
            id: (event.delivery == HostEventDelivery::Durable).then(|| event.event_id.clone()),
            event: Some(event.event_type.clone()),
            data,
        };
        let _ = self.sender.send(frame);
    }

    fn subscribe(&self) -> broadcast::Receiver<SseFrame> {
        self.sender.subscribe()
    }
}

/// `GET /host/events` (authenticated; any tenant's key).
pub(crate) async fn host_events(State(state): State<Arc<WState>>, _caller: Caller) -> Response {
    let frames = BroadcastStream::new(state.host_events.subscribe()).filter_map(|frame| async {
        match frame {
            Ok(frame) => Some(frame),
            Err(lagged) => {
                tracing::warn!(%lagged, "a host-event subscriber fell behind; events skipped");
                None
            }
        }
    });
    sse_response(frames, state.keep_alive())
}
