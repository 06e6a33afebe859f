//! Candidate selection and the attempt plan.
//!
//! A model qualifies when it serves the `ability`, accepts the modality of every input part,
//! and satisfies every requirement (listed modalities are subsets of the model's; a `true`
//! boolean needs the model's `true`; `false` or absent is no constraint). Candidates keep the
//! configuration order (providers, then models), stable-sorted by `routing.provider_order`
//! (listed providers first, in list order; unknown names are ignored). `strategy` is accepted
//! and both values mean this order.
//!
//! Attempts: one unless `allow_fallback` is true; then `max_attempts` (default: one per
//! candidate), cycling through the candidates when it exceeds their number.

use spec::execution::{ExecutionRequest, Target};

use crate::config::{ModelConfig, ProviderConfig};

/// One provider/model pair that may serve the request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Candidate {
    /// Index into the configured providers.
    pub provider: usize,
    /// The target as reported in events.
    pub target: Target,
}

fn qualifies(request: &ExecutionRequest, model: &ModelConfig) -> bool {
    if !model.abilities.contains(&request.ability) {
        return false;
    }
    if !request
        .input
        .iter()
        .all(|part| model.input_modalities.contains(&part.modality()))
    {
        return false;
    }
    let Some(needs) = &request.requirements else {
        return true;
    };
    let subset = |wanted: &Option<Vec<spec::execution::Modality>>,
                  offered: &[spec::execution::Modality]| {
        wanted
            .iter()
            .flatten()
            .all(|modality| offered.contains(modality))
    };
    let flag = |wanted: Option<bool>, offered: bool| !wanted.unwrap_or(false) || offered;
    subset(&needs.input_modalities, &model.input_modalities)
        && subset(&needs.output_modalities, &model.output_modalities)
        && flag(needs.stream, model.stream)
        && flag(needs.tools, model.tools)
        && flag(needs.structured_output, model.structured_output)
        && flag(needs.asynchronous, model.asynchronous)
        && flag(needs.cancel, model.cancel)
}

/// The qualifying candidates, in routing order.
pub(crate) fn candidates(
    request: &ExecutionRequest,
    providers: &[ProviderConfig],
) -> Vec<Candidate> {
    let mut found: Vec<Candidate> = providers
        .iter()
        .enumerate()
        .flat_map(|(index, provider)| {
            provider
                .models
                .iter()
                .filter(|model| qualifies(request, model))
                .map(move |model| Candidate {
                    provider: index,
                    target: Target {
                        provider: provider.id.clone(),
                        model: model.model.clone(),
                    },
                })
        })
        .collect();
    if let Some(order) = request
        .routing
        .as_ref()
        .and_then(|r| r.provider_order.as_ref())
    {
        found.sort_by_key(|candidate| {
            order
                .iter()
                .position(|p| *p == candidate.target.provider)
                .unwrap_or(order.len())
        });
    }
    found
}

/// How many attempts the request allows over `candidates` candidates.
pub(crate) fn attempt_limit(request: &ExecutionRequest, candidates: usize) -> u32 {
    let routing = request.routing.clone().unwrap_or_default();
    if !routing.allow_fallback.unwrap_or(false) || candidates == 0 {
        return 1;
    }
    let default = u32::try_from(candidates).unwrap_or(u32::MAX);
    routing.max_attempts.unwrap_or(default).clamp(1, 32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ProviderKind;
    use serde_json::json;

    fn provider(id: &str, tools: bool) -> ProviderConfig {
        ProviderConfig {
            id: id.into(),
            kind: ProviderKind::OpenaiChat,
            base_url: "http://127.0.0.1:1".into(),
            credential_env: "KEY".into(),
            models: vec![ModelConfig {
                model: "m".into(),
                abilities: vec!["text-generation".into()],
                input_modalities: vec![spec::execution::Modality::Text],
                output_modalities: vec![spec::execution::Modality::Text],
                stream: true,
                tools,
                structured_output: false,
                asynchronous: false,
                cancel: true,
            }],
        }
    }

    fn request(extra: serde_json::Value) -> ExecutionRequest {
        let mut base =
            json!({"ability": "text-generation", "input": [{"type": "text", "text": "hi"}]});
        if let (Some(base), Some(extra)) = (base.as_object_mut(), extra.as_object()) {
            base.extend(extra.clone());
        }
        serde_json::from_value(base).unwrap()
    }

    #[test]
    fn filters_by_requirements_and_orders_by_provider_order() {
        let providers = [provider("a", false), provider("b", true)];
        let ids = |r: &ExecutionRequest| -> Vec<String> {
            candidates(r, &providers)
                .into_iter()
                .map(|c| c.target.provider)
                .collect()
        };
        assert_eq!(ids(&request(json!({}))), ["a", "b"]);
        assert_eq!(
            ids(&request(json!({"requirements": {"tools": true}}))),
            ["b"]
        );
        assert_eq!(
            ids(&request(
                json!({"routing": {"provider_order": ["b", "zzz"]}})
            )),
            ["b", "a"]
        );
        assert!(
            ids(&request(
                json!({"input": [{"type": "image", "uri": "https://x"}]})
            ))
            .is_empty()
        );
        assert!(ids(&request(json!({"requirements": {"async": true}}))).is_empty());
    }

    #[test]
    fn fallback_is_off_by_default() {
        assert_eq!(
            attempt_limit(&request(json!({"routing": {"max_attempts": 5}})), 3),
            1
        );
        assert_eq!(
            attempt_limit(&request(json!({"routing": {"allow_fallback": true}})), 3),
            3
        );
        assert_eq!(
            attempt_limit(
                &request(json!({"routing": {"allow_fallback": true, "max_attempts": 5}})),
                2
            ),
            5
        );
    }
}
