//! What the fakes received, and the verification errors built from it.

use std::fmt;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// The provider endpoint a request was addressed to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Endpoint {
    /// `POST /v1/chat/completions` (a call).
    ChatCompletions,
    /// `POST /v1/responses` (a call).
    Responses,
    /// `POST /v1/messages` (a call).
    Messages,
    /// Async media submit `POST /<model-id>` (a call).
    QueueSubmit,
    /// Async media `GET /requests/<id>/status`.
    QueueStatus,
    /// Async media `GET /requests/<id>`.
    QueueResult,
    /// Async media `PUT /requests/<id>/cancel`.
    QueueCancel,
    /// Anything else (unknown instance or path).
    Unknown,
}

impl Endpoint {
    /// True for the endpoints that consume a script call (completions, messages, submit).
    pub fn is_call(self) -> bool {
        matches!(
            self,
            Endpoint::ChatCompletions
                | Endpoint::Responses
                | Endpoint::Messages
                | Endpoint::QueueSubmit
        )
    }
}

/// One request as a fake provider received it.
///
/// `Debug` and [`RecordedCall::summary`] redact credentials; the raw values are in the fields
/// for the harness to verify.
#[derive(Clone)]
pub struct RecordedCall {
    /// Arrival order over the whole server, from 1.
    pub sequence: u64,
    /// The instance named by the first path segment (may be unknown).
    pub instance: String,
    /// The endpoint.
    pub endpoint: Endpoint,
    /// HTTP method.
    pub method: String,
    /// Path and query as received.
    pub path: String,
    /// The script the request was attributed to: its marker for calls, its job for polls.
    pub script_id: Option<String>,
    /// The [`Script::calls`](crate::Script::calls) key the call played: the instance, or
    /// `<instance>@<model>` when the script scopes the request's model (polls carry their
    /// submit's key). `None` when the request matched no registered script.
    pub script_key: Option<String>,
    /// The call number at this instance (1-based; polls carry their submit's number).
    /// `None` when the request matched no registered script.
    pub call_index: Option<u32>,
    /// The credential presented in the provider's auth header (scheme stripped).
    pub credential: Option<String>,
    /// Whether `credential` equals the configured canary.
    pub credential_is_canary: bool,
    /// All request headers, names lowercase, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The raw request body.
    pub body: Vec<u8>,
    /// Wall-clock arrival time.
    pub received_at: SystemTime,
    /// Monotonic arrival time, for measuring gaps between calls.
    pub received_instant: Instant,
    /// The status answered, or `None` when the connection was reset without a response.
    pub response_status: Option<u16>,
}

const SENSITIVE_HEADERS: [&str; 4] = [
    "authorization",
    "x-api-key",
    "proxy-authorization",
    "cookie",
];

impl RecordedCall {
    /// The body parsed as JSON, if it is JSON.
    pub fn body_json(&self) -> Option<serde_json::Value> {
        serde_json::from_slice(&self.body).ok()
    }

    /// The first header with this (case-insensitive) name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    /// One line for humans, with credentials and any canary in the body redacted.
    pub fn summary(&self, canary: &str) -> String {
        let when = self
            .received_at
            .duration_since(UNIX_EPOCH)
            .map(|elapsed| format!("{}.{:03}", elapsed.as_secs(), elapsed.subsec_millis()))
            .unwrap_or_else(|_| "?".into());
        let credential = match (&self.credential, self.credential_is_canary) {
            (None, _) => "none".to_owned(),
            (Some(_), true) => "canary".to_owned(),
            (Some(other), false) => format!("other ({} chars)", other.chars().count()),
        };
        let status = self
            .response_status
            .map_or_else(|| "reset".to_owned(), |status| status.to_string());
        let call = self
            .call_index
            .map_or_else(|| "-".to_owned(), |index| index.to_string());
        let mut body = redact(&String::from_utf8_lossy(&self.body), canary);
        if let Some((cut, _)) = body.char_indices().nth(160) {
            body.truncate(cut);
            body.push('…');
        }
        format!(
            "#{} t={when} {} {} instance={} script={} call={call} credential={credential} \
             status={status} body={body}",
            self.sequence,
            self.method,
            self.path,
            self.instance,
            self.script_id.as_deref().unwrap_or("-"),
        )
    }
}

/// Replaces every occurrence of `canary` (if non-empty) by `<canary>`.
pub(crate) fn redact(text: &str, canary: &str) -> String {
    if canary.is_empty() {
        text.to_owned()
    } else {
        text.replace(canary, "<canary>")
    }
}

impl fmt::Debug for RecordedCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: Vec<(&str, &str)> = self
            .headers
            .iter()
            .map(|(name, value)| {
                if SENSITIVE_HEADERS.contains(&name.as_str()) {
                    (name.as_str(), "<redacted>")
                } else {
                    (name.as_str(), value.as_str())
                }
            })
            .collect();
        f.debug_struct("RecordedCall")
            .field("sequence", &self.sequence)
            .field("instance", &self.instance)
            .field("endpoint", &self.endpoint)
            .field("method", &self.method)
            .field("path", &self.path)
            .field("script_id", &self.script_id)
            .field("call_index", &self.call_index)
            .field(
                "credential",
                &self.credential.as_ref().map(|_| "<redacted>"),
            )
            .field("credential_is_canary", &self.credential_is_canary)
            .field("headers", &headers)
            .field("body_bytes", &self.body.len())
            .field("response_status", &self.response_status)
            .finish()
    }
}

/// A verification that did not hold. The message lists the requests received (redacted).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum VerificationError {
    /// A script was called a different number of times than expected.
    #[error(
        "script `{script_id}` at instance `{instance}`: expected {expected} call(s), got \
         {actual}\nrequests received for this script:\n{received}"
    )]
    CallCount {
        /// Script id.
        script_id: String,
        /// Instance name.
        instance: String,
        /// Expected number of calls.
        expected: usize,
        /// Calls received.
        actual: usize,
        /// One line per request received for the script (any instance), or `(none)`.
        received: String,
    },
    /// A script that must not be called was called.
    #[error("script `{script_id}` must never be called, got {actual} request(s):\n{received}")]
    Called {
        /// Script id.
        script_id: String,
        /// Requests received.
        actual: usize,
        /// One line per request received.
        received: String,
    },
}

/// The listing used in verification messages.
pub(crate) fn listing(calls: &[RecordedCall], canary: &str) -> String {
    if calls.is_empty() {
        return "  (none)".to_owned();
    }
    calls
        .iter()
        .map(|call| format!("  {}", call.summary(canary)))
        .collect::<Vec<_>>()
        .join("\n")
}
