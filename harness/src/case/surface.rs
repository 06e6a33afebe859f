//! The surfaces a case drives (a case's `surface`, a `surface:` need, a report's surface
//! judgement).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The surface a case drives.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum CaseSurface {
    /// The execution protocol (`/v1/...`).
    Execution,
    /// The OpenWOP v2 run events surface (`/runs/...`).
    Openwop,
}

impl CaseSurface {
    /// Every surface, in this order.
    pub const ALL: [CaseSurface; 2] = [CaseSurface::Execution, CaseSurface::Openwop];

    /// The wire spelling (`execution`, `openwop`).
    pub fn as_str(self) -> &'static str {
        match self {
            CaseSurface::Execution => "execution",
            CaseSurface::Openwop => "openwop",
        }
    }

    /// Parses a surface's wire spelling.
    pub fn parse(name: &str) -> Option<CaseSurface> {
        Self::ALL
            .into_iter()
            .find(|surface| surface.as_str() == name)
    }
}

impl std::fmt::Display for CaseSurface {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
