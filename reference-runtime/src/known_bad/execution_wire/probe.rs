//! A provider called before an unsatisfiable submission is refused
//! (`x-provider-called-before-validation`): when `POST /v1/executions` is answered with the
//! `capability_unavailable` refusal, the layer first makes one call to the first configured
//! model with the submitted request, its output discarded.

use spec::execution::ExecutionRequest;

use crate::providers::calls::ProviderCalls;
use crate::providers::{DiscardEmit, ProviderCall, RemoteJobSlot};

/// The refusal's code that the probe precedes.
pub(super) const REFUSAL_CODE: &str = "capability_unavailable";

/// One call to the first configured model (of the first provider that has one and whose
/// credential resolves), its output discarded.
pub(super) async fn probe_first_provider(calls: &ProviderCalls, request: &ExecutionRequest) {
    let Some((index, provider)) = calls
        .providers
        .iter()
        .enumerate()
        .find(|(_, p)| !p.models.is_empty())
    else {
        return;
    };
    let Some(credential) = calls.credentials.resolve(&provider.credential_env) else {
        return;
    };
    let call = ProviderCall {
        request,
        model: &provider.models[0].model,
        credential: &credential,
    };
    let _ = calls.adapters[index]
        .run(call, &mut DiscardEmit, &RemoteJobSlot::default())
        .await;
}
