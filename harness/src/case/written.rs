//! What an author writes into a step's action or a check where `${…}` expressions may be:
//! every string and JSON value, visited on the typed case model (lint checks each expression's
//! syntax and references, [`expressions`]).
//!
//! A step visits its own fields and its action, not its checks (each is visited on its own)
//! nor the steps it holds (`parallel`, `repeat`, `generate`: each is a step of its own; a
//! `repeat`'s bounds are checked apart, a `generate`'s strategy and variable hold no
//! expression). A check visits everything it holds, the checks of `each` and
//! `each_with_status` included. Closed vocabularies (methods, principals, levels, JSON types,
//! schema names, …) hold no expression and are not visited.

use serde_json::Value;

use super::model::{
    Check, CheckKind, ConcurrentCopy, JsonExpect, Premise, RequestSpec, Step, StepAction,
    StreamSpec,
};

/// One value an author wrote.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Written<'a> {
    /// A string.
    Text(&'a str),
    /// A JSON value (a body, a `defs`-like literal, an integer-or-expression).
    Json(&'a Value),
}

/// A part of a case whose written values can be visited.
pub(crate) trait WrittenValues {
    /// Calls `visit` with every string and JSON value of `self` (see the module documentation
    /// for what a step and a check hold).
    fn visit_written<'a>(&'a self, visit: &mut dyn FnMut(Written<'a>));
}

/// Every `${…}` expression written in `part`, in the order of its fields.
pub(crate) fn expressions(part: &dyn WrittenValues) -> Vec<String> {
    let mut out = Vec::new();
    part.visit_written(&mut |written| match written {
        Written::Text(text) => crate::template::expressions_in_text(text, &mut out),
        Written::Json(value) => crate::template::expressions_in(value, &mut out),
    });
    out
}

fn texts<'a>(items: impl IntoIterator<Item = &'a String>, visit: &mut dyn FnMut(Written<'a>)) {
    items.into_iter().for_each(|s| visit(Written::Text(s)));
}

fn jsons<'a>(items: impl IntoIterator<Item = &'a Value>, visit: &mut dyn FnMut(Written<'a>)) {
    items.into_iter().for_each(|v| visit(Written::Json(v)));
}

impl WrittenValues for Step {
    fn visit_written<'a>(&'a self, visit: &mut dyn FnMut(Written<'a>)) {
        texts(&self.id, visit);
        texts(&self.note, visit);
        texts(&self.precondition, visit);
        for evidence in &self.evidence {
            texts([&evidence.script, &evidence.role], visit);
        }
        match &self.action {
            StepAction::Request(request) => request.visit_written(visit),
            StepAction::Stream(stream) => stream.visit_written(visit),
            StepAction::PollUntil(poll) => {
                poll.request.visit_written(visit);
                poll.until.visit_written(visit);
            }
            StepAction::WaitTerminal(wait) => visit(Written::Text(&wait.id)),
            StepAction::Concurrent(concurrent) => {
                visit(Written::Json(&concurrent.count));
                match &concurrent.copy {
                    ConcurrentCopy::Request(request) => request.visit_written(visit),
                    ConcurrentCopy::Stream(stream) => stream.visit_written(visit),
                }
            }
            StepAction::Parallel(_) | StepAction::Repeat(_) | StepAction::Generate(_) => {}
        }
    }
}

impl WrittenValues for RequestSpec {
    fn visit_written<'a>(&'a self, visit: &mut dyn FnMut(Written<'a>)) {
        texts([&self.method, &self.path], visit);
        texts(self.query.values(), visit);
        texts(self.headers.values(), visit);
        jsons(&self.json, visit);
        texts(&self.body, visit);
    }
}

impl WrittenValues for StreamSpec {
    fn visit_written<'a>(&'a self, visit: &mut dyn FnMut(Written<'a>)) {
        visit(Written::Text(&self.path));
        texts(self.query.values(), visit);
        texts(self.headers.values(), visit);
        if let Some(until) = &self.until {
            texts(&until.event, visit);
            jsons(&until.duration_ms, visit);
        }
    }
}

impl WrittenValues for JsonExpect {
    fn visit_written<'a>(&'a self, visit: &mut dyn FnMut(Written<'a>)) {
        visit(Written::Text(&self.pointer));
        jsons(&self.equals, visit);
        jsons(&self.not_equals, visit);
        jsons(self.one_of.iter().flatten(), visit);
        jsons(&self.min, visit);
        jsons(&self.max, visit);
        jsons(&self.min_length, visit);
        jsons(&self.max_length, visit);
        texts(&self.matches, visit);
        jsons(&self.contains, visit);
        texts(self.keys.iter().flatten(), visit);
        texts(self.text_absent.iter().flatten(), visit);
        texts(self.text_present.iter().flatten(), visit);
    }
}

impl WrittenValues for Premise {
    fn visit_written<'a>(&'a self, visit: &mut dyn FnMut(Written<'a>)) {
        match self {
            Premise::OfStep(premise) => {
                visit(Written::Text(&premise.step));
                premise.json.visit_written(visit);
            }
            Premise::Body(expect) => expect.visit_written(visit),
            Premise::Occurs(occurs) => visit(Written::Text(&occurs.occurs)),
            Premise::All(all) => {
                for premise in &all.all {
                    premise.visit_written(visit);
                }
            }
        }
    }
}

impl WrittenValues for Check {
    fn visit_written<'a>(&'a self, visit: &mut dyn FnMut(Written<'a>)) {
        texts(self.requirements.iter().flatten(), visit);
        texts(&self.note, visit);
        if let Some(premise) = &self.when {
            premise.visit_written(visit);
        }
        self.kind.visit_written(visit);
    }
}

impl WrittenValues for CheckKind {
    fn visit_written<'a>(&'a self, visit: &mut dyn FnMut(Written<'a>)) {
        match self {
            CheckKind::Header(header) => {
                visit(Written::Text(&header.name));
                texts(&header.equals, visit);
                texts(&header.matches, visit);
            }
            CheckKind::Json(expect) => expect.visit_written(visit),
            CheckKind::Error(error) => {
                texts(&error.code, visit);
                texts(error.code_in.iter().flatten(), visit);
            }
            CheckKind::ExclusiveAfter(expect) => {
                visit(Written::Json(&expect.cursor));
                visit(Written::Text(&expect.full));
            }
            CheckKind::LastSequence(expect) => {
                jsons(&expect.cursor, visit);
                jsons(&expect.at_least, visit);
            }
            CheckKind::Terminal(expect) => texts(expect.type_in.iter().flatten(), visit),
            CheckKind::Order(expect) => {
                texts(&expect.first, visit);
                texts(expect.before.iter().flatten(), visit);
                texts(&expect.per, visit);
                texts(expect.subsequence.iter().flatten(), visit);
            }
            CheckKind::Frames(expect) => {
                jsons(&expect.count, visit);
                texts(expect.event_in.iter().flatten(), visit);
                texts(&expect.first_event, visit);
                texts(expect.event_names_admitting_mode.iter().flatten(), visit);
            }
            CheckKind::ProviderCalls(expect) => {
                visit(Written::Text(&expect.script));
                texts(&expect.role, visit);
            }
            CheckKind::Same(values) | CheckKind::Distinct(values) => jsons(values, visit),
            CheckKind::FoldEquals(value) => visit(Written::Json(value)),
            CheckKind::EventsInclude(types)
            | CheckKind::EventsExclude(types)
            | CheckKind::TextAbsent(types) => texts(types, visit),
            CheckKind::EveryEvent(expect) => {
                texts(&expect.event_type, visit);
                if let Some(filter) = &expect.filter {
                    filter.visit_written(visit);
                }
                expect.json.visit_written(visit);
            }
            CheckKind::EventsEqual(step) => visit(Written::Text(step)),
            CheckKind::Each(checks) => checks.iter().for_each(|c| c.visit_written(visit)),
            CheckKind::Responses(expect) => {
                jsons(expect.status_counts.iter().flat_map(|m| m.values()), visit);
                texts(&expect.same_at, visit);
            }
            CheckKind::EachWithStatus(selected) => {
                selected.expect.iter().for_each(|c| c.visit_written(visit));
            }
            CheckKind::EventGaps(expect) => {
                visit(Written::Text(&expect.event_type));
                visit(Written::Json(&expect.min_ms));
            }
            CheckKind::ListedTypesObserved(expect) => {
                visit(Written::Text(&expect.pointer));
                texts(&expect.steps, visit);
            }
            CheckKind::Status(_)
            | CheckKind::StatusIn(_)
            | CheckKind::Schema(_)
            | CheckKind::EventsValid(_)
            | CheckKind::Sequence(_)
            | CheckKind::ClosedByServer(_)
            | CheckKind::Keepalive(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn step(value: Value) -> Step {
        serde_json::from_value(value).expect("a step")
    }

    /// What lint read before the typed walk: every string of the serialised part.
    fn serialised_expressions(value: &Value) -> Vec<String> {
        let mut out = Vec::new();
        crate::template::expressions_in(value, &mut out);
        out.sort();
        out
    }

    #[test]
    fn a_step_yields_the_expressions_of_its_action_not_of_its_checks_or_inner_steps() {
        let request = step(json!({
            "id": "create", "note": "n ${var.note}",
            "request": {"method": "POST", "path": "/runs/${steps.a.body.runId|path}",
                "query": {"after": "${var.n}"}, "headers": {"Idempotency-Key": "${uuid.k}"},
                "json": {"nested": ["${defs.body}"], "n": 1}},
            "expect": [{"json": {"pointer": "/x", "equals": "${steps.create.body.y}"}}]
        }));
        let mut found = expressions(&request);
        found.sort();
        assert_eq!(
            found,
            [
                "defs.body",
                "steps.a.body.runId|path",
                "uuid.k",
                "var.n",
                "var.note"
            ]
        );
        let parallel = step(json!({"parallel": [{"request": {"path": "/${var.inner}"}}]}));
        assert!(expressions(&parallel).is_empty());
    }

    #[test]
    fn a_check_yields_every_expression_it_holds_as_its_serialised_form_does() {
        let checks = [
            json!({"each": [{"json": {"pointer": "/a", "in": ["${defs.a}"]}}],
                "when": {"step": "s", "json": {"pointer": "/p", "equals": "${defs.w}"}}}),
            json!({"responses": {"status_counts": {"202": "${target.limit}"}}}),
            json!({"exclusive_after": {"cursor": "${steps.s.count}", "full": "full"}}),
            json!({"event_gaps": {"type": "t", "min_ms": "${target.gap * 0.8}"}}),
            json!({"order": {"subsequence": ["a@nodeId=${steps.d.events[type=x].payload.nodeId}"]}}),
            json!({"every_event": {"type": "t", "where": {"pointer": "/a", "equals": "${defs.f}"},
                "json": {"pointer": "/b", "not_equals": "${defs.g}"}}}),
            json!({"same": ["${steps.a.body.id}", "${steps.b.body.id}"], "note": "${defs.n}"}),
        ];
        for value in checks {
            let check: Check = serde_json::from_value(value.clone()).expect("a check");
            let mut found = expressions(&check);
            found.sort();
            assert!(!found.is_empty(), "{value}");
            assert_eq!(found, serialised_expressions(&value), "{value}");
        }
    }
}
