//! [`ProviderExchangeRewrites`]: rewrites of what passes between an adapter and its provider
//! (the `PROVIDER_EXCHANGES` table), handed to the adapters by a known-bad runtime's
//! composition root. The adapters send and classify the clean way; each rewrite is one
//! defect's one site.

use reqwest::header::{AUTHORIZATION, HeaderValue};
use serde_json::Value;

use std::sync::Arc;

use super::decisions::decisions;
use super::policy::KnownBad;
use crate::defects::{Defect, Defects};
use crate::providers::{AttemptFailure, ProviderExchange};

/// How the path of the one provider API whose requests the credential defect rewrites ends
/// (below the provider's configured base URL, which may carry a prefix).
const CHAT_COMPLETIONS: &str = "/v1/chat/completions";

/// The provider-exchange rewrites of a known-bad runtime.
#[derive(Debug, Clone, Default)]
pub(crate) struct ProviderExchangeRewrites {
    defects: Defects,
}

decisions! {
    ProviderExchangeRewrites, PROVIDER_EXCHANGES {
        provider_error_body_copied => XCanaryInError,
        credential_taken_from_extension => XCredentialFromExtension,
    }
}

impl KnownBad {
    /// The provider adapters' exchange rewrite, or `None` when no provider-exchange defect is
    /// on ([`ProviderCalls::new`](crate::providers::calls::ProviderCalls::new)).
    pub fn provider_exchange(&self) -> Option<Arc<dyn ProviderExchange>> {
        let defects = self.layered_in(PROVIDER_EXCHANGES);
        (!defects.is_empty())
            .then(|| Arc::new(ProviderExchangeRewrites::new(defects)) as Arc<dyn ProviderExchange>)
    }
}

impl ProviderExchangeRewrites {
    /// The rewrites of `defects` (the policy's provider-exchange defects).
    pub(super) fn new(defects: Defects) -> Self {
        ProviderExchangeRewrites { defects }
    }
}

impl ProviderExchange for ProviderExchangeRewrites {
    fn outgoing(&self, request: &mut reqwest::Request) {
        if !self.credential_taken_from_extension()
            || !request.url().path().ends_with(CHAT_COMPLETIONS)
        {
            return;
        }
        // The defect: an `api_key` the request's `openai.request` extension passed through
        // into the provider body overrides the deployed credential.
        let key = request
            .body()
            .and_then(reqwest::Body::as_bytes)
            .and_then(|body| serde_json::from_slice::<Value>(body).ok())
            .and_then(|body| {
                body.get("api_key")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            });
        if let Some(value) = key.and_then(|k| HeaderValue::try_from(format!("Bearer {k}")).ok()) {
            request.headers_mut().insert(AUTHORIZATION, value);
        }
    }

    fn failure(&self, failure: &mut AttemptFailure, body: &[u8]) {
        if self.provider_error_body_copied() {
            // The defect: the provider's error body (which may echo the credential) is copied
            // into the portable error.
            let message = &mut failure.error.message;
            *message = format!("{message}: {}", String::from_utf8_lossy(body));
        }
    }
}

#[cfg(test)]
mod tests {
    use spec::execution::ErrorCode;

    use super::*;

    fn rewrites(defects: impl IntoIterator<Item = Defect>) -> ProviderExchangeRewrites {
        ProviderExchangeRewrites::new(Defects::of(defects))
    }

    fn chat_request(path: &str, body: Value) -> reqwest::Request {
        reqwest::Client::new()
            .post(format!("http://provider.test{path}"))
            .bearer_auth("deployed")
            .json(&body)
            .build()
            .unwrap()
    }

    fn bearer(request: &reqwest::Request) -> &str {
        request.headers()[AUTHORIZATION].to_str().unwrap()
    }

    #[test]
    fn the_extension_key_overrides_the_credential_only_under_the_defect() {
        let body = serde_json::json!({"model": "m", "api_key": "sk-from-the-request"});
        let mut taken = chat_request(CHAT_COMPLETIONS, body.clone());
        rewrites([Defect::XCredentialFromExtension]).outgoing(&mut taken);
        assert_eq!(bearer(&taken), "Bearer sk-from-the-request");
        let mut prefixed = chat_request("/openai/v1/chat/completions", body.clone());
        rewrites([Defect::XCredentialFromExtension]).outgoing(&mut prefixed);
        assert_eq!(bearer(&prefixed), "Bearer sk-from-the-request");
        let mut other_api = chat_request("/v1/responses", body.clone());
        rewrites([Defect::XCredentialFromExtension]).outgoing(&mut other_api);
        assert_eq!(bearer(&other_api), "Bearer deployed");
        let mut clean = chat_request(CHAT_COMPLETIONS, body);
        rewrites([Defect::XCanaryInError]).outgoing(&mut clean);
        assert_eq!(bearer(&clean), "Bearer deployed");
    }

    #[test]
    fn the_error_body_is_copied_only_under_the_defect() {
        let failure = || {
            AttemptFailure::new(
                ErrorCode::ProviderUnavailable,
                "Provider answered HTTP 500",
                true,
            )
        };
        let mut copied = failure();
        rewrites([Defect::XCanaryInError]).failure(&mut copied, b"{\"echo\":\"sk-x\"}");
        assert_eq!(
            copied.error.message,
            "Provider answered HTTP 500: {\"echo\":\"sk-x\"}"
        );
        let mut kept = failure();
        rewrites([Defect::XCredentialFromExtension]).failure(&mut kept, b"sk-x");
        assert_eq!(kept, failure());
    }
}
