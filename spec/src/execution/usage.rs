//! Usage facts: what a provider reported, or the runtime derived, about consumption.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The known units. A custom unit is namespaced `<org>.<unit>`.
pub const KNOWN_UNITS: [&str; 12] = [
    "input_token",
    "output_token",
    "cache_write_token",
    "cache_read_token",
    "reasoning_token",
    "embedding_input_token",
    "image_count",
    "video_second",
    "audio_input_second",
    "audio_output_second",
    "tool_request",
    "request",
];

/// The grammar of a custom (namespaced) unit.
pub const CUSTOM_UNIT_PATTERN: &str = r"^[a-z][a-z0-9-]*\.[a-z][a-z0-9_]*$";

/// Whether `unit` is a known unit or a well-formed namespaced custom unit.
pub fn is_valid_unit(unit: &str) -> bool {
    KNOWN_UNITS.contains(&unit) || is_custom_unit(unit)
}

fn is_custom_unit(unit: &str) -> bool {
    let Some((org, name)) = unit.split_once('.') else {
        return false;
    };
    let starts_lower = |s: &str| s.chars().next().is_some_and(|c| c.is_ascii_lowercase());
    starts_lower(org)
        && starts_lower(name)
        && org
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// Who produced a usage value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum UsageSource {
    /// The provider reported it.
    Provider,
    /// The runtime derived it.
    Runtime,
}

/// One usage fact (the origin's `UsageFact`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct UsageFact {
    /// A unit: the origin types it as any string; `overlay` states the seed's known units ∪
    /// namespaced custom units in the schema.
    pub unit: String,
    /// Finite and non-negative (`overlay` states the bound in the schema).
    pub quantity: f64,
    /// Whether the provider reported the value or the runtime derived it.
    pub source: UsageSource,
    /// Whether the value is final for the execution.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub complete: Option<bool>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert!(is_valid_unit("input_token"));
        assert!(is_valid_unit("acme.gpu_second"));
        assert!(is_valid_unit("my-org.x"));
        assert!(!is_valid_unit("tokens"));
        assert!(!is_valid_unit("Acme.x"));
        assert!(!is_valid_unit("acme."));
        assert!(!is_valid_unit("acme.gpu-second"));
    }
}
