//! `envelopes.reliability` under `completion.distinguishesTruncation`: what a failed attempt
//! leads to. An envelope is complete only on a clean provider stop with a payload that
//! validates against its kind's schema.
//!
//! | failure | event | retry request |
//! |---|---|---|
//! | truncation (no clean stop, whatever the payload) | `envelope.truncated` | output budget × `truncationBudgetMultiplier`; no corrective fragment |
//! | schema violation (clean stop, invalid payload or not an envelope) | — | the same budget; a corrective fragment naming each failing path and keyword (from the schema, never the model's text) |
//! | parse error (clean stop, no JSON document) | — | the same budget; a corrective fragment saying so |
//! | refusal | `envelope.refusal` | never retried: the node fails `envelope_refusal` |
//!
//! Each retry past the first is announced by `envelope.retry-attempted {attempt, reason,
//! previousError}`; all reasons count against `limits.schemaRounds` (at most that many retries
//! per emission). On exhaustion: `envelope.retry-exhausted {totalAttempts, finalReason,
//! finalError}`, `cap.breached {kind: "schema", limit: schemaRounds, observed: schemaRounds + 1}`
//! (the rounds the emission would have needed at least), and the node fails
//! `envelope_truncation_unrecoverable` (final reason truncation) or `envelope_invalid`.
//! `previousError`, `finalError` and `refusalText` pass through the secret redaction; the first
//! two are the host's own description of the failure, never the validator's message (which
//! quotes the payload). A lenient-parse recovery consumes no retry and is reported once by
//! `envelope.recovery-applied {path, byteOffset}`.

use serde_json::{Value, json};
use spec::openwop::payloads::{
    CapBreached, EnvelopeRetryAttempted, EnvelopeRetryExhausted, ErrorObject,
};

use crate::known_bad::KnownBad;

use super::super::node_context::{NodeError, RunContext};
use super::super::secrets::SecretRedactor;
use super::catalog::{KindSchema, Violation};

/// Why an attempt is retried (the `ReliabilityReason` values this host uses).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reason {
    /// No clean stop.
    Truncation,
    /// Clean stop, the payload (or the envelope) does not validate.
    SchemaViolation,
    /// Clean stop, no JSON document.
    ParseError,
    /// A refusal (only a defective host retries one).
    Refusal,
}

impl Reason {
    /// The wire value.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Reason::Truncation => "truncation",
            Reason::SchemaViolation => "schema-violation",
            Reason::ParseError => "parse-error",
            Reason::Refusal => "refusal",
        }
    }
}

/// A failed attempt, as the retry policy sees it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Failure {
    /// Why.
    pub(crate) reason: Reason,
    /// The host's description of the failure (no model text).
    pub(crate) description: String,
    /// The corrective fragment a retry of a clean-stop failure carries.
    pub(crate) fragment: Option<String>,
    /// The validator's own messages (they may quote the payload): only defects use them.
    pub(crate) raw: String,
    /// The model's raw output: only a defect quotes it.
    pub(crate) output: String,
}

impl Failure {
    /// A clean-stop failure of the envelope's shape or text.
    pub(crate) fn malformed(reason: Reason, what: &str, output: &str) -> Self {
        let fragment = format!(
            "The previous output was rejected: {what}. Emit exactly one AI envelope as a JSON object with type, correlationId, payload and meta.source."
        );
        Failure {
            reason,
            description: what.to_string(),
            fragment: Some(fragment),
            raw: what.to_string(),
            output: output.to_string(),
        }
    }

    /// A schema violation of the payload.
    pub(crate) fn violation(
        schema: &KindSchema,
        found: &[Violation],
        payload: &Value,
        output: &str,
    ) -> Self {
        let mut failures: Vec<String> = Vec::new();
        for v in found {
            if v.keyword == "required" {
                let missing = schema
                    .required
                    .iter()
                    .filter(|name| payload.get(name.as_str()).is_none())
                    .map(|name| format!("/{name} is required"));
                failures.extend(missing);
            } else {
                let path = if v.instance_path.is_empty() {
                    "/"
                } else {
                    &v.instance_path
                };
                failures.push(format!("{path} fails `{}`", v.keyword));
            }
        }
        failures.dedup();
        let description = format!(
            "the payload does not validate against {} (schema version {}): {}",
            schema.kind,
            schema.version,
            failures.join("; ")
        );
        Failure {
            reason: Reason::SchemaViolation,
            fragment: Some(format!(
                "The previous output was rejected: {description}. Emit the envelope again with a payload that validates."
            )),
            description,
            raw: found
                .iter()
                .map(|v| v.message.clone())
                .collect::<Vec<_>>()
                .join("; "),
            output: output.to_string(),
        }
    }

    /// A truncation.
    pub(crate) fn truncation(stop_reason: &str, output: &str) -> Self {
        let description = format!("the provider stopped with {stop_reason} before a clean stop");
        Failure {
            reason: Reason::Truncation,
            raw: description.clone(),
            description,
            fragment: None,
            output: output.to_string(),
        }
    }
}

/// The request of the next attempt.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct NextRequest {
    /// The output budget.
    pub(crate) max_output_tokens: u32,
    /// The corrective fragment.
    pub(crate) fragment: Option<String>,
}

/// The retry request after `failure`, from the current budget.
pub(crate) fn next_request(
    failure: &Failure,
    budget: u32,
    multiplier: u32,
    expects: &str,
    defects: &KnownBad,
) -> NextRequest {
    let raised = budget.saturating_mul(multiplier).min(1_000_000);
    match failure.reason {
        Reason::Truncation => NextRequest {
            max_output_tokens: if defects.truncation_budget_kept() {
                budget
            } else {
                raised
            },
            fragment: defects.truncation_fragment_added().then(|| {
                format!("Return a complete envelope whose payload validates against the schema of {expects}.")
            }),
        },
        Reason::SchemaViolation | Reason::ParseError | Reason::Refusal => {
            let fragment = if defects.violation_fragment_generic() {
                Some("The previous output was invalid. Try again.".to_string())
            } else if defects.violation_fragment_echoes_output() {
                failure
                    .fragment
                    .as_ref()
                    .map(|f| format!("{f} Your previous output was: {}", failure.output))
            } else {
                failure.fragment.clone()
            };
            NextRequest {
                max_output_tokens: if defects.violation_budget_raised() {
                    raised
                } else {
                    budget
                },
                fragment,
            }
        }
    }
}

/// Announces the retry of attempt `next` (≥ 2).
pub(crate) fn announce_retry(
    ctx: &RunContext,
    node_id: &str,
    next: u32,
    failure: &Failure,
    redactor: &SecretRedactor,
) -> Result<(), NodeError> {
    let defects = &ctx.env.defects;
    let previous_error = if defects.previous_error_unredacted() {
        failure.raw.clone()
    } else {
        redactor.scrub(&failure.description)
    };
    let payload = EnvelopeRetryAttempted {
        node_id: node_id.to_string(),
        attempt: next.min(16),
        reason: failure.reason.as_str().to_string(),
        previous_error: Some(previous_error),
    };
    ctx.record("envelope.retry-attempted", Some(node_id), json!(payload))
}

/// Records the exhaustion of an emission after `attempts` attempts (`failure` is the final
/// attempt's) and returns the node's error.
pub(crate) fn exhaust(
    ctx: &RunContext,
    node_id: &str,
    attempts: u32,
    schema_rounds: u32,
    failure: &Failure,
    redactor: &SecretRedactor,
) -> Result<ErrorObject, NodeError> {
    let defects = &ctx.env.defects;
    let final_error = if defects.final_error_unredacted() {
        failure.raw.clone()
    } else {
        redactor.scrub(&failure.description)
    };
    let payload = EnvelopeRetryExhausted {
        node_id: node_id.to_string(),
        total_attempts: attempts.max(1),
        final_reason: failure.reason.as_str().to_string(),
        final_error: Some(final_error),
    };
    ctx.record("envelope.retry-exhausted", Some(node_id), json!(payload))?;
    let payload = CapBreached {
        kind: "schema".to_string(),
        limit: json!(schema_rounds),
        observed: json!(schema_rounds.saturating_add(1)),
        node_id: Some(node_id.to_string()),
    };
    ctx.record("cap.breached", Some(node_id), json!(payload))?;
    let code = if defects.exhaustion_fails_as_internal() {
        "internal_error"
    } else if failure.reason == Reason::Truncation {
        "envelope_truncation_unrecoverable"
    } else {
        "envelope_invalid"
    };
    let mut details = serde_json::Map::new();
    details.insert("finalReason".into(), json!(failure.reason.as_str()));
    details.insert("totalAttempts".into(), json!(attempts));
    Ok(ErrorObject {
        code: code.to_string(),
        message: format!(
            "the envelope did not complete within limits.schemaRounds ({schema_rounds}) retries"
        ),
        details: Some(details),
        retryable: Some(false),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::known_bad::KnownBad;
    use crate::openwop::engine::envelopes::catalog::KindCatalog;
    use crate::openwop::infra::envelope_settings::EnvelopeSettings;

    #[test]
    fn retries_follow_the_failure_kind() {
        let none = KnownBad::clean();
        let truncation = Failure::truncation("max_tokens", "{\"type\":");
        let next = next_request(&truncation, 100, 2, "example.answer", &none);
        assert_eq!(
            next,
            NextRequest {
                max_output_tokens: 200,
                fragment: None
            }
        );
        let catalog = KindCatalog::build(&EnvelopeSettings::default(), &none);
        let schema = catalog.schema("example.answer").unwrap();
        let payload = json!({"answer": "sk-live-secretvalue123", "confidence": "high", "extra": 1});
        let found = schema.violations(&json!({"answer": 1}));
        let violation = Failure::violation(schema, &found, &json!({"answer": 1}), "raw output");
        let next = next_request(&violation, 100, 2, "example.answer", &none);
        assert_eq!(next.max_output_tokens, 100);
        let fragment = next.fragment.unwrap();
        assert!(fragment.contains("/confidence is required"), "{fragment}");
        assert!(fragment.contains("/answer fails `type`"), "{fragment}");
        let found = schema.violations(&payload);
        let violation = Failure::violation(schema, &found, &payload, &payload.to_string());
        let text = next_request(&violation, 100, 2, "x", &none)
            .fragment
            .unwrap();
        assert!(
            !text.contains("secretvalue") && !text.contains("high") && !text.contains("extra"),
            "{text}"
        );
    }
}
