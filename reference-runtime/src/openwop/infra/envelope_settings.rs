//! `[openwop.envelopes]`: the envelope-kind catalog this host advertises and the reliability
//! limits of its structured-output node.
//!
//! | field | default | advertised as |
//! |---|---|---|
//! | `supported_kinds` | `["example.answer", "example.summary", "ui.text"]` | `supportedEnvelopes.kinds` |
//! | `advertise_kinds` | `true` (`false`: `supportedEnvelopes` without `kinds`, so every non-universal kind is refused) | |
//! | `strictness` | `warn` (`warn` \| `strict`) | `envelopeStrictness.mode` |
//! | `schema_rounds` | 2 (0–15): retries of one emission after a truncation or a schema violation | `limits.schemaRounds`; `envelopes.reliability.maxRetryAttempts` = rounds + 1 |
//! | `truncation_budget_multiplier` | 2 (1–8): the output-budget factor of a truncation retry | `envelopes.reliability.completion.truncationBudgetMultiplier` |
//! | `default_max_output_tokens` | 1024 (1–1 000 000): the first attempt's output budget when neither `configurable.ai.maxTokens` nor the node sets one | |
//!
//! ```toml
//! [openwop.envelopes]
//! supported_kinds = ["example.answer"]
//! strictness = "strict"
//! schema_rounds = 1
//! ```

use serde::Deserialize;

/// How drift below a kind's advertised schema version is handled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Strictness {
    /// Validate against the advertised version and log `envelope_schema_version_drift`.
    #[default]
    Warn,
    /// Refuse with `unknown_schema_version`.
    Strict,
}

impl Strictness {
    /// The advertised mode.
    pub fn as_str(self) -> &'static str {
        match self {
            Strictness::Warn => "warn",
            Strictness::Strict => "strict",
        }
    }
}

/// The envelope catalog and reliability limits (see the module documentation).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EnvelopeSettings {
    /// The kinds advertised in `supportedEnvelopes.kinds` (each one this host has a schema for).
    pub supported_kinds: Vec<String>,
    /// Whether `supportedEnvelopes` carries `kinds` at all.
    pub advertise_kinds: bool,
    /// `envelopeStrictness.mode`.
    pub strictness: Strictness,
    /// `limits.schemaRounds`.
    pub schema_rounds: u32,
    /// `envelopes.reliability.completion.truncationBudgetMultiplier`.
    pub truncation_budget_multiplier: u32,
    /// The first attempt's output budget when nothing else sets one.
    pub default_max_output_tokens: u32,
}

impl Default for EnvelopeSettings {
    fn default() -> Self {
        EnvelopeSettings {
            supported_kinds: ["example.answer", "example.summary", "ui.text"]
                .map(String::from)
                .to_vec(),
            advertise_kinds: true,
            strictness: Strictness::Warn,
            schema_rounds: 2,
            truncation_budget_multiplier: 2,
            default_max_output_tokens: 1024,
        }
    }
}

/// The largest `schema_rounds` (`envelope.retry-attempted.attempt` is at most 16).
pub const MAX_SCHEMA_ROUNDS: u32 = 15;

impl EnvelopeSettings {
    /// Checks the ranges (that every advertised kind is one this host has a schema for is
    /// checked by the runtime's [`crate::config::Config::validate`]). Returns the message of the
    /// first problem.
    pub fn check(&self) -> Result<(), String> {
        if self.schema_rounds > MAX_SCHEMA_ROUNDS {
            return Err(format!(
                "envelopes.schema_rounds must be 0..={MAX_SCHEMA_ROUNDS}"
            ));
        }
        if !(1..=8).contains(&self.truncation_budget_multiplier) {
            return Err("envelopes.truncation_budget_multiplier must be 1..=8".to_string());
        }
        if !(1..=1_000_000).contains(&self.default_max_output_tokens) {
            return Err("envelopes.default_max_output_tokens must be 1..=1000000".to_string());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_check_and_bad_values_are_refused() {
        assert!(EnvelopeSettings::default().check().is_ok());
        let rounds = EnvelopeSettings {
            schema_rounds: 16,
            ..EnvelopeSettings::default()
        };
        assert!(rounds.check().is_err());
        let parsed: EnvelopeSettings =
            toml::from_str("strictness = \"strict\"\nadvertise_kinds = false").unwrap();
        assert_eq!(parsed.strictness, Strictness::Strict);
        assert!(!parsed.advertise_kinds);
    }
}
