//! A run that could not judge what conformance needs does not conform: a host answering every
//! request with `200 text/plain` (its discovery documents unreadable) and a run with a BLOCKED
//! MUST case both end with the not-judged exit code, and the summary says what was not judged.
//! What the operator states about the host is read before any run: a capability override that
//! is no capability is a usage error.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;

use harness::case::CaseSurface;
use harness::report::{CaseResult, NOT_JUDGED_EXIT_CODE, SurfaceJudgement, exit_code};
use harness::run::{not_judged, run_verdict};
use harness::verdict::{Level, Verdict};

/// A host that answers every request `200 text/plain` with the body `ok`; serves until the
/// test process ends.
fn plain_text_host() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            std::thread::spawn(move || {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    match stream.read(&mut byte) {
                        Ok(1) => head.push(byte[0]),
                        _ => return,
                    }
                }
                let _ = stream.write_all(
                    b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok",
                );
            });
        }
    });
    format!("http://{address}")
}

fn conformance(args: &[&str], dir: &Path) -> (Option<i32>, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_conformance"))
        .args(args)
        .arg("--report-dir")
        .arg(dir)
        .arg("--quiet")
        .env_remove("CONFORMANCE_AUTH_A")
        .env_remove("CONFORMANCE_AUTH_B")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.code(), text)
}

#[test]
fn a_host_answering_everything_with_plain_text_does_not_conform_and_is_told_why() {
    let host = plain_text_host();
    let dir = tempfile::tempdir().unwrap();
    let cases = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../cases");
    let (code, text) = conformance(
        &["run", "--target", &host, "--cases", cases.to_str().unwrap()],
        dir.path(),
    );
    assert_eq!(code, Some(i32::from(NOT_JUDGED_EXIT_CODE)), "{text}");
    assert!(
        text.contains("the discovery document is unreadable: GET /.well-known/openwop answered 200 (text/plain)"),
        "{text}"
    );
    assert!(
        text.contains(
            "the runtime info document is unreadable: GET /v1/runtime answered 200 (text/plain)"
        ),
        "{text}"
    );
    assert!(text.contains("not judged:"), "{text}");
    assert!(!text.contains("Conformance: PASS"), "{text}");

    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("report.json")).unwrap()).unwrap();
    assert_eq!(report["verdict"], "BLOCKED");
    let cases = report["cases"].as_array().unwrap();
    assert!(!cases.is_empty());
    assert!(
        cases.iter().all(|c| c["verdict"] == "BLOCKED"),
        "no case can be judged, and none is charged to the host or called SKIP"
    );
    for surface in report["surfaces"].as_array().unwrap() {
        assert_eq!(surface["must_requirements_judged"], 0, "{surface}");
    }
}

#[test]
fn a_blocked_must_case_makes_the_run_not_conform() {
    let dir = tempfile::tempdir().unwrap();
    let cases = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../cases");
    // The built-in runtime, told it lists neither fixture the case can run on: without the
    // operator's requirement that is the host's fact (SKIP, the run conforms); with
    // `--require-fixture` the harness cannot set the case up, which is not the host's
    // failure, and not a conforming run.
    let capabilities = dir.path().join("capabilities.json");
    std::fs::write(
        &capabilities,
        r#"{"remove": ["fixture:conformance-cancellable", "fixture:conformance-delay"]}"#,
    )
    .unwrap();
    let args = [
        "run",
        "--cases",
        cases.to_str().unwrap(),
        "--id",
        "w.terminal.cancel",
        "--capabilities",
        capabilities.to_str().unwrap(),
    ];
    let (code, text) = conformance(&args, &dir.path().join("skipped"));
    assert_eq!(code, Some(0), "{text}");
    let skipped: serde_json::Value = serde_json::from_slice(
        &std::fs::read(dir.path().join("skipped").join("report.json")).unwrap(),
    )
    .unwrap();
    // `--id` is a prefix: w.terminal.cancel-races-completion runs too (on conformance-noop).
    let case = skipped["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "w.terminal.cancel")
        .unwrap();
    assert_eq!(case["verdict"], "SKIP", "{case}");
    assert!(
        case["reason"].as_str().is_some_and(|r| r.contains(
            "the host lists none of the fixtures that serve this case (conformance-cancellable, conformance-delay)"
        )),
        "{case}"
    );
    let required: Vec<&str> = args
        .iter()
        .copied()
        .chain(["--require-fixture", "conformance-cancellable"])
        .collect();
    let (code, text) = conformance(&required, &dir.path().join("report"));
    assert_eq!(code, Some(i32::from(NOT_JUDGED_EXIT_CODE)), "{text}");
    assert!(
        text.contains("1 MUST case(s) BLOCKED (w.terminal.cancel): the operator requires fixture `conformance-cancellable`"),
        "{text}"
    );
}

#[test]
fn a_capability_override_that_is_no_capability_is_a_usage_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let capabilities = dir.path().join("capabilities.json");
    std::fs::write(
        &capabilities,
        r#"{"add": ["capability:heartbeat", "heartbeat"]}"#,
    )
    .unwrap();
    let (code, text) = conformance(
        &["run", "--capabilities", capabilities.to_str().unwrap()],
        &dir.path().join("report"),
    );
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("`heartbeat` is no capability (unknown need `heartbeat`)")
            && text.contains("capability:<family>[.<facet>[=<value>]]"),
        "{text}"
    );
    assert!(!dir.path().join("report").exists(), "{text}");
}

fn result(id: &str, surface: CaseSurface, level: Level, verdict: Verdict) -> CaseResult {
    CaseResult {
        id: id.into(),
        title: String::new(),
        file: String::new(),
        level,
        surface: surface.into(),
        tags: Vec::new(),
        requirements: Vec::new(),
        verdict,
        raw_verdict: verdict,
        reason: Some("a fact the operator did not give".into()),
        duration_ms: 0,
        checks: Vec::new(),
        transcript: Vec::new(),
        counterexample: None,
        provider_scripts: Vec::new(),
    }
}

fn surface(
    name: CaseSurface,
    served: bool,
    requested: bool,
    cases: u32,
    judged: u32,
) -> SurfaceJudgement {
    SurfaceJudgement {
        surface: name,
        served,
        requested,
        cases,
        cases_judged: judged,
        must_requirements: 0,
        must_requirements_judged: 0,
    }
}

#[test]
fn what_was_not_judged_sets_the_run_verdict() {
    let pass = result("w.a", CaseSurface::Openwop, Level::Must, Verdict::Pass);
    let blocked_should = result("w.b", CaseSurface::Openwop, Level::Should, Verdict::Blocked);
    let blocked_must = result("w.c", CaseSurface::Openwop, Level::Must, Verdict::Blocked);
    let served = [surface(CaseSurface::Openwop, true, false, 2, 1)];

    // A BLOCKED SHOULD case alone does not stop the run conforming.
    let results = [pass.clone(), blocked_should.clone()];
    assert!(not_judged(&results, &served).is_empty());
    assert_eq!(run_verdict(&results, &[], &[]), Verdict::Pass);

    // A BLOCKED MUST case does.
    let results = [pass.clone(), blocked_must];
    let missing = not_judged(&results, &served);
    assert_eq!(missing.len(), 1, "{missing:?}");
    assert!(missing[0].contains("w.c"), "{missing:?}");
    let verdict = run_verdict(&results, &[], &missing);
    assert_eq!(verdict, Verdict::Blocked);
    assert_eq!(exit_code(verdict), NOT_JUDGED_EXIT_CODE);

    // A served surface none of whose cases was judged does, and so does a requested one the
    // host does not serve.
    let skipped = result("x.a", CaseSurface::Execution, Level::Must, Verdict::Skip);
    let missing = not_judged(
        &[skipped],
        &[
            surface(CaseSurface::Execution, true, false, 1, 0),
            surface(CaseSurface::Openwop, false, true, 0, 0),
        ],
    );
    assert_eq!(missing.len(), 2, "{missing:?}");
    assert!(missing[0].starts_with("surface execution (served by the host)"));
    assert!(missing[1].contains("requested with --surface, not served by the host"));

    // A real failure still wins: it is the more definite statement.
    let failed = result("w.d", CaseSurface::Openwop, Level::Must, Verdict::Fail);
    assert_eq!(
        run_verdict(&[failed], &[], &["something".into()]),
        Verdict::Fail
    );
}

#[test]
fn a_run_that_judged_no_case_does_not_claim_conformance() {
    // Nothing selected (a filter matching no case).
    let missing = not_judged(&[], &[surface(CaseSurface::Openwop, true, false, 0, 0)]);
    assert_eq!(missing, ["no case was selected (the filters match none)"]);
    assert_eq!(
        exit_code(run_verdict(&[], &[], &missing)),
        NOT_JUDGED_EXIT_CODE
    );
    // Only cases of a surface the host does not serve, every one SKIP.
    let skipped = [
        result("w.a", CaseSurface::Openwop, Level::Must, Verdict::Skip),
        result("w.b", CaseSurface::Openwop, Level::Should, Verdict::Skip),
    ];
    let missing = not_judged(
        &skipped,
        &[surface(CaseSurface::Openwop, false, false, 2, 0)],
    );
    assert_eq!(
        missing,
        ["none of the 2 selected case(s) was judged (2 SKIP, 0 BLOCKED, 0 ERROR)"]
    );
    assert_eq!(
        exit_code(run_verdict(&skipped, &[], &missing)),
        NOT_JUDGED_EXIT_CODE
    );
}

#[test]
fn an_id_filter_matching_no_case_exits_not_judged() {
    let dir = tempfile::tempdir().unwrap();
    let cases = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../cases");
    let (code, text) = conformance(
        &[
            "run",
            "--cases",
            cases.to_str().unwrap(),
            "--id",
            "no-case-has-this-id",
        ],
        &dir.path().join("report"),
    );
    assert_eq!(code, Some(i32::from(NOT_JUDGED_EXIT_CODE)), "{text}");
    assert!(text.contains("no case was selected"), "{text}");
    assert!(!text.contains("Conformance: PASS"), "{text}");
}
