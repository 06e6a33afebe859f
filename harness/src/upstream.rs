//! The fake providers as the harness's [`Upstream`]: scripts registered per case, calls read
//! back per script, instances mapped to the roles cases name.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::target::Upstream;

/// The provider roles cases use, and the default fake instance that plays each.
pub const DEFAULT_ROLES: [(&str, &str); 4] = [
    ("text-primary", "openai-primary"),
    ("text-secondary", "anthropic-secondary"),
    ("media", "media"),
    ("timing", "openai-timing"),
];

/// [`mock_provider::FakeProviders`] with a role map.
pub struct FakeUpstream {
    providers: mock_provider::FakeProviders,
    roles: BTreeMap<String, String>,
}

impl FakeUpstream {
    /// Wraps running fake providers; `roles` maps role → instance name.
    pub fn new(providers: mock_provider::FakeProviders, roles: BTreeMap<String, String>) -> Self {
        FakeUpstream { providers, roles }
    }

    /// The default role map.
    pub fn default_roles() -> BTreeMap<String, String> {
        DEFAULT_ROLES
            .iter()
            .map(|(r, i)| (r.to_string(), i.to_string()))
            .collect()
    }

    /// The running fake providers.
    pub fn providers(&self) -> &mock_provider::FakeProviders {
        &self.providers
    }

    /// The role map.
    pub fn roles(&self) -> &BTreeMap<String, String> {
        &self.roles
    }
}

impl Upstream for FakeUpstream {
    fn register(&self, script_id: &str, script: &Value) -> Result<(String, Value), String> {
        let mut script = script.clone();
        if let Value::Object(object) = &mut script {
            object.insert("id".into(), Value::String(script_id.to_string()));
            // Cases name roles; the fake providers know instances.
            if let Some(Value::Object(calls)) = object.get_mut("calls") {
                let renamed: serde_json::Map<String, Value> = std::mem::take(calls)
                    .into_iter()
                    .map(|(key, value)| (self.roles.get(&key).cloned().unwrap_or(key), value))
                    .collect();
                *calls = renamed;
            }
        }
        let parsed: mock_provider::Script = serde_json::from_value(script.clone())
            .map_err(|e| format!("not a valid script: {e}"))?;
        self.providers.register(parsed).map_err(|e| e.to_string())?;
        Ok((mock_provider::marker(script_id), script))
    }

    fn calls(&self, script_id: &str) -> Vec<(String, u32)> {
        let mut counts: BTreeMap<String, u32> = BTreeMap::new();
        for call in self.providers.calls(script_id) {
            if call.endpoint.is_call() && call.call_index.is_some() {
                *counts.entry(call.instance.clone()).or_default() += 1;
            }
        }
        counts.into_iter().collect()
    }

    fn role_of(&self, instance: &str) -> Option<String> {
        self.roles
            .iter()
            .find(|(_, i)| i.as_str() == instance)
            .map(|(r, _)| r.clone())
    }
}
