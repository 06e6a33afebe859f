//! Surface W: the OpenWOP v2 run events chapter (runs, the workflow engine, the event stream,
//! poll, host events). Owned by the surface-W work; the composition root calls [`router`].

use std::sync::Arc;

use serde::Deserialize;

use crate::defects::Defects;
use crate::log::LogHub;

/// Surface-W configuration (the `[openwop]` table of the runtime's TOML file).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenWopConfig {}

/// What surface W needs from the composition root.
#[derive(Clone)]
pub struct Dependencies {
    /// The shared log hub (both surfaces).
    pub hub: Arc<LogHub>,
    /// Switched-on defects.
    pub defects: Arc<Defects>,
    /// Surface-W configuration.
    pub config: OpenWopConfig,
}

/// The surface-W routes.
pub fn router(_deps: Dependencies) -> axum::Router {
    axum::Router::new()
}
