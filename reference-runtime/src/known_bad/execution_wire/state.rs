//! [`ExecutionWire`]: the execution layer's state.

use std::sync::{Arc, Mutex};

use super::keys::RememberedKeys;
use super::rewrites::ExecutionWireRewrites;
use crate::execution::service::Executions;

/// The layer's state: the rewrites, the service they read, the keys they remember.
pub(super) struct ExecutionWire {
    /// The defects the layer applies.
    pub(super) rewrites: ExecutionWireRewrites,
    /// Surface X's service: its log hub, providers, credentials and configuration.
    pub(super) service: Arc<Executions>,
    /// What the layer remembers of Idempotency-Keys (`keys.rs`).
    pub(super) keys: Mutex<RememberedKeys>,
}
