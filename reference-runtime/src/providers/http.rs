//! What every adapter does with HTTP: send without ever formatting the `reqwest` error (it
//! carries the URL), and map a provider's non-2xx answer to a portable error. This file is the
//! one place where provider HTTP errors are classified.
//!
//! Retryable: 408, 429 (honouring `Retry-After` / `retry-after-ms`), 5xx, 529 and a connection
//! failure before any answer. Not retryable: every other 4xx, and 429 `insufficient_quota`.
//! `x-should-retry` overrides the status. The provider body is read (capped) only to classify;
//! it is never copied into a message.

use std::time::Duration;

use futures::StreamExt;
use reqwest::header::HeaderMap;
use serde_json::Value;
use spec::execution::{ErrorCode, PortableError};

use super::AdapterSettings;
use super::AttemptFailure;

/// How much of an error body is read for classification.
const MAX_ERROR_BODY_BYTES: usize = 64 * 1024;

/// Sends a request, rewritten by the settings' exchange rewrite if any; a transport failure
/// before any answer is a retryable `provider_unavailable`.
pub(crate) async fn send(
    request: reqwest::RequestBuilder,
    settings: &AdapterSettings,
) -> Result<reqwest::Response, AttemptFailure> {
    let (client, request) = request.build_split();
    let mut request = request.map_err(|_| {
        tracing::debug!("provider request could not be built");
        AttemptFailure::transport("Provider connection failed")
    })?;
    if let Some(exchange) = &settings.exchange {
        exchange.outgoing(&mut request);
    }
    client.execute(request).await.map_err(|error| {
        tracing::debug!(
            connect = error.is_connect(),
            timeout = error.is_timeout(),
            "provider request failed before an answer"
        );
        AttemptFailure::transport("Provider connection failed")
    })
}

/// Reads a body, at most `limit` bytes (the rest is dropped).
pub(crate) async fn read_capped(response: reqwest::Response, limit: usize) -> Vec<u8> {
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(Ok(chunk)) = stream.next().await {
        let room = limit.saturating_sub(body.len());
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if body.len() >= limit {
            break;
        }
    }
    body
}

/// Reads a whole JSON body (capped at 1 MiB); anything else is a protocol error.
pub(crate) async fn read_json(response: reqwest::Response) -> Result<Value, AttemptFailure> {
    let body = read_capped(response, 1024 * 1024 + 1).await;
    if body.len() > 1024 * 1024 {
        return Err(AttemptFailure::protocol(
            "Provider answer exceeds the size limit",
        ));
    }
    serde_json::from_slice(&body)
        .map_err(|_| AttemptFailure::protocol("Provider answer is not valid JSON"))
}

/// Maps a non-2xx answer to the attempt's failure.
pub(crate) async fn status_failure(
    response: reqwest::Response,
    settings: &AdapterSettings,
) -> AttemptFailure {
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = read_capped(response, MAX_ERROR_BODY_BYTES).await;
    let mut failure = classify(status, &headers, &body, settings);
    if let Some(exchange) = &settings.exchange {
        exchange.failure(&mut failure, &body);
    }
    failure
}

fn classify(
    status: u16,
    headers: &HeaderMap,
    body: &[u8],
    settings: &AdapterSettings,
) -> AttemptFailure {
    let parsed: Option<Value> = serde_json::from_slice(body).ok();
    let error_kind = parsed.as_ref().and_then(provider_error_kind);
    let insufficient_quota = error_kind.as_deref() == Some("insufficient_quota");
    let mut retryable = matches!(status, 408 | 429 | 500..=599) && !insufficient_quota;
    if let Some(should_retry) = header_str(headers, "x-should-retry") {
        match should_retry {
            "true" => retryable = !insufficient_quota,
            "false" => retryable = false,
            _ => {}
        }
    }
    let code = if status == 429 && error_kind.as_deref() != Some("overloaded_error") {
        ErrorCode::RateLimited
    } else {
        ErrorCode::ProviderUnavailable
    };
    let message = match (status, insufficient_quota) {
        (429, true) => "Provider quota is exhausted".to_string(),
        (429, false) => "Provider rate limit reached".to_string(),
        (401 | 403, _) => "Provider refused the credential".to_string(),
        (_, _) => format!("Provider answered HTTP {status}"),
    };
    tracing::info!(
        status,
        retryable,
        kind = error_kind.as_deref().map(|k| settings.redactor.scrub(k)),
        "provider answered with an error"
    );
    AttemptFailure {
        error: PortableError {
            code,
            message,
            retryable,
            provider_code: Some(status.to_string()),
        },
        retry_after: retry_after(headers),
    }
}

/// The provider's own error type or code (`error.type`, `error.code`, `error_type`), used only
/// to classify.
fn provider_error_kind(body: &Value) -> Option<String> {
    let error = body.get("error");
    let candidates = [
        error.and_then(|e| e.get("code")),
        error.and_then(|e| e.get("type")),
        body.get("error_type"),
    ];
    let kinds: Vec<&str> = candidates
        .iter()
        .flatten()
        .filter_map(|v| v.as_str())
        .collect();
    kinds
        .iter()
        .find(|k| **k == "insufficient_quota")
        .or_else(|| kinds.first())
        .map(|k| k.to_string())
}

fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
}

/// `retry-after-ms` (milliseconds), else `retry-after` (whole seconds); HTTP dates are ignored.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    if let Some(ms) = header_str(headers, "retry-after-ms").and_then(|v| v.parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_millis(ms as u64));
    }
    header_str(headers, "retry-after")
        .and_then(|v| v.parse::<u64>().ok())
        .map(Duration::from_secs)
}

/// Classifies an in-band stream error by the provider's error type: overloads, server and
/// rate-limit errors are retryable (before output; the router downgrades after output).
pub(crate) fn in_band_failure(error: &Value) -> AttemptFailure {
    let kind = error
        .get("type")
        .or_else(|| error.get("code"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let retryable = matches!(
        kind,
        "overloaded_error"
            | "api_error"
            | "server_error"
            | "rate_limit_error"
            | "rate_limit_exceeded"
            | "timeout_error"
    );
    let code = if kind.starts_with("rate_limit") {
        ErrorCode::RateLimited
    } else {
        ErrorCode::ProviderUnavailable
    };
    AttemptFailure::new(code, "Provider reported an error in its stream", retryable)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::redact::Redactor;

    fn settings() -> AdapterSettings {
        AdapterSettings {
            exchange: None,
            redactor: Redactor::new(),
            poll_interval: Duration::from_millis(1),
            max_polls: 1,
            remote_cancel_timeout: Duration::from_millis(1),
        }
    }

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.insert(*k, v.parse().unwrap());
        }
        map
    }

    #[test]
    fn classifies_statuses() {
        let s = settings();
        let none = HeaderMap::new();
        for (status, retryable) in [
            (408, true),
            (429, true),
            (500, true),
            (503, true),
            (529, true),
            (400, false),
            (401, false),
            (404, false),
        ] {
            assert_eq!(
                classify(status, &none, b"", &s).error.retryable,
                retryable,
                "{status}"
            );
        }
        let quota = br#"{"error":{"message":"You exceeded your current quota sk-secret","type":"insufficient_quota","code":"insufficient_quota"}}"#;
        let failure = classify(429, &none, quota, &s);
        assert!(!failure.error.retryable);
        assert!(!failure.error.message.contains("sk-secret"));
        assert_eq!(failure.error.code, ErrorCode::RateLimited);
        assert!(
            !classify(503, &headers(&[("x-should-retry", "false")]), b"", &s)
                .error
                .retryable
        );
    }

    #[test]
    fn reads_retry_after() {
        assert_eq!(
            retry_after(&headers(&[("retry-after", "2")])),
            Some(Duration::from_secs(2))
        );
        assert_eq!(
            retry_after(&headers(&[("retry-after", "2"), ("retry-after-ms", "150")])),
            Some(Duration::from_millis(150))
        );
        assert_eq!(
            retry_after(&headers(&[(
                "retry-after",
                "Wed, 21 Oct 2015 07:28:00 GMT"
            )])),
            None
        );
    }
}
