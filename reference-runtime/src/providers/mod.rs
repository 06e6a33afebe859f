//! Provider adapters over `reqwest` streaming: OpenAI Chat Completions, OpenAI Responses,
//! Anthropic Messages and a fal-style asynchronous media queue.
//!
//! An adapter turns one provider call into event bodies it hands to an [`Emit`] sink, and ends
//! with `Ok(())` only after the provider's own completion signal. It never assigns execution
//! ids, sequences or times (the runtime owns the envelope), never formats a `reqwest` error or a
//! provider body into a message, and never decides about fallback (the router does).

mod anthropic;
mod async_media;
pub mod calls;
mod dispatch;
mod http;
mod openai_chat;
mod openai_responses;
mod sse_reader;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value};
use spec::execution::{
    ErrorCode, EventBody, ExecutionRequest, PortableError, UsageFact, UsageSource,
};

use crate::config::{LimitsConfig, ProviderConfig, ProviderKind};
use crate::redact::Redactor;

/// Why a provider attempt failed: the portable error, plus the provider's `Retry-After` when it
/// sent one.
#[derive(Debug, Clone, PartialEq)]
pub struct AttemptFailure {
    /// The portable error (its message never carries provider bodies or credentials).
    pub error: PortableError,
    /// How long the provider asked to wait before a retry.
    pub retry_after: Option<Duration>,
}

impl AttemptFailure {
    /// A failure without `Retry-After`.
    pub fn new(code: ErrorCode, message: &str, retryable: bool) -> Self {
        AttemptFailure {
            error: PortableError::new(code, message, retryable),
            retry_after: None,
        }
    }

    /// `provider_protocol_error`, not retryable.
    pub fn protocol(message: &str) -> Self {
        Self::new(ErrorCode::ProviderProtocolError, message, false)
    }

    /// A transport failure (connection refused or reset, body read error): retryable.
    pub fn transport(message: &str) -> Self {
        Self::new(ErrorCode::ProviderUnavailable, message, true)
    }
}

/// Where an adapter sends the event bodies it produces.
pub trait Emit: Send {
    /// Appends one body to the execution's log. An error ends the attempt with that failure.
    fn emit(&mut self, body: EventBody) -> Result<(), AttemptFailure>;
}

/// A sink that drops everything (a call whose output nobody sees).
#[derive(Debug, Default)]
pub struct DiscardEmit;

impl Emit for DiscardEmit {
    fn emit(&mut self, _body: EventBody) -> Result<(), AttemptFailure> {
        Ok(())
    }
}

/// One call to a provider.
#[derive(Debug, Clone, Copy)]
pub struct ProviderCall<'a> {
    /// The caller's request.
    pub request: &'a ExecutionRequest,
    /// The provider's model id.
    pub model: &'a str,
    /// The resolved credential.
    pub credential: &'a str,
}

/// A submitted async job that may still be cancelled remotely.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteJob {
    /// The job's cancel URL (same origin as the provider's base URL).
    pub cancel_url: String,
}

/// Where an async adapter records its submitted job, so the runtime can cancel it remotely
/// after the attempt's future was dropped (cancel or deadline).
#[derive(Debug, Clone, Default)]
pub struct RemoteJobSlot(Arc<Mutex<Option<RemoteJob>>>);

impl RemoteJobSlot {
    /// Records the live job.
    pub fn set(&self, job: Option<RemoteJob>) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = job;
    }

    /// Takes the live job, if any.
    pub fn take(&self) -> Option<RemoteJob> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

/// A rewrite of what passes between an adapter and its provider: none in a clean runtime; a
/// known-bad one's composition root hands its adapters one (`known_bad/provider_exchange.rs`).
pub trait ProviderExchange: Send + Sync + std::fmt::Debug {
    /// Rewrites a request about to be sent to the provider.
    fn outgoing(&self, request: &mut reqwest::Request);
    /// Rewrites the failure a provider's error answer maps to; `body` is the answer's body as
    /// read (capped).
    fn failure(&self, failure: &mut AttemptFailure, body: &[u8]);
}

/// Settings every adapter shares.
#[derive(Debug, Clone)]
pub(crate) struct AdapterSettings {
    /// The rewrite of the provider exchange, if any.
    pub exchange: Option<Arc<dyn ProviderExchange>>,
    pub redactor: Redactor,
    pub poll_interval: Duration,
    pub max_polls: u32,
    pub remote_cancel_timeout: Duration,
}

/// One configured provider's adapter.
#[derive(Debug, Clone)]
pub struct Adapter {
    provider_id: String,
    kind: ProviderKind,
    base_url: reqwest::Url,
    client: reqwest::Client,
    settings: Arc<AdapterSettings>,
}

/// An adapter could not be built.
#[derive(Debug, thiserror::Error)]
pub enum AdapterError {
    /// The base URL does not parse (validated config never gets here).
    #[error("provider `{0}`: base_url is not a valid URL")]
    BaseUrl(String),
    /// The HTTP client could not be built.
    #[error("failed to build the HTTP client")]
    Client,
}

impl Adapter {
    /// Builds the adapter of a configured provider.
    pub fn new(
        config: &ProviderConfig,
        limits: &LimitsConfig,
        exchange: Option<Arc<dyn ProviderExchange>>,
        redactor: Redactor,
    ) -> Result<Adapter, AdapterError> {
        let base_url = reqwest::Url::parse(config.base_url.trim_end_matches('/'))
            .map_err(|_| AdapterError::BaseUrl(config.id.clone()))?;
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(Duration::from_millis(limits.provider_connect_timeout_ms))
            .build()
            .map_err(|_| AdapterError::Client)?;
        Ok(Adapter {
            provider_id: config.id.clone(),
            kind: config.kind,
            base_url,
            client,
            settings: Arc::new(AdapterSettings {
                exchange,
                redactor,
                poll_interval: Duration::from_millis(limits.async_poll_interval_ms),
                max_polls: limits.async_max_polls,
                remote_cancel_timeout: Duration::from_millis(limits.remote_cancel_timeout_ms),
            }),
        })
    }

    /// The provider id.
    pub fn provider_id(&self) -> &str {
        &self.provider_id
    }

    /// `base_url` joined with a path below it.
    fn endpoint(&self, path: &str) -> String {
        format!(
            "{}/{}",
            self.base_url.as_str().trim_end_matches('/'),
            path.trim_start_matches('/')
        )
    }
}

/// The members of the request extension `key` (`openai.request`, `anthropic.request`) that the
/// adapter does not own itself: the documented provider-specific pass-through of a request
/// body.
fn extension_members(call: &ProviderCall<'_>, key: &str, owned: &[&str]) -> Map<String, Value> {
    let Some(Value::Object(extra)) = call.request.extensions.as_ref().and_then(|e| e.get(key))
    else {
        return Map::new();
    };
    extra
        .iter()
        .filter(|(member, _)| !owned.contains(&member.as_str()))
        .map(|(member, value)| (member.clone(), value.clone()))
        .collect()
}

/// A usage fact the provider reported, when it reported a quantity for the unit.
fn provider_fact(unit: &str, quantity: Option<f64>) -> Option<UsageFact> {
    quantity.map(|quantity| UsageFact {
        unit: unit.to_string(),
        quantity,
        source: UsageSource::Provider,
        complete: Some(true),
    })
}
