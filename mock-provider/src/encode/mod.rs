//! Encoders from the neutral script model to each provider's wire format.

pub(crate) mod anthropic;
pub(crate) mod async_media;
pub(crate) mod context;
pub(crate) mod errors;
pub(crate) mod openai_chat;
pub(crate) mod openai_responses;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;

use crate::config::ProviderKind;
use crate::plan::{
    FaultFrames, PlanAction, PlannedResponse, ResponsePlan, fault_position, stream_body,
    whole_body_with_fault, with_frame_delays,
};
use crate::script::{Completion, ProviderError, StreamFault, Timing};
pub(crate) use context::CompletionContext;
use errors::{ErrorContext, in_band_error_frame, provider_error};

/// What the encoders read from the request body.
#[derive(Debug, Clone, Default)]
pub(crate) struct RequestOptions {
    /// The request's `model`.
    pub model: Option<String>,
    /// `"stream": true`.
    pub stream: bool,
    /// `"stream_options": {"include_usage": true}` (OpenAI).
    pub include_usage: bool,
}

impl RequestOptions {
    /// Reads the options from a JSON body; anything unreadable counts as absent.
    pub fn parse(body: &[u8]) -> Self {
        let Ok(json) = serde_json::from_slice::<serde_json::Value>(body) else {
            return RequestOptions::default();
        };
        RequestOptions {
            model: json
                .get("model")
                .and_then(|model| model.as_str())
                .map(str::to_owned),
            stream: json.get("stream").and_then(|stream| stream.as_bool()) == Some(true),
            include_usage: json
                .pointer("/stream_options/include_usage")
                .and_then(|include| include.as_bool())
                == Some(true),
        }
    }
}

/// Seconds since the Unix epoch (0 if the clock is before it).
pub(crate) fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| elapsed.as_secs())
        .unwrap_or(0)
}

fn default_in_band_error(kind: ProviderKind) -> ProviderError {
    match kind {
        ProviderKind::AnthropicMessages => ProviderError::Overloaded,
        ProviderKind::OpenaiChat | ProviderKind::OpenaiResponses | ProviderKind::AsyncMedia => {
            ProviderError::ServerError
        }
    }
}

fn request_id_header(kind: ProviderKind, request_id: &str) -> Vec<(String, String)> {
    match kind {
        ProviderKind::OpenaiChat | ProviderKind::OpenaiResponses => {
            vec![("x-request-id".into(), request_id.to_owned())]
        }
        ProviderKind::AnthropicMessages => vec![("request-id".into(), request_id.to_owned())],
        ProviderKind::AsyncMedia => Vec::new(),
    }
}

/// The plan for a scripted completion on an OpenAI (Chat or Responses) or Anthropic instance.
pub(crate) fn completion_plan(
    kind: ProviderKind,
    completion: &Completion,
    options: &RequestOptions,
    request_id: &str,
    canary: &str,
) -> ResponsePlan {
    let model = completion
        .model
        .as_deref()
        .or(options.model.as_deref())
        .unwrap_or("mock-model");
    let unique = request_id.trim_start_matches("req_");
    let response_id = match kind {
        ProviderKind::AnthropicMessages => format!("msg_mock_{unique}"),
        ProviderKind::OpenaiResponses => format!("resp_mock_{unique}"),
        _ => format!("chatcmpl-mock-{unique}"),
    };
    let context = CompletionContext {
        model,
        response_id: &response_id,
        created: unix_now(),
        include_usage: options.include_usage,
    };
    let fault = completion.stream_fault.as_ref();
    let echo = matches!(
        fault,
        Some(StreamFault::InBandError {
            echo_credential: true,
            ..
        })
    );
    let error_context = ErrorContext {
        echo_credential: echo.then_some(canary),
        request_id,
    };
    let timing = &completion.timing;
    let response = if options.stream {
        let frames = match kind {
            ProviderKind::AnthropicMessages => anthropic::stream_frames(completion, &context),
            ProviderKind::OpenaiResponses => openai_responses::stream_frames(completion, &context),
            _ => openai_chat::stream_frames(completion, &context),
        };
        let fault_frames = || {
            let (error, after_chunks) = match fault {
                Some(StreamFault::InBandError {
                    error,
                    after_chunks,
                    ..
                }) => (*error, *after_chunks),
                _ => (None, 0),
            };
            FaultFrames {
                in_band_error: match kind {
                    ProviderKind::OpenaiResponses => openai_responses::failure_frames(
                        &provider_error(
                            kind,
                            error.unwrap_or(default_in_band_error(kind)),
                            &error_context,
                        )
                        .body,
                        fault_position(&frames, after_chunks),
                        &context,
                    ),
                    _ => in_band_error_frame(kind, error, &error_context),
                },
                malformed: match kind {
                    ProviderKind::AnthropicMessages => anthropic::malformed_frame(),
                    ProviderKind::OpenaiResponses => openai_responses::malformed_frame(&context),
                    _ => openai_chat::malformed_frame(&context),
                },
            }
        };
        let mut headers = request_id_header(kind, request_id);
        headers.push((
            "content-type".into(),
            "text/event-stream; charset=utf-8".into(),
        ));
        headers.push(("cache-control".into(), "no-cache".into()));
        PlannedResponse {
            status: 200,
            headers,
            body: stream_body(&frames, fault, fault_frames, timing),
        }
    } else if let Some(StreamFault::InBandError { error, .. }) = fault {
        // Without a stream the provider reports the same failure as an HTTP error.
        let error = provider_error(
            kind,
            error.unwrap_or(default_in_band_error(kind)),
            &error_context,
        );
        let mut response = PlannedResponse::json(error.status, error.headers, &error.body);
        response.body = with_frame_delays(response.body, timing);
        response
    } else {
        let body = match kind {
            ProviderKind::AnthropicMessages => anthropic::json_body(completion, &context),
            ProviderKind::OpenaiResponses => openai_responses::json_body(completion, &context),
            _ => openai_chat::json_body(completion, &context),
        };
        let bytes = Bytes::from(body.to_string());
        let steps = match fault {
            Some(fault) => whole_body_with_fault(bytes, fault),
            None => vec![crate::plan::BodyStep::Bytes(bytes)],
        };
        let mut headers = request_id_header(kind, request_id);
        headers.push(("content-type".into(), "application/json".into()));
        PlannedResponse {
            status: 200,
            headers,
            body: with_frame_delays(steps, timing),
        }
    };
    timed(response, timing)
}

/// A response sent after the timing's header delay, with its first-frame delay applied.
pub(crate) fn timed_whole(response: PlannedResponse, timing: &Timing) -> ResponsePlan {
    let mut response = response;
    response.body = with_frame_delays(response.body, timing);
    timed(response, timing)
}

fn timed(response: PlannedResponse, timing: &Timing) -> ResponsePlan {
    ResponsePlan {
        delay_before_headers: Duration::from_millis(timing.delay_before_headers_ms),
        action: PlanAction::Respond(response),
    }
}
