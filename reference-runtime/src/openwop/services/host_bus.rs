//! The host-event bus: fans host-heartbeat messages out to every open `/host/events` stream.

use std::sync::Arc;

use spec::openwop::{HostEvent, HostEventDelivery};
use tokio::sync::broadcast;

use crate::openwop::infra::choices::HostEventFraming;
use crate::sse::{FrameId, SseFrame};

/// How many host events a slow subscriber may fall behind before it skips some.
const CAPACITY: usize = 1024;

/// One host-heartbeat message on its way to the subscribers.
#[derive(Clone)]
pub(crate) struct Published {
    pub(crate) heartbeat_id: Arc<str>,
    pub(crate) frame: SseFrame,
}

/// Fans host-heartbeat messages out to every open `/host/events` stream.
pub(crate) struct HostEventBus {
    sender: broadcast::Sender<Published>,
}

impl Default for HostEventBus {
    fn default() -> Self {
        HostEventBus {
            sender: broadcast::channel(CAPACITY).0,
        }
    }
}

/// The SSE frame of a host event (`id:` only for durable events): `event:` its type, `data:` the
/// HostEvent document or, under [`HostEventFraming::BareMessage`], the bare heartbeat message.
pub(crate) fn frame_of(event: &HostEvent, framing: HostEventFraming) -> Option<SseFrame> {
    let data = match framing {
        HostEventFraming::Envelope => serde_json::to_string(event).ok()?,
        HostEventFraming::BareMessage => serde_json::to_string(&event.payload).ok()?,
    };
    Some(SseFrame {
        id: (event.delivery == HostEventDelivery::Durable)
            .then(|| FrameId::Text(event.event_id.clone())),
        event: Some(event.event_type.as_str().into()),
        data: data.into(),
    })
}

impl HostEventBus {
    /// Sends one message of host heartbeat `heartbeat_id` to every current subscriber (none is
    /// fine).
    pub(crate) fn publish(&self, heartbeat_id: &str, event: &HostEvent, framing: HostEventFraming) {
        if let Some(frame) = frame_of(event, framing) {
            let _ = self.sender.send(Published {
                heartbeat_id: heartbeat_id.into(),
                frame,
            });
        }
    }

    /// A receiver of every message published from now on.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Published> {
        self.sender.subscribe()
    }
}
