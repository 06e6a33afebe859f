//! This host's own rate table: the cost estimate it stamps on `provider.usage`
//! (`costEstimateUsd`, with `currency: "USD"`) when it advertises `providerUsage.costEstimates`.
//! The figure is an estimate derived from token counts, never a billed amount; a call with no
//! tokens gets no estimate (the field is omitted rather than sent as 0).
//!
//! | provider id | USD per 1M input tokens | USD per 1M output tokens |
//! |---|---|---|
//! | `mock`, `mock-*` | 0.50 | 1.50 |
//! | `openai*` | 2.50 | 10.00 |
//! | `anthropic*` | 3.00 | 15.00 |
//! | any other | 1.00 | 3.00 |

use super::ai::call::TokenUsage;

/// The ISO 4217 currency of every estimate (advertised as `providerUsage.currency`).
pub(crate) const CURRENCY: &str = "USD";

/// One estimate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Estimate {
    /// The amount.
    pub(crate) usd: f64,
    /// Its currency.
    pub(crate) currency: &'static str,
}

/// `(input, output)` USD per million tokens for a provider.
fn rates(provider: &str) -> (f64, f64) {
    if provider == "mock" || provider.starts_with("mock-") {
        (0.50, 1.50)
    } else if provider.starts_with("openai") {
        (2.50, 10.00)
    } else if provider.starts_with("anthropic") {
        (3.00, 15.00)
    } else {
        (1.00, 3.00)
    }
}

/// The estimate of one call (`None` when it used no tokens). The model does not change the
/// rate in this table.
pub(crate) fn estimate(provider: &str, _model: &str, usage: TokenUsage) -> Option<Estimate> {
    let (input, output) = rates(provider);
    let usd = (usage.input as f64 * input + usage.output as f64 * output) / 1_000_000.0;
    (usd > 0.0 && usd.is_finite()).then_some(Estimate {
        usd: (usd * 1e9).round() / 1e9,
        currency: CURRENCY,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_follow_the_table_and_zero_is_omitted() {
        let usage = TokenUsage {
            input: 1_000,
            output: 2_000,
            total: 3_000,
        };
        let mock = estimate("mock", "m", usage).unwrap();
        assert!((mock.usd - 0.0035).abs() < 1e-12);
        assert_eq!(mock.currency, "USD");
        assert!((estimate("openai-primary", "m", usage).unwrap().usd - 0.0225).abs() < 1e-12);
        assert!(estimate("mock", "m", TokenUsage::default()).is_none());
    }
}
