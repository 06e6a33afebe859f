//! Surface X's host choices, `[execution]`: the knobs for what the execution protocol leaves
//! open (see `spec/open-points.json`), a field of the surface's configuration
//! ([`crate::execution::ExecutionConfig`]). Every option keeps every MUST and SHOULD; the
//! defaults are the standard profile's options, the others are what the tolerance matrix runs
//! the corpus against.
//!
//! ```toml
//! [execution]
//! unsatisfiable_requirements = "fail-execution"   # or "refuse" (the default)
//! id_form = "prefixed"                            # or "uuid" (the default)
//! replay_status = "accepted"                      # or "ok" (the default: 200)
//! cursor_precedence = "last-event-id"             # or "after" (the default)
//! submission_status = "current"                   # or "accepted" (the default)
//! malformed_status = "specific"                   # or "bad-request" (the default: 400)
//! validation_order = "key-first"                  # or "body-first" (the default)
//! idempotency_mismatch = "conflict"               # or "invalid-request" (the default)
//! sequence_form = "even"                          # or "dense" (the default: 1, 2, 3, …)
//! accepted_append = "after-response"              # or "before-response" (the default)
//! cancel = "synchronous"                          # or "asynchronous" (the default: 202)
//! cancel_terminal = "no-op"                       # or "conflict" (the default: 409)
//! result_before_success = "not-found"             # or "conflict" (the default: 409)
//! provider_code = "omitted"                       # or "when-known" (the default)
//! error_wording = "terse"                         # or "reference" (the default)
//! artifact_fields = "uri-only"                    # or "as-reported" (the default)
//! usage_facts = "with-runtime-facts"              # or "as-reported" (the default)
//! manifest_fields = "with-limits"                 # or "contract" (the default)
//! ```

use serde::Deserialize;

/// `[execution]`: surface-X choices.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ExecutionChoices {
    /// How a request whose `requirements` no provider satisfies is refused.
    pub unsatisfiable_requirements: UnsatisfiableRequirements,
    /// The form of a minted execution id.
    pub id_form: ExecutionIdForm,
    /// The status of an idempotent replay.
    pub replay_status: ReplayStatus,
    /// Which cursor wins when a request sends both `after` and `Last-Event-ID`.
    pub cursor_precedence: CursorPrecedence,
    /// The `status` a new submission's 202 body reports.
    pub submission_status: SubmissionStatus,
    /// The HTTP status of a malformed request's refusal.
    pub malformed_status: MalformedStatus,
    /// Whether the Idempotency-Key format is checked before or after the body.
    pub validation_order: ValidationOrder,
    /// The refusal of an Idempotency-Key reused with a different request.
    pub idempotency_mismatch: IdempotencyMismatch,
    /// The numbers an execution's events carry as `sequence`.
    pub sequence_form: SequenceForm,
    /// Whether `execution.accepted` is in the log before the 202 is written.
    pub accepted_append: AcceptedAppend,
    /// Whether a cancel answers before or after the terminal event.
    pub cancel: ExecutionCancel,
    /// The answer to a cancel of an execution that is already terminal.
    pub cancel_terminal: CancelTerminal,
    /// The answer to a result request before the execution succeeded.
    pub result_before_success: ResultBeforeSuccess,
    /// Whether errors carry the provider-native code as `provider_code`.
    pub provider_code: ProviderCodeChoice,
    /// The wording of error messages.
    pub error_wording: ErrorWording,
    /// Which optional fields an artifact reference carries.
    pub artifact_fields: ArtifactFields,
    /// Whether `usage.reported` carries runtime-derived facts beside the provider's.
    pub usage_facts: UsageFacts,
    /// Which optional fields a provider manifest carries.
    pub manifest_fields: ManifestFields,
}

/// The `status` of a new submission's 202 body (the seed: "returns 202 with an execution
/// ID"; the execution may already have moved on when the answer is written).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SubmissionStatus {
    /// `accepted`.
    #[default]
    Accepted,
    /// The status of the log's last event when the answer is written, after giving the driver
    /// a moment (up to 250 ms) to move past `execution.accepted`: `routing`, `running` or a
    /// terminal status.
    Current,
}

/// The HTTP status of a malformed request's refusal (the seed: "must reject"; no status).
/// The code is `invalid_request` either way.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MalformedStatus {
    /// 400 for every fault (CONTRACT.md).
    #[default]
    BadRequest,
    /// 415 for a wrong content type, 413 for an oversized body, 422 for a schema violation,
    /// 400 for the rest (unparseable JSON, a bad Idempotency-Key).
    Specific,
}

/// The order of admission's validations (the seed orders none).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ValidationOrder {
    /// Content type, size, JSON, schema, then the Idempotency-Key format.
    #[default]
    BodyFirst,
    /// The Idempotency-Key format first, then the body.
    KeyFirst,
}

/// The refusal of an Idempotency-Key reused with a different request (the seed: "fails").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IdempotencyMismatch {
    /// 400 `invalid_request` (CONTRACT.md).
    #[default]
    InvalidRequest,
    /// 409 `conflict`.
    Conflict,
}

/// The numbers an execution's events carry (the seed: "an execution-scoped monotonic
/// sequence").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SequenceForm {
    /// 1, 2, 3, … (CONTRACT.md).
    #[default]
    Dense,
    /// 2, 4, 6, …: another origin, with gaps, still strictly increasing. Cursors, SSE ids and
    /// `last_sequence` use the same numbers.
    Even,
}

impl SequenceForm {
    /// The wire number of the stored sequence `stored` (1-based).
    pub fn wire(self, stored: u64) -> u64 {
        match self {
            SequenceForm::Dense => stored,
            SequenceForm::Even => stored.saturating_mul(2),
        }
    }

    /// The stored cursor equivalent to the wire cursor `wire`: the stored events after it are
    /// exactly those whose wire numbers are larger than `wire`.
    pub fn stored_cursor(self, wire: u64) -> u64 {
        match self {
            SequenceForm::Dense => wire,
            SequenceForm::Even => wire / 2,
        }
    }
}

/// When `execution.accepted` is appended relative to the 202.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AcceptedAppend {
    /// Before the response is written.
    #[default]
    BeforeResponse,
    /// By the execution's driver, shortly (25 ms) after the response: a reader right after
    /// the 202 may see an empty log (and a snapshot with `last_sequence` 0) for a moment.
    AfterResponse,
}

/// Whether `POST /v1/executions/{id}/cancel` answers before or after the terminal event.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExecutionCancel {
    /// 202; `execution.failed{status: cancelled}` follows (CONTRACT.md).
    #[default]
    Asynchronous,
    /// 200 once the terminal event is in the log (waiting at most 10 s, then 202).
    Synchronous,
}

/// The answer to a cancel of an execution that is already terminal.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CancelTerminal {
    /// 409 `conflict` (CONTRACT.md).
    #[default]
    Conflict,
    /// 200 with the execution's terminal status; nothing is appended.
    NoOp,
}

/// The answer to `GET /v1/executions/{id}/result` before the execution succeeded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ResultBeforeSuccess {
    /// 409 `conflict` (CONTRACT.md).
    #[default]
    Conflict,
    /// 404 `not_found`: the result resource does not exist (yet).
    NotFound,
}

/// Whether errors carry the provider-native code (the seed: "may appear").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProviderCodeChoice {
    /// `provider_code` when the provider gave one.
    #[default]
    WhenKnown,
    /// Never.
    Omitted,
}

/// The wording of error messages (only `code` and `retryable` are portable).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorWording {
    /// The reference runtime's messages.
    #[default]
    Reference,
    /// One terse sentence per code (`Error: invalid_request.`), echoing nothing.
    Terse,
}

impl ErrorWording {
    /// The message of an error with portable code `code` whose reference wording is
    /// `reference`.
    pub fn message(self, code: &str, reference: &str) -> String {
        match self {
            ErrorWording::Reference => reference.to_string(),
            ErrorWording::Terse => format!("Error: {code}."),
        }
    }
}

/// Which optional fields an artifact reference carries (the seed: "optional artifact
/// references"; `media_type` and `name` are optional).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ArtifactFields {
    /// What the provider reported.
    #[default]
    AsReported,
    /// `uri` only.
    UriOnly,
}

/// Whether `usage.reported` carries runtime-derived facts (the seed: "source states whether the
/// provider reported the value or the runtime derived it"; "providers may emit a namespaced
/// custom unit").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum UsageFacts {
    /// The provider's facts only.
    #[default]
    AsReported,
    /// Also `reference-runtime.reported_fact` (how many facts the provider reported in this
    /// event), a namespaced custom unit with `source: runtime`.
    WithRuntimeFacts,
}

/// The namespaced custom unit of [`UsageFacts::WithRuntimeFacts`].
pub const RUNTIME_FACT_UNIT: &str = "reference-runtime.reported_fact";

/// Which optional fields a provider manifest carries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ManifestFields {
    /// The CONTRACT.md fields.
    #[default]
    Contract,
    /// Also `limits {max_concurrency, max_queue_depth}` (upstream admits it): the runtime's
    /// admission limit, no queue.
    WithLimits,
}

/// Which cursor wins when both `after` and `Last-Event-ID` are sent (the seed: the endpoint
/// "accepts after or Last-Event-ID").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CursorPrecedence {
    /// `after` (CONTRACT.md).
    #[default]
    After,
    /// `Last-Event-ID`.
    LastEventId,
}

/// The status of an idempotent replay (the seed says only that it "returns that execution").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReplayStatus {
    /// 200 (CONTRACT.md).
    #[default]
    Ok,
    /// 202, like the first submission.
    Accepted,
}

/// How a request whose `requirements` no provider satisfies is refused (CONTRACT.md admits
/// both; the provider is never called either way).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum UnsatisfiableRequirements {
    /// 422 `capability_unavailable` at admission; nothing is created.
    #[default]
    Refuse,
    /// 202, then `execution.accepted` and `execution.failed{capability_unavailable}`.
    FailExecution,
}

/// The form of a minted execution id (the seed fixes none).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExecutionIdForm {
    /// A hyphenated UUID.
    #[default]
    Uuid,
    /// `exe_<32 hex>`.
    Prefixed,
}

impl ExecutionIdForm {
    /// A new execution id of this form.
    pub fn mint(self) -> String {
        let id = uuid::Uuid::new_v4();
        match self {
            ExecutionIdForm::Uuid => id.to_string(),
            ExecutionIdForm::Prefixed => format!("exe_{}", id.simple()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wire_cursor_selects_exactly_the_events_numbered_above_it() {
        for form in [SequenceForm::Dense, SequenceForm::Even] {
            for wire_cursor in 0..40u64 {
                for stored in 1..20u64 {
                    assert_eq!(
                        stored > form.stored_cursor(wire_cursor),
                        form.wire(stored) > wire_cursor,
                        "{form:?}: cursor {wire_cursor}, event {stored}"
                    );
                }
            }
            let wires: Vec<u64> = (1..6).map(|s| form.wire(s)).collect();
            assert!(wires.windows(2).all(|w| w[0] < w[1]), "{form:?}: {wires:?}");
        }
        assert_eq!(SequenceForm::Even.wire(1), 2);
        assert_eq!(SequenceForm::Even.stored_cursor(u64::MAX), u64::MAX / 2);
    }

    #[test]
    fn terse_messages_name_only_the_code() {
        assert_eq!(
            ErrorWording::Terse.message("invalid_request", "Request body is not valid JSON"),
            "Error: invalid_request."
        );
        assert_eq!(ErrorWording::Reference.message("x", "kept"), "kept");
    }

    #[test]
    fn execution_id_forms_differ() {
        assert_eq!(ExecutionIdForm::Uuid.mint().len(), 36);
        assert!(ExecutionIdForm::Prefixed.mint().starts_with("exe_"));
    }
}
