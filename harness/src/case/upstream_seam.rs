//! The upstream test seams a case may need (`seam:<name>`): host-sample routes upstream's own
//! suite drives some rules through, which a host serves when its test seams are on. The probe
//! learns whether a host serves one by asking it; a case needing one the host does not serve
//! is SKIP.

use std::fmt;

/// One upstream test seam.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum UpstreamSeam {
    /// `heartbeat-tick`: `POST /conformance/seams/sample/heartbeat/tick` (upstream's v1
    /// `/v1/host/sample/heartbeat/tick`), one tick of the heartbeat the body names.
    HeartbeatTick,
}

impl UpstreamSeam {
    /// Every seam, for lint's suggestions.
    pub const ALL: [UpstreamSeam; 1] = [UpstreamSeam::HeartbeatTick];

    /// The name as written after `seam:`.
    pub fn as_str(self) -> &'static str {
        match self {
            UpstreamSeam::HeartbeatTick => "heartbeat-tick",
        }
    }

    /// The seam written `name`.
    pub fn from_name(name: &str) -> Option<UpstreamSeam> {
        UpstreamSeam::ALL.into_iter().find(|s| s.as_str() == name)
    }

    /// The seam's path on surface W.
    pub fn path(self) -> &'static str {
        match self {
            UpstreamSeam::HeartbeatTick => "/conformance/seams/sample/heartbeat/tick",
        }
    }
}

impl fmt::Display for UpstreamSeam {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
