//! Role bindings: which of the host's providers (id, wire format, model) plays each role the
//! cases name, read from flags (`--bind`) or a providers file, and the fake instances that
//! serve them.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::role::Role;

/// The wire format a role's fake instance speaks (`openai-chat`, `openai-responses`,
/// `anthropic-messages`, `async-media`).
pub use spec::wire_format::WireFormat;

/// One role bound to one of the host's providers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoleBinding {
    /// The role (`text-primary`, `text-secondary`, `media`).
    pub role: Role,
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
    pub roles: BTreeMap<Role, ProvidersFileRole>,
}

/// A providers file as written: its role names are checked by [`ProvidersFile::parse`], which
/// names an unknown one.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WrittenProvidersFile {
    #[serde(default)]
    roles: BTreeMap<String, ProvidersFileRole>,
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
    /// A role no case names.
    #[error("unknown role `{0}` (text-primary, text-secondary, media)")]
    UnknownRole(String),
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
        if parts.next().is_some() {
            return Err(malformed());
        }
        let role = Role::parse(role.trim())
            .ok_or_else(|| BindingError::UnknownRole(role.trim().to_string()))?;
        Ok(RoleBinding {
            role,
            provider: provider.to_string(),
            wire_format,
            model,
        })
    }

    fn new(role: Role, provider: &str, wire_format: WireFormat, model: Option<&str>) -> Self {
        RoleBinding {
            role,
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
                Role::TextPrimary,
                "openai-primary",
                WireFormat::OpenaiChat,
                None,
            ),
            RoleBinding::new(
                Role::TextSecondary,
                "anthropic-secondary",
                WireFormat::AnthropicMessages,
                None,
            ),
            RoleBinding::new(Role::Media, "media", WireFormat::AsyncMedia, None),
        ]
    }
}

impl ProvidersFile {
    /// Parses a providers file: JSON when it starts with `{`, TOML otherwise.
    pub fn parse(text: &str) -> Result<ProvidersFile, BindingError> {
        let file: WrittenProvidersFile = if text.trim_start().starts_with('{') {
            serde_json::from_str(text).map_err(|e| BindingError::File(e.to_string()))?
        } else {
            toml::from_str(text).map_err(|e| BindingError::File(e.to_string()))?
        };
        let roles = file
            .roles
            .into_iter()
            .map(|(name, bound)| match Role::parse(&name) {
                Some(role) => Ok((role, bound)),
                None => Err(BindingError::UnknownRole(name)),
            })
            .collect::<Result<_, _>>()?;
        Ok(ProvidersFile { roles })
    }

    /// The file's bindings.
    pub fn bindings(&self) -> Vec<RoleBinding> {
        self.roles
            .iter()
            .map(|(role, bound)| RoleBinding {
                role: *role,
                provider: bound.provider.clone(),
                wire_format: bound.wire_format,
                model: bound.model.clone(),
            })
            .collect()
    }
}

/// Replaces the bindings of the roles `overrides` names, keeping the others; in the order of
/// the roles' names.
pub fn merge_bindings(base: Vec<RoleBinding>, overrides: Vec<RoleBinding>) -> Vec<RoleBinding> {
    let mut by_role: BTreeMap<&'static str, RoleBinding> =
        base.into_iter().map(|b| (b.role.as_str(), b)).collect();
    for binding in overrides {
        by_role.insert(binding.role.as_str(), binding);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bind_flag_names_role_provider_format_and_model() {
        let binding =
            RoleBinding::parse_flag("text-primary=anthropic,anthropic-messages,claude-a").unwrap();
        assert_eq!(binding.role, Role::TextPrimary);
        assert_eq!(binding.provider, "anthropic");
        assert_eq!(binding.wire_format, WireFormat::AnthropicMessages);
        assert_eq!(binding.model.as_deref(), Some("claude-a"));
        assert!(RoleBinding::parse_flag("media=fal,async-media").is_ok());
        assert!(RoleBinding::parse_flag("media=fal").is_err());
        assert!(matches!(
            RoleBinding::parse_flag("timing=p,openai-chat"),
            Err(BindingError::UnknownRole(_))
        ));
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
                    Role::TextPrimary,
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
                Role::TextPrimary,
                "Main LLM",
                WireFormat::OpenaiChat,
                Some("a"),
            ),
            RoleBinding::new(
                Role::TextSecondary,
                "Main LLM",
                WireFormat::OpenaiChat,
                Some("b"),
            ),
            RoleBinding::new(Role::Media, "9fal", WireFormat::AsyncMedia, None),
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
            RoleBinding::new(Role::TextPrimary, "p", WireFormat::OpenaiChat, None),
            RoleBinding::new(
                Role::TextSecondary,
                "p",
                WireFormat::AnthropicMessages,
                None,
            ),
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
                Role::Media,
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
