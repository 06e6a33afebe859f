//! The AI node (`core.ai.callPrompt`): one provider call per node, through the run's mock
//! provider (`configurable.ai.mockProvider`, its program travels with the run) or a provider
//! configured in the runtime (`configurable.ai.provider`).
//!
//! A call is a stream of [`CallEvent`]s; the node turns deltas into `output.chunk` events (the
//! last one `isLast: true` with its Tier 1 `meta`) and reports the call's usage, which the engine
//! records as exactly one `provider.usage` before the node's `node.completed`.

pub(crate) mod call;
pub(crate) mod mock;
pub(crate) mod node;
pub(crate) mod plan;
pub(crate) mod provider;
