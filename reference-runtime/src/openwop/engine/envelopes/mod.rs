//! AI envelopes (E1–E5), the envelope-kind catalog, envelope contracts and
//! `envelopes.reliability`: the `core.ai.structuredOutput` node and its per-run mock provider.
//!
//! | piece | module |
//! |---|---|
//! | the node: turns, E1 recording, E2 re-emission, E5 refusal ceiling | `node` (settings: `node_settings`) |
//! | the `envelope-program` mock (`configurable.ai.mockProvider`) | `program` |
//! | reading an emission: lenient parse, required members, partial reassembly | `envelope` |
//! | the catalog flow: namespace → `supportedEnvelopes` → `schemaVersions` → `envelopeStrictness` → `envelopeContracts` | `catalog` |
//! | retries: truncation, schema violation, parse error, exhaustion | `reliability` |
//! | the mock's call journal, `GET /conformance/seams/mock-ai/runs/{runId}/calls` | `journal` |
//! | upstream's mock-AI program seam, `POST /conformance/seams/sample/test/mock-ai/program` and its last-dispatch-budget companion, `GET …/mock-ai/last-dispatch-budget` (upstream's envelope fixtures) | `seam_program` |
//! | `[openwop.envelopes]` | `settings` |
//!
//! Decisions on points the chapter leaves open (they bind this host; cases state them):
//!
//! - **How acceptance is recorded.** The registry has no "envelope accepted" type, so an
//!   accepted envelope is recorded as `output.chunk` events (the type for an emitted artifact)
//!   with `channel: "envelope:<kind>"`, `causationId` = `correlationId`, and the payload's JSON
//!   (or a partial emission's fragments) as `chunk`; `isLast: true` marks the chunk with
//!   `partial.isPartial: false`, so "complete at the first recorded chunk with `partial: false`"
//!   reads "complete at the `output.chunk` with `isLast: true`". A refused or failed attempt
//!   records no chunk.
//! - **Which events carry `causationId`.** The chunks the envelope produces. `provider.usage`
//!   (caused by the call, not the envelope), the node's lifecycle events and the `envelope.*`
//!   events of failed attempts carry none.
//! - **E5 "retry policy".** The worked example re-dispatches a refused node under the run's
//!   retry policy; this host's policy is the node input `dispatchAttempts` (default 1), and the
//!   ceiling `configurable.ai.maxRefusals` defaults to 1, so by default a refusal fails the node.
//! - **The refusal codes of the flow.** The node fails with the code in its `error.code` and the
//!   refusing check in `error.details.check`; the envelope-contract refusal is `envelope_invalid`,
//!   distinct from the catalog's `unknown_envelope_kind`.
//! - **Provider agnosticism (Tier 1).** Nothing in the flow or the validation looks at the
//!   provider; the mock's `provider` member lets a case send the same envelope "from" several
//!   providers.

pub(crate) mod catalog;
pub(crate) mod envelope;
pub(crate) mod journal;
pub(crate) mod node;
pub(crate) mod node_settings;
pub(crate) mod program;
pub(crate) mod reliability;
pub(crate) mod seam_program;
