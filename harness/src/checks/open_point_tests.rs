//! The sides of two open points no built-in profile can take (a host serving a subset of the
//! stream modes beside the `updates-only` profile's; the sides of upstream's contradictions
//! that break a chapter MUST or need anonymous tenants, listed in `spec/open-points.json`),
//! exercised on made-up transcripts: the corpus's own checks, judged on what a host taking
//! that side would send, fail nothing the seeds leave open.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};

use super::{EvalContext, evaluate};
use crate::case::{Case, CaseSurface, LoadedCase, Step, StepAction};
use crate::template::Scope;
use crate::transcript::{
    BodyEnd, Exchange, FrameKind, FrameRecord, Header, RequestRecord, ResponseRecord, StepRecord,
};
use crate::verdict::{CheckOutcome, Level, Verdict};

fn corpus() -> Vec<LoadedCase> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases");
    let corpus = crate::case::load_corpus(&root).expect("the corpus loads");
    assert!(corpus.problems.is_empty(), "{:#?}", corpus.problems);
    corpus.cases
}

fn record(name: &str, response: ResponseRecord) -> StepRecord {
    StepRecord {
        not_taken: None,
        step: name.into(),
        location: "/steps/0".into(),
        action: "stream".into(),
        exchanges: vec![Exchange {
            request: RequestRecord {
                method: "GET".into(),
                url: "http://host.invalid/path".into(),
                headers: Vec::new(),
                body: None,
            },
            response: Some(response),
            transport_error: None,
            sent_at_ms: 0,
        }],
        bindings: Vec::new(),
        completed: true,
        provider_calls: Vec::new(),
        exchanges_dropped: 0,
        refusals_waited_out: 0,
    }
}

fn json_response(status: u16, body: Value) -> ResponseRecord {
    let text = body.to_string();
    ResponseRecord {
        status,
        headers: vec![Header {
            name: "Content-Type".into(),
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

fn sse(docs: Vec<Value>) -> ResponseRecord {
    let frames = docs
        .into_iter()
        .enumerate()
        .map(|(i, doc)| FrameRecord {
            at_ms: 10 + i as u64,
            kind: FrameKind::Event {
                id: doc["sequence"].as_u64().map(|s| s.to_string()),
                event: doc["type"].as_str().map(str::to_string),
                data: doc.to_string(),
                json: Some(doc),
                retry: None,
            },
        })
        .collect();
    ResponseRecord {
        status: 200,
        headers: vec![Header {
            name: "Content-Type".into(),
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
        end_at_ms: 100,
        excerpt: None,
        folded: None,
        run_end: None,
    }
}

/// Every check of `step` of `case`, judged on `on`.
fn judge_step(case: &Case, step: &Step, on: &StepRecord) -> Vec<CheckOutcome> {
    let steps = BTreeMap::new();
    let scope = Scope::default();
    step.expect
        .iter()
        .flat_map(|check| {
            evaluate(
                check,
                &EvalContext {
                    surface: case.surface,
                    case_level: case.level,
                    case_requirements: &case.requirements,
                    step: on,
                    steps: &steps,
                    scope: &scope,
                    location: format!("{}/{}", case.id, on.step),
                },
            )
        })
        .collect()
}

/// The failures a host must not get for an open option: FAIL anywhere, WARN outside `should`.
fn intolerant(case: &Case, outcomes: &[CheckOutcome]) -> Vec<String> {
    outcomes
        .iter()
        .filter(|o| {
            o.verdict == Verdict::Fail
                || (o.verdict == Verdict::Warn && case.level != Level::Should)
        })
        .map(|o| format!("{} {:?} {}: {}", case.id, o.verdict, o.check, o.message))
        .collect()
}

fn stream_mode_of(step: &Step) -> Option<String> {
    let query = match &step.action {
        StepAction::Stream(stream) => &stream.query,
        StepAction::Request(request) => &request.query,
        _ => return None,
    };
    query.get("streamMode").cloned()
}

#[test]
fn a_host_serving_a_subset_of_modes_is_failed_by_no_must_check() {
    // The host implements updates, values and messages, and refuses debug as the chapter says.
    let refused = json_response(
        400,
        json!({
            "error": "unsupported_stream_mode",
            "message": "debug is not implemented",
            "details": {"supported": ["updates", "values", "messages"]}
        }),
    );
    let mut judged = 0;
    let mut failures = Vec::new();
    let debug = crate::case::needs::Need::StreamMode(spec::openwop::StreamMode::Debug);
    let need_debug =
        |needs: &[crate::case::needs::CaseNeed]| needs.iter().any(|n| n.wanted() == Some(&debug));
    for loaded in corpus() {
        let case = &loaded.case;
        // A case that needs debug SKIPs on such a host (the probe finds it refused).
        if case.surface != CaseSurface::Openwop || need_debug(&case.needs) {
            continue;
        }
        for step in &case.steps {
            // A step needing debug is not taken on such a host (the driver's `not_served`).
            if stream_mode_of(step).as_deref() != Some("debug") || need_debug(&step.needs) {
                continue;
            }
            judged += 1;
            let on = record(step.id.as_deref().unwrap_or("debug"), refused.clone());
            let outcomes = judge_step(case, step, &on);
            // A step that sets the case up would block it: not a verdict on the host.
            if step.precondition.is_some() {
                continue;
            }
            failures.extend(intolerant(case, &outcomes));
        }
    }
    assert!(judged > 0, "no case asks for debug without needing it");
    assert!(
        failures.is_empty(),
        "checks failing a host that refuses an optional mode:\n{}",
        failures.join("\n")
    );
}

fn run_event(sequence: u64, event_type: &str, payload: Value) -> Value {
    json!({
        "eventId": format!("evt-{sequence:032}"),
        "runId": "anon:tenant-a/run-0123456789abcdef0123456789abcdef",
        "type": event_type,
        "payload": payload,
        "timestamp": "2026-01-01T00:00:00Z",
        "sequence": sequence,
        "schemaVersion": 1
    })
}

fn host_event(n: u64, event_type: &str, payload: Value) -> Value {
    json!({
        "eventId": format!("hev-{n:032}"),
        "type": event_type,
        "timestamp": "2026-01-01T00:00:00Z",
        "delivery": "ephemeral",
        "payload": payload
    })
}

#[test]
fn either_side_of_an_upstream_contradiction_is_tolerated() {
    let cases = corpus();
    let find = |id: &str| {
        cases
            .iter()
            .find(|c| c.case.id == id)
            .unwrap_or_else(|| panic!("case {id}"))
    };
    // The type enum's side: a `negotiation.decided` event (in the enum, not in the codemap),
    // and the tenant grammar's side: an `anon:` tenant in the runId.
    let log = sse(vec![
        run_event(0, "run.started", json!({"workflowId": "conformance-noop"})),
        run_event(
            1,
            "negotiation.decided",
            json!({"protocol": "a2a", "outcome": "accepted", "at": "2026-01-01T00:00:00Z"}),
        ),
        run_event(2, "run.completed", json!({"outputs": {}})),
    ]);
    let terminal = find("w.terminal.noop");
    let debug = terminal
        .case
        .steps
        .iter()
        .find(|s| s.id.as_deref() == Some("debug"))
        .expect("the debug step");
    let outcomes = judge_step(&terminal.case, debug, &record("debug", log));
    assert!(outcomes.iter().any(|o| o.check == "events_valid"));
    let failures = intolerant(&terminal.case, &outcomes);
    assert!(failures.is_empty(), "{failures:#?}");

    // The chapter's side of the host-event type pattern: `heartbeat.stateChanged` on the host
    // channel.
    let channel = sse(vec![
        host_event(
            0,
            "heartbeat.evaluated",
            json!({"heartbeatId": "hb", "status": "ok", "changed": true}),
        ),
        host_event(
            1,
            "heartbeat.stateChanged",
            json!({"heartbeatId": "hb", "from": {}, "to": {"on": true}}),
        ),
    ]);
    let host_events = find("w.heartbeat.host-events");
    let step = host_events
        .case
        .steps
        .iter()
        .find(|s| s.id.as_deref() == Some("channel"))
        .expect("the channel step");
    let outcomes = judge_step(&host_events.case, step, &record("channel", channel));
    let failures = intolerant(&host_events.case, &outcomes);
    assert!(failures.is_empty(), "{failures:#?}");
    assert!(
        outcomes.iter().all(|o| o.verdict != Verdict::Info),
        "{outcomes:#?}"
    );
}
