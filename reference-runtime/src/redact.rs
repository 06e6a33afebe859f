//! Credential handling: where credentials come from ([`CredentialSource`]) and the last line of
//! defence that scrubs them from any text the runtime writes ([`Redactor`]).
//!
//! The first line of defence is that no message is ever built from provider bodies, request
//! content or `reqwest` errors (they carry URLs); the redactor catches what slips through,
//! e.g. a log line about a provider answer.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

/// Replaces a credential wherever it would appear.
pub const REDACTED: &str = "[REDACTED]";

/// Where credential environment-variable NAMES are resolved.
#[derive(Debug, Clone, Default)]
pub enum CredentialSource {
    /// The process environment.
    #[default]
    Environment,
    /// An in-memory map from variable name to value (tests and the harness, which cannot set
    /// process environment variables).
    Map(HashMap<String, String>),
}

impl CredentialSource {
    /// A map source from pairs.
    pub fn from_pairs<K: Into<String>, V: Into<String>>(
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        CredentialSource::Map(
            pairs
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        )
    }

    /// The credential held by variable `name`, when set and non-empty.
    pub fn resolve(&self, name: &str) -> Option<String> {
        let value = match self {
            CredentialSource::Environment => std::env::var(name).ok(),
            CredentialSource::Map(map) => map.get(name).cloned(),
        };
        value.filter(|v| !v.is_empty())
    }
}

/// Scrubs every known credential from text.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    secrets: Arc<RwLock<Vec<String>>>,
}

impl Redactor {
    /// A redactor that knows no secret yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Learns a secret (ignored when too short to scrub safely or already known).
    pub fn learn(&self, secret: &str) {
        if secret.len() < 4 {
            return;
        }
        let mut secrets = self.secrets.write().unwrap_or_else(|p| p.into_inner());
        if !secrets.iter().any(|s| s == secret) {
            secrets.push(secret.to_string());
            // Longest first, so a secret containing another is scrubbed whole.
            secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        }
    }

    /// `text` with every known secret replaced by [`REDACTED`].
    pub fn scrub(&self, text: &str) -> String {
        let secrets = self.secrets.read().unwrap_or_else(|p| p.into_inner());
        let mut out = text.to_string();
        for secret in secrets.iter() {
            if out.contains(secret.as_str()) {
                out = out.replace(secret.as_str(), REDACTED);
            }
        }
        out
    }

    /// Whether `text` contains a known secret.
    pub fn leaks(&self, text: &str) -> bool {
        let secrets = self.secrets.read().unwrap_or_else(|p| p.into_inner());
        secrets.iter().any(|s| text.contains(s.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrubs_known_secrets_longest_first() {
        let redactor = Redactor::new();
        redactor.learn("sk-canary");
        redactor.learn("sk-canary-123");
        assert_eq!(
            redactor.scrub("key sk-canary-123 and sk-canary"),
            "key [REDACTED] and [REDACTED]"
        );
        assert!(redactor.leaks("x sk-canary y"));
        assert!(!redactor.leaks("nothing"));
    }

    #[test]
    fn map_source_resolves_names_and_ignores_empty_values() {
        let source = CredentialSource::from_pairs([("A_KEY", "secret"), ("EMPTY", "")]);
        assert_eq!(source.resolve("A_KEY").as_deref(), Some("secret"));
        assert_eq!(source.resolve("EMPTY"), None);
        assert_eq!(source.resolve("MISSING"), None);
    }
}
