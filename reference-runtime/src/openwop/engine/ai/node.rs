//! The AI node's run: one provider call, its deltas turned into `output.chunk` events, its usage.

use futures::StreamExt;
use serde_json::{Map, Value, json};
use spec::openwop::payloads::{ChunkMeta, ChunkUsage, ErrorObject, OutputChunk, ProviderUsage};

use super::call::{CallEnd, CallEvent, CallTarget, TokenUsage};
use crate::openwop::engine::node_context::{NodeError, NodeSuccess, RunContext};
use crate::openwop::engine::workflow::NodeDef;

/// Every mock provider id this host serves (`testing.mockProviders`): the `core.ai.callPrompt`
/// mocks and the `core.ai.structuredOutput` mock.
pub(crate) fn mock_provider_ids() -> Vec<&'static str> {
    let mut ids = super::mock::MOCK_PROVIDER_IDS.to_vec();
    ids.push(crate::openwop::engine::envelopes::program::ENVELOPE_PROGRAM_ID);
    ids
}

/// Runs one AI node.
pub(crate) async fn run_node(ctx: &RunContext, node: &NodeDef) -> Result<NodeSuccess, NodeError> {
    let (target, mut events) = ctx.ai_plan().start(ctx.inputs(), node);
    let mut held: Option<String> = None;
    let mut text = String::new();
    loop {
        let event = tokio::select! {
            event = events.next() => event,
            () = ctx.cancelled() => return Err(NodeError::Stopped),
        };
        match event {
            Some(CallEvent::Delta(delta)) => {
                text.push_str(&delta);
                if let Some(previous) = held.replace(delta) {
                    chunk(ctx, node, &target, previous, None)?;
                }
            }
            Some(CallEvent::Done(end)) => {
                let last = held.take().unwrap_or_default();
                chunk(ctx, node, &target, last, Some(&end))?;
                let mut outputs = Map::new();
                outputs.insert("text".into(), Value::String(text));
                if !end.tool_calls.is_empty() {
                    outputs.insert("toolCalls".into(), json!(end.tool_calls));
                }
                return Ok(NodeSuccess {
                    outputs,
                    usage: vec![usage_payload(&target, node, end.usage)],
                });
            }
            Some(CallEvent::Failed(failure)) => {
                if let Some(previous) = held.take() {
                    chunk(ctx, node, &target, previous, None)?;
                }
                return Err(NodeError::failed(
                    ErrorObject {
                        code: failure.code,
                        message: failure.message,
                        details: None,
                        retryable: Some(failure.retryable),
                    },
                    vec![usage_payload(&target, node, failure.usage)],
                ));
            }
            None => {
                return Err(NodeError::failed(
                    ErrorObject {
                        code: "internal_error".into(),
                        message: "the provider call ended without a completion signal".into(),
                        details: None,
                        retryable: Some(false),
                    },
                    vec![usage_payload(&target, node, TokenUsage::default())],
                ));
            }
        }
    }
}

/// Appends one `output.chunk`. Tier 1 `meta` is filled whenever the data is known: the model on
/// every chunk; finish reason, usage and tool calls on the last.
fn chunk(
    ctx: &RunContext,
    node: &NodeDef,
    target: &CallTarget,
    text: String,
    end: Option<&CallEnd>,
) -> Result<(), NodeError> {
    let meta = ChunkMeta {
        model: Some(target.model.clone()),
        finish_reason: end.map(|e| e.finish_reason.clone()),
        usage: end.map(|e| ChunkUsage {
            prompt_tokens: Some(e.usage.input),
            completion_tokens: Some(e.usage.output),
            total_tokens: Some(e.usage.total),
        }),
        tool_calls: end
            .filter(|e| !e.tool_calls.is_empty())
            .map(|e| e.tool_calls.clone()),
        ..ChunkMeta::default()
    };
    let payload = OutputChunk {
        node_id: node.id.clone(),
        run_id: ctx.run_id().to_string(),
        chunk: text,
        is_last: end.is_some(),
        channel: None,
        meta: Some(meta),
    };
    ctx.record("output.chunk", Some(&node.id), json!(payload))
}

/// The `provider.usage` payload of one call: provider, model, token counts and the cost
/// estimate from this host's rate table (never a credential reference or prompt/response text).
pub(crate) fn usage_payload(
    target: &CallTarget,
    node: &NodeDef,
    usage: TokenUsage,
) -> ProviderUsage {
    let cost = crate::openwop::engine::pricing::estimate(&target.provider, &target.model, usage);
    ProviderUsage {
        provider: target.provider.clone(),
        model: target.model.clone(),
        input_tokens: usage.input,
        output_tokens: usage.output,
        total_tokens: Some(usage.total),
        cost_estimate_usd: cost.map(|c| c.usd),
        currency: cost.map(|c| c.currency.to_string()),
        cache_hit: None,
        cache_read_tokens: None,
        cache_write_tokens: None,
        node_id: Some(node.id.clone()),
        trace_id: None,
    }
}
