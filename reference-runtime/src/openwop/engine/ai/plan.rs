//! What a run's AI nodes call ([`AiPlan`]), fixed when the run is created.

use futures::StreamExt;
use futures::stream::BoxStream;
use serde_json::{Map, Value};

use super::super::workflow::NodeDef;
use super::call::{CallEvent, CallFailure, CallTarget, TokenUsage};
use super::{mock, provider};

/// What the run's AI nodes call, fixed at creation.
#[derive(Debug, Clone)]
pub(crate) enum AiPlan {
    /// A per-run mock program.
    Mock(mock::MockProgram),
    /// A provider configured in the runtime.
    Provider(provider::ProviderPlan),
    /// The `envelope-program` mock of `core.ai.structuredOutput` nodes.
    Envelope(crate::openwop::engine::envelopes::program::EnvelopePlan),
}

impl AiPlan {
    /// Starts one call of `node`, whose run was created with `inputs`.
    pub(crate) fn start(
        &self,
        inputs: &Map<String, Value>,
        node: &NodeDef,
    ) -> (CallTarget, BoxStream<'static, CallEvent>) {
        match self {
            AiPlan::Mock(program) => program.start(),
            AiPlan::Provider(plan) => plan.start(inputs, node),
            AiPlan::Envelope(plan) => {
                let target = CallTarget {
                    provider: plan.provider.clone(),
                    model: plan.model.clone(),
                };
                let failed = CallEvent::Failed(CallFailure {
                    code: "capability_not_provided".to_string(),
                    message: "the envelope-program mock serves core.ai.structuredOutput nodes only"
                        .to_string(),
                    retryable: false,
                    usage: TokenUsage::default(),
                });
                (target, futures::stream::iter([failed]).boxed())
            }
        }
    }
}
