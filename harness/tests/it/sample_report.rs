//! A realistic hand-built run report shared by the report tests: one PASS, one FAIL (with a
//! multi-line diff and an SSE transcript), one SKIP, one ERROR and one XFAIL case.

use harness::case::CaseSurface;
use harness::report::{
    CaseResult, REPORT_FORMAT_VERSION, RequirementResult, ResultSurface, RunOptionsSummary,
    RunReport, ServedScript, Summary, SurfaceJudgement, TargetSummary,
};
use harness::transcript::{
    BodyEnd, Exchange, FrameKind, FrameRecord, Header, ProviderCallCount, REDACTED, RequestRecord,
    ResponseRecord, StepRecord, TransportError,
};
use harness::verdict::{CheckOutcome, Level, Verdict};
use serde_json::json;
use spec::requirements::{Document, Level as RequirementLevel};

pub const BASE: &str = "http://127.0.0.1:41234";

fn header(name: &str, value: &str) -> Header {
    Header {
        name: name.to_string(),
        value: value.to_string(),
    }
}

fn request(method: &str, path: &str, headers: Vec<Header>, body: Option<&str>) -> RequestRecord {
    RequestRecord {
        method: method.to_string(),
        url: format!("{BASE}{path}"),
        headers,
        body: body.map(str::to_string),
    }
}

fn json_response(status: u16, body: serde_json::Value, at_ms: u64) -> ResponseRecord {
    let text = serde_json::to_string(&body).unwrap();
    ResponseRecord {
        status,
        headers: vec![
            header("content-type", "application/json"),
            header("content-length", &text.len().to_string()),
        ],
        headers_at_ms: at_ms,
        body_bytes: text.len() as u64,
        body: text,
        body_utf8: true,
        json: Some(body),
        frames: Vec::new(),
        trailing_partial_frame: None,
        end: BodyEnd::ServerClosed,
        end_at_ms: at_ms + 1,
        excerpt: None,
        folded: None,
        run_end: None,
    }
}

fn check(
    check: &str,
    location: &str,
    step: Option<&str>,
    requirements: &[&str],
    verdict: Verdict,
    message: &str,
) -> CheckOutcome {
    CheckOutcome {
        check: check.to_string(),
        location: location.to_string(),
        step: step.map(str::to_string),
        level: Level::Must,
        requirements: requirements.iter().map(|r| r.to_string()).collect(),
        verdict,
        message: message.to_string(),
        expected: None,
        actual: None,
    }
}

fn event(at_ms: u64, id: Option<&str>, data: serde_json::Value) -> FrameRecord {
    FrameRecord {
        at_ms,
        kind: FrameKind::Event {
            id: id.map(str::to_string),
            event: Some("run_event".to_string()),
            data: data.to_string(),
            json: Some(data),
            retry: None,
        },
    }
}

fn case(id: &str, title: &str, surface: ResultSurface, verdict: Verdict) -> CaseResult {
    CaseResult {
        id: id.to_string(),
        title: title.to_string(),
        file: format!(
            "{}/{id}.json",
            if surface == ResultSurface::Execution {
                "x"
            } else {
                "w"
            }
        ),
        level: Level::Must,
        surface,
        tags: Vec::new(),
        requirements: Vec::new(),
        verdict,
        raw_verdict: verdict,
        reason: None,
        duration_ms: 0,
        checks: Vec::new(),
        transcript: Vec::new(),
        counterexample: None,
        provider_scripts: Vec::new(),
    }
}

pub fn pass_case() -> CaseResult {
    let mut case = case(
        "x.submission.returns-202",
        "POST /v1/executions answers 202 with an execution id",
        ResultSurface::Execution,
        Verdict::Pass,
    );
    case.requirements = vec!["exec.submission.returns-202".into()];
    case.duration_ms = 14;
    case.checks = vec![check(
        "status",
        "/steps/0/expect/0",
        Some("submit"),
        &["exec.submission.returns-202"],
        Verdict::Pass,
        "status 202",
    )];
    case.transcript = vec![StepRecord {
        not_taken: None,
        step: "submit".into(),
        location: "/steps/0".into(),
        action: "request".into(),
        exchanges: vec![Exchange {
            request: request(
                "POST",
                "/v1/executions",
                vec![header("content-type", "application/json")],
                Some(r#"{"ability":"text-generation","input":[{"type":"text","text":"hello"}]}"#),
            ),
            response: Some(json_response(
                202,
                json!({"id": "exe_01", "status": "accepted"}),
                9,
            )),
            transport_error: None,
            sent_at_ms: 1,
        }],
        bindings: Vec::new(),
        completed: true,
        provider_calls: Vec::new(),
        exchanges_dropped: 0,
        refusals_waited_out: 0,
    }];
    case
}

pub fn fail_case() -> CaseResult {
    let mut case = case(
        "w.resume.exclusive-cursor",
        "Last-Event-ID: N resumes after N, never at N",
        ResultSurface::Openwop,
        Verdict::Fail,
    );
    case.requirements = vec![
        "events.resume.exclusive-cursor".into(),
        "events.sse.keep-alive-30s".into(),
    ];
    case.tags = vec!["cursor".into(), "resume".into()];
    case.duration_ms = 912;
    let mut exclusive = check(
        "exclusive_after",
        "/steps/2/expect/0",
        Some("resume"),
        &["events.resume.exclusive-cursor"],
        Verdict::Fail,
        "the resumed stream starts at sequence 2; after cursor 2 it must start at 3",
    );
    exclusive.expected = Some("sequence 3 run.step.completed\nsequence 4 run.completed".into());
    exclusive.actual = Some(
        "sequence 2 run.step.started\nsequence 3 run.step.completed\nsequence 4 run.completed"
            .into(),
    );
    case.checks = vec![
        check(
            "status",
            "/steps/0/expect/0",
            Some("create"),
            &[],
            Verdict::Pass,
            "status 201",
        ),
        exclusive,
        check(
            "keepalive",
            "/steps/2/expect/1",
            Some("resume"),
            &["events.sse.keep-alive-30s"],
            Verdict::Pass,
            "1 keep-alive comment; longest silence 180 ms",
        ),
    ];
    let auth = header("authorization", REDACTED);
    let stream_body = ": keep-alive\n\nid: 2\nevent: run_event\ndata: {\"sequence\":2,\"type\":\"run.step.started\"}\n\nid: 3\nevent: run_event\ndata: {\"sequence\":3,\"type\":\"run.step.completed\"}\n\nid: 4\nevent: run_event\ndata: {\"sequence\":4,\"type\":\"run.completed\"}\n\nid: 5\ndata: {\"seq";
    case.transcript = vec![
        StepRecord {
            not_taken: None,
            step: "create".into(),
            location: "/steps/0".into(),
            action: "request".into(),
            exchanges: vec![Exchange {
                request: request(
                    "POST",
                    "/runs",
                    vec![auth.clone(), header("content-type", "application/json")],
                    Some(
                        r#"{"workflow":"fixture.three-steps","input":{"prompt":"[[script:w.resume.exclusive-cursor.slow]] it's $HOME"}}"#,
                    ),
                ),
                response: Some(json_response(201, json!({"runId": "run_7"}), 6)),
                transport_error: None,
                sent_at_ms: 2,
            }],
            bindings: Vec::new(),
            completed: true,
            provider_calls: vec![ProviderCallCount {
                script: "slow".into(),
                instance: "openai-primary".into(),
                role: Some("text-primary".into()),
                count: 1,
            }],
            exchanges_dropped: 0,
            refusals_waited_out: 0,
        },
        StepRecord {
            not_taken: None,
            step: "resume".into(),
            location: "/steps/2".into(),
            action: "stream".into(),
            exchanges: vec![Exchange {
                request: request(
                    "GET",
                    "/runs/run_7/events?streamMode=updates",
                    vec![
                        auth,
                        header("accept", "text/event-stream"),
                        header("last-event-id", "2"),
                    ],
                    None,
                ),
                response: Some(ResponseRecord {
                    status: 200,
                    headers: vec![
                        header("content-type", "text/event-stream"),
                        header("cache-control", "no-cache"),
                    ],
                    headers_at_ms: 4,
                    body: stream_body.to_string(),
                    body_bytes: stream_body.len() as u64,
                    body_utf8: true,
                    json: None,
                    frames: vec![
                        FrameRecord {
                            at_ms: 180,
                            kind: FrameKind::Comment {
                                text: " keep-alive".into(),
                            },
                        },
                        event(
                            181,
                            Some("2"),
                            json!({"sequence": 2, "type": "run.step.started"}),
                        ),
                        event(
                            350,
                            Some("3"),
                            json!({"sequence": 3, "type": "run.step.completed"}),
                        ),
                        FrameRecord {
                            at_ms: 351,
                            kind: FrameKind::Event {
                                id: Some(String::new()),
                                event: None,
                                data: "<script>alert(1)</script>".into(),
                                json: None,
                                retry: Some(1500),
                            },
                        },
                        event(
                            520,
                            Some("4"),
                            json!({"sequence": 4, "type": "run.completed"}),
                        ),
                    ],
                    trailing_partial_frame: Some("id: 5\ndata: {\"seq".into()),
                    end: BodyEnd::ServerClosed,
                    end_at_ms: 530,
                    excerpt: None,
                    folded: None,
                    run_end: None,
                }),
                transport_error: None,
                sent_at_ms: 360,
            }],
            bindings: vec![("cursor".into(), json!(2))],
            completed: true,
            provider_calls: Vec::new(),
            exchanges_dropped: 0,
            refusals_waited_out: 0,
        },
    ];
    case.provider_scripts = vec![ServedScript {
        name: "slow".into(),
        id: "w.resume.exclusive-cursor.slow".into(),
        script: json!({
            "id": "w.resume.exclusive-cursor.slow",
            "calls": {"openai-primary": [{"kind": "completion", "chunks": [{"kind": "text", "delta": "hi"}]}]}
        }),
    }];
    case
}

pub fn skip_case() -> CaseResult {
    let mut case = case(
        "w.feedback.signals-listed",
        "Discovery lists the accepted feedback signal kinds",
        ResultSurface::Openwop,
        Verdict::Skip,
    );
    case.requirements = vec!["events.feedback.signals-lists-accepted".into()];
    case.reason = Some("needs `capability:feedback`, which the host does not advertise".into());
    case
}

pub fn blocked_case() -> CaseResult {
    let mut case = case(
        "w.terminal.approve",
        "An approved run completes",
        ResultSurface::Openwop,
        Verdict::Blocked,
    );
    case.requirements = vec!["events.terminal.exactly-one".into()];
    case.reason = Some(
        "the host's discovery document does not list fixture `conformance-approval`, so the harness cannot set the case up"
            .into(),
    );
    case
}

pub fn error_case() -> CaseResult {
    let mut case = case(
        "x.idempotency.different-request-fails",
        "Reusing an Idempotency-Key with another request fails",
        ResultSurface::Execution,
        Verdict::Error,
    );
    case.requirements = vec!["exec.idempotency.different-request-fails".into()];
    case.duration_ms = 3001;
    case.reason = Some("the target is unreachable: connection refused (127.0.0.1:41234)".into());
    case.transcript = vec![StepRecord {
        not_taken: None,
        step: "#0".into(),
        location: "/steps/0".into(),
        action: "request".into(),
        exchanges: vec![Exchange {
            request: request(
                "POST",
                "/v1/executions",
                vec![
                    header("content-type", "application/json"),
                    header("idempotency-key", "key-1"),
                    header("x-api-key", REDACTED),
                ],
                Some(r#"{"ability":"text-generation"}"#),
            ),
            response: None,
            transport_error: Some(TransportError {
                unreachable: true,
                message: "connection refused".into(),
            }),
            sent_at_ms: 0,
        }],
        bindings: Vec::new(),
        completed: false,
        provider_calls: Vec::new(),
        exchanges_dropped: 0,
        refusals_waited_out: 0,
    }];
    case
}

pub fn xfail_case() -> CaseResult {
    let mut case = case(
        "x.idempotency.concurrent-same-key",
        "Concurrent submissions with one Idempotency-Key create one execution",
        ResultSurface::Execution,
        Verdict::Xfail,
    );
    case.raw_verdict = Verdict::Fail;
    case.requirements = vec!["exec.idempotency.same-request-same-execution".into()];
    case.reason = Some("expected failure: known race in the claim table (#42)".into());
    case.duration_ms = 57;
    let mut counts = check(
        "responses",
        "/steps/0/expect/0",
        Some("burst"),
        &["exec.idempotency.same-request-same-execution"],
        Verdict::Fail,
        "2 responses have status 202; expected exactly 1",
    );
    counts.expected = Some("202: 1".into());
    counts.actual = Some("202: 2".into());
    case.checks = vec![counts];
    let exchange = |id: &str, status: u16| Exchange {
        request: request(
            "POST",
            "/v1/executions",
            vec![
                header("content-type", "application/json"),
                header("idempotency-key", "same-key"),
            ],
            Some(r#"{"ability":"text-generation"}"#),
        ),
        response: Some(json_response(status, json!({"id": id}), 20)),
        transport_error: None,
        sent_at_ms: 3,
    };
    case.transcript = vec![StepRecord {
        not_taken: None,
        step: "burst".into(),
        location: "/steps/0".into(),
        action: "concurrent".into(),
        exchanges: vec![
            exchange("exe_1", 202),
            exchange("exe_2", 202),
            exchange("exe_1", 200),
        ],
        bindings: Vec::new(),
        completed: true,
        provider_calls: Vec::new(),
        exchanges_dropped: 0,
        refusals_waited_out: 0,
    }];
    case
}

fn requirement(
    id: &str,
    level: RequirementLevel,
    document: Document,
    section: &str,
    quote: &str,
    verdict: Verdict,
    cases: &[&str],
) -> RequirementResult {
    RequirementResult {
        id: id.into(),
        level: Some(level),
        document: Some(document),
        section: section.into(),
        quote: quote.into(),
        verdict,
        cases: cases.iter().map(|c| c.to_string()).collect(),
    }
}

/// The realistic report.
pub fn realistic_report() -> RunReport {
    let cases = vec![
        pass_case(),
        fail_case(),
        skip_case(),
        blocked_case(),
        error_case(),
        xfail_case(),
    ];
    let surfaces = vec![
        SurfaceJudgement {
            surface: CaseSurface::Execution,
            served: true,
            requested: false,
            cases: 3,
            cases_judged: 2,
            must_requirements: 3,
            must_requirements_judged: 2,
        },
        SurfaceJudgement {
            surface: CaseSurface::Openwop,
            served: true,
            requested: false,
            cases: 3,
            cases_judged: 1,
            must_requirements: 2,
            must_requirements_judged: 1,
        },
    ];
    let not_judged = harness::run::not_judged(&cases, &surfaces);
    RunReport {
        format_version: REPORT_FORMAT_VERSION,
        run_id: "20261130T101500Z-4f2a".into(),
        harness_version: "0.1.0".into(),
        corpus: Default::default(),
        started_at: "2026-11-30T10:15:00.123Z".into(),
        finished_at: "2026-11-30T10:15:04.187Z".into(),
        duration_ms: 4064,
        target: TargetSummary {
            kind: "built-in".into(),
            base_url: BASE.into(),
            capabilities: ["stream-mode:updates", "fixture:three-steps"]
                .map(|text| harness::target::HostCapability::parse(text).unwrap())
                .to_vec(),
            header_names: vec!["authorization".into()],
            implementation: Some("reference-runtime 0.1.0".into()),
        },
        options: RunOptionsSummary {
            time_scale: 1.0,
            jobs: 4,
            shuffle_seed: None,
            proptest_seed: 7,
            baseline: Some("baseline.json".into()),
            filters: Vec::new(),
            case_set_digest: "9c1f0e".into(),
        },
        verdict: Verdict::Error,
        run_errors: Vec::new(),
        summary: Summary::of(&cases),
        not_judged,
        surfaces,
        requirements: vec![
            requirement(
                "exec.submission.returns-202",
                RequirementLevel::Must,
                Document::ExecutionProtocol,
                "Submission",
                "POST /v1/executions returns 202 with an execution ID",
                Verdict::Pass,
                &["x.submission.returns-202"],
            ),
            requirement(
                "events.resume.exclusive-cursor",
                RequirementLevel::Must,
                Document::RunEvents,
                "Resuming with Last-Event-ID",
                "Last-Event-ID: N resumes every mode as an exclusive cursor",
                Verdict::Fail,
                &["w.resume.exclusive-cursor"],
            ),
            requirement(
                "events.sse.keep-alive-30s",
                RequirementLevel::Must,
                Document::RunEvents,
                "SSE frames",
                "MUST emit a keep-alive comment at least every 30 seconds",
                Verdict::Pass,
                &["w.resume.exclusive-cursor"],
            ),
            requirement(
                "exec.idempotency.same-request-same-execution",
                RequirementLevel::Must,
                Document::ExecutionProtocol,
                "Idempotency",
                "Idempotency-Key reuse with the same request returns that execution",
                Verdict::Xfail,
                &["x.idempotency.concurrent-same-key"],
            ),
        ],
        streaming: harness::report::streaming::streaming_metrics(
            cases
                .iter()
                .map(|c| (c.id.as_str(), c.transcript.as_slice())),
        ),
        cases,
        unmatched_provider_requests: Vec::new(),
        differential: None,
    }
}
