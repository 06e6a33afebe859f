//! The runtime's configuration: a TOML file plus command-line flags, or built in code.
//!
//! ```toml
//! [server]
//! listen = "127.0.0.1:4320"
//! keep_alive_ms = 15000          # `:` comment interval on idle SSE streams; at most 30000
//! json_charset = false           # `application/json; charset=utf-8` on JSON responses
//! timestamp_offset_minutes = 120 # event times at +02:00 (default: UTC, `Z`)
//! header_read_timeout_ms = 40000 # a request's head, idle keep-alive wait included
//! body_read_timeout_ms = 60000   # a request's whole body
//! max_connections = 4096         # open connections; more wait in the listen backlog
//! write_stall_timeout_ms = 30000 # a connection whose reader takes no byte this long is closed
//!
//! [execution]                    # choices the protocol leaves open (see `execution::choices`)
//! unsatisfiable_requirements = "refuse"
//! id_form = "uuid"
//!
//! [store]
//! kind = "sqlite:/var/lib/runtime/events.db"   # or "memory" (the default)
//!
//! [limits]
//! max_body_bytes = 1048576
//! max_active_executions = 64
//! max_events_per_execution = 4096
//!
//! [[providers]]
//! id = "openai-primary"
//! kind = "openai-chat"               # | "openai-responses" | "anthropic-messages" | "async-media"
//! base_url = "http://127.0.0.1:9100/openai-primary"
//! credential_env = "OPENAI_API_KEY"  # the NAME of the variable, never the credential
//!
//! [[providers.models]]
//! model = "gpt-test"
//! abilities = ["text-generation"]
//! input_modalities = ["text", "json"]
//! output_modalities = ["text"]
//! stream = true
//! tools = true
//! ```
//!
//! [`Config::validate`] refuses, at start-up, a provider base URL carrying userinfo, a query or a
//! fragment; its message never repeats the URL's secret part.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use spec::execution::Modality;

use crate::execution::choices::ExecutionChoices;
use crate::openwop::infra::config::OpenWopConfig;

/// The default keep-alive interval of SSE streams (15 s).
pub const DEFAULT_KEEP_ALIVE_MS: u64 = 15_000;
/// The largest keep-alive interval accepted (30 s).
pub const MAX_KEEP_ALIVE_MS: u64 = 30_000;

/// The whole configuration.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// `[server]`.
    #[serde(default)]
    pub server: ServerConfig,
    /// `[store]`.
    #[serde(default)]
    pub store: StoreConfig,
    /// `[limits]`.
    #[serde(default)]
    pub limits: LimitsConfig,
    /// `[[providers]]`, in registration order (the routing order before `provider_order`).
    #[serde(default)]
    pub providers: Vec<ProviderConfig>,
    /// `[openwop]`: surface-W configuration.
    #[serde(default)]
    pub openwop: OpenWopConfig,
    /// `[execution]`: surface-X behaviours the protocol leaves to the host.
    #[serde(default)]
    pub execution: ExecutionChoices,
    /// Whether the bench publisher's routes are served (`reference-runtime --bench-publisher`
    /// only; never read from a file). Off by default.
    #[serde(skip)]
    pub bench_publisher: bool,
}

/// `[server]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServerConfig {
    /// Where the binary listens unless `--listen` says otherwise.
    pub listen: SocketAddr,
    /// Idle interval between SSE `:` keep-alive comments, in ms (1–30000).
    pub keep_alive_ms: u64,
    /// Whether JSON responses of both surfaces say `application/json; charset=utf-8` rather
    /// than `application/json` (the same bytes; a media-type parameter HTTP admits).
    pub json_charset: bool,
    /// When set, event times (`time`, `timestamp`) are written at this UTC offset in minutes
    /// (`120` → `+02:00`, with millisecond fractions) rather than in UTC with `Z`; the same
    /// instants, another form RFC 3339 admits. Within ±1439.
    pub timestamp_offset_minutes: Option<i32>,
    /// Whether response header names of both surfaces are written in title case
    /// (`Content-Type`, `Retry-After`) rather than hyper's lower case: field names are
    /// case-insensitive (RFC 9110 §5.1). HTTP/1.1 only.
    pub title_case_headers: bool,
    /// How long a connection may take, from when it waits for a request (on accept, or after
    /// a response when kept alive), to send the request's whole head, in ms; past it the
    /// connection is closed. The same clock is the idle keep-alive timeout (`crate::server`).
    pub header_read_timeout_ms: u64,
    /// How long a request's whole body may take to arrive once its handler reads it, in ms;
    /// past it the request is refused with the surface's envelope and the connection closed.
    pub body_read_timeout_ms: u64,
    /// Connections served at once; further ones wait in the listen backlog until one closes.
    pub max_connections: usize,
    /// How long a connection's writes may stay blocked (its reader taking no byte, e.g. an SSE
    /// subscriber that stopped reading) before the connection is closed, in ms; 0 for no bound.
    pub write_stall_timeout_ms: u64,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            listen: SocketAddr::from(([127, 0, 0, 1], 4320)),
            keep_alive_ms: DEFAULT_KEEP_ALIVE_MS,
            json_charset: false,
            timestamp_offset_minutes: None,
            title_case_headers: false,
            header_read_timeout_ms: crate::server::DEFAULT_HEADER_READ_TIMEOUT_MS,
            body_read_timeout_ms: crate::server::DEFAULT_BODY_READ_TIMEOUT_MS,
            max_connections: crate::server::DEFAULT_MAX_CONNECTIONS,
            write_stall_timeout_ms: crate::server::DEFAULT_WRITE_STALL_TIMEOUT_MS,
        }
    }
}

impl ServerConfig {
    /// The keep-alive interval.
    pub fn keep_alive(&self) -> Duration {
        Duration::from_millis(self.keep_alive_ms)
    }

    /// The limits every connection is served under.
    pub fn connection_limits(&self) -> crate::server::ConnectionLimits {
        crate::server::ConnectionLimits {
            header_read_timeout: Duration::from_millis(self.header_read_timeout_ms),
            body_read_timeout: Duration::from_millis(self.body_read_timeout_ms),
            max_connections: self.max_connections,
            write_stall_timeout: Duration::from_millis(self.write_stall_timeout_ms),
            title_case_headers: self.title_case_headers,
        }
    }

    /// The offset event times are written at, if one is configured and valid.
    pub fn timestamp_offset(&self) -> Option<chrono::FixedOffset> {
        self.timestamp_offset_minutes
            .and_then(|minutes| chrono::FixedOffset::east_opt(minutes.checked_mul(60)?))
    }
}

/// `[store]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreConfig {
    /// `memory` or `sqlite:PATH`.
    #[serde(default)]
    pub kind: StoreKind,
    /// A SQLite store's durability: `normal` (survives a killed process, the default) or
    /// `full` (also a power loss; an fsync per append).
    #[serde(default)]
    pub sync: crate::store::SqliteSync,
}

/// Which event store backs the runtime.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum StoreKind {
    /// In memory; nothing survives the process.
    #[default]
    Memory,
    /// SQLite at this path; durable across restarts.
    Sqlite(PathBuf),
}

impl std::str::FromStr for StoreKind {
    type Err = ConfigError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        if text == "memory" {
            return Ok(StoreKind::Memory);
        }
        match text.strip_prefix("sqlite:") {
            Some(path) if !path.is_empty() => Ok(StoreKind::Sqlite(PathBuf::from(path))),
            _ => Err(ConfigError::StoreKind(text.to_string())),
        }
    }
}

impl<'de> Deserialize<'de> for StoreKind {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// `[limits]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LimitsConfig {
    /// Largest request body, in bytes.
    pub max_body_bytes: usize,
    /// Executions that may be live at once; more are refused with 429 `queue_full`.
    pub max_active_executions: usize,
    /// Events one execution may append before it ends with `queue_full`.
    pub max_events_per_execution: u64,
    /// Hours an Idempotency-Key stays bound after its execution's terminal event.
    pub idempotency_retention_hours: u64,
    /// Longest wait honoured for a provider's `Retry-After` when no retry budget is set, in ms.
    pub max_retry_after_ms: u64,
    /// Timeout of the best-effort remote cancel of an async job, in ms.
    pub remote_cancel_timeout_ms: u64,
    /// Interval between status polls of an async job, in ms.
    pub async_poll_interval_ms: u64,
    /// Status polls before an async job is given up with `deadline_exceeded`.
    pub async_max_polls: u32,
    /// Timeout to connect to a provider, in ms.
    pub provider_connect_timeout_ms: u64,
}

impl Default for LimitsConfig {
    fn default() -> Self {
        LimitsConfig {
            max_body_bytes: spec::execution::MAX_REQUEST_BYTES,
            max_active_executions: 64,
            max_events_per_execution: 4096,
            idempotency_retention_hours: 24,
            max_retry_after_ms: 60_000,
            remote_cancel_timeout_ms: 5_000,
            async_poll_interval_ms: 500,
            async_max_polls: 120,
            provider_connect_timeout_ms: 10_000,
        }
    }
}

/// One `[[providers]]` entry.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    /// The provider id used in manifests, targets and `provider_order`.
    pub id: String,
    /// The wire format.
    pub kind: ProviderKind,
    /// Where the provider lives: `http(s)://host[:port][/prefix]`, without userinfo, query or
    /// fragment.
    pub base_url: String,
    /// The NAME of the environment variable that holds the credential.
    pub credential_env: String,
    /// The models, in routing order.
    #[serde(default)]
    pub models: Vec<ModelConfig>,
}

/// The wire format a provider speaks (the one vocabulary of `spec`, shared with the harness and
/// the fake providers).
pub use spec::wire_format::WireFormat as ProviderKind;

/// One model of a provider: what it serves and can do.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    /// The provider's model id.
    pub model: String,
    /// Abilities served.
    pub abilities: Vec<String>,
    /// Accepted input modalities (default: text and json).
    #[serde(default = "default_input_modalities")]
    pub input_modalities: Vec<Modality>,
    /// Produced output modalities (default: text).
    #[serde(default = "default_output_modalities")]
    pub output_modalities: Vec<Modality>,
    /// Streams output.
    #[serde(default)]
    pub stream: bool,
    /// Supports tool calls.
    #[serde(default)]
    pub tools: bool,
    /// Supports structured output.
    #[serde(default)]
    pub structured_output: bool,
    /// Is asynchronous (queued).
    #[serde(default, rename = "async")]
    pub asynchronous: bool,
    /// Supports cancellation.
    #[serde(default)]
    pub cancel: bool,
}

fn default_input_modalities() -> Vec<Modality> {
    vec![Modality::Text, Modality::Json]
}

fn default_output_modalities() -> Vec<Modality> {
    vec![Modality::Text]
}

/// A configuration that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("failed to read config file `{path}`: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not valid TOML for this configuration.
    #[error("invalid config file `{path}`: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message.
        message: String,
    },
    /// `keep_alive_ms` is out of range.
    #[error("keep_alive_ms must be between 1 and {MAX_KEEP_ALIVE_MS}, got {0}")]
    KeepAlive(u64),
    /// `store.kind` is neither `memory` nor `sqlite:PATH`.
    #[error("store kind must be `memory` or `sqlite:PATH`, got `{0}`")]
    StoreKind(String),
    /// A provider base URL is unusable. The message names the provider and the reason, never
    /// the URL (it may carry a secret).
    #[error("provider `{provider}`: base_url {reason}")]
    BaseUrl {
        /// The provider id.
        provider: String,
        /// What is wrong.
        reason: &'static str,
    },
    /// A provider entry is unusable.
    #[error("provider `{provider}`: {reason}")]
    Provider {
        /// The provider id.
        provider: String,
        /// What is wrong.
        reason: String,
    },
    /// A limit is out of range.
    #[error("limit `{0}` must be at least 1")]
    Limit(&'static str),
    /// The `[openwop]` table is invalid.
    #[error("[openwop]: {0}")]
    OpenWop(String),
}

impl Config {
    /// Reads and validates a TOML file.
    pub fn from_file(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let config = Config::from_toml(&text).map_err(|error| match error {
            ConfigError::Parse { message, .. } => ConfigError::Parse {
                path: path.to_path_buf(),
                message,
            },
            other => other,
        })?;
        Ok(config)
    }

    /// Parses and validates TOML text.
    pub fn from_toml(text: &str) -> Result<Config, ConfigError> {
        let config: Config = toml::from_str(text).map_err(|error| ConfigError::Parse {
            path: PathBuf::from("<inline>"),
            // The TOML parser quotes the offending line; a base URL with a secret would be
            // quoted too, so only the position-free message is kept.
            message: error.message().to_string(),
        })?;
        config.validate()?;
        Ok(config)
    }

    /// Checks everything that does not need the network or the environment.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.server.keep_alive_ms == 0 || self.server.keep_alive_ms > MAX_KEEP_ALIVE_MS {
            return Err(ConfigError::KeepAlive(self.server.keep_alive_ms));
        }
        if let Some(minutes) = self.server.timestamp_offset_minutes
            && minutes.abs() >= 24 * 60
        {
            return Err(ConfigError::Limit(
                "timestamp_offset_minutes (within ±1439)",
            ));
        }
        let limits = &self.limits;
        for (name, value) in [
            ("header_read_timeout_ms", self.server.header_read_timeout_ms),
            ("body_read_timeout_ms", self.server.body_read_timeout_ms),
            ("max_connections", self.server.max_connections as u64),
            ("max_body_bytes", limits.max_body_bytes as u64),
            ("max_active_executions", limits.max_active_executions as u64),
            ("max_events_per_execution", limits.max_events_per_execution),
            ("async_poll_interval_ms", limits.async_poll_interval_ms),
            ("async_max_polls", u64::from(limits.async_max_polls)),
            ("remote_cancel_timeout_ms", limits.remote_cancel_timeout_ms),
            (
                "provider_connect_timeout_ms",
                limits.provider_connect_timeout_ms,
            ),
        ] {
            if value == 0 {
                return Err(ConfigError::Limit(name));
            }
        }
        let mut seen = std::collections::BTreeSet::new();
        for provider in &self.providers {
            let fail = |reason: String| ConfigError::Provider {
                provider: provider.id.clone(),
                reason,
            };
            if provider.id.is_empty() || !seen.insert(provider.id.as_str()) {
                return Err(fail("id must be non-empty and unique".into()));
            }
            check_base_url(&provider.id, &provider.base_url)?;
            if !is_env_name(&provider.credential_env) {
                return Err(fail(
                    "credential_env must be an environment variable NAME ([A-Z][A-Z0-9_]*)".into(),
                ));
            }
            for model in &provider.models {
                if model.model.is_empty() || model.abilities.iter().any(String::is_empty) {
                    return Err(fail("model ids and abilities must be non-empty".into()));
                }
            }
        }
        // A bad surface-W table fails at start: its ranges, then its advertised envelope kinds
        // against the kinds the envelope catalog holds a schema for.
        self.openwop
            .validate()
            .map_err(|e| ConfigError::OpenWop(e.to_string()))?;
        crate::openwop::engine::envelopes::catalog::check_supported_kinds(&self.openwop.envelopes)
            .map_err(|message| {
                ConfigError::OpenWop(
                    crate::openwop::infra::config::ConfigError(message).to_string(),
                )
            })
    }
}

fn is_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_uppercase())
        && chars.all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        && name.len() <= 128
}

/// Refuses a base URL that is not plain `http(s)://host[:port][/path]`.
fn check_base_url(provider: &str, url: &str) -> Result<(), ConfigError> {
    let fail = |reason: &'static str| ConfigError::BaseUrl {
        provider: provider.to_string(),
        reason,
    };
    let parsed = reqwest::Url::parse(url).map_err(|_| fail("is not a valid absolute URL"))?;
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(fail("must not carry credentials (userinfo)"));
    }
    if parsed.query().is_some() {
        return Err(fail("must not carry a query"));
    }
    if parsed.fragment().is_some() {
        return Err(fail("must not carry a fragment"));
    }
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(fail("must use http or https"));
    }
    if parsed.host_str().is_none() {
        return Err(fail("must name a host"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_url(url: &str) -> String {
        format!(
            "[[providers]]\nid = \"p\"\nkind = \"openai-chat\"\nbase_url = \"{url}\"\ncredential_env = \"P_KEY\"\n"
        )
    }

    #[test]
    fn refuses_secret_carrying_base_urls_without_echoing_them() {
        for (url, reason) in [
            ("http://user:hunter2@127.0.0.1:1/x", "userinfo"),
            ("http://127.0.0.1:1/x?key=hunter2", "query"),
            ("http://127.0.0.1:1/x#hunter2", "fragment"),
        ] {
            let error = Config::from_toml(&with_url(url)).unwrap_err().to_string();
            assert!(error.contains(reason), "{error}");
            assert!(!error.contains("hunter2"), "{error}");
        }
        assert!(Config::from_toml(&with_url("http://127.0.0.1:1/x")).is_ok());
    }

    #[test]
    fn keep_alive_is_bounded_and_store_kind_parses() {
        let error = Config::from_toml("[server]\nkeep_alive_ms = 30001\n").unwrap_err();
        assert!(matches!(error, ConfigError::KeepAlive(30001)));
        let config = Config::from_toml("[store]\nkind = \"sqlite:/tmp/x.db\"\n").unwrap();
        assert_eq!(config.store.kind, StoreKind::Sqlite("/tmp/x.db".into()));
        assert_eq!(Config::default().server.keep_alive_ms, 15_000);
        assert!(Config::from_toml("[store]\nkind = \"redis\"\n").is_err());
        let full = Config::from_toml("[store]\nkind = \"sqlite:/tmp/x.db\"\nsync = \"full\"\n");
        assert_eq!(full.unwrap().store.sync, crate::store::SqliteSync::Full);
        assert!(Config::from_toml("[store]\nsync = \"off\"\n").is_err());
    }

    #[test]
    fn every_advertised_envelope_kind_needs_a_schema() {
        let unknown = "[openwop.envelopes]\nsupported_kinds = [\"example.unknown\"]\n";
        let error = Config::from_toml(unknown).unwrap_err();
        assert!(
            matches!(&error, ConfigError::OpenWop(m) if m.contains("example.unknown")),
            "{error}"
        );
        assert!(
            Config::from_toml("[openwop.envelopes]\nsupported_kinds = [\"ui.text\"]\n").is_ok()
        );
    }

    #[test]
    fn credential_env_must_be_a_name() {
        let text = with_url("http://127.0.0.1:1").replace("P_KEY", "sk-live-123");
        assert!(Config::from_toml(&text).is_err());
    }
}
