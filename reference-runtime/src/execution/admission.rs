//! Admission of `POST /v1/executions`, in the contract's order: content type, body size, JSON,
//! the closed request schema (the published `execution-request.json` is the validator, before
//! serde decoding), then the Idempotency-Key format. Capability matching and idempotency come
//! after, in the service. Every refusal is 400 `invalid_request` with a fixed message that
//! echoes nothing of the request.
//!
//! Two host choices change that (`[execution]`): `validation_order = "key-first"` checks the
//! Idempotency-Key before the body; `malformed_status = "specific"` answers 415 (content type),
//! 413 (size) and 422 (schema) instead of 400, still `invalid_request`.

use axum::body::Body;
use axum::http::{HeaderMap, StatusCode, header};
use serde_json::Value;
use spec::execution::{ExecutionRequest, IDEMPOTENCY_KEY_MAX_LEN};
use spec::schema::{Published, validate};

use super::choices::{ExecutionChoices, MalformedStatus, ValidationOrder};
use super::errors::ApiError;

/// The members of the closed request object.
pub(crate) const REQUEST_MEMBERS: [&str; 7] = [
    "ability",
    "input",
    "requirements",
    "routing",
    "deadline_ms",
    "metadata",
    "extensions",
];

/// The message of the refusal of a request that does not match the published schema.
pub(crate) const SCHEMA_MESSAGE: &str = "Request does not match the execution schema";

/// A request that passed admission.
#[derive(Debug, Clone)]
pub(crate) struct Admitted {
    /// The decoded request.
    pub request: ExecutionRequest,
    /// The request as sent (validated JSON), for the fingerprint.
    pub json: Value,
    /// The Idempotency-Key, when sent.
    pub idempotency_key: Option<String>,
}

/// How much of a refused, oversized body is read and discarded, as a multiple of the limit.
const DRAIN_FACTOR: usize = 8;
/// How long draining a refused body may take.
const DRAIN_TIME: std::time::Duration = std::time::Duration::from_secs(5);

/// Reads and discards what a client is still sending of a body this host refuses (up to
/// `limit` bytes, for at most [`DRAIN_TIME`]). Closing a connection with unread request bytes
/// makes the kernel answer with a reset, and a client that is still writing then loses the
/// refusal: it sees "no response" instead of the 400. Past either bound the response is sent
/// anyway and the connection closes.
async fn drain(body: Body, limit: usize) {
    use futures::StreamExt;
    let mut chunks = body.into_data_stream();
    let discard = async {
        let mut seen = 0usize;
        while let Some(Ok(chunk)) = chunks.next().await {
            seen = seen.saturating_add(chunk.len());
            if seen > limit {
                break;
            }
        }
    };
    let _ = tokio::time::timeout(DRAIN_TIME, discard).await;
}

pub(crate) async fn admit(
    headers: &HeaderMap,
    body: Body,
    max_body_bytes: usize,
    choices: &ExecutionChoices,
) -> Result<Admitted, ApiError> {
    let specific = choices.malformed_status == MalformedStatus::Specific;
    let status = |error: ApiError, specific_status: StatusCode| {
        if specific {
            error.with_status(specific_status)
        } else {
            error
        }
    };
    let early_key = match choices.validation_order {
        ValidationOrder::KeyFirst => Some(idempotency_key(headers)?),
        ValidationOrder::BodyFirst => None,
    };
    if !declares_json(headers) {
        return Err(status(
            ApiError::invalid("Content-Type must be application/json"),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
        ));
    }
    let too_large = || {
        status(
            ApiError::invalid("Request body exceeds the size limit"),
            StatusCode::PAYLOAD_TOO_LARGE,
        )
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|len| len > max_body_bytes as u64) {
        drain(body, max_body_bytes.saturating_mul(DRAIN_FACTOR)).await;
        return Err(too_large());
    }
    let bytes = axum::body::to_bytes(body, max_body_bytes)
        .await
        .map_err(|error| {
            if crate::server::is_body_deadline(&error) {
                // `[server] body_read_timeout_ms` passed before the body ended.
                ApiError::invalid("Request body was not received in time")
            } else {
                too_large()
            }
        })?;
    let json: Value = serde_json::from_slice(&bytes)
        .map_err(|_| ApiError::invalid("Request body is not valid JSON"))?;
    if validate(Published::ExecutionRequest, &json).is_err() {
        return Err(status(
            ApiError::invalid(SCHEMA_MESSAGE),
            StatusCode::UNPROCESSABLE_ENTITY,
        ));
    }
    let idempotency_key = match early_key {
        Some(key) => key,
        None => idempotency_key(headers)?,
    };
    let request: ExecutionRequest = serde_json::from_value(json.clone()).map_err(|_| {
        status(
            ApiError::invalid(SCHEMA_MESSAGE),
            StatusCode::UNPROCESSABLE_ENTITY,
        )
    })?;
    Ok(Admitted {
        request,
        json,
        idempotency_key,
    })
}

/// Whether `headers` declare a JSON body (`Content-Type: application/json…`).
pub(crate) fn declares_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.trim()
                .to_ascii_lowercase()
                .starts_with("application/json")
        })
}

/// The Idempotency-Key header: at most one, 1–256 visible ASCII characters.
pub(crate) fn idempotency_key(headers: &HeaderMap) -> Result<Option<String>, ApiError> {
    let mut values = headers.get_all("idempotency-key").iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    let refused = || ApiError::invalid("Idempotency-Key must be 1-256 visible ASCII characters");
    if values.next().is_some() {
        return Err(refused());
    }
    let bytes = value.as_bytes();
    if bytes.is_empty()
        || bytes.len() > IDEMPOTENCY_KEY_MAX_LEN
        || !bytes.iter().all(|b| (0x21..=0x7e).contains(b))
    {
        return Err(refused());
    }
    // Visible ASCII is valid UTF-8.
    Ok(Some(String::from_utf8_lossy(bytes).into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, value.parse().unwrap());
        }
        map
    }

    #[test]
    fn idempotency_key_format() {
        assert_eq!(idempotency_key(&headers(&[])).unwrap(), None);
        assert_eq!(
            idempotency_key(&headers(&[("idempotency-key", "abc-123")])).unwrap(),
            Some("abc-123".into())
        );
        let long = "k".repeat(257);
        for bad in ["a b", long.as_str()] {
            assert!(idempotency_key(&headers(&[("idempotency-key", bad)])).is_err());
        }
        assert!(
            idempotency_key(&headers(&[
                ("idempotency-key", "a"),
                ("idempotency-key", "b")
            ]))
            .is_err()
        );
    }
}
