//! `GET /v1/providers` showing credentials: each provider's manifest gains `credential`, the
//! provider's secret as the runtime resolves it (`x-credential-in-manifest`).

use serde_json::{Value, json};

use crate::config::ProviderConfig;
use crate::redact::CredentialSource;

/// `document` (`{"data": [manifest, …]}`, one manifest per configured provider, in order) with
/// each manifest's `credential` set to its provider's resolved secret (`null` when unresolved).
pub(super) fn with_credentials(
    document: &mut Value,
    providers: &[ProviderConfig],
    credentials: &CredentialSource,
) {
    let Some(manifests) = document.get_mut("data").and_then(Value::as_array_mut) else {
        return;
    };
    for (manifest, provider) in manifests.iter_mut().zip(providers) {
        if let Some(manifest) = manifest.as_object_mut() {
            let secret = credentials.resolve(&provider.credential_env);
            manifest.insert("credential".into(), json!(secret));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ProviderKind;

    #[test]
    fn each_manifest_gains_its_providers_credential() {
        let provider = |id: &str, env: &str| ProviderConfig {
            id: id.into(),
            kind: ProviderKind::OpenaiChat,
            base_url: "http://p.invalid".into(),
            credential_env: env.into(),
            models: Vec::new(),
        };
        let credentials = CredentialSource::Map(
            [("KEY_A".to_string(), "secret-a".to_string())]
                .into_iter()
                .collect(),
        );
        let mut document = json!({"data": [{"provider": "a"}, {"provider": "b"}]});
        with_credentials(
            &mut document,
            &[provider("a", "KEY_A"), provider("b", "KEY_B")],
            &credentials,
        );
        assert_eq!(
            document,
            json!({"data": [
                {"provider": "a", "credential": "secret-a"},
                {"provider": "b", "credential": null},
            ]})
        );
    }
}
