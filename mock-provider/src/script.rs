//! The provider-neutral script model: what a fake provider does on each call.
//!
//! A [`Script`] is data. Conformance case files embed it as JSON, so every type here derives
//! `Serialize`, `Deserialize` (with `deny_unknown_fields`) and `JsonSchema`. Tagged enums use an
//! explicit `"kind"` tag (async job phases use `"status"`), keys are `snake_case`, and every
//! optional field has a documented default so scripts stay short.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One script: per provider instance, what call 1, call 2, … of that instance answer.
///
/// A request is attributed to a script by the marker `[[script:<id>]]` (see
/// [`marker`](crate::marker)) anywhere in its body. Each instance keeps its own call counter:
/// the n-th request carrying the marker at instance `openai-primary` plays
/// `calls["openai-primary"][n-1]`. A request past the end of the list is still counted as a
/// call and answered with a provider-shaped HTTP 500 whose message says the script is
/// exhausted.
///
/// A key may also be `<instance>@<model>`: calls to that instance whose request names that
/// model (the JSON body's `model`; for an async-media submit, the path after the instance)
/// play that list, with a counter of their own; a call whose model has no such key plays the
/// bare `<instance>` list. This is how one provider with two models plays two roles.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Script {
    /// Unique id of the script, 1–200 characters from `A-Z a-z 0-9 . _ ~ -`.
    pub id: String,
    /// Ordered call behaviours per provider instance name (for example `openai-primary`), or
    /// per instance and model (`openai-primary@gpt-b`).
    #[serde(default)]
    pub calls: BTreeMap<String, Vec<CallBehaviour>>,
}

/// Splits a [`Script::calls`] key into its instance and, when model-scoped, its model.
pub fn split_call_key(key: &str) -> (&str, Option<&str>) {
    match key.split_once('@') {
        Some((instance, model)) => (instance, Some(model)),
        None => (key, None),
    }
}

/// What one call answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CallBehaviour {
    /// A model completion (OpenAI Chat Completions or Anthropic Messages instances).
    Completion(Completion),
    /// An asynchronous media job (async-media instances).
    AsyncJob(AsyncJob),
    /// An HTTP error with a provider-shaped body.
    HttpError(HttpError),
    /// The connection is closed (TCP reset) before any response byte.
    ConnectionReset(ConnectionReset),
}

/// A successful completion, optionally broken by a [`StreamFault`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Completion {
    /// Output in wire order: text deltas and tool call fragments, possibly interleaved.
    #[serde(default)]
    pub chunks: Vec<Chunk>,
    /// Why generation stopped; default `stop`.
    #[serde(default)]
    pub finish_reason: FinishReason,
    /// Token usage; absent means the provider reports none (see the crate's deviations).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Model name in the response; default: the request's `model`, else `mock-model`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Delays; default none.
    #[serde(default, skip_serializing_if = "Timing::is_immediate")]
    pub timing: Timing,
    /// A fault that breaks the stream; default none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_fault: Option<StreamFault>,
}

/// One unit of streamed output. Each chunk becomes exactly one content frame on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Chunk {
    /// A text fragment of output `output_index`.
    Text {
        /// OpenAI: the choice index. Anthropic: text blocks are numbered in order of first
        /// appearance, so use 0, 1, … in that order. Default 0.
        #[serde(default)]
        output_index: u32,
        /// The text fragment.
        delta: String,
    },
    /// Starts a tool call (OpenAI: first `tool_calls` delta; Anthropic: `tool_use` block).
    ToolCallStart {
        /// Provider call id (`call_…` / `toolu_…`), unique within the completion.
        call_id: String,
        /// Function or tool name.
        name: String,
    },
    /// A fragment of a started call's JSON arguments (any split, even mid-token).
    ToolCallArguments {
        /// The id given in the call's `tool_call_start`.
        call_id: String,
        /// The fragment of JSON text.
        delta: String,
    },
}

/// Why generation stopped, mapped to each provider's own vocabulary.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// OpenAI `stop`, Anthropic `end_turn`.
    #[default]
    Stop,
    /// OpenAI `length`, Anthropic `max_tokens`.
    Length,
    /// OpenAI `tool_calls`, Anthropic `tool_use`.
    ToolCalls,
    /// OpenAI `content_filter`, Anthropic `refusal`.
    ContentFilter,
}

/// Token usage in neutral terms: `input_tokens` includes cached input (OpenAI semantics).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Usage {
    /// All input tokens, cache reads and writes included.
    pub input_tokens: u64,
    /// Output tokens (reasoning included).
    pub output_tokens: u64,
    /// Input tokens read from the prompt cache (OpenAI `cached_tokens`, Anthropic
    /// `cache_read_input_tokens`). Default 0.
    #[serde(default)]
    pub cache_read_tokens: u64,
    /// Input tokens written to the prompt cache (Anthropic `cache_creation_input_tokens`;
    /// OpenAI has no such field). Default 0.
    #[serde(default)]
    pub cache_write_tokens: u64,
    /// Reasoning tokens (OpenAI `reasoning_tokens`; Anthropic has no such field). Default 0.
    #[serde(default)]
    pub reasoning_tokens: u64,
}

/// Delays around a response. All default to 0.
///
/// `delay_before_headers_ms` works on both backends; the two others need an instance served by
/// the streaming backend.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Timing {
    /// Time between receiving the request and sending the status line (time to first byte).
    #[serde(default)]
    pub delay_before_headers_ms: u64,
    /// Time between sending the headers and sending the first body frame.
    #[serde(default)]
    pub delay_before_first_frame_ms: u64,
    /// Time between two consecutive body frames of a stream.
    #[serde(default)]
    pub delay_between_frames_ms: u64,
}

impl Timing {
    /// True when no delay is set.
    pub fn is_immediate(&self) -> bool {
        *self == Timing::default()
    }

    /// True when a delay is set that only the streaming backend can serve.
    pub fn needs_streaming_backend(&self) -> bool {
        self.delay_before_first_frame_ms > 0 || self.delay_between_frames_ms > 0
    }
}

/// A fault that breaks a completion's stream.
///
/// `after_chunks: n` places the fault directly after the frame that carries the n-th chunk
/// (`0`: right after the opening frames, i.e. the OpenAI role chunk or the Anthropic
/// `message_start` + `ping`; a value past the number of chunks: after the last chunk, before
/// the finishing frames). See the crate docs for how each fault looks on the wire and what it
/// becomes for a non-streaming request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum StreamFault {
    /// An in-band error frame, then the stream ends cleanly without its terminator.
    InBandError {
        /// Position of the error frame.
        after_chunks: usize,
        /// The error; default: OpenAI `server_error`, Anthropic `overloaded`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<ProviderError>,
        /// The error message contains the canary credential. Default false.
        #[serde(default)]
        echo_credential: bool,
    },
    /// Everything is sent except the terminator (`data: [DONE]` / `message_stop`).
    MissingTerminator,
    /// The last frame lacks its terminating blank line (it ends in one `\n`, not two).
    IncompleteFinalFrame,
    /// A frame whose `data:` is truncated JSON is inserted; the stream then goes on normally.
    MalformedFrame {
        /// Position of the malformed frame.
        after_chunks: usize,
    },
    /// The transport is aborted mid-body (chunked encoding never terminated). Streaming
    /// backend only.
    Cut {
        /// Position of the cut.
        after_chunks: usize,
        /// How many bytes of the next frame are still sent before the cut. Default 0.
        #[serde(default)]
        partial_bytes: usize,
    },
    /// Nothing is sent for a while with the connection open. Streaming backend only.
    Stall {
        /// Position of the stall.
        after_chunks: usize,
        /// Resume the stream after this many milliseconds; absent: stall until the client
        /// closes the connection or the server stops.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        resume_after_ms: Option<u64>,
    },
}

impl StreamFault {
    /// True for the faults only the streaming backend can serve.
    pub fn needs_streaming_backend(&self) -> bool {
        matches!(self, StreamFault::Cut { .. } | StreamFault::Stall { .. })
    }
}

/// The catalogue of provider errors, each rendered in the provider's own status and body.
///
/// | error | OpenAI | Anthropic | async media (fal) |
/// |---|---|---|---|
/// | `rate_limited` | 429 `rate_limit_exceeded` | 429 `rate_limit_error` | 429 |
/// | `insufficient_quota` | 429 `insufficient_quota` | 402 `billing_error` | 403 |
/// | `server_error` | 500 `server_error` | 500 `api_error` | 500 |
/// | `service_unavailable` | 503 `server_error` | 503 `api_error` | 503 `runner_scheduling_failure` |
/// | `overloaded` | 529 `server_error` | 529 `overloaded_error` | 529 |
/// | `context_length_exceeded` | 400 `context_length_exceeded` | 400 `invalid_request_error` | 422 |
/// | `unauthorized` | 401 `invalid_api_key` | 401 `authentication_error` | 401 |
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProviderError {
    /// Rate limit hit; retryable.
    RateLimited,
    /// Out of credit; not retryable although OpenAI uses 429.
    InsufficientQuota,
    /// Internal server error; retryable.
    ServerError,
    /// Service unavailable; retryable.
    ServiceUnavailable,
    /// Overloaded (HTTP 529); retryable with a longer backoff.
    Overloaded,
    /// The prompt is too long for the model; not retryable.
    ContextLengthExceeded,
    /// The key was rejected; not retryable.
    Unauthorized,
}

/// An HTTP error response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HttpError {
    /// Which error (status and body follow the provider).
    pub error: ProviderError,
    /// Send `Retry-After: <seconds>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_seconds: Option<u64>,
    /// Send `retry-after-ms: <milliseconds>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
    /// Send `x-should-retry: true|false`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub should_retry: Option<bool>,
    /// The error message contains the canary credential. Default false.
    #[serde(default)]
    pub echo_credential: bool,
    /// Delays (`delay_between_frames_ms` is not allowed: an error body is one frame).
    #[serde(default, skip_serializing_if = "Timing::is_immediate")]
    pub timing: Timing,
}

/// The connection is closed before any response byte.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConnectionReset {
    /// Wait this long before closing (streaming backend only when non-zero). Default 0.
    #[serde(default)]
    pub delay_before_reset_ms: u64,
}

/// An asynchronous media job (fal-style queue): submit, status polls, result, cancel.
///
/// Status poll k (1-based) answers `phases[k-1]`; once the phases are used up, polls answer
/// `COMPLETED`. The result is served only after a poll has answered `COMPLETED`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AsyncJob {
    /// Non-terminal states answered by successive status polls.
    #[serde(default)]
    pub phases: Vec<JobPhase>,
    /// The model output JSON object served by the result endpoint. Default `{}`.
    #[serde(default = "empty_object")]
    pub result: serde_json::Value,
    /// Output files, added to the result as `images: [{url, content_type}]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<Artifact>,
    /// The job fails: `COMPLETED` carries `error` and `error_type`, the result endpoint 500s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<JobFailure>,
    /// Delays of the submit response (`delay_between_frames_ms` is not allowed).
    #[serde(default, skip_serializing_if = "Timing::is_immediate")]
    pub timing: Timing,
}

fn empty_object() -> serde_json::Value {
    serde_json::Value::Object(serde_json::Map::new())
}

/// A non-terminal job state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "status", rename_all = "snake_case", deny_unknown_fields)]
pub enum JobPhase {
    /// `IN_QUEUE` with a queue position.
    InQueue {
        /// Position in the queue (0 = next).
        queue_position: u32,
    },
    /// `IN_PROGRESS` with log lines (served when the poll asks `?logs=1`).
    InProgress {
        /// Log messages.
        #[serde(default)]
        logs: Vec<String>,
    },
}

/// An output file of an async job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Artifact {
    /// Where the file is (served as `url`).
    pub uri: String,
    /// Its media type (served as `content_type`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
}

/// How an async job fails.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JobFailure {
    /// The `error` message.
    pub message: String,
    /// The `error_type`, e.g. `runner_disconnected`.
    pub error_type: String,
}
