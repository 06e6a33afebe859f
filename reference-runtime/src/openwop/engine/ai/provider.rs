//! The AI node's path through a provider configured in the runtime (`configurable.ai.provider`),
//! through the runtime's provider-call service ([`ProviderCalls`]: the adapters, credentials and
//! redactor surface X uses too). The adapter's event bodies become
//! [`CallEvent`]s: text deltas, then the completion with the call's usage.
//!
//! The prompt sent is the run's `inputs.prompt` when it is a string, else the node's
//! `config.promptId`; a conformance case puts its fake-provider script marker there.

use std::sync::Arc;

use futures::StreamExt;
use futures::stream::BoxStream;
use serde_json::{Map, Value};
use spec::execution::{EventBody, ExecutionRequest, InputPart, UsageFact};
use spec::openwop::payloads::ChunkToolCall;
use tokio::sync::mpsc;

use crate::providers::calls::ProviderCalls;
use crate::providers::{AttemptFailure, Emit, ProviderCall, RemoteJobSlot};

use super::super::workflow::NodeDef;
use super::call::{CallEnd, CallEvent, CallFailure, CallTarget, TokenUsage};

/// The configured providers surface W may call.
#[derive(Clone)]
pub struct ConfiguredProviders {
    calls: Arc<ProviderCalls>,
}

impl std::fmt::Debug for ConfiguredProviders {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConfiguredProviders")
            .finish_non_exhaustive()
    }
}

impl ConfiguredProviders {
    /// The providers of the runtime's provider-call service.
    pub fn new(calls: Arc<ProviderCalls>) -> Self {
        ConfiguredProviders { calls }
    }

    /// Resolves `configurable.ai.provider` / `model` to a streaming text provider and model.
    /// Errors name the member, never its value.
    pub(crate) fn plan(&self, provider: &str, model: Option<&str>) -> Result<ProviderPlan, String> {
        let configs = &self.calls.providers;
        let index = configs
            .iter()
            .position(|p| p.id == provider && p.kind.streams_text())
            .ok_or_else(|| {
                "configurable.ai.provider does not name a streaming text provider configured in this host"
                    .to_string()
            })?;
        let models = &configs[index].models;
        let model = match model {
            Some(model) => models
                .iter()
                .find(|m| m.model == model)
                .map(|m| m.model.clone())
                .ok_or_else(|| {
                    "configurable.ai.model is not a model of the configured provider".to_string()
                })?,
            None => models
                .first()
                .map(|m| m.model.clone())
                .ok_or_else(|| "the configured provider lists no model".to_string())?,
        };
        Ok(ProviderPlan {
            providers: self.clone(),
            index,
            model,
        })
    }

    /// The ids of the streaming text providers.
    pub(crate) fn ids(&self) -> Vec<String> {
        self.calls
            .providers
            .iter()
            .filter(|p| p.kind.streams_text())
            .map(|p| p.id.clone())
            .collect()
    }
}

/// A resolved provider and model.
#[derive(Debug, Clone)]
pub(crate) struct ProviderPlan {
    providers: ConfiguredProviders,
    index: usize,
    model: String,
}

/// The prompt a node sends: the run's `inputs.prompt` when it is a string, else the node's
/// `config.promptId`.
pub(crate) fn prompt_text(inputs: &Map<String, Value>, node: &NodeDef) -> String {
    inputs
        .get("prompt")
        .and_then(|p| p.as_str())
        .or_else(|| node.config.get("promptId").and_then(|p| p.as_str()))
        .unwrap_or("conformance")
        .to_string()
}

impl ProviderPlan {
    /// The name of the environment variable the provider's credential is read from.
    pub(crate) fn credential_env(&self) -> &str {
        &self.providers.calls.providers[self.index].credential_env
    }

    /// The provider's credential, when it is configured.
    pub(crate) fn credential(&self) -> Option<String> {
        self.providers
            .calls
            .credentials
            .resolve(self.credential_env())
    }

    /// Starts one call.
    pub(crate) fn start(
        &self,
        inputs: &Map<String, Value>,
        node: &NodeDef,
    ) -> (CallTarget, BoxStream<'static, CallEvent>) {
        let calls = Arc::clone(&self.providers.calls);
        let index = self.index;
        let provider_id = calls.providers[index].id.to_lowercase();
        let target = CallTarget {
            provider: provider_id,
            model: self.model.clone(),
        };
        let prompt = prompt_text(inputs, node);
        let model = self.model.clone();
        let events = async_stream::stream! {
            let config = &calls.providers[index];
            let Some(credential) = calls.credentials.resolve(&config.credential_env) else {
                yield CallEvent::Failed(failure(
                    "runner_unavailable",
                    "the provider credential is not configured",
                    false,
                ));
                return;
            };
            calls.redactor.learn(&credential);
            let request = ExecutionRequest {
                ability: "text-generation".to_string(),
                input: vec![InputPart::Text { text: prompt }],
                requirements: None,
                routing: None,
                deadline_ms: None,
                metadata: None,
                extensions: None,
            };
            let (tx, mut rx) = mpsc::unbounded_channel();
            let mut sink = ChannelEmit { tx };
            let remote = RemoteJobSlot::default();
            let call = calls.adapters[index].run(
                ProviderCall { request: &request, model: &model, credential: &credential },
                &mut sink,
                &remote,
            );
            tokio::pin!(call);
            let mut usage = TokenUsage::default();
            let mut tools: Vec<(String, String, String)> = Vec::new();
            let result = loop {
                tokio::select! {
                    Some(body) = rx.recv() => {
                        if let Some(delta) = absorb(body, &mut usage, &mut tools) {
                            yield CallEvent::Delta(delta);
                        }
                    }
                    result = &mut call => break result,
                }
            };
            while let Ok(body) = rx.try_recv() {
                if let Some(delta) = absorb(body, &mut usage, &mut tools) {
                    yield CallEvent::Delta(delta);
                }
            }
            usage.total = usage.input.saturating_add(usage.output);
            match result {
                Ok(()) => {
                    let tool_calls: Vec<ChunkToolCall> = tools
                        .into_iter()
                        .map(|(id, name, arguments)| ChunkToolCall { id, name, arguments })
                        .collect();
                    let finish_reason = if tool_calls.is_empty() { "stop" } else { "tool_calls" };
                    yield CallEvent::Done(CallEnd {
                        finish_reason: finish_reason.to_string(),
                        usage,
                        tool_calls,
                    });
                }
                Err(AttemptFailure { error, .. }) => {
                    let code = if error.retryable { "runner_unavailable" } else { "internal_error" };
                    let message = calls.redactor.scrub(&error.message);
                    let mut failed = failure(code, &message, error.retryable);
                    failed.usage = usage;
                    yield CallEvent::Failed(failed);
                }
            }
        };
        (target, events.boxed())
    }
}

fn failure(code: &str, message: &str, retryable: bool) -> CallFailure {
    CallFailure {
        code: code.to_string(),
        message: message.to_string(),
        retryable,
        usage: TokenUsage::default(),
    }
}

/// Folds one adapter body; returns the text of an output delta.
fn absorb(
    body: EventBody,
    usage: &mut TokenUsage,
    tools: &mut Vec<(String, String, String)>,
) -> Option<String> {
    match body {
        EventBody::OutputDelta { delta, .. } => Some(delta),
        EventBody::UsageReported { facts } => {
            for UsageFact { unit, quantity, .. } in facts {
                let tokens = if quantity.is_finite() && quantity >= 0.0 {
                    quantity.round() as u64
                } else {
                    0
                };
                match unit.as_str() {
                    "input_token" => usage.input = tokens,
                    "output_token" => usage.output = tokens,
                    _ => {}
                }
            }
            None
        }
        EventBody::ToolCallStarted { call_id, name } => {
            tools.push((call_id, name, String::new()));
            None
        }
        EventBody::ToolCallArgumentsDelta { call_id, delta } => {
            if let Some(tool) = tools.iter_mut().find(|t| t.0 == call_id) {
                tool.2.push_str(&delta);
            }
            None
        }
        _ => None,
    }
}

/// An [`Emit`] sink into a channel.
struct ChannelEmit {
    tx: mpsc::UnboundedSender<EventBody>,
}

impl Emit for ChannelEmit {
    fn emit(&mut self, body: EventBody) -> Result<(), AttemptFailure> {
        self.tx
            .send(body)
            .map_err(|_| AttemptFailure::protocol("the run stopped reading the provider call"))
    }
}
