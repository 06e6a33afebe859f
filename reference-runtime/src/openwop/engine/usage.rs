//! `provider.usage` and the `providerUsage` capability.
//!
//! A host advertising `providerUsage` records exactly one `provider.usage` per LLM provider
//! call, before the node's `node.completed` (the engine orders the two); a host that does not
//! advertise it records none. The payload (built by `ai::usage_payload`) is closed: provider,
//! model, token counts, the cost estimate of `pricing`, the node; never a credential reference,
//! a hashed credential identifier, or prompt or response text.
//!
//! | field of `[openwop.provider_usage]` | default | advertised as |
//! |---|---|---|
//! | `advertise` | `true` (`false`: no `providerUsage` record in discovery and no `provider.usage` event) | `providerUsage` |

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use spec::openwop::payloads::ProviderUsage;

use super::ai::provider::prompt_text;
use super::node_context::{NodeError, RunContext};
use super::workflow::NodeDef;
use crate::openwop::engine::ai::plan::AiPlan;

/// Records a node's provider usage: one `provider.usage` per call in `usage` when the host
/// advertises `providerUsage`, nothing otherwise. `outputs` are the node's outputs when it
/// completed (only a defective host reads them).
pub(crate) fn record(
    ctx: &RunContext,
    node: &NodeDef,
    usage: &[ProviderUsage],
    outputs: Option<&Map<String, Value>>,
) -> Result<(), NodeError> {
    let defects = &ctx.env.defects;
    if !ctx.env.config.provider_usage.advertise && !defects.usage_recorded_unadvertised() {
        return Ok(());
    }
    for payload in usage {
        let mut payload = payload.clone();
        if ctx.env.config.choices.usage_currency
            == crate::openwop::infra::choices::UsageCurrency::Omitted
        {
            // Absent means USD, the currency of every estimate of this host.
            payload.currency = None;
        }
        let mut event = json!(payload);
        leak(ctx, node, outputs, &mut event);
        ctx.record("provider.usage", Some(&node.id), event)?;
    }
    Ok(())
}

/// What a defective host adds to the payload: the credential's reference or fingerprint, the
/// prompt, the response text.
fn leak(ctx: &RunContext, node: &NodeDef, outputs: Option<&Map<String, Value>>, event: &mut Value) {
    let defects = &ctx.env.defects;
    let Some(members) = event.as_object_mut() else {
        return;
    };
    if let AiPlan::Provider(plan) = ctx.ai_plan() {
        if defects.usage_names_credential() {
            members.insert(
                "credentialRef".into(),
                json!(format!("env:{}", plan.credential_env())),
            );
        }
        if defects.usage_hashes_credential()
            && let Some(credential) = plan.credential()
        {
            let digest = hex::encode(Sha256::digest(credential.as_bytes()));
            members.insert(
                "credentialId".into(),
                json!(format!("sha256:{}", &digest[..16])),
            );
        }
    }
    if defects.usage_carries_prompt() {
        members.insert("prompt".into(), json!(prompt_text(ctx.inputs(), node)));
    }
    if defects.usage_carries_response()
        && let Some(text) = outputs.and_then(|o| o.get("text"))
    {
        members.insert("completion".into(), text.clone());
    }
}
