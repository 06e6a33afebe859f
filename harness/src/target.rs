//! The host under test, as the harness sees it: where it is, how to authenticate, which
//! capabilities it has, and the fake upstream it was configured with.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde_json::Value;

use crate::case::Principal;

/// One header the harness sends (its value is a secret unless proven otherwise and is never
/// reported).
#[derive(Clone, PartialEq, Eq)]
pub struct SecretHeader {
    /// The header name.
    pub name: String,
    /// The value.
    pub value: String,
}

impl std::fmt::Debug for SecretHeader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: [REDACTED]", self.name)
    }
}

/// Fake providers the host calls: the harness registers each case's scripts before the case
/// runs and reads the calls afterwards.
pub trait Upstream: Send + Sync {
    /// Registers a script under a unique id; returns the marker a request must carry to select
    /// it, and the script exactly as the fake providers serve it.
    fn register(&self, script_id: &str, script: &Value) -> Result<(String, Value), String>;
    /// Calls received for a script: `(provider instance, count)`.
    fn calls(&self, script_id: &str) -> Vec<(String, u32)>;
    /// The role a provider instance plays (`openai-primary` → `text-primary`).
    fn role_of(&self, instance: &str) -> Option<String>;
}

/// Everything the driver needs to reach and judge a host.
#[derive(Clone)]
pub struct Target {
    /// `built-in` or `external`.
    pub kind: String,
    /// The base URL, without a trailing slash.
    pub base_url: String,
    /// Headers sent on every request.
    pub headers: Vec<SecretHeader>,
    /// Headers per principal (`a`, `b`); `invalid` uses a credential the host cannot know.
    pub principals: BTreeMap<String, Vec<SecretHeader>>,
    /// Provider ids by role, as configured in the host.
    pub providers: BTreeMap<String, String>,
    /// Facts cases may read as `${target.<name>}`.
    pub facts: BTreeMap<String, Value>,
    /// What the host has (`fixture:…`, `stream-mode:…`, `capability:…`, `provider:…`, …).
    pub capabilities: BTreeSet<String>,
    /// The canary credential the fake providers require: it must never come back from the host.
    pub canary: Option<String>,
    /// The fake upstream, when one is running.
    pub upstream: Option<Arc<dyn Upstream>>,
    /// The host's self-description.
    pub implementation: Option<String>,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Target")
            .field("kind", &self.kind)
            .field("base_url", &self.base_url)
            .field("headers", &self.headers)
            .field("providers", &self.providers)
            .field("capabilities", &self.capabilities)
            .finish_non_exhaustive()
    }
}

impl Target {
    /// The headers a request as `principal` carries (beside the global ones).
    pub fn principal_headers(&self, principal: Principal) -> Vec<SecretHeader> {
        match principal {
            Principal::A => self.principals.get("a").cloned().unwrap_or_default(),
            Principal::B => self.principals.get("b").cloned().unwrap_or_default(),
            Principal::Invalid => vec![SecretHeader {
                name: "authorization".into(),
                value: "Bearer conformance-invalid-credential-0000".into(),
            }],
            Principal::None => Vec::new(),
        }
    }

    /// Whether the target has a capability, or (`fact:<name>`) the fact a case reads as
    /// `${target.<name>}`.
    pub fn has(&self, need: &str) -> bool {
        match need.strip_prefix("fact:") {
            Some(name) => self.facts.contains_key(name),
            None => self.capabilities.contains(need),
        }
    }

    /// Every secret value the harness holds, for scrubbing reports.
    pub fn secrets(&self) -> Vec<String> {
        let mut secrets: Vec<String> = self
            .headers
            .iter()
            .chain(self.principals.values().flatten())
            .map(|h| h.value.clone())
            .filter(|v| v.len() >= 6)
            .collect();
        secrets.extend(self.canary.clone());
        secrets
    }
}
