//! Every check kind, run on small made-up transcripts: one it passes and one it fails (with
//! the verdict the check's level gives). The kinds are enumerated from [`CheckKind::NAMES`], so
//! a kind without its pair fails [`every_kind_has_a_passing_and_a_failing_transcript`]: no
//! check can be added that has not been shown able to fail.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::{EvalContext, evaluate};
use crate::case::{CaseSurface, Check, CheckKind};
use crate::template::Scope;
use crate::transcript::{
    BodyEnd, Exchange, FrameKind, FrameRecord, Header, ProviderCallCount, RequestRecord,
    ResponseRecord, StepRecord,
};
use crate::verdict::{CheckOutcome, Level, Verdict};

// ---- made-up transcripts ----------------------------------------------------------------

/// What a check is judged against: the step, earlier steps by id, and expansion values.
#[derive(Clone, Default)]
struct Transcript {
    step: Option<StepRecord>,
    others: BTreeMap<String, StepRecord>,
    scope: Scope,
}

impl Transcript {
    fn of(responses: Vec<ResponseRecord>) -> Self {
        Transcript {
            step: Some(step(responses)),
            ..Transcript::default()
        }
    }

    fn with_step(mut self, id: &str, responses: Vec<ResponseRecord>) -> Self {
        self.others.insert(id.to_string(), step(responses));
        self
    }

    fn with_def(mut self, name: &str, value: Value) -> Self {
        self.scope.defs.insert(name.to_string(), value);
        self
    }

    fn with_provider_calls(mut self, script: &str, count: u32) -> Self {
        if let Some(step) = &mut self.step {
            step.provider_calls.push(ProviderCallCount {
                script: script.to_string(),
                instance: "openai-primary".into(),
                role: Some("text-primary".into()),
                count,
            });
        }
        self
    }
}

fn step(responses: Vec<ResponseRecord>) -> StepRecord {
    StepRecord {
        not_taken: None,
        step: "s".into(),
        location: "/steps/0".into(),
        action: "request".into(),
        exchanges: responses
            .into_iter()
            .map(|response| Exchange {
                request: RequestRecord {
                    method: "GET".into(),
                    url: "http://host.invalid/path".into(),
                    headers: Vec::new(),
                    body: None,
                },
                response: Some(response),
                transport_error: None,
                sent_at_ms: 0,
            })
            .collect(),
        bindings: Vec::new(),
        completed: true,
        provider_calls: Vec::new(),
        exchanges_dropped: 0,
        refusals_waited_out: 0,
    }
}

/// A whole JSON response.
fn json_response(status: u16, body: Value) -> ResponseRecord {
    let text = body.to_string();
    ResponseRecord {
        status,
        headers: vec![Header {
            name: "content-type".into(),
            value: "application/json".into(),
        }],
        headers_at_ms: 5,
        body_bytes: text.len() as u64,
        body: text,
        body_utf8: true,
        json: Some(body),
        frames: Vec::new(),
        trailing_partial_frame: None,
        end: BodyEnd::ServerClosed,
        end_at_ms: 10,
        excerpt: None,
        folded: None,
        run_end: None,
    }
}

/// A JSON response with one header replaced.
fn with_header(mut response: ResponseRecord, name: &str, value: &str) -> ResponseRecord {
    response.headers.retain(|h| h.name != name);
    response.headers.push(Header {
        name: name.into(),
        value: value.into(),
    });
    response
}

/// An SSE response that the server closed at `end_at_ms`.
fn sse(frames: Vec<FrameRecord>, end_at_ms: u64) -> ResponseRecord {
    ResponseRecord {
        status: 200,
        headers: vec![Header {
            name: "content-type".into(),
            value: "text/event-stream".into(),
        }],
        headers_at_ms: 5,
        body: String::new(),
        body_bytes: 0,
        body_utf8: true,
        json: None,
        frames,
        trailing_partial_frame: None,
        end: BodyEnd::ServerClosed,
        end_at_ms,
        excerpt: None,
        folded: None,
        run_end: None,
    }
}

/// An event frame whose `id:` is the document's sequence and `event:` its type.
fn frame(at_ms: u64, doc: Value) -> FrameRecord {
    FrameRecord {
        at_ms,
        kind: FrameKind::Event {
            id: doc["sequence"].as_u64().map(|s| s.to_string()),
            event: doc["type"].as_str().map(str::to_string),
            data: doc.to_string(),
            json: Some(doc),
            retry: None,
        },
    }
}

fn comment(at_ms: u64) -> FrameRecord {
    FrameRecord {
        at_ms,
        kind: FrameKind::Comment {
            text: "keep-alive".into(),
        },
    }
}

/// An execution event (surface X) with the envelope fields and those of its type.
fn x_event(sequence: u64, event_type: &str, fields: Value) -> Value {
    let status = match event_type {
        "execution.accepted" => "accepted",
        "route.selected" | "route.attempt_failed" => "routing",
        "execution.completed" => "succeeded",
        "execution.failed" => "failed",
        _ => "running",
    };
    let mut doc = json!({
        "execution_id": "0b7e7a4e-0000-4000-8000-000000000001",
        "sequence": sequence,
        "time": "2026-01-01T00:00:00Z",
        "type": event_type,
        "status": status,
    });
    if let (Some(doc), Value::Object(fields)) = (doc.as_object_mut(), fields) {
        doc.extend(fields);
    }
    doc
}

fn accepted(sequence: u64) -> Value {
    x_event(sequence, "execution.accepted", json!({}))
}

fn delta(sequence: u64, text: &str) -> Value {
    x_event(
        sequence,
        "output.delta",
        json!({"delta": text, "output_index": 0}),
    )
}

fn completed(sequence: u64) -> Value {
    x_event(
        sequence,
        "execution.completed",
        json!({"target": {"provider": "openai-primary", "model": "gpt-fake"}}),
    )
}

/// A stream of execution events, one frame each, 10 ms apart.
fn x_stream(events: Vec<Value>) -> ResponseRecord {
    let frames: Vec<FrameRecord> = events
        .into_iter()
        .enumerate()
        .map(|(i, doc)| frame(10 * (i as u64 + 1), doc))
        .collect();
    let end = 10 * (frames.len() as u64 + 1);
    sse(frames, end)
}

fn x_error(code: &str) -> Value {
    json!({"error": {"code": code, "message": "made up", "retryable": false}})
}

// ---- the examples ------------------------------------------------------------------------

/// One check, a transcript it passes and a transcript it fails.
struct Example {
    check: Value,
    surface: CaseSurface,
    passes: Transcript,
    fails: Transcript,
}

fn example(check: Value, passes: Transcript, fails: Transcript) -> Example {
    Example {
        check,
        surface: CaseSurface::Execution,
        passes,
        fails,
    }
}

/// One example per check kind.
fn examples() -> Vec<Example> {
    let ok = |status: u16| json_response(status, json!({}));
    vec![
        example(
            json!({"status": 200}),
            Transcript::of(vec![ok(200)]),
            Transcript::of(vec![ok(500)]),
        ),
        example(
            json!({"status_in": [200, 202]}),
            Transcript::of(vec![ok(202)]),
            Transcript::of(vec![ok(404)]),
        ),
        example(
            json!({"header": {"name": "Content-Type", "matches": "^application/json"}}),
            Transcript::of(vec![ok(200)]),
            Transcript::of(vec![with_header(ok(200), "content-type", "text/plain")]),
        ),
        example(
            json!({"json": {"pointer": "/state", "equals": "done"}}),
            Transcript::of(vec![json_response(200, json!({"state": "done"}))]),
            Transcript::of(vec![json_response(200, json!({"state": "running"}))]),
        ),
        example(
            json!({"error": {"code": "not_found"}}),
            Transcript::of(vec![json_response(404, x_error("not_found"))]),
            Transcript::of(vec![json_response(404, x_error("invalid_request"))]),
        ),
        example(
            json!({"schema": "execution-error"}),
            Transcript::of(vec![json_response(400, x_error("invalid_request"))]),
            Transcript::of(vec![json_response(400, json!({"message": "bad"}))]),
        ),
        example(
            json!({"events_valid": true}),
            Transcript::of(vec![x_stream(vec![accepted(1), completed(2)])]),
            Transcript::of(vec![x_stream(vec![
                accepted(1),
                json!({"type": "execution.completed"}),
            ])]),
        ),
        example(
            json!({"sequence": {"first": 1, "contiguous": true}}),
            Transcript::of(vec![x_stream(vec![
                accepted(1),
                delta(2, "a"),
                completed(3),
            ])]),
            Transcript::of(vec![x_stream(vec![accepted(1), completed(3)])]),
        ),
        example(
            json!({"exclusive_after": {"cursor": 1, "full": "full"}}),
            Transcript::of(vec![x_stream(vec![delta(2, "a"), completed(3)])]).with_step(
                "full",
                vec![x_stream(vec![accepted(1), delta(2, "a"), completed(3)])],
            ),
            Transcript::of(vec![x_stream(vec![
                accepted(1),
                delta(2, "a"),
                completed(3),
            ])])
            .with_step(
                "full",
                vec![x_stream(vec![accepted(1), delta(2, "a"), completed(3)])],
            ),
        ),
        example(
            json!({"terminal": {"exactly_one_last": true}}),
            Transcript::of(vec![x_stream(vec![accepted(1), completed(2)])]),
            Transcript::of(vec![x_stream(vec![accepted(1), delta(2, "a")])]),
        ),
        example(
            json!({"order": {"before": ["route.selected@attempt=1", "output.delta"]}}),
            Transcript::of(vec![x_stream(vec![
                x_event(1, "route.selected", json!({"attempt": 1})),
                delta(2, "a"),
            ])]),
            Transcript::of(vec![x_stream(vec![
                x_event(1, "route.selected", json!({"attempt": 2})),
                delta(2, "a"),
            ])]),
        ),
        example(
            json!({"closed_by_server": true}),
            Transcript::of(vec![x_stream(vec![accepted(1)])]),
            Transcript::of(vec![ResponseRecord {
                end: BodyEnd::ClientStopped,
                ..x_stream(vec![accepted(1)])
            }]),
        ),
        example(
            json!({"frames": {"min": 2, "ids_numeric": true}}),
            Transcript::of(vec![x_stream(vec![accepted(1), completed(2)])]),
            Transcript::of(vec![sse(
                vec![
                    frame(10, accepted(1)),
                    FrameRecord {
                        at_ms: 20,
                        kind: FrameKind::Event {
                            id: Some("two".into()),
                            event: Some("execution.completed".into()),
                            data: completed(2).to_string(),
                            json: Some(completed(2)),
                            retry: None,
                        },
                    },
                ],
                30,
            )]),
        ),
        example(
            json!({"keepalive": {"min_comments": 2, "max_gap_ms": 1000}}),
            Transcript::of(vec![sse(vec![comment(400), comment(800)], 1200)]),
            Transcript::of(vec![sse(vec![comment(400), comment(800)], 3000)]),
        ),
        example(
            json!({"provider_calls": {"script": "main", "count": 1}}),
            Transcript::of(vec![ok(200)]).with_provider_calls("main", 1),
            Transcript::of(vec![ok(200)]).with_provider_calls("main", 2),
        ),
        example(
            json!({"same": ["${defs.first}", "${defs.second}"]}),
            Transcript::of(vec![ok(200)])
                .with_def("first", json!("e-1"))
                .with_def("second", json!("e-1")),
            Transcript::of(vec![ok(200)])
                .with_def("first", json!("e-1"))
                .with_def("second", json!("e-2")),
        ),
        example(
            json!({"distinct": ["${defs.first}", "${defs.second}"]}),
            Transcript::of(vec![ok(200)])
                .with_def("first", json!("e-1"))
                .with_def("second", json!("e-2")),
            Transcript::of(vec![ok(200)])
                .with_def("first", json!("e-1"))
                .with_def("second", json!("e-1")),
        ),
        example(
            json!({"fold_equals": {"outputs": [{"index": 0, "type": "text", "text": "Hello"}]}}),
            Transcript::of(vec![x_stream(vec![
                accepted(1),
                delta(2, "Hel"),
                delta(3, "lo"),
                completed(4),
            ])]),
            Transcript::of(vec![x_stream(vec![
                accepted(1),
                delta(2, "Hel"),
                delta(3, "p"),
                completed(4),
            ])]),
        ),
        example(
            json!({"events_include": ["output.delta"]}),
            Transcript::of(vec![x_stream(vec![accepted(1), delta(2, "a")])]),
            Transcript::of(vec![x_stream(vec![accepted(1), completed(2)])]),
        ),
        example(
            json!({"events_exclude": ["execution.failed"]}),
            Transcript::of(vec![x_stream(vec![accepted(1), completed(2)])]),
            Transcript::of(vec![x_stream(vec![
                accepted(1),
                x_event(
                    2,
                    "execution.failed",
                    json!({"error": {"code": "internal_error", "message": "m", "retryable": false}}),
                ),
            ])]),
        ),
        example(
            json!({"every_event": {"type": "output.delta", "json": {"pointer": "/output_index", "equals": 0}}}),
            Transcript::of(vec![x_stream(vec![accepted(1), delta(2, "a")])]),
            Transcript::of(vec![x_stream(vec![
                accepted(1),
                x_event(2, "output.delta", json!({"delta": "a", "output_index": 1})),
            ])]),
        ),
        example(
            json!({"events_equal": "first"}),
            Transcript::of(vec![x_stream(vec![accepted(1), completed(2)])])
                .with_step("first", vec![x_stream(vec![accepted(1), completed(2)])]),
            Transcript::of(vec![x_stream(vec![accepted(1)])])
                .with_step("first", vec![x_stream(vec![accepted(1), completed(2)])]),
        ),
        example(
            json!({"text_absent": ["sk-canary-0001"]}),
            Transcript::of(vec![json_response(200, json!({"note": "nothing secret"}))]),
            Transcript::of(vec![json_response(200, json!({"echo": "sk-canary-0001"}))]),
        ),
        example(
            json!({"each": [{"status": 200}]}),
            Transcript::of(vec![ok(200), ok(200)]),
            Transcript::of(vec![ok(200), ok(500)]),
        ),
        example(
            json!({"responses": {"status_counts": {"202": 1, "200": 1}}}),
            Transcript::of(vec![ok(202), ok(200)]),
            Transcript::of(vec![ok(202), ok(202)]),
        ),
        example(
            json!({"each_with_status": {"status": 200, "expect": [{"json": {"pointer": "/ok", "equals": true}}]}}),
            Transcript::of(vec![json_response(200, json!({"ok": true})), ok(429)]),
            Transcript::of(vec![json_response(200, json!({"ok": false})), ok(429)]),
        ),
        example(
            json!({"event_gaps": {"type": "output.delta", "min_ms": 100}}),
            Transcript::of(vec![sse(
                vec![frame(10, delta(1, "a")), frame(210, delta(2, "b"))],
                300,
            )]),
            Transcript::of(vec![sse(
                vec![frame(10, delta(1, "a")), frame(60, delta(2, "b"))],
                300,
            )]),
        ),
        example(
            json!({"listed_types_observed": {"pointer": "/types", "steps": ["log"]}}),
            Transcript::of(vec![json_response(200, json!({"types": ["output.delta"]}))])
                .with_step("log", vec![x_stream(vec![accepted(1), delta(2, "a")])]),
            Transcript::of(vec![json_response(
                200,
                json!({"types": ["output.delta", "tool.call.started"]}),
            )])
            .with_step("log", vec![x_stream(vec![accepted(1), delta(2, "a")])]),
        ),
        Example {
            check: json!({"last_sequence": {"cursor": 2, "at_least": 4}}),
            surface: CaseSurface::Openwop,
            passes: Transcript::of(vec![w_poll(
                &[(3, "node.completed"), (4, "run.completed")],
                4,
            )]),
            fails: Transcript::of(vec![w_poll(
                &[(3, "node.completed"), (4, "run.completed")],
                3,
            )]),
        },
    ]
}

// ---- judging -----------------------------------------------------------------------------

fn parse(check: &Value) -> Check {
    serde_json::from_value(check.clone())
        .unwrap_or_else(|e| panic!("the example check {check} does not parse: {e}"))
}

fn judge(check: &Check, surface: CaseSurface, level: Level, on: &Transcript) -> Vec<CheckOutcome> {
    let step = on.step.as_ref().expect("a transcript has a step");
    let requirements = vec!["exec.example".to_string()];
    let ctx = EvalContext {
        surface,
        case_level: level,
        case_requirements: &requirements,
        step,
        steps: &on.others,
        scope: &on.scope,
        location: "/steps/0/expect/0".into(),
    };
    evaluate(check, &ctx)
}

fn render(outcomes: &[CheckOutcome]) -> String {
    outcomes
        .iter()
        .map(|o| format!("{:?} {}: {}", o.verdict, o.check, o.message))
        .collect::<Vec<_>>()
        .join("; ")
}

#[test]
fn every_kind_has_a_passing_and_a_failing_transcript() {
    let covered: Vec<&str> = examples().iter().map(|e| parse(&e.check).name()).collect();
    let missing: Vec<&&str> = CheckKind::NAMES
        .iter()
        .filter(|name| !covered.contains(name))
        .collect();
    assert!(
        missing.is_empty(),
        "check kinds without a passing and a failing transcript in checks/tests.rs: {missing:?}"
    );
    let mut seen = covered.clone();
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(
        seen.len(),
        covered.len(),
        "one example per kind: {covered:?}"
    );
}

#[test]
fn every_kind_passes_its_passing_transcript() {
    for example in examples() {
        let check = parse(&example.check);
        let outcomes = judge(&check, example.surface, Level::Must, &example.passes);
        assert!(
            !outcomes.is_empty() && outcomes.iter().all(|o| o.verdict == Verdict::Pass),
            "`{}` should pass: {}",
            check.name(),
            render(&outcomes)
        );
        assert!(
            outcomes.iter().all(|o| o.check == check.name()
                || matches!(
                    check.kind,
                    CheckKind::Each(_) | CheckKind::EachWithStatus(_)
                )),
            "outcomes name their kind: {}",
            render(&outcomes)
        );
    }
}

#[test]
fn every_kind_fails_its_failing_transcript_at_its_level() {
    for level in [Level::Must, Level::Should, Level::May] {
        for example in examples() {
            let check = parse(&example.check);
            let outcomes = judge(&check, example.surface, level, &example.fails);
            assert!(
                outcomes
                    .iter()
                    .any(|o| o.verdict == level.failure_verdict() && o.level == level),
                "`{}` at {} should give {:?}: {}",
                check.name(),
                level.as_str(),
                level.failure_verdict(),
                render(&outcomes)
            );
            assert!(
                outcomes.iter().all(|o| o.verdict != Verdict::Error),
                "`{}` judged its failing transcript, it did not break: {}",
                check.name(),
                render(&outcomes)
            );
        }
    }
}

#[test]
fn a_listed_type_no_scenario_provokes_is_not_required_and_the_others_still_are() {
    let example = example(
        json!({"listed_types_observed": {
            "pointer": "/types", "steps": ["log"], "not_provoked": ["tool.call.started"]
        }}),
        Transcript::of(vec![json_response(
            200,
            json!({"types": ["output.delta", "tool.call.started"]}),
        )])
        .with_step("log", vec![x_stream(vec![accepted(1), delta(2, "a")])]),
        Transcript::of(vec![json_response(
            200,
            json!({"types": ["output.delta", "tool.call.started", "output.completed"]}),
        )])
        .with_step("log", vec![x_stream(vec![accepted(1), delta(2, "a")])]),
    );
    let check = parse(&example.check);
    let passed = judge(&check, example.surface, Level::Must, &example.passes);
    assert!(
        passed.iter().all(|o| o.verdict == Verdict::Pass)
            && render(&passed).contains("not exercised"),
        "{}",
        render(&passed)
    );
    let failed = judge(&check, example.surface, Level::Must, &example.fails);
    assert!(
        failed.iter().any(|o| o.verdict == Verdict::Fail),
        "{}",
        render(&failed)
    );
}

#[test]
fn each_with_status_judges_nothing_when_no_response_has_a_status_the_host_may_not_answer() {
    let ok = |status: u16| json_response(status, json!({}));
    let all_served = Transcript::of(vec![ok(200), ok(200)]);
    let refusal = json!({"status": 429, "expect": [{"status": 429}]});
    // A status the host must answer at least once: none having it fails.
    let required = parse(&json!({"each_with_status": refusal.clone()}));
    let outcomes = judge(&required, CaseSurface::Openwop, Level::Must, &all_served);
    assert_eq!(outcomes.len(), 1, "{}", render(&outcomes));
    assert_eq!(outcomes[0].verdict, Verdict::Fail);
    // A refusal the host may make or not: none made, nothing to judge.
    let mut optional = refusal;
    optional["at_least_one"] = json!(false);
    let optional = parse(&json!({"each_with_status": optional}));
    let outcomes = judge(&optional, CaseSurface::Openwop, Level::Must, &all_served);
    assert!(outcomes.is_empty(), "{}", render(&outcomes));
    // Made, it is judged as ever.
    let refused = Transcript::of(vec![ok(200), json_response(503, json!({}))]);
    let outcomes = judge(
        &parse(
            &json!({"each_with_status": {"status": 503, "at_least_one": false, "expect": [{"status": 429}]}}),
        ),
        CaseSurface::Openwop,
        Level::Must,
        &refused,
    );
    assert_eq!(outcomes.len(), 1, "{}", render(&outcomes));
    assert_eq!(outcomes[0].verdict, Verdict::Fail);
}

#[test]
fn a_check_level_overrides_the_case_level() {
    let check = parse(&json!({"status": 200, "level": "SHOULD"}));
    let fails = Transcript::of(vec![json_response(500, json!({}))]);
    let outcomes = judge(&check, CaseSurface::Execution, Level::Must, &fails);
    assert_eq!(outcomes.len(), 1);
    assert_eq!(outcomes[0].verdict, Verdict::Warn);
    assert_eq!(outcomes[0].level, Level::Should);
}

#[test]
fn terminal_types_of_surface_x_come_from_the_protocol() {
    // `execution.failed` is terminal on surface X as `execution.completed` is; nothing else is.
    let check = parse(&json!({"terminal": {"exactly_one_last": true}}));
    let failed = x_event(
        2,
        "execution.failed",
        json!({"error": {"code": "cancelled", "message": "m", "retryable": false}}),
    );
    let ends_failed = Transcript::of(vec![x_stream(vec![accepted(1), failed])]);
    let outcomes = judge(&check, CaseSurface::Execution, Level::Must, &ends_failed);
    assert!(
        outcomes.iter().all(|o| o.verdict == Verdict::Pass),
        "{}",
        render(&outcomes)
    );
    let two = Transcript::of(vec![x_stream(vec![
        accepted(1),
        completed(2),
        completed(3),
    ])]);
    let outcomes = judge(&check, CaseSurface::Execution, Level::Must, &two);
    assert!(
        outcomes.iter().any(|o| o.verdict == Verdict::Fail),
        "{}",
        render(&outcomes)
    );
}

/// A run event (surface W) with the envelope fields the stream checks read.
fn w_event(sequence: u64, event_type: &str) -> Value {
    json!({
        "eventId": format!("evt-{sequence}"),
        "runId": "run-1",
        "type": event_type,
        "payload": {},
        "timestamp": "2026-01-01T00:00:00Z",
        "sequence": sequence,
        "schemaVersion": 1
    })
}

fn w_stream(events: &[(u64, &str)]) -> ResponseRecord {
    let frames = events
        .iter()
        .enumerate()
        .map(|(i, (sequence, kind))| frame(10 + i as u64, w_event(*sequence, kind)))
        .collect();
    sse(frames, 100)
}

/// A poll answer (surface W) holding these events, with this `lastSequence`.
fn w_poll(events: &[(u64, &str)], last_sequence: i64) -> ResponseRecord {
    let events: Vec<Value> = events.iter().map(|(s, kind)| w_event(*s, kind)).collect();
    json_response(
        200,
        json!({
            "runId": "run-1",
            "events": events,
            "lastSequence": last_sequence,
            "status": "completed",
            "isTerminal": true
        }),
    )
}

#[test]
fn poll_last_sequence_is_the_last_event_returned_or_lies_between_an_earlier_reading_and_the_cursor()
{
    const DONE: (u64, &str) = (4, "run.completed");
    const ARCHIVED: (u64, &str) = (5, "example.run-archived");
    // (the poll's events, its lastSequence, the cursor, an earlier reading's highest, passes)
    type Row<'a> = (&'a [(u64, &'a str)], i64, Option<i64>, Option<i64>, bool);
    let table: [Row; 12] = [
        (&[DONE], 4, Some(3), Some(4), true),
        (&[DONE], 3, Some(3), None, false),
        (&[DONE, ARCHIVED], 5, Some(3), Some(4), true),
        (&[DONE, ARCHIVED], 4, Some(3), Some(4), false),
        (&[], 4, Some(4), Some(4), true),
        // Appended after the terminal event since the earlier reading: the log ends at 5.
        (&[], 5, Some(5), Some(4), true),
        (&[ARCHIVED], 5, Some(4), Some(4), true),
        (&[], 3, Some(5), Some(4), false),
        (&[], 6, Some(5), Some(4), false),
        (&[], 3, Some(1000), Some(4), false),
        (&[], -1, None, None, true),
        (&[], -1, None, Some(4), false),
    ];
    for (events, reported, cursor, at_least, passes) in table {
        let mut expect = serde_json::Map::new();
        if let Some(cursor) = cursor {
            expect.insert("cursor".into(), json!(cursor));
        }
        if let Some(at_least) = at_least {
            expect.insert("at_least".into(), json!(at_least));
        }
        let check = parse(&json!({ "last_sequence": expect }));
        let on = Transcript::of(vec![w_poll(events, reported)]);
        let outcomes = judge(&check, CaseSurface::Openwop, Level::Must, &on);
        let passed = outcomes.iter().all(|o| o.verdict == Verdict::Pass);
        assert_eq!(
            passed,
            passes,
            "{events:?} lastSequence {reported}, cursor {cursor:?}, at least {at_least:?}: {}",
            render(&outcomes)
        );
    }
}

#[test]
fn a_cursor_at_or_past_the_terminal_event_compares_what_both_readings_hold() {
    const LOG: [(u64, &str); 3] = [
        (1, "run.started"),
        (2, "node.completed"),
        (3, "run.completed"),
    ];
    const ARCHIVED: (u64, &str) = (4, "example.run-archived");
    let with_archived: Vec<(u64, &str)> = LOG.iter().copied().chain([ARCHIVED]).collect();
    // (the resumed reading, the full reading, the cursor, passes)
    type Row<'a> = (&'a [(u64, &'a str)], &'a [(u64, &'a str)], u64, bool);
    let table: [Row; 7] = [
        (&[], &LOG, 3, true),
        (&[ARCHIVED], &LOG, 3, true),
        (&[], &with_archived, 3, true),
        (&[ARCHIVED], &with_archived, 3, true),
        // Re-sending the cursor's event, or an earlier one, is never an appended tail.
        (&[(3, "run.completed")], &LOG, 3, false),
        (&[(2, "node.completed"), ARCHIVED], &with_archived, 3, false),
        (&[(4, "example.other")], &with_archived, 3, false),
    ];
    for (resumed, full, cursor, passes) in table {
        let check = parse(&json!({"exclusive_after": {"cursor": cursor, "full": "full"}}));
        let on = Transcript::of(vec![w_stream(resumed)]).with_step("full", vec![w_stream(full)]);
        let outcomes = judge(&check, CaseSurface::Openwop, Level::Must, &on);
        let passed = outcomes.iter().all(|o| o.verdict == Verdict::Pass);
        assert_eq!(
            passed,
            passes,
            "{resumed:?} after {cursor} against {full:?}: {}",
            render(&outcomes)
        );
    }
}

#[test]
fn an_event_appended_after_the_terminal_event_may_miss_a_reading_that_closed_at_it() {
    // The chapter lets vendor types follow the terminal event, and a stream closes after the
    // terminal event: one reading may close before the host appended the vendor event.
    const LOG: [(u64, &str); 3] = [
        (1, "run.started"),
        (2, "node.started"),
        (3, "run.completed"),
    ];
    const ARCHIVED: (u64, &str) = (4, "example.run-archived");
    const OTHER: (u64, &str) = (4, "example.other");
    fn log(from: u64, tail: &[(u64, &'static str)]) -> Vec<(u64, &'static str)> {
        let mut events: Vec<_> = LOG.iter().copied().filter(|e| e.0 >= from).collect();
        events.extend_from_slice(tail);
        events
    }
    // (check, the step's reading, the compared step's reading, whether it passes)
    let table = [
        ("exclusive_after", log(2, &[ARCHIVED]), log(1, &[]), true),
        ("exclusive_after", log(2, &[]), log(1, &[ARCHIVED]), true),
        ("exclusive_after", log(3, &[]), log(1, &[]), false),
        (
            "exclusive_after",
            log(2, &[ARCHIVED]),
            log(1, &[OTHER]),
            false,
        ),
        ("events_equal", log(1, &[ARCHIVED]), log(1, &[]), true),
        ("events_equal", log(1, &[]), log(1, &[ARCHIVED]), true),
        ("events_equal", log(2, &[]), log(1, &[]), false),
        ("events_equal", log(1, &[ARCHIVED]), log(1, &[OTHER]), false),
    ];
    for (kind, mine, theirs, passes) in table {
        let check = parse(&if kind == "exclusive_after" {
            json!({"exclusive_after": {"cursor": 1, "full": "full"}})
        } else {
            json!({"events_equal": "full"})
        });
        let on = Transcript::of(vec![w_stream(&mine)]).with_step("full", vec![w_stream(&theirs)]);
        let outcomes = judge(&check, CaseSurface::Openwop, Level::Must, &on);
        let passed = outcomes.iter().all(|o| o.verdict == Verdict::Pass);
        assert_eq!(
            passed,
            passes,
            "{kind} on {mine:?} against {theirs:?}: {}",
            render(&outcomes)
        );
    }
}

#[test]
fn event_gaps_reads_the_hosts_timestamps_before_arrival_times() {
    let check = parse(&json!({"event_gaps": {"type": "heartbeat.evaluated", "min_ms": 750}}));
    // Two `heartbeat.evaluated` events, each (arrival ms, host timestamp), on one stream.
    let judged = |first: (u64, &str), second: (u64, &str)| {
        let tick = |(at_ms, stamp): (u64, &str)| {
            frame(
                at_ms,
                json!({"type": "heartbeat.evaluated", "timestamp": stamp, "payload": {}}),
            )
        };
        let on = Transcript::of(vec![sse(vec![tick(first), tick(second)], 2000)]);
        judge(&check, CaseSurface::Openwop, Level::Must, &on)
    };
    // Delivered 50 ms apart (one late, one on time) but happened a second apart: passes.
    let outcomes = judged(
        (1000, "2026-01-01T00:00:01.000Z"),
        (1050, "2026-01-01T02:00:02.000+02:00"),
    );
    assert!(
        outcomes.iter().all(|o| o.verdict == Verdict::Pass),
        "{}",
        render(&outcomes)
    );
    // Stamps in whole seconds cannot resolve a 750 ms bound: arrival times are read instead
    // (delivered a second apart: passes, though both stamps name the same second).
    let outcomes = judged((0, "2026-01-01T00:00:01Z"), (1000, "2026-01-01T00:00:01Z"));
    assert!(
        outcomes
            .iter()
            .all(|o| o.verdict == Verdict::Pass && o.message.contains("by arrival")),
        "{}",
        render(&outcomes)
    );
    // Stamps in tenths of a second 700 ms apart may be up to 799 ms apart, not under 750:
    // passes; 600 ms apart are at most 699 ms apart: fails.
    for (second, passes) in [("01.7", true), ("01.6", false)] {
        let outcomes = judged(
            (0, "2026-01-01T00:00:01.0Z"),
            (1000, &format!("2026-01-01T00:00:{second}Z")),
        );
        assert_eq!(
            outcomes.iter().all(|o| o.verdict == Verdict::Pass),
            passes,
            "{second}: {}",
            render(&outcomes)
        );
    }
    // Delivered a second apart but happened 100 ms apart: fails.
    let outcomes = judged(
        (0, "2026-01-01T00:00:01.000Z"),
        (1000, "2026-01-01T00:00:01.100Z"),
    );
    assert!(
        outcomes.iter().any(|o| o.verdict == Verdict::Fail),
        "{}",
        render(&outcomes)
    );
}

#[test]
fn checks_over_responses_that_never_arrived_are_not_judged() {
    // A host that accepts connections and never answers: no response at all, or some of them.
    let mut none = Transcript::of(vec![
        json_response(202, json!({"execution_id": "a"})),
        json_response(200, json!({"execution_id": "a"})),
    ]);
    let mut some = none.clone();
    if let Some(step) = &mut none.step {
        for exchange in &mut step.exchanges {
            exchange.response = None;
        }
    }
    if let Some(step) = &mut some.step {
        step.exchanges[1].response = None;
    }
    for check in [
        json!({"responses": {"same_at": "/execution_id"}}),
        json!({"responses": {"status_counts": {"202": 1, "200": 1}}}),
        json!({"each": [{"status_in": [200, 202]}]}),
    ] {
        for (name, on) in [("none", &none), ("some", &some)] {
            let outcomes = judge(&parse(&check), CaseSurface::Execution, Level::Must, on);
            assert!(
                outcomes.iter().any(|o| o.verdict == Verdict::Error)
                    && outcomes
                        .iter()
                        .all(|o| matches!(o.verdict, Verdict::Error | Verdict::Pass)),
                "{check} over {name}: {}",
                render(&outcomes)
            );
        }
    }
    // What arrived and disagrees is still the host's failure.
    let mut disagree = Transcript::of(vec![
        json_response(202, json!({"execution_id": "a"})),
        json_response(200, json!({"execution_id": "b"})),
        json_response(200, json!({"execution_id": "b"})),
    ]);
    if let Some(step) = &mut disagree.step {
        step.exchanges[2].response = None;
    }
    let outcomes = judge(
        &parse(&json!({"responses": {"same_at": "/execution_id"}})),
        CaseSurface::Execution,
        Level::Must,
        &disagree,
    );
    assert_eq!(outcomes[0].verdict, Verdict::Fail, "{}", render(&outcomes));
}

/// A frame with this `id:`, `event:` and data (framings a host may choose).
#[test]
fn event_gaps_per_member_compares_each_heartbeat_with_itself() {
    // Bare heartbeat messages (the frame's `event:` names the type), by arrival.
    let tick = |at_ms: u64, id: &str| {
        named_frame(
            at_ms,
            None,
            "heartbeat.evaluated",
            json!({"heartbeatId": id, "status": "ok", "changed": false}),
        )
    };
    let per =
        json!({"event_gaps": {"type": "heartbeat.evaluated", "min_ms": 750, "per": "heartbeatId"}});
    let whole = json!({"event_gaps": {"type": "heartbeat.evaluated", "min_ms": 750}});
    // Two heartbeats, each a second apart, interleaved 300 ms apart.
    let interleaved = || {
        sse(
            vec![
                tick(0, "a"),
                tick(300, "b"),
                tick(1000, "a"),
                tick(1300, "b"),
            ],
            2000,
        )
    };
    assert_eq!(
        verdicts(&judge_w(per.clone(), interleaved())),
        [Verdict::Pass]
    );
    assert_eq!(verdicts(&judge_w(whole, interleaved())), [Verdict::Fail]);
    // One of them ticking twice in 500 ms fails, named.
    let outcomes = judge_w(
        per.clone(),
        sse(vec![tick(0, "a"), tick(300, "b"), tick(500, "a")], 2000),
    );
    assert_eq!(
        verdicts(&outcomes),
        [Verdict::Fail],
        "{}",
        render(&outcomes)
    );
    assert!(
        outcomes[0].message.contains("\"a\""),
        "{}",
        render(&outcomes)
    );
    // No heartbeat ticked twice: no gap was read, so nothing is judged.
    let outcomes = judge_w(per, sse(vec![tick(0, "a"), tick(300, "b")], 2000));
    assert_eq!(
        verdicts(&outcomes),
        [Verdict::Error],
        "{}",
        render(&outcomes)
    );
}

fn named_frame(at_ms: u64, id: Option<&str>, event: &str, data: Value) -> FrameRecord {
    FrameRecord {
        at_ms,
        kind: FrameKind::Event {
            id: id.map(str::to_string),
            event: Some(event.to_string()),
            data: data.to_string(),
            json: Some(data),
            retry: None,
        },
    }
}

fn judge_w(check: Value, response: ResponseRecord) -> Vec<CheckOutcome> {
    judge(
        &parse(&check),
        CaseSurface::Openwop,
        Level::Must,
        &Transcript::of(vec![response]),
    )
}

fn verdicts(outcomes: &[CheckOutcome]) -> Vec<Verdict> {
    outcomes.iter().map(|o| o.verdict).collect()
}

#[test]
fn a_bare_heartbeat_message_is_read_as_its_frames_event() {
    let bare = sse(
        vec![
            named_frame(
                10,
                None,
                "heartbeat.evaluated",
                json!({"heartbeatId": "hb", "status": "ok", "changed": true}),
            ),
            named_frame(
                11,
                None,
                "heartbeat.stateChanged",
                json!({"heartbeatId": "hb", "from": {}, "to": {"on": true}}),
            ),
        ],
        100,
    );
    let observed = crate::checks::events::observe(&bare);
    assert_eq!(
        observed.types(),
        ["heartbeat.evaluated", "heartbeat.stateChanged"]
    );
    assert!(
        observed
            .events
            .iter()
            .all(|e| e.framing == crate::checks::events::Framing::BareMessage)
    );
    for check in [
        json!({"events_include": ["heartbeat.evaluated"]}),
        json!({"every_event": {"type": "heartbeat.evaluated", "json": {"pointer": "/payload/status", "in": ["ok", "timeout", "error"]}}}),
        json!({"order": {"subsequence": ["heartbeat.evaluated@changed=true", "heartbeat.stateChanged@from={}"]}}),
    ] {
        let outcomes = judge_w(check.clone(), bare.clone());
        assert_eq!(
            verdicts(&outcomes),
            [Verdict::Pass],
            "{check}: {}",
            render(&outcomes)
        );
    }
    // A broken bare message still fails: the framing is read, not excused.
    let broken = sse(
        vec![named_frame(
            10,
            None,
            "heartbeat.evaluated",
            json!({"heartbeatId": "hb", "status": "late", "changed": true}),
        )],
        100,
    );
    let outcomes = judge_w(
        json!({"every_event": {"type": "heartbeat.evaluated", "json": {"pointer": "/payload/status", "in": ["ok", "timeout", "error"]}}}),
        broken,
    );
    assert_eq!(
        verdicts(&outcomes),
        [Verdict::Fail],
        "{}",
        render(&outcomes)
    );
    // A bare message has no sequence: the failure names the frame and the type instead.
    assert!(
        outcomes[0]
            .message
            .starts_with("the event in frame 0 (heartbeat.evaluated) fails"),
        "{}",
        render(&outcomes)
    );
}

#[test]
fn a_mixed_mode_messages_frame_may_carry_the_chunk_payload() {
    let chunk = json!({"nodeId": "n", "runId": "tenant-a/run-0123456789abcdef", "chunk": "Hel", "isLast": false});
    let stream = sse(
        vec![
            frame(10, w_event(0, "run.started")),
            named_frame(11, Some("1"), "messages", chunk.clone()),
            frame(12, w_event(2, "run.completed")),
        ],
        100,
    );
    let observed = crate::checks::events::observe(&stream);
    assert_eq!(
        observed.types(),
        ["run.started", "output.chunk", "run.completed"]
    );
    assert_eq!(observed.sequences(), [0, 1, 2]);
    // The chunk payload validates as the outputChunk it is.
    let alone = sse(
        vec![named_frame(11, Some("1"), "messages", chunk.clone())],
        100,
    );
    let outcomes = judge_w(json!({"events_valid": true}), alone);
    assert_eq!(
        verdicts(&outcomes),
        [Verdict::Pass],
        "{}",
        render(&outcomes)
    );
    for check in [
        json!({"frames": {"event_names_admitting_mode": ["updates", "messages"]}}),
        json!({"terminal": {"exactly_one_last": true}}),
    ] {
        let mut with_names = stream.clone();
        // `event:` names the admitting mode for every frame.
        for frame in &mut with_names.frames {
            if let FrameKind::Event { event, json, .. } = &mut frame.kind
                && json.as_ref().and_then(|j| j.get("type")).is_some()
            {
                *event = Some("updates".into());
            }
        }
        let outcomes = judge_w(check.clone(), with_names);
        assert_eq!(
            verdicts(&outcomes),
            [Verdict::Pass],
            "{check}: {}",
            render(&outcomes)
        );
    }
    // A chunk payload that is not an outputChunk is still invalid.
    let bad = sse(
        vec![named_frame(11, Some("1"), "messages", json!({"bogus": 1}))],
        100,
    );
    let outcomes = judge_w(json!({"events_valid": true}), bad);
    assert_eq!(
        verdicts(&outcomes),
        [Verdict::Fail],
        "{}",
        render(&outcomes)
    );
}

#[test]
fn a_stream_held_open_without_headers_is_served_and_silent_and_its_headers_not_judged() {
    let held = ResponseRecord::held_without_headers(5000);
    let closed = judge_w(json!({"closed_by_server": true}), held.clone());
    assert_eq!(verdicts(&closed), [Verdict::Fail], "{}", render(&closed));
    let open = judge_w(json!({"closed_by_server": false}), held.clone());
    assert_eq!(verdicts(&open), [Verdict::Pass], "{}", render(&open));
    let served = judge_w(json!({"status": 200}), held.clone());
    assert_eq!(verdicts(&served), [Verdict::Pass], "{}", render(&served));
    let refused = judge_w(json!({"status": 400}), held.clone());
    assert_eq!(verdicts(&refused), [Verdict::Info], "{}", render(&refused));
    let header = judge_w(
        json!({"header": {"name": "content-type", "matches": "^text/event-stream"}}),
        held.clone(),
    );
    assert_eq!(verdicts(&header), [Verdict::Info], "{}", render(&header));
    let silent = judge_w(json!({"frames": {"count": 0}}), held.clone());
    assert_eq!(verdicts(&silent), [Verdict::Pass], "{}", render(&silent));
    let framed = judge_w(json!({"frames": {"count": 1}}), held);
    assert_eq!(verdicts(&framed), [Verdict::Fail], "{}", render(&framed));
}

#[test]
fn keep_alive_silence_counts_from_the_request() {
    // Headers and the first comment came 40 s after the request (lazy headers): a silence
    // of 40 s, though the gap after the headers is short.
    let mut lazy = sse(vec![comment(40_000), comment(41_000)], 42_000);
    lazy.headers_at_ms = 40_000;
    let outcomes = judge_w(
        json!({"keepalive": {"min_comments": 1, "max_gap_ms": 30000}}),
        lazy,
    );
    assert_eq!(
        verdicts(&outcomes),
        [Verdict::Fail],
        "{}",
        render(&outcomes)
    );
    let mut prompt = sse(vec![comment(1_000), comment(2_000)], 3_000);
    prompt.headers_at_ms = 1_000;
    let outcomes = judge_w(
        json!({"keepalive": {"min_comments": 1, "max_gap_ms": 30000}}),
        prompt,
    );
    assert_eq!(
        verdicts(&outcomes),
        [Verdict::Pass],
        "{}",
        render(&outcomes)
    );
}

// ---- premises (`when`) -------------------------------------------------------------------

#[test]
fn a_premise_on_the_steps_own_body_decides_whether_the_check_applies() {
    let check = parse(&json!({
        "when": {"pointer": "/status", "equals": "failed"},
        "json": {"pointer": "/error/code", "equals": "rate_limited"}
    }));
    let failed = Transcript::of(vec![json_response(
        200,
        json!({"status": "failed", "error": {"code": "insufficient_quota"}}),
    )]);
    let outcomes = judge(&check, CaseSurface::Execution, Level::Must, &failed);
    assert_eq!(outcomes.len(), 1, "{}", render(&outcomes));
    assert_eq!(outcomes[0].verdict, Verdict::Fail, "{}", render(&outcomes));
    let completed = Transcript::of(vec![json_response(200, json!({"status": "completed"}))]);
    let outcomes = judge(&check, CaseSurface::Execution, Level::Must, &completed);
    assert!(outcomes.is_empty(), "not judged: {}", render(&outcomes));
}

#[test]
fn an_occurs_premise_applies_the_check_only_when_some_event_of_the_read_matches() {
    // The heartbeat cases read a heartbeat's state from its first tick on the subscription:
    // they apply only when the read saw that tick (a transition from {}).
    let check = parse(&json!({
        "when": {"occurs": "heartbeat.stateChanged@from={}"},
        "order": {"subsequence": [
            "heartbeat.stateChanged@to={\"on\":true}",
            "heartbeat.stateChanged@to={\"on\":false}"
        ]}
    }));
    let changed = |from: Value, to: Value| json!({"type": "heartbeat.stateChanged", "payload": {"heartbeatId": "t", "from": from, "to": to}});
    let read = |docs: Vec<Value>| {
        let frames = docs
            .into_iter()
            .enumerate()
            .map(|(i, doc)| frame(10 + i as u64, doc))
            .collect();
        Transcript::of(vec![sse(frames, 100)])
    };
    // Fresh, and the second tick's state came from the first's: judged, holds.
    let fresh = read(vec![
        changed(json!({}), json!({"on": true})),
        changed(json!({"on": true}), json!({"on": false})),
    ]);
    let outcomes = judge(&check, CaseSurface::Openwop, Level::Must, &fresh);
    assert_eq!(outcomes.len(), 1, "{}", render(&outcomes));
    assert_eq!(outcomes[0].verdict, Verdict::Pass, "{}", render(&outcomes));
    // Fresh, and the prior state was not passed (no second transition): judged, fails.
    let forgetful = read(vec![changed(json!({}), json!({"on": true}))]);
    let outcomes = judge(&check, CaseSurface::Openwop, Level::Must, &forgetful);
    assert_eq!(outcomes.len(), 1, "{}", render(&outcomes));
    assert_eq!(outcomes[0].verdict, Verdict::Fail, "{}", render(&outcomes));
    // Met mid-way (no transition from {} in the read): not judged, wherever the read began.
    let mid_way = read(vec![
        changed(json!({"on": true}), json!({"on": false})),
        changed(json!({"on": false}), json!({"on": true})),
    ]);
    let outcomes = judge(&check, CaseSurface::Openwop, Level::Must, &mid_way);
    assert!(outcomes.is_empty(), "not judged: {}", render(&outcomes));
}

#[test]
fn a_premise_on_another_steps_view_reads_it_and_a_step_not_judged_yet_is_an_error() {
    let check = parse(&json!({
        "when": {"step": "limits", "json": {"pointer": "/body/limits/schemaRounds", "optional": true, "min": 1}},
        "json": {"pointer": "/calls", "length": 2}
    }));
    let one_call = |rounds: Value| {
        let mut on = Transcript::of(vec![json_response(200, json!({"calls": [{}]}))]);
        on.scope.steps.insert(
            "limits".into(),
            json!({"status": 200, "body": {"limits": rounds}}),
        );
        on
    };
    // A host allowing retries that made one call fails; one allowing none is not judged here;
    // one that does not say is read as allowing them (the premise is optional).
    let outcomes = judge(
        &check,
        CaseSurface::Openwop,
        Level::Must,
        &one_call(json!({"schemaRounds": 2})),
    );
    assert_eq!(outcomes.len(), 1, "{}", render(&outcomes));
    assert_eq!(outcomes[0].verdict, Verdict::Fail, "{}", render(&outcomes));
    let outcomes = judge(
        &check,
        CaseSurface::Openwop,
        Level::Must,
        &one_call(json!({"schemaRounds": 0})),
    );
    assert!(outcomes.is_empty(), "not judged: {}", render(&outcomes));
    let outcomes = judge(
        &check,
        CaseSurface::Openwop,
        Level::Must,
        &one_call(json!({})),
    );
    assert_eq!(outcomes.len(), 1, "{}", render(&outcomes));
    let unread = Transcript::of(vec![json_response(200, json!({"calls": [{}]}))]);
    let outcomes = judge(&check, CaseSurface::Openwop, Level::Must, &unread);
    assert_eq!(outcomes.len(), 1, "{}", render(&outcomes));
    assert_eq!(outcomes[0].verdict, Verdict::Error, "{}", render(&outcomes));
}

#[test]
fn a_streams_premise_on_what_it_read_spares_a_stream_the_run_ended_in() {
    // The keep-alive case: "held open" applies only while no terminal event was read.
    let check = parse(&json!({
        "when": {"step": "updates", "json": {"pointer": "/events/*/type", "text_absent": ["run.completed", "run.failed", "run.cancelled"]}},
        "closed_by_server": false
    }));
    let closed = |types: &[&str]| {
        let mut on = Transcript::of(vec![json_response(200, json!({}))]);
        let events: Vec<Value> = types.iter().map(|t| json!({"type": t})).collect();
        on.scope
            .steps
            .insert("updates".into(), json!({"status": 200, "events": events}));
        on
    };
    let outcomes = judge(
        &check,
        CaseSurface::Openwop,
        Level::Must,
        &closed(&["run.started", "node.started"]),
    );
    assert_eq!(
        outcomes.len(),
        1,
        "judged while the run was live: {}",
        render(&outcomes)
    );
    let outcomes = judge(
        &check,
        CaseSurface::Openwop,
        Level::Must,
        &closed(&["run.started", "run.completed"]),
    );
    assert!(outcomes.is_empty(), "not judged: {}", render(&outcomes));
}

#[test]
fn text_present_finds_a_text_under_whatever_name_the_host_chose_and_misses_it_when_dropped() {
    let check = parse(&json!({"json": {"pointer": "/payload", "text_present": ["legacyTotal"]}}));
    let verdicts = |body: Value| {
        judge(
            &check,
            CaseSurface::Openwop,
            Level::Must,
            &Transcript::of(vec![json_response(200, body)]),
        )
        .into_iter()
        .map(|o| o.verdict)
        .collect::<Vec<_>>()
    };
    for carried in [
        json!({"payload": {"outputs": {}, "legacyTotal": 3}}),
        json!({"payload": {"outputs": {}, "x-legacyTotal": 3}}),
        json!({"payload": {"outputs": {}, "x-legacy": {"legacyTotal": 3}}}),
    ] {
        assert_eq!(verdicts(carried.clone()), vec![Verdict::Pass], "{carried}");
    }
    assert_eq!(
        verdicts(json!({"payload": {"outputs": {}}})),
        vec![Verdict::Fail]
    );
}
