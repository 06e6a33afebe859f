//! The settings of a `core.ai.structuredOutput` node (config, or inputs for the per-run ones):
//!
//! | setting | where | default |
//! |---|---|---|
//! | `expects` | config: the kind the node asks for (its instructions, its fragments) | `example.answer` |
//! | `acceptedEnvelopes` | config: the node's envelope contract | none (no contract) |
//! | `maxOutputTokens` (upstream's fixtures: `maxTokens`) | config: the first attempt's budget unless `configurable.ai.maxTokens` | `envelopes.default_max_output_tokens` |
//! | `turns` | input (1–16): envelopes the node collects, one turn each | 1 |
//! | `dispatchAttempts` | input (1–4): the node's retry policy, how often a refused node is re-dispatched | 1 |
//!
//! An input out of range fails the node `validation_error`.

use serde_json::{Map, Value, json};
use spec::openwop::payloads::ErrorObject;

use super::super::node_context::RunContext;
use super::super::workflow::{NodeDef, PortValue};
use super::program::EnvelopePlan;

/// The node's settings.
pub(crate) struct NodeSettings {
    /// The kind the node asks for.
    pub(crate) expects: String,
    /// The node's envelope contract.
    pub(crate) contract: Option<Vec<String>>,
    /// The first attempt's output budget.
    pub(crate) first_budget: u32,
    /// Turns per dispatch.
    pub(crate) turns: u32,
    /// Dispatches (1 + re-dispatches) allowed.
    pub(crate) dispatches: u32,
}

/// A node error with the refusing check in `details.check`.
pub(crate) fn error(
    code: &str,
    message: impl Into<String>,
    check: Option<&str>,
) -> Box<ErrorObject> {
    Box::new(ErrorObject {
        code: code.to_string(),
        message: message.into(),
        details: check.map(|c| {
            let mut details = Map::new();
            details.insert("check".into(), json!(c));
            details
        }),
        retryable: Some(false),
    })
}

fn input_number(node: &NodeDef, variables: &Map<String, Value>, name: &str) -> Option<Value> {
    match node.inputs.get(name) {
        Some(PortValue::Static(v)) => Some(v.clone()),
        Some(PortValue::Variable(var)) => variables.get(var).cloned(),
        _ => None,
    }
}

/// Reads the node's settings.
pub(crate) fn read_settings(
    ctx: &RunContext,
    node: &NodeDef,
    plan: &EnvelopePlan,
) -> Result<NodeSettings, Box<ErrorObject>> {
    let bounded = |name: &str, max: u64| -> Result<u32, Box<ErrorObject>> {
        match input_number(node, &ctx.variables, name) {
            None => Ok(1),
            Some(v) => v
                .as_u64()
                .filter(|n| (1..=max).contains(n))
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(|| {
                    error(
                        "validation_error",
                        format!("inputs.{name} must be an integer 1..={max}"),
                        None,
                    )
                }),
        }
    };
    let defaults = &ctx.env.config.envelopes;
    let node_budget = ["maxOutputTokens", "maxTokens"]
        .iter()
        .find_map(|name| node.config.get(*name))
        .and_then(Value::as_u64)
        .and_then(|n| u32::try_from(n).ok());
    Ok(NodeSettings {
        expects: node
            .config
            .get("expects")
            .and_then(Value::as_str)
            .unwrap_or("example.answer")
            .to_string(),
        contract: node
            .config
            .get("acceptedEnvelopes")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            }),
        first_budget: plan
            .max_tokens
            .or(node_budget)
            .unwrap_or(defaults.default_max_output_tokens)
            .max(1),
        turns: bounded("turns", 16)?,
        dispatches: bounded("dispatchAttempts", 4)?,
    })
}
