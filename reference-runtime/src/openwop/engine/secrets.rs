//! The secret redaction of surface W (the chapter's SR-1): secret-shaped material and the run's
//! known secrets are replaced by [`REDACTED`] in every text this host derives from model output
//! or user content before it is written anywhere (envelope payloads and the events derived from
//! them, `previousError`, `finalError`, `refusalText`, annotation `note` / `signal.correction`).
//!
//! Secret-shaped, for this host, is any of:
//!
//! | shape | pattern |
//! |---|---|
//! | provider / API keys | `sk-…`, `sk_live_…`, `pk_live_…`, `hk_test_…`, `hk_live_…`, `rk_…` (8+ characters after the prefix) |
//! | bearer credentials | `Bearer <8+ token characters>` |
//! | cloud keys | `AKIA` + 16 upper-case characters; `AIza` + 35 characters |
//! | forge / chat tokens | `ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, `github_pat_`, `xox[abprs]-` tokens |
//! | JWTs | three base64url segments, the first starting `eyJ` |
//! | private keys | a `-----BEGIN … PRIVATE KEY-----` line |
//!
//! A known secret is a value the run holds as one: the value of every workflow variable declared
//! `sensitive` (at least 4 characters). Known secrets are scrubbed verbatim, longest first.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

/// What replaces a secret.
pub(crate) const REDACTED: &str = "[REDACTED]";

static SECRET_SHAPES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?:\b(?:sk|pk|rk)[-_](?:live[-_]|test[-_])?[A-Za-z0-9_-]{8,})",
        r"|(?:\bhk_(?:test|live)_[A-Za-z0-9_]{8,})",
        r"|(?i:\bbearer\s+[A-Za-z0-9._~+/=-]{8,})",
        r"|(?:\bAKIA[0-9A-Z]{16}\b)",
        r"|(?:\bAIza[0-9A-Za-z_-]{35})",
        r"|(?:\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}))",
        r"|(?:\bxox[abprs]-[A-Za-z0-9-]{10,})",
        r"|(?:\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})",
        r"|(?:-----BEGIN [A-Z ]*PRIVATE KEY-----)",
    ))
    .expect("the secret-shape pattern is valid")
});

/// Redaction for one run (or one request): the secret shapes plus the known secrets.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct SecretRedactor {
    known: Vec<String>,
}

impl SecretRedactor {
    /// A redactor that knows only the secret shapes.
    pub(crate) fn shapes_only() -> Self {
        Self::default()
    }

    /// A redactor that also scrubs these known secrets (values shorter than 4 characters are
    /// ignored: scrubbing them would destroy ordinary text).
    pub(crate) fn with_known(known: impl IntoIterator<Item = String>) -> Self {
        let mut known: Vec<String> = known.into_iter().filter(|s| s.len() >= 4).collect();
        known.sort_by_key(|s| std::cmp::Reverse(s.len()));
        known.dedup();
        SecretRedactor { known }
    }

    /// `text` with every known secret and every secret-shaped token replaced.
    pub(crate) fn scrub(&self, text: &str) -> String {
        let mut out = text.to_string();
        for secret in &self.known {
            if out.contains(secret.as_str()) {
                out = out.replace(secret.as_str(), REDACTED);
            }
        }
        SECRET_SHAPES.replace_all(&out, REDACTED).into_owned()
    }

    /// A JSON value with every string (and every object key) scrubbed.
    pub(crate) fn scrub_value(&self, value: &Value) -> Value {
        match value {
            Value::String(s) => Value::String(self.scrub(s)),
            Value::Array(items) => {
                Value::Array(items.iter().map(|v| self.scrub_value(v)).collect())
            }
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| (self.scrub(k), self.scrub_value(v)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn secret_shapes_are_scrubbed_and_ordinary_text_is_kept() {
        let r = SecretRedactor::shapes_only();
        for secret in [
            "sk-canary-0123456789abcdef",
            "sk_live_abcdefgh1234",
            "hk_test_tenant_a_0123456789",
            "Bearer abc.def-ghi_jkl",
            "AKIAABCDEFGHIJKLMNOP",
            "ghp_abcdefghijklmnopqrstuvwx",
            "xoxb-1234567890-abc",
            "eyJhbGciOiJI.eyJzdWIiOiIx.c2lnbmF0dXJl",
            "-----BEGIN RSA PRIVATE KEY-----",
        ] {
            let text = format!("before {secret} after");
            assert_eq!(
                r.scrub(&text),
                format!("before {REDACTED} after"),
                "{secret}"
            );
        }
        for ordinary in ["the answer is 42", "task-list", "risk-free", "skip it"] {
            assert_eq!(r.scrub(ordinary), ordinary);
        }
    }

    #[test]
    fn known_secrets_are_scrubbed_longest_first_in_values() {
        let r =
            SecretRedactor::with_known(["tok".into(), "opal-1234".into(), "opal-1234-x".into()]);
        let value = json!({"a": ["x opal-1234-x y", 3], "opal-1234": "tok stays"});
        assert_eq!(
            r.scrub_value(&value),
            json!({"a": [format!("x {REDACTED} y"), 3], REDACTED: "tok stays"})
        );
    }
}
