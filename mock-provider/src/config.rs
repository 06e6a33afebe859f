//! Which provider instances a [`FakeProviders`](crate::FakeProviders) serves, and where.

use std::fmt;
use std::net::SocketAddr;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The wire format an instance speaks (the one vocabulary of `spec`, shared with the harness and
/// the reference runtime).
pub use spec::wire_format::WireFormat as ProviderKind;

/// Which of the two servers serves an instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Backend {
    /// The wiremock `MockServer`: whole bodies, status faults, resets, delay before headers.
    Wiremock,
    /// The streaming backend: everything wiremock does plus delays between frames, stalls and
    /// cuts in the middle of the body.
    Streaming,
}

impl Backend {
    /// The backend's name as written in configuration.
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Wiremock => "wiremock",
            Backend::Streaming => "streaming",
        }
    }
}

/// A named provider instance, addressed as `http://<server>/<name>`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProviderInstance {
    /// Path prefix and script key: lowercase letters, digits and `-`, starting with a letter.
    pub name: String,
    /// Wire format.
    pub kind: ProviderKind,
    /// Serving backend.
    pub backend: Backend,
}

impl ProviderInstance {
    /// An instance named `name`.
    pub fn new(name: impl Into<String>, kind: ProviderKind, backend: Backend) -> Self {
        ProviderInstance {
            name: name.into(),
            kind,
            backend,
        }
    }

    /// The set the harness configures for the built-in runtime:
    /// `openai-primary` (openai-chat), `anthropic-secondary` (anthropic-messages), `media`
    /// (async-media) and `openai-responses` (openai-responses) on wiremock, and `openai-timing`
    /// (openai-chat) on the streaming backend.
    pub fn default_set() -> Vec<ProviderInstance> {
        vec![
            ProviderInstance::new(
                "openai-primary",
                ProviderKind::OpenaiChat,
                Backend::Wiremock,
            ),
            ProviderInstance::new(
                "anthropic-secondary",
                ProviderKind::AnthropicMessages,
                Backend::Wiremock,
            ),
            ProviderInstance::new("media", ProviderKind::AsyncMedia, Backend::Wiremock),
            ProviderInstance::new(
                "openai-responses",
                ProviderKind::OpenaiResponses,
                Backend::Wiremock,
            ),
            ProviderInstance::new(
                "openai-timing",
                ProviderKind::OpenaiChat,
                Backend::Streaming,
            ),
        ]
    }

    pub(crate) fn name_is_valid(name: &str) -> bool {
        let mut chars = name.chars();
        matches!(chars.next(), Some(first) if first.is_ascii_lowercase())
            && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            && name.len() <= 64
    }
}

/// Configuration of [`FakeProviders::start`](crate::FakeProviders::start).
///
/// `Debug` never shows the canary.
#[derive(Clone)]
pub struct FakeProvidersConfig {
    /// The only credential the fakes accept (e.g. `sk-canary-…`). Calls without it get 401.
    pub canary: String,
    /// The instances to serve; names must be unique.
    pub instances: Vec<ProviderInstance>,
    /// Address of the wiremock server; default `127.0.0.1:0` (a free port).
    pub wiremock_listen: Option<SocketAddr>,
    /// Address of the streaming backend; default `127.0.0.1:0` (a free port).
    pub streaming_listen: Option<SocketAddr>,
}

impl FakeProvidersConfig {
    /// The default instance set ([`ProviderInstance::default_set`]) on free loopback ports.
    pub fn new(canary: impl Into<String>) -> Self {
        FakeProvidersConfig {
            canary: canary.into(),
            instances: ProviderInstance::default_set(),
            wiremock_listen: None,
            streaming_listen: None,
        }
    }

    /// Replaces the instance set.
    pub fn with_instances(mut self, instances: Vec<ProviderInstance>) -> Self {
        self.instances = instances;
        self
    }
}

impl fmt::Debug for FakeProvidersConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FakeProvidersConfig")
            .field("canary", &"<redacted>")
            .field("instances", &self.instances)
            .field("wiremock_listen", &self.wiremock_listen)
            .field("streaming_listen", &self.streaming_listen)
            .finish()
    }
}
