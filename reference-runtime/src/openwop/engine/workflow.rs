//! Workflow definitions (the fixtures of `spec/fixtures/`), read into the shape the engine runs:
//! nodes in execution order, variables with defaults, node inputs as port values.

use std::collections::BTreeMap;

use serde_json::{Map, Value};
use spec::fixtures::mock_nodes::{self, NodeIdEdition};

/// The node types this engine executes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NodeKind {
    /// `core.noop`: completes at once.
    Noop,
    /// `core.delay`: waits `inputs.delayMs` (0–60 000 ms) on the tokio clock.
    Delay,
    /// `core.fail`: fails with `config.code` / `config.message`, no retries.
    Fail,
    /// `core.approvalGate`: suspends until `POST /runs/{runId}/interrupts/{nodeId}`.
    ApprovalGate,
    /// `core.ai.callPrompt`: one provider call through the run's mock or configured provider.
    AiCallPrompt,
    /// `conformance.debugNoise`: `log.appended`, `variable.changed`, a vendor `example.*` event.
    DebugNoise,
    /// `core.ai.structuredOutput`: collects AI envelopes (see `envelopes`).
    AiStructuredOutput,
}

impl NodeKind {
    fn from_type_id(type_id: &str) -> Option<Self> {
        Some(match type_id {
            "core.noop" => Self::Noop,
            "core.delay" => Self::Delay,
            "core.fail" => Self::Fail,
            "core.approvalGate" => Self::ApprovalGate,
            "core.ai.callPrompt" => Self::AiCallPrompt,
            "conformance.debugNoise" => Self::DebugNoise,
            "core.ai.structuredOutput" => Self::AiStructuredOutput,
            _ => return None,
        })
    }
}

/// The largest `delayMs` a `core.delay` node accepts.
pub const MAX_DELAY_MS: u64 = 60_000;

/// Where a node input comes from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum PortValue {
    /// A literal.
    Static(Value),
    /// A run variable (run input or the variable's default).
    Variable(String),
    /// Another node's output.
    Connection { node_id: String, output_key: String },
}

/// One node.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct NodeDef {
    pub(crate) id: String,
    pub(crate) type_id: String,
    pub(crate) kind: NodeKind,
    pub(crate) config: Map<String, Value>,
    pub(crate) inputs: BTreeMap<String, PortValue>,
}

/// One variable.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct VariableDef {
    name: String,
    value_type: String,
    required: bool,
    default: Option<Value>,
    sensitive: bool,
}

/// A runnable workflow.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Workflow {
    pub(crate) id: String,
    /// The definition as seeded (served at `GET /workflows/{workflowId}`).
    pub(crate) definition: Value,
    /// Nodes in execution order (edges respected, definition order breaks ties).
    pub(crate) nodes: Vec<NodeDef>,
    variables: Vec<VariableDef>,
}

/// Why a definition cannot be run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("workflow `{workflow}`: {problem}")]
pub(crate) struct DefinitionError {
    workflow: String,
    problem: String,
}

impl Workflow {
    /// Reads a workflow definition.
    pub(crate) fn from_definition(definition: &Value) -> Result<Self, DefinitionError> {
        let id = definition["id"].as_str().unwrap_or_default().to_string();
        let fail = |problem: String| DefinitionError {
            workflow: id.clone(),
            problem,
        };
        if id.is_empty() {
            return Err(fail("no id".into()));
        }
        let mut nodes = Vec::new();
        for node in definition["nodes"].as_array().into_iter().flatten() {
            let node_id = node["id"].as_str().unwrap_or_default().to_string();
            let type_id = node["typeId"].as_str().unwrap_or_default().to_string();
            let kind = NodeKind::from_type_id(&type_id)
                .ok_or_else(|| fail(format!("node `{node_id}` has unknown type `{type_id}`")))?;
            let mut inputs = BTreeMap::new();
            for (port, value) in node["inputs"].as_object().into_iter().flatten() {
                inputs.insert(port.clone(), port_value(value).map_err(&fail)?);
            }
            nodes.push(NodeDef {
                id: node_id,
                type_id,
                kind,
                config: node["config"].as_object().cloned().unwrap_or_default(),
                inputs,
            });
        }
        if nodes.is_empty() {
            return Err(fail("no nodes".into()));
        }
        let edges: Vec<(String, String)> = definition["edges"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|e| {
                (
                    e["sourceNodeId"].as_str().unwrap_or_default().to_string(),
                    e["targetNodeId"].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect();
        let nodes = execution_order(nodes, &edges).map_err(&fail)?;
        let variables = definition["variables"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|v| VariableDef {
                name: v["name"].as_str().unwrap_or_default().to_string(),
                value_type: v["type"].as_str().unwrap_or("object").to_string(),
                required: v["required"].as_bool().unwrap_or(false),
                default: v.get("defaultValue").cloned(),
                sensitive: v["sensitive"].as_bool().unwrap_or(false),
            })
            .collect();
        Ok(Workflow {
            id,
            definition: definition.clone(),
            nodes,
            variables,
        })
    }

    /// The run's variables: each declared variable from the inputs or its default, type-checked;
    /// then every node input that must be known at creation (`delayMs`) is checked too. Messages
    /// name the variable, never its value.
    pub(crate) fn resolve_variables(
        &self,
        inputs: &Map<String, Value>,
    ) -> Result<Map<String, Value>, String> {
        let mut variables = Map::new();
        for var in &self.variables {
            match inputs.get(&var.name).or(var.default.as_ref()) {
                Some(value) => {
                    if !has_type(value, &var.value_type) {
                        return Err(format!(
                            "inputs.{} must be of type {}",
                            var.name, var.value_type
                        ));
                    }
                    variables.insert(var.name.clone(), value.clone());
                }
                None if var.required => {
                    return Err(format!("inputs.{} is required", var.name));
                }
                None => {}
            }
        }
        for node in &self.nodes {
            if node.kind == NodeKind::Delay {
                delay_ms(node, &variables)?;
            }
        }
        Ok(variables)
    }
}

impl Workflow {
    /// The values of the variables declared `sensitive`: the run's known secrets.
    pub(crate) fn sensitive_values(&self, variables: &Map<String, Value>) -> Vec<String> {
        self.variables
            .iter()
            .filter(|v| v.sensitive)
            .filter_map(|v| variables.get(&v.name))
            .filter_map(|v| match v {
                Value::String(s) => Some(s.clone()),
                Value::Null => None,
                other => Some(other.to_string()),
            })
            .collect()
    }
}

/// The `delayMs` of a `core.delay` node: an integer 0..=60 000.
pub(crate) fn delay_ms(node: &NodeDef, variables: &Map<String, Value>) -> Result<u64, String> {
    let value = match node.inputs.get("delayMs") {
        Some(PortValue::Static(v)) => Some(v.clone()),
        Some(PortValue::Variable(name)) => variables.get(name).cloned(),
        _ => None,
    };
    value
        .and_then(|v| v.as_u64())
        .filter(|ms| *ms <= MAX_DELAY_MS)
        .ok_or_else(|| format!("inputs.delayMs must be an integer 0..={MAX_DELAY_MS}"))
}

fn port_value(value: &Value) -> Result<PortValue, String> {
    match value["type"].as_str() {
        Some("static") => Ok(PortValue::Static(value["value"].clone())),
        Some("variable") => value["variableName"]
            .as_str()
            .map(|n| PortValue::Variable(n.to_string()))
            .ok_or_else(|| "a variable port has no variableName".to_string()),
        Some("connection") => Ok(PortValue::Connection {
            node_id: value["nodeId"].as_str().unwrap_or_default().to_string(),
            output_key: value["outputKey"].as_str().unwrap_or_default().to_string(),
        }),
        _ => Err("unsupported port value (static, variable and connection are)".to_string()),
    }
}

fn has_type(value: &Value, value_type: &str) -> bool {
    match value_type {
        "string" => value.is_string(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        _ => true,
    }
}

/// Kahn's algorithm; among ready nodes the one defined first runs first.
fn execution_order(
    nodes: Vec<NodeDef>,
    edges: &[(String, String)],
) -> Result<Vec<NodeDef>, String> {
    let index = |id: &str| nodes.iter().position(|n| n.id == id);
    let mut indegree = vec![0usize; nodes.len()];
    for (source, target) in edges {
        let (Some(_), Some(t)) = (index(source), index(target)) else {
            return Err(format!("edge {source} -> {target} names an unknown node"));
        };
        indegree[t] += 1;
    }
    let mut order = Vec::with_capacity(nodes.len());
    let mut done = vec![false; nodes.len()];
    while order.len() < nodes.len() {
        let next = (0..nodes.len())
            .find(|&i| !done[i] && indegree[i] == 0)
            .ok_or_else(|| "the edges form a cycle".to_string())?;
        done[next] = true;
        order.push(next);
        for (source, target) in edges {
            if *source == nodes[next].id
                && let Some(t) = index(target)
            {
                indegree[t] -= 1;
            }
        }
    }
    let mut slots: Vec<Option<NodeDef>> = nodes.into_iter().map(Some).collect();
    Ok(order.into_iter().filter_map(|i| slots[i].take()).collect())
}

/// The seeded workflows, by id.
#[derive(Debug, Default)]
pub(crate) struct Workflows {
    by_id: BTreeMap<String, Workflow>,
}

impl Workflows {
    /// Seeds the fixtures of `spec::fixtures` (those `only` names, or every one), the envelope
    /// fixtures' mock nodes named as `edition` names them; a definition the engine cannot run
    /// is logged and left out (and so not advertised).
    pub(crate) fn seed_fixtures(only: Option<&[String]>, edition: NodeIdEdition) -> Self {
        let mut by_id = BTreeMap::new();
        for fixture in spec::fixtures::all()
            .iter()
            .filter(|f| only.is_none_or(|ids| ids.iter().any(|id| id == f.id)))
        {
            match Workflow::from_definition(&mock_nodes::definition_in(fixture, edition)) {
                Ok(workflow) => {
                    by_id.insert(workflow.id.clone(), workflow);
                }
                Err(error) => tracing::error!(%error, "fixture not seeded"),
            }
        }
        Workflows { by_id }
    }

    /// A workflow by id.
    pub(crate) fn get(&self, id: &str) -> Option<&Workflow> {
        self.by_id.get(id)
    }

    /// The seeded ids, sorted.
    pub(crate) fn ids(&self) -> Vec<String> {
        self.by_id.keys().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fixture_is_seeded() {
        let workflows = Workflows::seed_fixtures(None, NodeIdEdition::Shared);
        assert_eq!(workflows.ids().len(), spec::fixtures::all().len());
        let multi = workflows.get("conformance-multi-node").unwrap();
        let order: Vec<&str> = multi.nodes.iter().map(|n| n.id.as_str()).collect();
        assert_eq!(order, ["a", "b", "c"]);
    }

    #[test]
    fn delay_inputs_are_checked_at_creation() {
        let workflows = Workflows::seed_fixtures(None, NodeIdEdition::Shared);
        let delay = workflows.get("conformance-delay").unwrap();
        let ok = delay.resolve_variables(&Map::new()).unwrap();
        assert_eq!(ok["delayMs"], 1000);
        for bad in [
            serde_json::json!(60_001),
            serde_json::json!(-1),
            serde_json::json!(1.5),
            serde_json::json!("10"),
        ] {
            let mut inputs = Map::new();
            inputs.insert("delayMs".into(), bad.clone());
            assert!(delay.resolve_variables(&inputs).is_err(), "{bad}");
        }
    }

    #[test]
    fn edges_order_nodes_and_cycles_are_refused() {
        let definition = serde_json::json!({
            "id": "w", "nodes": [
                {"id": "b", "typeId": "core.noop"}, {"id": "a", "typeId": "core.noop"}],
            "edges": [{"sourceNodeId": "a", "targetNodeId": "b"}]
        });
        let w = Workflow::from_definition(&definition).unwrap();
        assert_eq!(w.nodes[0].id, "a");
        let cyclic = serde_json::json!({
            "id": "w", "nodes": [
                {"id": "b", "typeId": "core.noop"}, {"id": "a", "typeId": "core.noop"}],
            "edges": [{"sourceNodeId": "a", "targetNodeId": "b"}, {"sourceNodeId": "b", "targetNodeId": "a"}]
        });
        assert!(Workflow::from_definition(&cyclic).is_err());
    }
}
