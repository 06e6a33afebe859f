//! Fake model providers for conformance tests: a host under test calls them as if they were
//! OpenAI Chat Completions, OpenAI Responses, Anthropic Messages or a fal-style async media
//! queue, and each call
//! answers what a [`Script`] says, on the real wire formats, with a catalogue of faults.
//!
//! # Example
//!
//! ```
//! use mock_provider::{
//!     CallBehaviour, Chunk, Completion, FakeProviders, FakeProvidersConfig, HttpError,
//!     ProviderError, Script, marker,
//! };
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // Arrange: fake providers with the default instances, and a script for one case:
//! // call 1 is rate limited, call 2 answers "Hello".
//! let providers = FakeProviders::start(FakeProvidersConfig::new("sk-canary-123")).await?;
//! let script: Script = serde_json::from_value(serde_json::json!({
//!     "id": "case-1-a7f3",
//!     "calls": {"openai-primary": [
//!         {"kind": "http_error", "error": "rate_limited", "retry_after_seconds": 1},
//!         {"kind": "completion", "chunks": [{"kind": "text", "delta": "Hello"}]}
//!     ]}
//! }))?;
//! providers.register(script)?;
//! let url = format!("{}/v1/chat/completions", providers.base_url("openai-primary").unwrap());
//! let request = serde_json::json!({
//!     "model": "gpt-test",
//!     "messages": [{"role": "user", "content": format!("hi {}", marker("case-1-a7f3"))}],
//! });
//!
//! // Act: what a host would do, twice.
//! let client = reqwest::Client::new();
//! let first = client.post(&url).bearer_auth("sk-canary-123").json(&request).send().await?;
//! let second = client.post(&url).bearer_auth("sk-canary-123").json(&request).send().await?;
//!
//! // Assert
//! assert_eq!(first.status(), 429);
//! assert_eq!(first.headers()["retry-after"], "1");
//! let body: serde_json::Value = second.json().await?;
//! assert_eq!(body["choices"][0]["message"]["content"], "Hello");
//! providers.assert_called_exactly("case-1-a7f3", "openai-primary", 2)?;
//! assert!(providers.calls("case-1-a7f3").iter().all(|call| call.credential_is_canary));
//! # Ok(())
//! # }
//! ```
//!
//! # Servers and instances
//!
//! [`FakeProviders::start`] starts two servers sharing scripts, counters and records:
//!
//! * a wiremock `MockServer`, which sends whole bodies: every content script, every HTTP
//!   error, connection resets, and `delay_before_headers_ms`;
//! * a streaming backend (hyper, HTTP/1.1) that writes the body step by step: everything the
//!   wiremock server does, plus `delay_before_first_frame_ms`, `delay_between_frames_ms`, the
//!   `stall` and `cut` stream faults and `delay_before_reset_ms`.
//!
//! Each [`ProviderInstance`] has a name, a [`ProviderKind`] and the [`Backend`] that serves it,
//! and lives under a path prefix: [`FakeProviders::base_url`] gives
//! `http://127.0.0.1:PORT/<name>`, the base URL to configure a host with. The other server
//! answers 404 for that prefix. The default set ([`ProviderInstance::default_set`]) is
//! `openai-primary` (openai-chat), `anthropic-secondary` (anthropic-messages) and `media`
//! (async-media) on wiremock, and `openai-timing` (openai-chat) on the streaming backend.
//! A script that asks an instance for something its backend cannot serve is refused at
//! [`FakeProviders::register`].
//!
//! | instance kind | endpoints under the base URL |
//! |---|---|
//! | `openai-chat` | `POST /v1/chat/completions` (or `POST /chat/completions`) |
//! | `openai-responses` | `POST /v1/responses` (or `POST /responses`) |
//! | `anthropic-messages` | `POST /v1/messages` (or `POST /messages`) |
//! | `async-media` | `POST /<model-id>` (submit), `GET /requests/<id>/status[?logs=1]`, `GET /requests/<id>`, `PUT /requests/<id>/cancel` |
//!
//! # Credentials
//!
//! The fakes accept only the configured canary credential
//! ([`FakeProvidersConfig::canary`], e.g. `sk-canary-…`), in the provider's own header:
//!
//! | kind | header |
//! |---|---|
//! | `openai-chat` | `Authorization: Bearer <canary>` |
//! | `anthropic-messages` | `x-api-key: <canary>`, or `Authorization: Bearer <canary>` when `x-api-key` is absent (what the anthropic Python SDK 2.x sends) |
//! | `async-media` | `Authorization: Key <canary>` (fal) |
//!
//! Anything else gets the provider's 401. Every request records the credential it presented
//! ([`RecordedCall::credential`], scheme stripped) and whether it was the canary, so the
//! harness can verify the host forwarded it and then search the host's output for it.
//!
//! # Scripts
//!
//! A [`Script`] is JSON data (it has a JSON Schema: `schemars::schema_for!(Script)`). Example:
//!
//! ```json
//! {
//!   "id": "case-017-x9k2",
//!   "calls": {
//!     "openai-primary": [
//!       {"kind": "http_error", "error": "rate_limited", "retry_after_seconds": 1, "retry_after_ms": 800},
//!       {"kind": "http_error", "error": "service_unavailable"},
//!       {"kind": "completion",
//!        "chunks": [
//!          {"kind": "text", "delta": "Let me look"},
//!          {"kind": "tool_call_start", "call_id": "call_a", "name": "read_file"},
//!          {"kind": "tool_call_start", "call_id": "call_b", "name": "list_dir"},
//!          {"kind": "tool_call_arguments", "call_id": "call_a", "delta": "{\"path\":"},
//!          {"kind": "tool_call_arguments", "call_id": "call_b", "delta": "{}"},
//!          {"kind": "tool_call_arguments", "call_id": "call_a", "delta": "\"a.txt\"}"}
//!        ],
//!        "finish_reason": "tool_calls",
//!        "usage": {"input_tokens": 120, "output_tokens": 30, "cache_read_tokens": 100}}
//!     ],
//!     "openai-timing": [
//!       {"kind": "completion",
//!        "chunks": [{"kind": "text", "delta": "one "}, {"kind": "text", "delta": "two"}],
//!        "timing": {"delay_before_headers_ms": 200, "delay_between_frames_ms": 50},
//!        "stream_fault": {"kind": "cut", "after_chunks": 1, "partial_bytes": 10}}
//!     ],
//!     "anthropic-secondary": [
//!       {"kind": "completion",
//!        "chunks": [{"kind": "text", "delta": "partial"}],
//!        "stream_fault": {"kind": "in_band_error", "after_chunks": 1, "error": "overloaded"}},
//!       {"kind": "connection_reset"}
//!     ],
//!     "media": [
//!       {"kind": "async_job",
//!        "phases": [{"status": "in_queue", "queue_position": 1},
//!                   {"status": "in_progress", "logs": ["denoising"]}],
//!        "result": {"seed": 42},
//!        "artifacts": [{"uri": "https://cdn.example/a.png", "media_type": "image/png"}]}
//!     ]
//!   }
//! }
//! ```
//!
//! Behaviours ([`CallBehaviour`], tag `kind`): `completion`, `async_job`, `http_error`,
//! `connection_reset`. Optional fields default as documented on each type (`finish_reason`
//! `stop`, no usage, no timing, no fault, `output_index` 0, …).
//!
//! **Selection.** A request plays a script when its body contains the marker
//! `[[script:<id>]]` ([`marker`]), raw or JSON-escaped in any string (also JSON nested in a
//! string). Script ids are 1–200 characters from `A-Z a-z 0-9 . _ ~ -` and must be unique per
//! server; the harness makes them unique per case (case id + random suffix), so parallel cases
//! never share state.
//!
//! **Counting.** Every request carrying a registered script's marker to a call endpoint
//! (completions, messages, job submit) gets the next call index of that script at that
//! instance, and call n plays `calls[instance][n-1]`. A call without the canary still takes its
//! index (and is answered 401). A key `<instance>@<model>` scopes a list to the calls naming
//! that model (JSON `model`; the async-media submit path), with its own counter: one provider
//! with two models plays two roles; [`RecordedCall::script_key`] says which list a call
//! played. Status polls, result and cancel requests of a job are recorded
//! under the submit's script and call index but are not calls.
//!
//! **Answers of the fake itself** (provider-shaped, code prefixed `mock_provider_`):
//!
//! | situation | answer |
//! |---|---|
//! | credential missing or not the canary | 401, the provider's own unauthenticated body (never echoes what was sent) |
//! | anthropic-messages without `anthropic-version` | 400 `invalid_request_error` like the real API |
//! | no marker in the body | 400 `mock_provider_no_script` |
//! | marker of an unregistered script | 400 `mock_provider_unknown_script` |
//! | several different markers | 400 `mock_provider_ambiguous_script` |
//! | call past the end of the script's list for the instance | 500 `mock_provider_script_exhausted` (counted as a call) |
//! | unknown endpoint for the instance's kind | 404 `mock_provider_unknown_endpoint` |
//! | unknown instance prefix on this server | 404 `mock_provider_unknown_instance` (OpenAI-shaped) |
//! | unknown async job id | 404 `{"detail":"Request not found"}` |
//!
//! All of them are recorded; [`FakeProviders::unmatched_calls`] lists those that matched no
//! registered script. A request to an unknown instance or endpoint whose body carries exactly
//! one marker is attributed to that script (`script_id` set, no call index), so
//! [`FakeProviders::calls`] shows a host that sends a script's calls to the wrong path.
//!
//! # Faults
//!
//! | fault | how | backend | a plain HTTP client sees |
//! |---|---|---|---|
//! | HTTP errors | `http_error` with [`ProviderError`] | both | the status and provider body of [`ProviderError`]'s table; `Retry-After`, `retry-after-ms`, `x-should-retry` when scripted |
//! | error body echoes the credential | `"echo_credential": true` | both | the canary inside the error message |
//! | connection reset before headers | `connection_reset` | both (delay: streaming) | a request error, no status (streaming backend: TCP RST; wiremock: connection closed) |
//! | delay before the first byte | `timing.delay_before_headers_ms` | both | the status line late |
//! | delay before the first body frame | `timing.delay_before_first_frame_ms` | streaming | headers, then a pause |
//! | delay between frames | `timing.delay_between_frames_ms` | streaming | each SSE frame as its own chunk, spaced |
//! | in-band error after output | `stream_fault` `in_band_error` | both | 200, frames, then OpenAI `data: {"error":{…}}` / Responses `event: error` + `response.failed` / Anthropic `event: error`, clean end without terminator |
//! | missing terminator | `missing_terminator` | both | 200, everything but `data: [DONE]` / `message_stop` / `response.completed` (or `.incomplete`) |
//! | malformed frame | `malformed_frame` | both | one `data:` line with truncated JSON, then the rest of the stream |
//! | incomplete final frame | `incomplete_final_frame` | both | the body ends with `…\n` instead of `…\n\n` |
//! | cut in the middle of the body | `cut` | streaming | frames, optionally part of the next one, then a body read error (chunked encoding never terminated) |
//! | stall with the connection open | `stall` | streaming | frames, then nothing (until `resume_after_ms`, or forever) |
//!
//! For a non-streaming request the stream faults become: `in_band_error` → the same error as
//! an HTTP error response; `missing_terminator`, `malformed_frame`, `incomplete_final_frame` →
//! a 200 JSON body cut in half (invalid JSON); `cut` → `partial_bytes` of the body (half when
//! 0), then the transport abort; `stall` → headers, then the pause before the body.
//!
//! # Wire formats
//!
//! * **OpenAI Chat Completions** (`stream: true`): `data:`-only SSE; one role chunk per choice
//!   (`{"role":"assistant","content":"","refusal":null}`), one chunk per script chunk
//!   (`content` deltas by choice index; tool calls on choice 0: a first fragment with `index`,
//!   `id`, `type:"function"`, `function.name`, `arguments:""`, later fragments with `index`
//!   and `function.arguments` only; parallel calls by distinct `index`, interleaving as
//!   scripted), a finishing chunk per choice (`delta:{}`, `finish_reason`), with
//!   `stream_options.include_usage` every chunk has `"usage":null` and a last chunk with
//!   `"choices":[]` and the usage, then `data: [DONE]`. Without `stream`: a `chat.completion`
//!   object (`content` null when choice 0 only has tool calls).
//! * **OpenAI Responses** (`POST /v1/responses`, `stream: true`): `event:` + `data:` SSE whose
//!   payloads repeat the event name in `type` and carry `sequence_number` 0, 1, … without gaps
//!   (an inserted malformed frame takes none); no `[DONE]`. `response.created`,
//!   `response.in_progress`, then per script chunk: text of a new `output_index` opens a
//!   `message` item (`response.output_item.added`, `response.content_part.added`), each text
//!   chunk is a `response.output_text.delta` `{item_id, output_index, content_index: 0,
//!   delta}`; a `tool_call_start` is the `response.output_item.added` of a `function_call` item
//!   (`id: fc_…`, `call_id`, `name`, `arguments: ""`), each argument fragment a
//!   `response.function_call_arguments.delta` `{item_id, output_index, delta}`. Items are
//!   numbered in order of first appearance and closed at the end in that order
//!   (`output_text.done` + `content_part.done` / `function_call_arguments.done`, then
//!   `output_item.done`). The terminal event is `response.completed` (`stop`, `tool_calls`) or
//!   `response.incomplete` with `incomplete_details.reason` `max_output_tokens` (`length`) /
//!   `content_filter`; its `response` holds the whole `output` and `usage` `{input_tokens
//!   (cached included), input_tokens_details.cached_tokens, output_tokens,
//!   output_tokens_details.reasoning_tokens, total_tokens}` (`null` without script usage). An
//!   in-band error is the standalone `event: error` `{code, message, param}` followed by
//!   `response.failed` (`status: failed`, `error: {code, message}`). Without `stream`: the
//!   terminal `response` object. HTTP errors are OpenAI's.
//! * **Anthropic Messages** (`stream: true`): `event:` + `data:` SSE: `message_start` (usage
//!   with `input_tokens` excluding cache reads/writes, the cache fields, `output_tokens` 1),
//!   `ping`, per block `content_block_start` (`text` or `tool_use` with `input:{}`),
//!   `content_block_delta` (`text_delta` / `input_json_delta`), `content_block_stop` right after
//!   the block's last chunk, `message_delta` (`stop_reason`, cumulative `usage.output_tokens`),
//!   `message_stop`. Blocks are numbered in order of first appearance: one text block per
//!   `output_index`, one `tool_use` block per tool call. Without `stream`: a `message` object.
//! * **Async media (fal queue)**: submit → 200 `{status:"IN_QUEUE", request_id, response_url,
//!   status_url, cancel_url, queue_position}` (URLs on the `Host` the request used); status
//!   poll k → `phases[k-1]` as 202 `IN_QUEUE` (`queue_position`) / `IN_PROGRESS` (`logs` as
//!   `[{message, level, source}]` when `?logs=1`, else `null`), afterwards 200 `COMPLETED`
//!   (`metrics`, and `error`/`error_type` for a failed job); result → 200 `result` + `images:
//!   [{url, content_type}]` from `artifacts` (500 `{detail, error_type}` for a failed job, 400
//!   before completion); cancel → 202 `CANCELLATION_REQUESTED` (effective only while the last
//!   answer was `IN_QUEUE`), 400 `ALREADY_COMPLETED` after completion.
//!
//! # Verification
//!
//! [`FakeProviders::calls`] returns [`RecordedCall`]s (instance, endpoint, script id, call
//! index, presented credential and whether it is the canary, headers, body, timestamps,
//! answered status). [`FakeProviders::assert_called_exactly`] and
//! [`FakeProviders::assert_never_called`] return [`VerificationError`]s whose messages list
//! the requests received with credentials and the canary redacted; nothing here panics.
//!
//! # Standalone use
//!
//! `mock-provider serve --listen 127.0.0.1:9100 --scripts DIR --canary-env NAME
//! [--streaming-listen ADDR] [--instance NAME=KIND[@streaming]]…` serves every `DIR/*.json`
//! script; the canary is read from the environment variable `NAME`, never from argv. The first
//! stdout line is `listening on http://ADDR`, followed by one line per instance. The library
//! entry point is [`serve_from_files`]. The binary is built with the `cli` feature (`cargo run
//! -p mock-provider --features cli -- serve …`), which alone brings its argument parsing and
//! logging dependencies; the library links neither.
//!
//! # Deviations
//!
//! Known differences from the real APIs (fidelity is aimed at what hosts and the official SDKs
//! parse, not at byte equality):
//!
//! * Requests are not validated beyond auth, `anthropic-version` and the marker: no model
//!   check, `max_tokens` is not required, unknown fields are accepted.
//! * Ids (`chatcmpl-mock-…`, `msg_mock_…`, `req_…`, UUID job ids), `system_fingerprint`
//!   (`fp_mock`) and error message texts are made up; rate-limit headers
//!   (`x-ratelimit-*`, `anthropic-ratelimit-*`) are never sent; OpenAI's `service_tier`,
//!   `obfuscation` and logprobs content are absent.
//! * OpenAI: tool calls only on choice 0; no `refusal` deltas; `overloaded` is answered 529,
//!   which OpenAI does not use; a script without `usage` sends no usage chunk even with
//!   `include_usage` (the real API always does) and no `usage` in the JSON body;
//!   `cache_write_tokens` has no OpenAI field and is dropped; `n` and the other sampling
//!   parameters are ignored (choices come from the script's `output_index` values).
//! * Responses: items stay open while later items start (the real API finishes one item
//!   before the next); `stop` and `tool_calls` both end as `completed`; an in-band error sends
//!   both the `error` event and `response.failed` (the real API may send either) and
//!   `response.failed` carries no partial `output`; the in-progress `response` omits most
//!   request echo fields' real values (`instructions`, `tools`, sampling parameters are
//!   defaults); no `reasoning` items, annotations or `obfuscation`.
//! * Anthropic: `ping` is sent once, right after `message_start` (the real API sends it after
//!   the first `content_block_start` and sometimes later); no `thinking`/`signature` blocks;
//!   no leading empty `input_json_delta`; `message_delta.usage` has only `output_tokens`;
//!   `reasoning_tokens` has no Anthropic field and is dropped; a script without `usage`
//!   reports zeros; interleaved chunks of different blocks produce interleaved blocks (the
//!   real API finishes one block before the next starts); `stop_sequence`, `pause_turn` and
//!   `refusal` other than via `content_filter` are not scriptable; a non-streaming `tool_use`
//!   whose arguments are not JSON carries them as a JSON string in `input`;
//!   `insufficient_quota` is 402 `billing_error` (recalled from the error docs).
//! * fal: `status/stream` (SSE status) is not served; log entries carry no `timestamp`;
//!   `metrics` is a fixed `{"inference_time":0.5}`; cancelled jobs report `COMPLETED` with
//!   `error_type: request_cancelled`; error bodies for 401/403/429/529 and the cancelled-result
//!   400 are recalled, not verified; the status URL lives under the instance prefix without
//!   the model sub-path, as fal's does.
//! * Connection reset on the wiremock server closes the connection without an RST; the
//!   streaming backend sends an RST (zero linger).
//! * The streaming backend speaks HTTP/1.1 only (chunked transfer encoding for every body).
//! * wiremock keeps a copy of every request it matched for the life of the server, and
//!   records kept here are only dropped by [`FakeProviders::forget`].

mod config;
mod dispatch;
mod encode;
mod marker;
mod plan;
mod providers;
mod record;
mod script;
mod serve;
mod streaming_backend;
mod validate;
mod wiremock_backend;

pub use config::{Backend, FakeProvidersConfig, ProviderInstance, ProviderKind};
pub use dispatch::RegisterError;
pub use marker::marker;
pub use providers::{FakeProviders, StartError};
pub use record::{Endpoint, RecordedCall, VerificationError};
pub use script::{
    Artifact, AsyncJob, CallBehaviour, Chunk, Completion, ConnectionReset, FinishReason, HttpError,
    JobFailure, JobPhase, ProviderError, Script, StreamFault, Timing, Usage, split_call_key,
};
pub use serve::{ServeError, ServeOptions, load_scripts, parse_instance_flag, serve_from_files};
pub use validate::ScriptError;
