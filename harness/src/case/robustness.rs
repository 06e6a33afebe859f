//! Case robustness, enforced rather than reviewed: a case never names an identifier the host
//! chooses (a node id of `spec/fixtures/`, in a request or in an event selector), a case
//! programming a global seam declares it (`exclusive`), and a case's budget covers its waits.
//!
//! The node-id rule works on a case's JSON document (what the author wrote, also when it does
//! not decode), so it holds whatever shape the case model gives steps; the budget rule works on
//! the typed steps, which the engine reads the same way at run time.
//!
//! Budget rule: a case's `timeout_ms` (default [`super::model::DEFAULT_CASE_TIMEOUT_MS`]) is its
//! own time. Stream windows it declares as numbers must fit in it (lint rejects a case whose
//! literal waits exceed it, [`budget_problem`]); windows it takes from facts
//! (`"${target.keepalive_window_ms}"`) are the host's, and extend the budget at run time by
//! their value for this target ([`fact_waits_ms`]). Waits add up along the steps; the branches
//! of a `parallel` step wait at once (the longest counts); a `repeat` with literal bounds waits
//! once per iteration.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use serde_json::Value;

use super::model::{Case, Step, StepAction};
use super::shared_seam::SharedSeam;
use crate::template::Scope;

/// The path of upstream's mock-AI program seam (seams-v2), whose body names a fixture's node.
const MOCK_AI_PROGRAM_SEAM: &str = "/conformance/seams/sample/test/mock-ai/program";

/// Upstream's heartbeat tick seam.
const HEARTBEAT_TICK_SEAM: &str = "/conformance/seams/sample/heartbeat/tick";

/// Every node id the fixture workflows of `spec/fixtures/` use, in every edition of upstream's
/// catalogue ([`spec::fixtures::mock_nodes`]): a host seeding a fixture may name its nodes
/// otherwise, so a case must read them from what the host sent.
pub fn fixture_node_ids() -> &'static BTreeSet<String> {
    static IDS: LazyLock<BTreeSet<String>> = LazyLock::new(|| {
        let mut ids = BTreeSet::new();
        for fixture in spec::fixtures::all() {
            collect_node_ids(&fixture.definition, &mut ids);
        }
        ids.extend(
            spec::fixtures::mock_nodes::PER_FIXTURE_NODES
                .iter()
                .map(|n| n.node_id.to_string()),
        );
        ids
    });
    &IDS
}

fn collect_node_ids(value: &Value, ids: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            for (key, member) in map {
                if key == "nodes"
                    && let Some(nodes) = member.as_array()
                {
                    ids.extend(
                        nodes
                            .iter()
                            .filter_map(|n| n.get("id").and_then(Value::as_str))
                            .map(String::from),
                    );
                }
                collect_node_ids(member, ids);
            }
        }
        Value::Array(items) => items.iter().for_each(|i| collect_node_ids(i, ids)),
        _ => {}
    }
}

/// Reports, at its JSON pointer, every fixture node id a case document names: in a request path
/// segment, in a body member whose name says it holds a node (`nodeId`, `node`, …), or in an
/// event selector.
pub fn lint(case: &Value, report: &mut dyn FnMut(&str, String)) {
    let steps = case.get("steps").and_then(Value::as_array);
    let mut requests = Vec::new();
    collect_requests(
        steps.map(Vec::as_slice).unwrap_or(&[]),
        "/steps",
        &mut requests,
    );
    let ids = fixture_node_ids();
    for (pointer, request) in &requests {
        if let Some(path) = request.get("path").and_then(Value::as_str) {
            let path = path.split(['?', '#']).next().unwrap_or_default();
            for segment in path.split('/').filter(|s| ids.contains(*s)) {
                report(
                    &format!("{pointer}/path"),
                    format!(
                        "the path names `{segment}`, a node id of spec/fixtures/: node ids are the host's choice; read it from what the host sent (e.g. `${{steps.<id>.events[type=node.suspended].payload.nodeId|segment}}`)"
                    ),
                );
            }
        }
        // Upstream's mock-AI program seam is keyed by the fixture's node id before the run
        // exists: upstream's catalogues name it differently (`structured-call` at the commit
        // spec/fixtures transcribes, one id per fixture later), so a case reads it from the
        // definition the host serves, as everywhere else; so does a query naming a node
        // (`last-dispatch-budget?nodeId=`).
        for member in ["json", "body", "query"] {
            if let Some(body) = request.get(member) {
                node_ids_in_body(body, &format!("{pointer}/{member}"), ids, report);
            }
        }
    }
    for (seam, path, what) in [
        (
            SharedSeam::MockAiProgram,
            MOCK_AI_PROGRAM_SEAM,
            "upstream's mock-AI program seam, global state keyed by node id",
        ),
        (
            SharedSeam::HeartbeatTick,
            HEARTBEAT_TICK_SEAM,
            "upstream's heartbeat tick seam, whose evaluations may show on the host channel",
        ),
    ] {
        let drives_the_seam = requests.iter().any(|(_, request)| {
            request
                .get("path")
                .and_then(Value::as_str)
                .is_some_and(|p| p.starts_with(path))
        });
        let declared = case
            .get("exclusive")
            .and_then(Value::as_array)
            .is_some_and(|seams| seams.iter().any(|s| s == seam.name()));
        if drives_the_seam && !declared {
            report(
                "/exclusive",
                format!(
                    "the case drives {what} ({path}): declare `\"exclusive\": [\"{}\"]` so cases on it run one at a time",
                    seam.name()
                ),
            );
        }
    }
    node_ids_in_selectors(case, "", ids, report);
}

/// The budget rule's problem with a case (reported at `/timeout_ms`): its literal waits exceed
/// its budget.
pub fn budget_problem(case: &Case) -> Option<String> {
    let budget = case
        .timeout_ms
        .unwrap_or(super::model::DEFAULT_CASE_TIMEOUT_MS);
    let waits = literal_waits_ms(&case.steps);
    (waits > budget).then(|| {
        format!(
            "the case's declared waits ({waits} ms of stream windows) exceed its budget ({budget} ms): raise timeout_ms or shorten the windows"
        )
    })
}

fn node_ids_in_body(
    value: &Value,
    pointer: &str,
    ids: &BTreeSet<String>,
    report: &mut dyn FnMut(&str, String),
) {
    match value {
        Value::Object(map) => {
            for (key, member) in map {
                let at = format!("{pointer}/{key}");
                let names_a_node = key.to_ascii_lowercase().contains("node");
                match member.as_str() {
                    Some(text) if names_a_node && ids.contains(text) => report(
                        &at,
                        format!(
                            "`{key}` is `{text}`, a node id of spec/fixtures/: node ids are the host's choice; read it from what the host sent"
                        ),
                    ),
                    _ => node_ids_in_body(member, &at, ids, report),
                }
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                node_ids_in_body(item, &format!("{pointer}/{i}"), ids, report);
            }
        }
        _ => {}
    }
}

/// Reports every event selector of an `order` check (`type@field=value` in `subsequence` and
/// `before`) whose condition names a fixture node id in a member that holds a node (`nodeId`,
/// …): the host names its nodes, so the selector must be id-independent or read the id from
/// what the host sent (`node.completed@nodeId=${steps.<id>.events[type=node.started].payload.nodeId}`).
fn node_ids_in_selectors(
    value: &Value,
    pointer: &str,
    ids: &BTreeSet<String>,
    report: &mut dyn FnMut(&str, String),
) {
    match value {
        Value::Object(map) => {
            for (key, member) in map {
                let at = format!("{pointer}/{key}");
                if key == "order"
                    && let Some(order) = member.as_object()
                {
                    for list in ["subsequence", "before"] {
                        let Some(selectors) = order.get(list).and_then(Value::as_array) else {
                            continue;
                        };
                        for (i, selector) in selectors.iter().enumerate() {
                            let Some((field, id)) = selector
                                .as_str()
                                .and_then(|s| s.split_once('@'))
                                .and_then(|(_, condition)| condition.split_once('='))
                            else {
                                continue;
                            };
                            if field.to_ascii_lowercase().contains("node") && ids.contains(id) {
                                report(
                                    &format!("{at}/{list}/{i}"),
                                    format!(
                                        "the selector `{}` names `{id}`, a node id of spec/fixtures/: node ids are the host's choice; select by type and order, or read the id from what the host sent",
                                        selector.as_str().unwrap_or_default()
                                    ),
                                );
                            }
                        }
                    }
                }
                node_ids_in_selectors(member, &at, ids, report);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                node_ids_in_selectors(item, &format!("{pointer}/{i}"), ids, report);
            }
        }
        _ => {}
    }
}

/// Every request object of the steps (`request`, `stream`, and the `request` of `poll_until`
/// and `concurrent`), with its pointer, through `parallel`, `repeat` and `generate`.
fn collect_requests<'a>(steps: &'a [Value], base: &str, out: &mut Vec<(String, &'a Value)>) {
    for (i, step) in steps.iter().enumerate() {
        let at = format!("{base}/{i}");
        for member in ["request", "stream"] {
            if let Some(request) = step.get(member) {
                out.push((format!("{at}/{member}"), request));
            }
        }
        for member in ["poll_until", "concurrent"] {
            if let Some(request) = step.get(member).and_then(|m| m.get("request")) {
                out.push((format!("{at}/{member}/request"), request));
            }
        }
        if let Some(inner) = step.get("parallel").and_then(Value::as_array) {
            collect_requests(inner, &format!("{at}/parallel"), out);
        }
        for member in ["repeat", "generate"] {
            if let Some(inner) = step
                .get(member)
                .and_then(|m| m.get("steps"))
                .and_then(Value::as_array)
            {
                collect_requests(inner, &format!("{at}/{member}/steps"), out);
            }
        }
    }
}

/// The waits a case's steps declare as numbers (stream `until.duration_ms`), in milliseconds
/// before `--time-scale`.
pub fn literal_waits_ms(steps: &[Step]) -> u64 {
    waits(steps, &|value| value.as_u64())
}

/// The waits a case's steps take from facts (stream `until.duration_ms` written as an
/// expression on `${target.…}`), expanded in `scope`, in milliseconds before `--time-scale`:
/// what the case's budget is extended by. A wait whose expression cannot be expanded counts as
/// zero (the step itself reports why).
pub fn fact_waits_ms(steps: &[Step], scope: &Scope) -> u64 {
    waits(steps, &|value| {
        let text = value.as_str()?;
        if !text.contains("${target.") {
            return None;
        }
        let expanded = scope.expand_str(text).ok()?;
        expanded
            .as_u64()
            .or_else(|| expanded.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64))
    })
}

/// The waits of steps run one after another, counting the windows `window` recognises.
fn waits(steps: &[Step], window: &dyn Fn(&Value) -> Option<u64>) -> u64 {
    steps.iter().map(|step| step_waits(step, window)).sum()
}

fn step_waits(step: &Step, window: &dyn Fn(&Value) -> Option<u64>) -> u64 {
    match &step.action {
        StepAction::Stream(stream) => stream
            .until
            .as_ref()
            .and_then(|until| until.duration_ms.as_ref())
            .and_then(window)
            .unwrap_or(0),
        StepAction::Parallel(branches) => branches
            .iter()
            .map(|b| step_waits(b, window))
            .max()
            .unwrap_or(0),
        StepAction::Repeat(repeat) => {
            let count = match (repeat.from.as_i64(), repeat.to.as_i64()) {
                (Some(from), Some(to)) if to >= from => (to - from + 1) as u64,
                _ => 1,
            };
            waits(&repeat.steps, window) * count
        }
        StepAction::Generate(generate) => waits(&generate.steps, window),
        StepAction::Request(_)
        | StepAction::PollUntil(_)
        | StepAction::WaitTerminal(_)
        | StepAction::Concurrent(_) => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn problems(case: Value) -> Vec<(String, String)> {
        let mut out = Vec::new();
        lint(&case, &mut |pointer, message| {
            out.push((pointer.to_string(), message))
        });
        out
    }

    #[test]
    fn fixture_node_ids_come_from_the_fixtures() {
        let ids = fixture_node_ids();
        assert!(ids.contains("approve"));
        assert!(ids.contains("noop"));
        assert!(!ids.contains("conformance-noop"), "workflow ids are ours");
    }

    #[test]
    fn a_fixture_node_id_in_a_path_or_a_node_member_is_rejected() {
        let found = problems(json!({"steps": [
            {"request": {"path": "/runs/${steps.create.body.runId|path}/interrupts/approve"}},
            {"parallel": [{"request": {"method": "POST", "path": "/runs/x/annotations",
                "json": {"target": {"nodeId": "noop"}, "envelope": {"type": "answer"}}}}]}
        ]}));
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0].0, "/steps/0/request/path");
        assert!(
            found[0]
                .1
                .contains("`approve`, a node id of spec/fixtures/")
        );
        assert_eq!(found[1].0, "/steps/1/parallel/0/request/json/target/nodeId");
        assert!(
            problems(json!({"steps": [{"request": {"path":
                "/runs/x/interrupts/${steps.s.events[type=node.suspended].payload.nodeId|segment}"}}]}))
            .is_empty()
        );
        // Upstream's mock-AI program seam is keyed by its fixture's node id, which upstream's
        // catalogues name differently: a literal one is rejected there too (body and query), an
        // id read from the host's definition is not.
        let literal = problems(json!({"exclusive": ["mock-ai-program"], "steps": [
            {"request": {"method": "POST", "path": MOCK_AI_PROGRAM_SEAM,
                "json": {"nodeId": "structured-call", "program": []}}},
            {"request": {"path": "/conformance/seams/sample/test/mock-ai/last-dispatch-budget",
                "query": {"nodeId": "retry-attempted-structured-call"}}}
        ]}));
        assert_eq!(literal.len(), 2, "{literal:?}");
        assert_eq!(literal[0].0, "/steps/0/request/json/nodeId");
        assert_eq!(literal[1].0, "/steps/1/request/query/nodeId");
        let program = json!({"nodeId": "${steps.definition.body.nodes[typeId=core.ai.structuredOutput].id|or:structured-call}", "program": []});
        assert!(
            problems(
                json!({"exclusive": ["mock-ai-program"], "steps": [{"request": {"method": "POST",
                "path": MOCK_AI_PROGRAM_SEAM, "json": program}}]})
            )
            .is_empty()
        );
        // ... and, global state, it must be declared so such cases run one at a time.
        let undeclared = problems(json!({"steps": [{"request": {"method": "POST",
            "path": MOCK_AI_PROGRAM_SEAM, "json": program}}]}));
        assert_eq!(undeclared.len(), 1, "{undeclared:?}");
        assert_eq!(undeclared[0].0, "/exclusive");
        // So must upstream's heartbeat tick seam, whose ticks may show on the host channel.
        let tick =
            json!({"method": "POST", "path": HEARTBEAT_TICK_SEAM, "json": {"heartbeatId": "h"}});
        let undeclared = problems(json!({"steps": [{"request": tick.clone()}]}));
        assert_eq!(undeclared.len(), 1, "{undeclared:?}");
        assert!(undeclared[0].1.contains("heartbeat-tick"), "{undeclared:?}");
        assert!(
            problems(json!({"exclusive": ["heartbeat-tick"], "steps": [{"request": tick}]}))
                .is_empty()
        );
        assert_eq!(
            problems(json!({"steps": [{"request": {"method": "POST",
                "path": "/runs", "json": {"nodeId": "structured-call"}}}]}))
            .len(),
            1
        );
    }

    #[test]
    fn a_fixture_node_id_in_a_selector_is_rejected() {
        let found = problems(json!({"steps": [{"stream": {"path": "/e"}, "expect": [
            {"order": {"subsequence": ["node.completed@nodeId=a", "node.completed", "run.completed"]}},
            {"order": {"before": ["node.started@nodeId=noop", "node.completed"], "per": "nodeId"}}
        ]}]}));
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0].0, "/steps/0/expect/0/order/subsequence/0");
        assert!(found[0].1.contains("`node.completed@nodeId=a` names `a`"));
        assert_eq!(found[1].0, "/steps/0/expect/1/order/before/0");
        assert!(
            problems(json!({"steps": [{"expect": [{"order": {"subsequence": [
                "node.completed@nodeId=${steps.d.events[type=node.started].payload.nodeId}",
                "heartbeat.evaluated@changed=true"
            ]}}]}]}))
            .is_empty()
        );
    }

    #[test]
    fn literal_waits_must_fit_the_budget_and_fact_waits_extend_it() {
        let case: Case = serde_json::from_value(json!({
            "id": "w.budget", "title": "t", "requirements": ["events.sse.keep-alive-30s"],
            "level": "MUST", "surface": "openwop", "timeout_ms": 3000, "steps": [
            {"stream": {"path": "/s1", "until": {"duration_ms": 2000}}},
            {"parallel": [
                {"stream": {"path": "/s2", "until": {"duration_ms": 1500}}},
                {"stream": {"path": "/s3", "until": {"duration_ms": "${target.keepalive_window_ms}"}}}
            ]},
            {"repeat": {"var": "n", "from": 1, "to": 2, "steps": [
                {"stream": {"path": "/s4", "until": {"duration_ms": 100}}}
            ]}}
        ]}))
        .unwrap();
        assert_eq!(literal_waits_ms(&case.steps), 3700);
        let problem = budget_problem(&case).expect("3700 ms of waits exceed 3000 ms");
        assert!(problem.contains("exceed its budget"), "{problem}");
        let mut scope = Scope::default();
        scope
            .target
            .insert("keepalive_window_ms".into(), json!(31_000));
        assert_eq!(fact_waits_ms(&case.steps, &scope), 31_000);
        assert_eq!(
            fact_waits_ms(&case.steps, &Scope::default()),
            0,
            "a fact the target lacks extends nothing"
        );
        let roomy = Case {
            timeout_ms: Some(3700),
            ..case
        };
        assert_eq!(budget_problem(&roomy), None);
    }
}
