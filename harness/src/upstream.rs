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

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::sync::{Mutex, PoisonError};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::target::{ProviderCalls, Upstream};

/// The wire format a role's fake instance speaks (`openai-chat`, `openai-responses`,
/// `anthropic-messages`, `async-media`).
pub use mock_provider::ProviderKind as WireFormat;

/// The provider roles cases name.
pub const ROLES: [&str; 3] = ["text-primary", "text-secondary", "media"];

/// One role bound to one of the host's providers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoleBinding {
    /// The role (`text-primary`, `text-secondary`, `media`).
    pub role: String,
    /// The host's provider id.
    pub provider: String,
    /// The wire format the host's adapter for that provider speaks.
    pub wire_format: WireFormat,
    /// The model the role's calls name. Needed only when two roles share one provider; when
    /// absent there, the harness takes the provider's models from `GET /v1/providers`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// A providers file (`--providers-file`, TOML or JSON): role → host provider id, wire format,
/// model.
///
/// ```toml
/// [roles.text-primary]
/// provider = "anthropic"
/// wire_format = "anthropic-messages"
/// model = "claude-a"
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProvidersFile {
    /// The bindings by role.
    #[serde(default)]
    pub roles: BTreeMap<String, ProvidersFileRole>,
}

/// One role of a [`ProvidersFile`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProvidersFileRole {
    /// The host's provider id.
    pub provider: String,
    /// The wire format.
    pub wire_format: WireFormat,
    /// The model (optional).
    #[serde(default)]
    pub model: Option<String>,
}

/// Why bindings could not be read or served.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BindingError {
    /// A flag is not `ROLE=PROVIDER,FORMAT[,MODEL]`.
    #[error(
        "`{0}` is not ROLE=PROVIDER,FORMAT[,MODEL] (formats: openai-chat, openai-responses, anthropic-messages, async-media)"
    )]
    Malformed(String),
    /// An unknown wire format.
    #[error(
        "unknown wire format `{0}` (openai-chat, openai-responses, anthropic-messages, async-media)"
    )]
    UnknownWireFormat(String),
    /// One provider bound with two wire formats.
    #[error("provider `{0}` is bound with two wire formats; one provider has one base URL")]
    TwoWireFormats(String),
    /// The providers file could not be read.
    #[error("the providers file is not valid: {0}")]
    File(String),
    /// The fake providers did not start.
    #[error("the fake providers did not start: {0}")]
    Start(String),
}

impl RoleBinding {
    /// Parses `ROLE=PROVIDER,FORMAT[,MODEL]` (`--bind`).
    pub fn parse_flag(flag: &str) -> Result<RoleBinding, BindingError> {
        let malformed = || BindingError::Malformed(flag.to_string());
        let (role, rest) = flag.split_once('=').ok_or_else(malformed)?;
        let mut parts = rest.split(',').map(str::trim);
        let provider = parts
            .next()
            .filter(|p| !p.is_empty())
            .ok_or_else(malformed)?;
        let format = parts.next().ok_or_else(malformed)?;
        let wire_format = WireFormat::parse(format)
            .ok_or_else(|| BindingError::UnknownWireFormat(format.to_string()))?;
        let model = parts.next().filter(|m| !m.is_empty()).map(str::to_string);
        if parts.next().is_some() || role.trim().is_empty() {
            return Err(malformed());
        }
        Ok(RoleBinding {
            role: role.trim().to_string(),
            provider: provider.to_string(),
            wire_format,
            model,
        })
    }

    fn new(role: &str, provider: &str, wire_format: WireFormat, model: Option<&str>) -> Self {
        RoleBinding {
            role: role.into(),
            provider: provider.into(),
            wire_format,
            model: model.map(str::to_string),
        }
    }

    /// The bindings of the built-in runtime's standard configuration: `text-primary` an OpenAI
    /// Chat Completions provider, `text-secondary` an Anthropic Messages one, `media` a fal
    /// queue.
    pub fn defaults() -> Vec<RoleBinding> {
        vec![
            RoleBinding::new(
                "text-primary",
                "openai-primary",
                WireFormat::OpenaiChat,
                None,
            ),
            RoleBinding::new(
                "text-secondary",
                "anthropic-secondary",
                WireFormat::AnthropicMessages,
                None,
            ),
            RoleBinding::new("media", "media", WireFormat::AsyncMedia, None),
        ]
    }
}

impl ProvidersFile {
    /// Parses a providers file: JSON when it starts with `{`, TOML otherwise.
    pub fn parse(text: &str) -> Result<ProvidersFile, BindingError> {
        if text.trim_start().starts_with('{') {
            serde_json::from_str(text).map_err(|e| BindingError::File(e.to_string()))
        } else {
            toml::from_str(text).map_err(|e| BindingError::File(e.to_string()))
        }
    }

    /// The file's bindings.
    pub fn bindings(&self) -> Vec<RoleBinding> {
        self.roles
            .iter()
            .map(|(role, bound)| RoleBinding {
                role: role.clone(),
                provider: bound.provider.clone(),
                wire_format: bound.wire_format,
                model: bound.model.clone(),
            })
            .collect()
    }
}

/// Replaces the bindings of the roles `overrides` names, keeping the others.
pub fn merge_bindings(base: Vec<RoleBinding>, overrides: Vec<RoleBinding>) -> Vec<RoleBinding> {
    let mut by_role: BTreeMap<String, RoleBinding> =
        base.into_iter().map(|b| (b.role.clone(), b)).collect();
    for binding in overrides {
        by_role.insert(binding.role.clone(), binding);
    }
    by_role.into_values().collect()
}

/// The fake instance name for a host provider id: a lowercase path segment.
fn instance_name(provider: &str, taken: &BTreeSet<String>) -> String {
    let mut name: String = provider
        .chars()
        .map(|c| {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_lowercase() || c.is_ascii_digit() {
                c
            } else {
                '-'
            }
        })
        .take(56)
        .collect();
    if !name.starts_with(|c: char| c.is_ascii_lowercase()) {
        name = format!("p-{name}");
    }
    let mut candidate = name.clone();
    let mut n = 2;
    while taken.contains(&candidate) {
        candidate = format!("{name}-{n}");
        n += 1;
    }
    candidate
}

/// The fake instances that serve `bindings`: one per bound provider, on the streaming backend
/// (every fault at one base URL). Returns them with provider id → instance name.
pub fn instances_for(
    bindings: &[RoleBinding],
) -> Result<
    (
        Vec<mock_provider::ProviderInstance>,
        BTreeMap<String, String>,
    ),
    BindingError,
> {
    let mut formats: BTreeMap<&str, WireFormat> = BTreeMap::new();
    for binding in bindings {
        match formats.get(binding.provider.as_str()) {
            Some(format) if *format != binding.wire_format => {
                return Err(BindingError::TwoWireFormats(binding.provider.clone()));
            }
            _ => {
                formats.insert(&binding.provider, binding.wire_format);
            }
        }
    }
    let mut names = BTreeMap::new();
    let mut taken = BTreeSet::new();
    let mut instances = Vec::new();
    // Binding order, so the built-in instance names stay what they were.
    for binding in bindings {
        if names.contains_key(&binding.provider) {
            continue;
        }
        let name = instance_name(&binding.provider, &taken);
        taken.insert(name.clone());
        names.insert(binding.provider.clone(), name.clone());
        instances.push(mock_provider::ProviderInstance::new(
            name,
            binding.wire_format,
            mock_provider::Backend::Streaming,
        ));
    }
    Ok((instances, names))
}

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
            .filter_map(|b| Some((b.role.clone(), b.model.clone()?)))
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

    /// Role → host provider id (what [`Target::providers`](crate::target::Target) holds).
    pub fn roles(&self) -> BTreeMap<String, String> {
        self.bindings
            .iter()
            .map(|b| (b.role.clone(), b.provider.clone()))
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
            let Some(binding) = self.bindings.iter().find(|b| &b.role == role) else {
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

    fn learn_models(&self, manifests: &BTreeMap<String, Vec<String>>) {
        let mut models = self.models.lock().unwrap_or_else(PoisonError::into_inner);
        let mut by_provider: BTreeMap<&str, Vec<&RoleBinding>> = BTreeMap::new();
        for binding in &self.bindings {
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
            let mut roles: Vec<&&RoleBinding> =
                sharing.iter().filter(|b| b.model.is_none()).collect();
            roles.sort_by(|a, b| a.role.cmp(&b.role));
            for binding in roles {
                if let Some(model) = free.next() {
                    models.insert(binding.role.clone(), model.clone());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bind_flag_names_role_provider_format_and_model() {
        let binding =
            RoleBinding::parse_flag("text-primary=anthropic,anthropic-messages,claude-a").unwrap();
        assert_eq!(binding.role, "text-primary");
        assert_eq!(binding.provider, "anthropic");
        assert_eq!(binding.wire_format, WireFormat::AnthropicMessages);
        assert_eq!(binding.model.as_deref(), Some("claude-a"));
        assert!(RoleBinding::parse_flag("media=fal,async-media").is_ok());
        assert!(RoleBinding::parse_flag("media=fal").is_err());
        assert!(matches!(
            RoleBinding::parse_flag("media=fal,grpc"),
            Err(BindingError::UnknownWireFormat(_))
        ));
    }

    #[test]
    fn a_providers_file_reads_as_toml_or_json() {
        let toml =
            "[roles.text-primary]\nprovider = \"openai\"\nwire_format = \"openai-responses\"\n";
        let json = r#"{"roles": {"text-primary": {"provider": "openai", "wire_format": "openai-responses"}}}"#;
        for text in [toml, json] {
            let bindings = ProvidersFile::parse(text).unwrap().bindings();
            assert_eq!(
                bindings,
                vec![RoleBinding::new(
                    "text-primary",
                    "openai",
                    WireFormat::OpenaiResponses,
                    None
                )]
            );
        }
    }

    #[test]
    fn one_instance_per_provider_on_the_streaming_backend() {
        let bindings = vec![
            RoleBinding::new(
                "text-primary",
                "Main LLM",
                WireFormat::OpenaiChat,
                Some("a"),
            ),
            RoleBinding::new(
                "text-secondary",
                "Main LLM",
                WireFormat::OpenaiChat,
                Some("b"),
            ),
            RoleBinding::new("media", "9fal", WireFormat::AsyncMedia, None),
        ];
        let (instances, names) = instances_for(&bindings).unwrap();
        assert_eq!(instances.len(), 2);
        assert!(
            instances
                .iter()
                .all(|i| i.backend == mock_provider::Backend::Streaming)
        );
        assert_eq!(names["Main LLM"], "main-llm");
        assert_eq!(names["9fal"], "p-9fal");
        let clash = vec![
            RoleBinding::new("text-primary", "p", WireFormat::OpenaiChat, None),
            RoleBinding::new("text-secondary", "p", WireFormat::AnthropicMessages, None),
        ];
        assert!(matches!(
            instances_for(&clash),
            Err(BindingError::TwoWireFormats(_))
        ));
    }

    #[test]
    fn overrides_replace_only_the_roles_they_name() {
        let merged = merge_bindings(
            RoleBinding::defaults(),
            vec![RoleBinding::new(
                "media",
                "fal",
                WireFormat::AsyncMedia,
                None,
            )],
        );
        assert_eq!(merged.len(), 3);
        assert!(merged.iter().any(|b| b.provider == "fal"));
        assert!(merged.iter().any(|b| b.provider == "openai-primary"));
    }
}
