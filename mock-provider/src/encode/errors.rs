//! Provider-shaped error responses and in-band error frames.

use bytes::Bytes;
use serde_json::{Value, json};

use crate::config::ProviderKind;
use crate::plan::PlannedResponse;
use crate::script::{HttpError, ProviderError};

/// Status, body and extra headers of one catalogue error for one provider.
pub(crate) struct ProviderErrorResponse {
    pub status: u16,
    pub body: Value,
    pub headers: Vec<(String, String)>,
}

/// Options that change an error's body.
#[derive(Default)]
pub(crate) struct ErrorContext<'a> {
    /// Put this credential into the message.
    pub echo_credential: Option<&'a str>,
    /// The request id put in headers (and the Anthropic body).
    pub request_id: &'a str,
}

fn with_echo(message: &str, context: &ErrorContext<'_>) -> String {
    match context.echo_credential {
        Some(credential) => format!("{message} (request made with key {credential})"),
        None => message.to_owned(),
    }
}

/// The error's status and body as the provider of `kind` sends it.
pub(crate) fn provider_error(
    kind: ProviderKind,
    error: ProviderError,
    context: &ErrorContext<'_>,
) -> ProviderErrorResponse {
    match kind {
        ProviderKind::OpenaiChat | ProviderKind::OpenaiResponses => openai_error(error, context),
        ProviderKind::AnthropicMessages => anthropic_error(error, context),
        ProviderKind::AsyncMedia => fal_error(error, context),
    }
}

fn openai_error(error: ProviderError, context: &ErrorContext<'_>) -> ProviderErrorResponse {
    let (status, message, error_type, param, code) = match error {
        ProviderError::RateLimited => (
            429,
            "Rate limit reached for mock-model on requests per min (RPM): Limit 3, Used 3, \
             Requested 1. Please try again in 1s.",
            "requests",
            Value::Null,
            json!("rate_limit_exceeded"),
        ),
        ProviderError::InsufficientQuota => (
            429,
            "You exceeded your current quota, please check your plan and billing details.",
            "insufficient_quota",
            Value::Null,
            json!("insufficient_quota"),
        ),
        ProviderError::ServerError => (
            500,
            "The server had an error while processing your request. Sorry about that!",
            "server_error",
            Value::Null,
            Value::Null,
        ),
        ProviderError::ServiceUnavailable => (
            503,
            "The server is overloaded or not ready yet.",
            "server_error",
            Value::Null,
            Value::Null,
        ),
        ProviderError::Overloaded => (
            529,
            "The server is overloaded, please try again later.",
            "server_error",
            Value::Null,
            json!("overloaded"),
        ),
        ProviderError::ContextLengthExceeded => (
            400,
            "This model's maximum context length is 128000 tokens. However, your messages \
             resulted in 130000 tokens. Please reduce the length of the messages.",
            "invalid_request_error",
            json!("messages"),
            json!("context_length_exceeded"),
        ),
        ProviderError::Unauthorized => (
            401,
            "Incorrect API key provided. You can find your API key at \
             https://platform.openai.com/account/api-keys.",
            "invalid_request_error",
            Value::Null,
            json!("invalid_api_key"),
        ),
    };
    ProviderErrorResponse {
        status,
        body: openai_error_body(&with_echo(message, context), error_type, param, code),
        headers: vec![("x-request-id".into(), context.request_id.to_owned())],
    }
}

fn openai_error_body(message: &str, error_type: &str, param: Value, code: Value) -> Value {
    json!({"error": {"message": message, "type": error_type, "param": param, "code": code}})
}

fn anthropic_error(error: ProviderError, context: &ErrorContext<'_>) -> ProviderErrorResponse {
    let (status, error_type, message) = anthropic_error_parts(error);
    let mut body = anthropic_error_body(error_type, &with_echo(message, context));
    body["request_id"] = json!(context.request_id);
    ProviderErrorResponse {
        status,
        body,
        headers: vec![("request-id".into(), context.request_id.to_owned())],
    }
}

fn anthropic_error_parts(error: ProviderError) -> (u16, &'static str, &'static str) {
    match error {
        ProviderError::RateLimited => (
            429,
            "rate_limit_error",
            "This request would exceed the rate limit for your organization of 50 requests per \
             minute.",
        ),
        ProviderError::InsufficientQuota => (
            402,
            "billing_error",
            "Your credit balance is too low to access the Anthropic API. Please go to Plans & \
             Billing to upgrade or purchase credits.",
        ),
        ProviderError::ServerError => (500, "api_error", "Internal server error"),
        ProviderError::ServiceUnavailable => (503, "api_error", "Service unavailable"),
        ProviderError::Overloaded => (529, "overloaded_error", "Overloaded"),
        ProviderError::ContextLengthExceeded => (
            400,
            "invalid_request_error",
            "prompt is too long: 210000 tokens > 200000 maximum",
        ),
        ProviderError::Unauthorized => (401, "authentication_error", "invalid x-api-key"),
    }
}

fn anthropic_error_body(error_type: &str, message: &str) -> Value {
    json!({"type": "error", "error": {"type": error_type, "message": message}})
}

fn fal_error(error: ProviderError, context: &ErrorContext<'_>) -> ProviderErrorResponse {
    let (status, detail, error_type) = match error {
        ProviderError::RateLimited => (429, "Rate limit exceeded", None),
        ProviderError::InsufficientQuota => (
            403,
            "User is locked. Reason: Exhausted balance. Top up your balance at \
             fal.ai/dashboard/billing.",
            None,
        ),
        ProviderError::ServerError => (500, "Internal server error", Some("internal_error")),
        ProviderError::ServiceUnavailable => (
            503,
            "Failed to schedule a runner",
            Some("runner_scheduling_failure"),
        ),
        ProviderError::Overloaded => (529, "Overloaded", None),
        ProviderError::ContextLengthExceeded => {
            let body = json!({"detail": [{
                "loc": ["body", "prompt"],
                "msg": with_echo("Prompt is too long", context),
                "type": "value_error",
            }]});
            return ProviderErrorResponse {
                status: 422,
                body,
                headers: Vec::new(),
            };
        }
        ProviderError::Unauthorized => (401, "No user found for Key ID and Secret", None),
    };
    let mut body = json!({"detail": with_echo(detail, context)});
    let mut headers = Vec::new();
    if let Some(error_type) = error_type {
        body["error_type"] = json!(error_type);
        headers.push(("x-fal-error-type".into(), error_type.to_owned()));
    }
    ProviderErrorResponse {
        status,
        body,
        headers,
    }
}

/// The full HTTP error response of a scripted `http_error`.
pub(crate) fn http_error_response(
    kind: ProviderKind,
    error: &HttpError,
    context: &ErrorContext<'_>,
) -> PlannedResponse {
    let response = provider_error(kind, error.error, context);
    let mut headers = response.headers;
    if let Some(seconds) = error.retry_after_seconds {
        headers.push(("retry-after".into(), seconds.to_string()));
    }
    if let Some(ms) = error.retry_after_ms {
        headers.push(("retry-after-ms".into(), ms.to_string()));
    }
    if let Some(should_retry) = error.should_retry {
        headers.push(("x-should-retry".into(), should_retry.to_string()));
    }
    PlannedResponse::json(response.status, headers, &response.body)
}

/// The in-band error frame sent after a 200 (`None` = the provider's usual in-band error).
pub(crate) fn in_band_error_frame(
    kind: ProviderKind,
    error: Option<ProviderError>,
    context: &ErrorContext<'_>,
) -> Bytes {
    match kind {
        ProviderKind::AnthropicMessages => {
            let (_, error_type, message) =
                anthropic_error_parts(error.unwrap_or(ProviderError::Overloaded));
            let body = anthropic_error_body(error_type, &with_echo(message, context));
            Bytes::from(format!("event: error\ndata: {body}\n\n"))
        }
        ProviderKind::OpenaiChat | ProviderKind::OpenaiResponses | ProviderKind::AsyncMedia => {
            let response = openai_error(error.unwrap_or(ProviderError::ServerError), context);
            Bytes::from(format!("data: {}\n\n", response.body))
        }
    }
}

/// A provider-shaped error for problems of the fake itself (no marker, exhausted script, …).
pub(crate) fn mock_error(
    kind: ProviderKind,
    status: u16,
    code: &str,
    message: &str,
    request_id: &str,
) -> PlannedResponse {
    let message = format!("mock-provider: {message}");
    match kind {
        ProviderKind::OpenaiChat | ProviderKind::OpenaiResponses => {
            let error_type = if status >= 500 {
                "server_error"
            } else {
                "invalid_request_error"
            };
            PlannedResponse::json(
                status,
                vec![("x-request-id".into(), request_id.to_owned())],
                &openai_error_body(&message, error_type, Value::Null, json!(code)),
            )
        }
        ProviderKind::AnthropicMessages => {
            let error_type = match status {
                401 => "authentication_error",
                404 => "not_found_error",
                status if status >= 500 => "api_error",
                _ => "invalid_request_error",
            };
            let mut body = anthropic_error_body(error_type, &message);
            body["request_id"] = json!(request_id);
            PlannedResponse::json(
                status,
                vec![("request-id".into(), request_id.to_owned())],
                &body,
            )
        }
        ProviderKind::AsyncMedia => PlannedResponse::json(
            status,
            Vec::new(),
            &json!({"detail": message, "error_type": code}),
        ),
    }
}

/// The 401 a provider sends for a missing or wrong credential. Never echoes what was sent.
pub(crate) fn unauthenticated(
    kind: ProviderKind,
    credential_present: bool,
    request_id: &str,
) -> PlannedResponse {
    match kind {
        ProviderKind::OpenaiChat | ProviderKind::OpenaiResponses => {
            let (message, code) = if credential_present {
                (
                    "Incorrect API key provided. You can find your API key at \
                     https://platform.openai.com/account/api-keys.",
                    json!("invalid_api_key"),
                )
            } else {
                (
                    "You didn't provide an API key. You need to provide your API key in an \
                     Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
                    Value::Null,
                )
            };
            PlannedResponse::json(
                401,
                vec![("x-request-id".into(), request_id.to_owned())],
                &openai_error_body(message, "invalid_request_error", Value::Null, code),
            )
        }
        ProviderKind::AnthropicMessages => {
            let message = if credential_present {
                "invalid x-api-key"
            } else {
                "x-api-key header is required"
            };
            let mut body = anthropic_error_body("authentication_error", message);
            body["request_id"] = json!(request_id);
            PlannedResponse::json(
                401,
                vec![("request-id".into(), request_id.to_owned())],
                &body,
            )
        }
        ProviderKind::AsyncMedia => PlannedResponse::json(
            401,
            Vec::new(),
            &json!({"detail": "No user found for Key ID and Secret"}),
        ),
    }
}

/// The 400 Anthropic sends when the `anthropic-version` header is missing.
pub(crate) fn missing_anthropic_version(request_id: &str) -> PlannedResponse {
    let mut body = anthropic_error_body(
        "invalid_request_error",
        "anthropic-version: header is required",
    );
    body["request_id"] = json!(request_id);
    PlannedResponse::json(
        400,
        vec![("request-id".into(), request_id.to_owned())],
        &body,
    )
}
