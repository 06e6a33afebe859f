//! The upstream test seams a case may need (`seam:<name>`): host-sample routes upstream's own
//! suite drives some rules through, which a host serves when its test seams are on. The probe
//! learns whether a host serves one by asking it; a case needing one the host does not serve
//! is SKIP.

use std::fmt;

use serde_json::{Value, json};

/// One upstream test seam.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum UpstreamSeam {
    /// `heartbeat-tick`: `POST /conformance/seams/sample/heartbeat/tick` (upstream's v1
    /// `/v1/host/sample/heartbeat/tick`), one tick of the heartbeat the body names.
    HeartbeatTick,
    /// `last-dispatch-budget`: `GET /conformance/seams/sample/test/mock-ai/last-dispatch-budget`
    /// (upstream's v1 `/v1/host/sample/test/mock-ai/last-dispatch-budget`), the output budget of
    /// a node's most recent mock-AI call (`{maxTokens}`, null before any).
    LastDispatchBudget,
}

impl UpstreamSeam {
    /// Every seam, for lint's suggestions.
    pub const ALL: [UpstreamSeam; 2] = [
        UpstreamSeam::HeartbeatTick,
        UpstreamSeam::LastDispatchBudget,
    ];

    /// The name as written after `seam:`.
    pub fn as_str(self) -> &'static str {
        match self {
            UpstreamSeam::HeartbeatTick => "heartbeat-tick",
            UpstreamSeam::LastDispatchBudget => "last-dispatch-budget",
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
            UpstreamSeam::LastDispatchBudget => {
                "/conformance/seams/sample/test/mock-ai/last-dispatch-budget"
            }
        }
    }

    /// How the probe asks whether a host serves the seam, with a harmless question of its own
    /// (`own_id`: a heartbeat or node id no case uses): the method, the path and query, and the
    /// JSON body.
    pub(crate) fn probe_request(self, own_id: &str) -> (reqwest::Method, String, Option<Value>) {
        match self {
            UpstreamSeam::HeartbeatTick => (
                reqwest::Method::POST,
                self.path().to_string(),
                Some(json!({"heartbeatId": own_id, "observedState": {}})),
            ),
            UpstreamSeam::LastDispatchBudget => (
                reqwest::Method::GET,
                format!("{}?nodeId={own_id}", self.path()),
                None,
            ),
        }
    }

    /// Whether a 200 answer's body to [`probe_request`](Self::probe_request) is the seam's:
    /// the tick's messages (`evaluated`), or a budget member (`maxTokens`, null before any call).
    pub(crate) fn answered_by(self, body: &Value) -> bool {
        match self {
            UpstreamSeam::HeartbeatTick => body.get("evaluated").is_some_and(Value::is_array),
            UpstreamSeam::LastDispatchBudget => body
                .get("maxTokens")
                .is_some_and(|budget| budget.is_null() || budget.is_u64()),
        }
    }
}

impl fmt::Display for UpstreamSeam {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_only_the_seams_answer_counts() {
        for seam in UpstreamSeam::ALL {
            assert_eq!(UpstreamSeam::from_name(seam.as_str()), Some(seam));
        }
        assert_eq!(UpstreamSeam::from_name("heartbeat"), None);
        let tick = UpstreamSeam::HeartbeatTick;
        assert!(tick.answered_by(&json!({"evaluated": [], "stateChanged": []})));
        assert!(!tick.answered_by(&json!({"error": "not_found"})));
        let budget = UpstreamSeam::LastDispatchBudget;
        assert!(budget.answered_by(&json!({"maxTokens": null})));
        assert!(budget.answered_by(&json!({"maxTokens": 256})));
        assert!(!budget.answered_by(&json!({"maxTokens": "256"})));
        assert!(!budget.answered_by(&json!({})));
        let (method, path, body) = budget.probe_request("probe-1");
        assert_eq!(method, reqwest::Method::GET);
        assert!(
            path.ends_with("/last-dispatch-budget?nodeId=probe-1"),
            "{path}"
        );
        assert!(body.is_none());
    }
}
