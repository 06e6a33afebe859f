//! The fake providers as the harness's [`Upstream`]: the provider roles cases name, each bound
//! to one of the host's providers (its id, the wire format it speaks, optionally the model),
//! one fake instance served per bound provider, scripts registered per case on the instances
//! their roles are bound to, calls read back per role.
//!
//! Cases are wire-format neutral: a script says text, tool calls, errors, usage and faults
//! abstractly, and the instance of the bound wire format renders it. Every instance is served
//! by the fake providers' streaming backend, so every fault (delay per chunk, stall, drop
//! mid-stream, slow headers) is available at the one base URL of every instance: no host needs
//! a separate provider for timing faults.
//!
//! Two roles may be bound to one provider (a host with one provider and two models): the
//! script's lists are then scoped to each role's model (`<instance>@<model>`), the model given
//! in the binding or learned from the host's `GET /v1/providers` (the provider's models in
//! manifest order, in role order). A script naming only one role of a shared provider plays
//! it whatever model the host picks.

pub(crate) mod binding;
pub(crate) mod role;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Mutex, PoisonError};

use serde_json::Value;

use crate::host::{ProviderCalls, RoleEndpoint, Upstream};

/// One recorded request as `METHOD /path → status` (never its query, body or credential).
fn request_line(call: &mock_provider::RecordedCall) -> String {
    let status = call
        .response_status
        .map_or_else(|| "reset".to_string(), |status| status.to_string());
    // The query is left out: a host may put a key there.
    let path = call.path.split('?').next().unwrap_or_default();
    format!("{} {path} → {status}", call.method)
}

pub use binding::{
    BindingError, ProvidersFile, ProvidersFileRole, RoleBinding, WireFormat, instances_for,
    merge_bindings,
};
pub use role::Role;

/// [`mock_provider::FakeProviders`] serving the instances of a set of [`RoleBinding`]s.
pub struct FakeUpstream {
    providers: mock_provider::FakeProviders,
    bindings: Vec<RoleBinding>,
    /// Host provider id → instance name.
    instances: BTreeMap<String, String>,
    /// Role → model, as bound or learned from the host's manifests.
    models: Mutex<BTreeMap<String, String>>,
    /// Script id → (script key → role), as registered.
    keys: Mutex<BTreeMap<String, BTreeMap<String, String>>>,
}

impl std::fmt::Debug for FakeUpstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeUpstream")
            .field("bindings", &self.bindings)
            .field("instances", &self.instances)
            .finish_non_exhaustive()
    }
}

impl FakeUpstream {
    /// Starts fake providers for `bindings` (the wiremock server on `wiremock_listen`, which
    /// serves none of them, and the streaming backend on `streaming_listen`; free loopback
    /// ports when `None`), accepting only `canary`.
    pub async fn start(
        canary: &str,
        bindings: Vec<RoleBinding>,
        wiremock_listen: Option<SocketAddr>,
        streaming_listen: Option<SocketAddr>,
    ) -> Result<FakeUpstream, BindingError> {
        let (instances, names) = instances_for(&bindings)?;
        let mut config =
            mock_provider::FakeProvidersConfig::new(canary.to_string()).with_instances(instances);
        config.wiremock_listen = wiremock_listen;
        config.streaming_listen = streaming_listen;
        let providers = mock_provider::FakeProviders::start(config)
            .await
            .map_err(|e| BindingError::Start(e.to_string()))?;
        let models = bindings
            .iter()
            .filter_map(|b| Some((b.role.to_string(), b.model.clone()?)))
            .collect();
        Ok(FakeUpstream {
            providers,
            bindings,
            instances: names,
            models: Mutex::new(models),
            keys: Mutex::new(BTreeMap::new()),
        })
    }

    /// The running fake providers.
    pub fn providers(&self) -> &mock_provider::FakeProviders {
        &self.providers
    }

    /// The bindings served.
    pub fn bindings(&self) -> &[RoleBinding] {
        &self.bindings
    }

    /// Role → host provider id (what [`Target::providers`](crate::host::Target) holds).
    pub fn roles(&self) -> BTreeMap<Role, String> {
        self.bindings
            .iter()
            .map(|b| (b.role, b.provider.clone()))
            .collect()
    }

    /// The base URL to configure the host's provider `provider` with.
    pub fn base_url(&self, provider: &str) -> Option<String> {
        self.providers.base_url(self.instances.get(provider)?)
    }

    /// The model bound (or learned) for a role.
    pub fn model_of(&self, role: &str) -> Option<String> {
        self.models
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(role)
            .cloned()
    }

    /// The script keys for the roles a script names: a role alone on its instance plays the
    /// instance; roles sharing one play `<instance>@<model>`.
    fn keys_for(&self, roles: &[String]) -> Result<BTreeMap<String, String>, String> {
        let models = self
            .models
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let mut by_instance: BTreeMap<String, Vec<&String>> = BTreeMap::new();
        let mut keys = BTreeMap::new();
        for role in roles {
            let Some(binding) = self.bindings.iter().find(|b| b.role.as_str() == role) else {
                // Not a bound role: passed through (the fake providers refuse an unknown
                // instance).
                keys.insert(role.clone(), role.clone());
                continue;
            };
            let instance = self.instances[&binding.provider].clone();
            by_instance.entry(instance).or_default().push(role);
        }
        for (instance, sharing) in by_instance {
            if let [role] = sharing.as_slice() {
                keys.insert((*role).clone(), instance);
                continue;
            }
            let mut seen: BTreeMap<&str, &str> = BTreeMap::new();
            for role in sharing {
                let Some(model) = models.get(role.as_str()) else {
                    return Err(format!(
                        "roles {} share the host's provider behind `{instance}` and role `{role}` has no model: bind it to one (--bind {role}=PROVIDER,FORMAT,MODEL)",
                        roles.join(", ")
                    ));
                };
                if let Some(other) = seen.insert(model, role) {
                    return Err(format!(
                        "roles `{other}` and `{role}` are bound to one provider and one model `{model}`: the harness cannot tell their calls apart"
                    ));
                }
                keys.insert(role.clone(), format!("{instance}@{model}"));
            }
        }
        Ok(keys)
    }
}

impl Upstream for FakeUpstream {
    fn register(&self, script_id: &str, script: &Value) -> Result<(String, Value), String> {
        let mut script = script.clone();
        let mut roles_by_key = BTreeMap::new();
        if let Value::Object(object) = &mut script {
            object.insert("id".into(), Value::String(script_id.to_string()));
            // Cases name roles; the fake providers know instances (and models).
            if let Some(Value::Object(calls)) = object.get_mut("calls") {
                let roles: Vec<String> = calls.keys().cloned().collect();
                let keys = self.keys_for(&roles)?;
                let renamed: serde_json::Map<String, Value> = std::mem::take(calls)
                    .into_iter()
                    .map(|(role, value)| {
                        let key = keys.get(&role).cloned().unwrap_or_else(|| role.clone());
                        roles_by_key.insert(key.clone(), role);
                        (key, value)
                    })
                    .collect();
                *calls = renamed;
            }
        }
        let parsed: mock_provider::Script = serde_json::from_value(script.clone())
            .map_err(|e| format!("not a valid script: {e}"))?;
        self.providers.register(parsed).map_err(|e| e.to_string())?;
        self.keys
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(script_id.to_string(), roles_by_key);
        Ok((mock_provider::marker(script_id), script))
    }

    fn calls(&self, script_id: &str) -> Vec<ProviderCalls> {
        let roles = self
            .keys
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(script_id)
            .cloned()
            .unwrap_or_default();
        let mut counts: BTreeMap<String, u32> = BTreeMap::new();
        for call in self.providers.calls(script_id) {
            if call.endpoint.is_call() && call.call_index.is_some() {
                let key = call.script_key.clone().unwrap_or(call.instance.clone());
                *counts.entry(key).or_default() += 1;
            }
        }
        counts
            .into_iter()
            .map(|(key, count)| ProviderCalls {
                role: roles.get(&key).cloned(),
                instance: key,
                count,
            })
            .collect()
    }

    fn role_endpoint(&self, role: &str) -> Option<RoleEndpoint> {
        let binding = self.bindings.iter().find(|b| b.role.as_str() == role)?;
        let instance = self.instances.get(&binding.provider)?.clone();
        Some(RoleEndpoint {
            base_url: self.providers.base_url(&instance)?,
            instance,
            paths: binding
                .wire_format
                .paths()
                .iter()
                .map(|p| (*p).to_string())
                .collect(),
        })
    }

    fn stray_requests(&self, script_id: &str) -> Vec<String> {
        self.providers
            .calls(script_id)
            .iter()
            .filter(|call| call.call_index.is_none())
            .map(request_line)
            .collect()
    }

    fn unmatched_requests(&self) -> Vec<String> {
        self.providers
            .unmatched_calls()
            .iter()
            .map(request_line)
            .collect()
    }

    fn learn_models(&self, manifests: &BTreeMap<String, Vec<String>>) {
        let learned = models_for(&self.bindings, manifests);
        self.models
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend(learned);
    }

    fn bindings(&self) -> Vec<RoleBinding> {
        self.bindings.clone()
    }
}

/// The model each role's calls name: the bound one, else, for roles sharing one of the host's
/// providers, that provider's models from its manifest (`GET /v1/providers`, in manifest order)
/// not bound to another role, handed out in role order. A role alone on its provider needs no
/// model and gets none unless bound.
pub(crate) fn models_for(
    bindings: &[RoleBinding],
    manifests: &BTreeMap<String, Vec<String>>,
) -> BTreeMap<String, String> {
    let mut models: BTreeMap<String, String> = bindings
        .iter()
        .filter_map(|b| Some((b.role.to_string(), b.model.clone()?)))
        .collect();
    let mut by_provider: BTreeMap<&str, Vec<&RoleBinding>> = BTreeMap::new();
    for binding in bindings {
        by_provider
            .entry(binding.provider.as_str())
            .or_default()
            .push(binding);
    }
    for (provider, sharing) in by_provider {
        if sharing.len() < 2 {
            continue;
        }
        let listed = manifests.get(provider).cloned().unwrap_or_default();
        let mut free = listed
            .iter()
            .filter(|m| !sharing.iter().any(|b| b.model.as_ref() == Some(m)));
        let mut roles: Vec<&&RoleBinding> = sharing.iter().filter(|b| b.model.is_none()).collect();
        roles.sort_by_key(|b| b.role.as_str());
        for binding in roles {
            if let Some(model) = free.next() {
                models.insert(binding.role.to_string(), model.clone());
            }
        }
    }
    models
}

/// The roles whose calls the fake providers cannot tell apart, with why: of roles sharing one
/// of the host's providers, when one has no model (`models`: what [`models_for`] gives) or two
/// have the same one, every role but the first (in role order), so cases naming both are
/// BLOCKED and cases naming the first alone still run. The one rule `plan` and `run` apply
/// (the probe's `scope_roles`).
pub(crate) fn indistinct_roles(
    bindings: &[RoleBinding],
    models: &BTreeMap<String, String>,
) -> BTreeMap<Role, String> {
    let mut by_provider: BTreeMap<&str, Vec<&RoleBinding>> = BTreeMap::new();
    for binding in bindings {
        by_provider
            .entry(binding.provider.as_str())
            .or_default()
            .push(binding);
    }
    let mut out = BTreeMap::new();
    for (provider, mut sharing) in by_provider {
        if sharing.len() < 2 {
            continue;
        }
        sharing.sort_by_key(|b| b.role.as_str());
        let roles: Vec<&str> = sharing.iter().map(|b| b.role.as_str()).collect();
        let unmodelled: Vec<&str> = roles
            .iter()
            .copied()
            .filter(|role| !models.contains_key(*role))
            .collect();
        let mut seen: BTreeMap<&str, &str> = BTreeMap::new();
        let mut twice = None;
        for role in &roles {
            if let Some(model) = models.get(*role)
                && let Some(other) = seen.insert(model, role)
            {
                twice = Some((other, *role, model.as_str()));
            }
        }
        let why = match (unmodelled.as_slice(), twice) {
            ([], None) => continue,
            ([], Some((a, b, model))) => format!(
                "roles `{a}` and `{b}` are bound to the host's provider `{provider}` and one model `{model}`: the fake providers cannot tell their calls apart (bind each to its own model)"
            ),
            (missing, _) => format!(
                "roles {} share the host's provider `{provider}` and {} no model (the host's GET /v1/providers lists too few for it): bind each role to its own model (--bind ROLE={provider},FORMAT,MODEL)",
                roles
                    .iter()
                    .map(|r| format!("`{r}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                missing
                    .iter()
                    .map(|r| format!("`{r}` has"))
                    .collect::<Vec<_>>()
                    .join(" and "),
            ),
        };
        for binding in sharing.iter().skip(1) {
            out.insert(binding.role, why.clone());
        }
    }
    out
}
