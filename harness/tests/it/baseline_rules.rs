//! Every rule of the baseline: XFAIL for expected failures, new failures kept, STALE for
//! entries that no longer fail (and for unknown cases), ERROR and SKIP untouched, loading
//! errors, and `--write-baseline` round trips.

use std::path::Path;

use harness::report::{CaseResult, RunOptionsSummary, RunReport, Summary, TargetSummary};
use harness::run::{
    BASELINE_FORMAT_VERSION, Baseline, BaselineError, ExpectedFailure, apply_baseline as apply,
};
use harness::verdict::{CheckOutcome, Level, Verdict};

fn check(kind: &str, location: &str, verdict: Verdict) -> CheckOutcome {
    CheckOutcome {
        check: kind.into(),
        location: location.into(),
        step: None,
        level: Level::Must,
        requirements: vec![],
        verdict,
        message: format!("{kind} {verdict}"),
        expected: None,
        actual: None,
    }
}

/// A case whose verdict is the worst of its checks (PASS without failing checks).
fn case(id: &str, checks: Vec<CheckOutcome>) -> CaseResult {
    let verdict = checks
        .iter()
        .map(|c| c.verdict)
        .fold(Verdict::Pass, Verdict::worst);
    CaseResult {
        id: id.into(),
        title: "t".into(),
        file: "f.json".into(),
        level: Level::Must,
        surface: harness::report::ResultSurface::Execution,
        tags: vec![],
        requirements: vec![],
        verdict,
        raw_verdict: verdict,
        reason: None,
        duration_ms: 1,
        checks,
        transcript: vec![],
        counterexample: None,
        provider_scripts: vec![],
    }
}

fn entry(case: &str, check: Option<&str>, reason: &str) -> ExpectedFailure {
    ExpectedFailure {
        case: case.into(),
        check: check.map(str::to_string),
        reason: reason.into(),
    }
}

fn baseline(entries: Vec<ExpectedFailure>) -> Baseline {
    Baseline {
        version: BASELINE_FORMAT_VERSION,
        expected_failures: entries,
    }
}

const A: &str = "/steps/0/expect/0";
const B: &str = "/steps/1/expect/0";

#[test]
fn no_entry_leaves_the_case_alone() {
    let c = case("x.a", vec![check("status", A, Verdict::Fail)]);
    let out = apply(&baseline(vec![entry("x.other", None, "r")]), c.clone());
    assert_eq!(out, c);
}

#[test]
fn baselined_case_that_still_fails_is_xfail_with_the_reason() {
    let c = case(
        "x.a",
        vec![
            check("status", A, Verdict::Fail),
            check("header", B, Verdict::Fail),
        ],
    );
    let out = apply(&baseline(vec![entry("x.a", None, "known bug #12")]), c);
    assert_eq!(out.verdict, Verdict::Xfail);
    assert_eq!(out.raw_verdict, Verdict::Fail);
    assert_eq!(
        out.reason.as_deref(),
        Some("expected failure: known bug #12")
    );
}

#[test]
fn baselined_should_failure_is_xfail_too() {
    let c = case("x.a", vec![check("keepalive", A, Verdict::Warn)]);
    let out = apply(&baseline(vec![entry("x.a", None, "slow keep-alive")]), c);
    assert_eq!(out.verdict, Verdict::Xfail);
    assert_eq!(out.raw_verdict, Verdict::Warn);
}

#[test]
fn baselined_check_by_location_or_kind_that_still_fails_is_xfail() {
    for name in [A, "status"] {
        let c = case(
            "x.a",
            vec![
                check("status", A, Verdict::Fail),
                check("header", B, Verdict::Pass),
            ],
        );
        let out = apply(&baseline(vec![entry("x.a", Some(name), "r")]), c);
        assert_eq!(out.verdict, Verdict::Xfail, "entry check {name}");
    }
}

#[test]
fn failing_check_not_in_the_baseline_keeps_the_failure() {
    let c = case(
        "x.a",
        vec![
            check("status", A, Verdict::Fail),
            check("header", B, Verdict::Fail),
        ],
    );
    let out = apply(&baseline(vec![entry("x.a", Some(A), "r")]), c);
    assert_eq!(out.verdict, Verdict::Fail);
    let reason = out.reason.unwrap();
    assert!(
        reason.contains("`header` at /steps/1/expect/0 is not in the baseline"),
        "{reason}"
    );
}

#[test]
fn new_should_failure_beside_a_baselined_must_is_warn() {
    let c = case(
        "x.a",
        vec![
            check("status", A, Verdict::Fail),
            check("keepalive", B, Verdict::Warn),
        ],
    );
    let out = apply(&baseline(vec![entry("x.a", Some(A), "r")]), c);
    assert_eq!(out.verdict, Verdict::Warn);
}

#[test]
fn baselined_case_that_now_passes_is_stale() {
    let c = case("x.a", vec![check("status", A, Verdict::Pass)]);
    let out = apply(&baseline(vec![entry("x.a", None, "known bug #12")]), c);
    assert_eq!(out.verdict, Verdict::Stale);
    assert_eq!(out.raw_verdict, Verdict::Pass);
    assert!(
        out.reason
            .unwrap()
            .contains("no longer fails (baseline: known bug #12)")
    );
    assert!(Verdict::Stale.is_conformance_failure());
}

#[test]
fn info_counts_as_passing_for_staleness() {
    let c = case("x.a", vec![check("status", A, Verdict::Info)]);
    let out = apply(&baseline(vec![entry("x.a", None, "r")]), c);
    assert_eq!(out.verdict, Verdict::Stale);
}

#[test]
fn baselined_check_that_now_passes_is_stale_even_if_another_expected_failure_remains() {
    let c = case(
        "x.a",
        vec![
            check("status", A, Verdict::Fail),
            check("header", B, Verdict::Pass),
        ],
    );
    let out = apply(
        &baseline(vec![
            entry("x.a", Some(A), "r1"),
            entry("x.a", Some(B), "r2"),
        ]),
        c,
    );
    assert_eq!(out.verdict, Verdict::Stale);
    assert!(
        out.reason
            .unwrap()
            .contains("`x.a` check `/steps/1/expect/0` no longer fails")
    );
}

#[test]
fn new_must_failure_wins_over_a_stale_entry_and_both_are_reported() {
    let c = case(
        "x.a",
        vec![
            check("status", A, Verdict::Pass),
            check("header", B, Verdict::Fail),
        ],
    );
    let out = apply(&baseline(vec![entry("x.a", Some(A), "r")]), c);
    assert_eq!(out.verdict, Verdict::Fail);
    let reason = out.reason.unwrap();
    assert!(
        reason.contains("new failure") && reason.contains("stale baseline"),
        "{reason}"
    );
}

#[test]
fn new_should_failure_with_a_stale_entry_is_stale_so_the_run_fails() {
    let c = case(
        "x.a",
        vec![
            check("status", A, Verdict::Pass),
            check("keepalive", B, Verdict::Warn),
        ],
    );
    let out = apply(&baseline(vec![entry("x.a", Some(A), "r")]), c);
    assert_eq!(out.verdict, Verdict::Stale);
}

#[test]
fn failure_without_failing_checks_needs_a_whole_case_entry() {
    let mut c = case("x.a", vec![]);
    c.verdict = Verdict::Fail;
    c.raw_verdict = Verdict::Fail;
    let out = apply(&baseline(vec![entry("x.a", None, "r")]), c.clone());
    assert_eq!(out.verdict, Verdict::Xfail);
    let out = apply(&baseline(vec![entry("x.a", Some(A), "r")]), c);
    assert_eq!(out.verdict, Verdict::Fail);
}

#[test]
fn error_and_skip_are_untouched() {
    for verdict in [Verdict::Error, Verdict::Skip] {
        let mut c = case("x.a", vec![]);
        c.verdict = verdict;
        c.raw_verdict = verdict;
        c.reason = Some("why".into());
        let out = apply(&baseline(vec![entry("x.a", None, "r")]), c.clone());
        assert_eq!(out, c, "{verdict}");
    }
}

#[test]
fn applying_twice_gives_the_same_result() {
    let b = baseline(vec![entry("x.a", None, "r")]);
    let once = apply(&b, case("x.a", vec![check("status", A, Verdict::Fail)]));
    let twice = apply(&b, once.clone());
    assert_eq!(once, twice);
}

#[test]
fn unknown_cases_are_reported_as_stale_results() {
    let b = baseline(vec![
        entry("x.a", None, "r"),
        entry("x.gone", None, "renamed"),
        entry("x.gone", Some(A), "renamed"),
    ]);
    let unknown = b.unknown_entries(["x.a", "x.b"]);
    assert_eq!(unknown.len(), 2);
    let results = b.unknown_case_results(["x.a", "x.b"]);
    assert_eq!(results.len(), 1, "one result per unknown case");
    assert_eq!(results[0].id, "x.gone");
    assert_eq!(results[0].verdict, Verdict::Stale);
    assert!(
        results[0]
            .reason
            .as_deref()
            .unwrap()
            .contains("no case file defines")
    );
}

fn report(cases: Vec<CaseResult>) -> RunReport {
    RunReport {
        format_version: 1,
        run_id: "run-1".into(),
        harness_version: "0".into(),
        corpus: Default::default(),
        started_at: "2026-11-30T00:00:00Z".into(),
        finished_at: "2026-11-30T00:00:01Z".into(),
        duration_ms: 1,
        target: TargetSummary {
            kind: "built-in".into(),
            base_url: "http://127.0.0.1:1".into(),
            capabilities: vec![],
            header_names: vec![],
            implementation: None,
        },
        options: RunOptionsSummary {
            time_scale: 1.0,
            jobs: 1,
            shuffle_seed: None,
            proptest_seed: 0,
            baseline: None,
            filters: vec![],
            case_set_digest: String::new(),
        },
        verdict: Verdict::Fail,
        run_errors: vec![],
        summary: Summary::default(),
        not_judged: vec![],
        surfaces: vec![],
        requirements: vec![],
        streaming: Default::default(),
        cases,
        unmatched_provider_requests: Vec::new(),
        differential: None,
    }
}

#[test]
fn from_failures_writes_one_entry_per_failing_check_and_round_trips() {
    let mut error = case("x.err", vec![]);
    error.verdict = Verdict::Error;
    let mut no_checks = case("x.bare", vec![]);
    no_checks.verdict = Verdict::Fail;
    no_checks.reason = Some("failed oddly".into());
    let cases = vec![
        case("x.pass", vec![check("status", A, Verdict::Pass)]),
        case(
            "x.fail",
            vec![
                check("status", A, Verdict::Fail),
                check("header", B, Verdict::Warn),
            ],
        ),
        error,
        no_checks,
    ];
    let r = report(cases.clone());
    let b = Baseline::from_failures(&r);
    let keys: Vec<(&str, Option<&str>)> = b
        .expected_failures
        .iter()
        .map(|e| (e.case.as_str(), e.check.as_deref()))
        .collect();
    assert_eq!(
        keys,
        [("x.bare", None), ("x.fail", Some(A)), ("x.fail", Some(B))]
    );
    assert!(b.expected_failures[1].reason.contains("run run-1"));

    // Written, loaded, applied to the same results: every failure becomes XFAIL.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("baseline.json");
    std::fs::write(&path, b.to_json_string()).unwrap();
    let loaded = Baseline::load(&path).unwrap();
    assert_eq!(loaded, b);
    let verdicts: Vec<Verdict> = cases
        .into_iter()
        .map(|c| apply(&loaded, c).verdict)
        .collect();
    assert_eq!(
        verdicts,
        [
            Verdict::Pass,
            Verdict::Xfail,
            Verdict::Error,
            Verdict::Xfail
        ]
    );
}

#[test]
fn load_reports_bad_files_with_their_path() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.json");
    let error = Baseline::load(&missing).unwrap_err();
    assert!(matches!(error, BaselineError::Read { .. }));
    assert!(error.to_string().contains("missing.json"));

    let path = Path::new("b.json");
    let parse = |text: &str| Baseline::from_json_str(text, path);
    assert!(matches!(
        parse("{").unwrap_err(),
        BaselineError::Parse { .. }
    ));
    assert!(matches!(
        parse(r#"{"version": 2, "expected_failures": []}"#).unwrap_err(),
        BaselineError::Version { version: 2, .. }
    ));
    assert!(matches!(
        parse(r#"{"version": 1, "expected_failures": [], "extra": 1}"#).unwrap_err(),
        BaselineError::Parse { .. }
    ));
    for (text, problem) in [
        (
            r#"{"version":1,"expected_failures":[{"case":"","reason":"r"}]}"#,
            "case id is empty",
        ),
        (
            r#"{"version":1,"expected_failures":[{"case":"x.a","reason":" "}]}"#,
            "has no reason",
        ),
        (
            r#"{"version":1,"expected_failures":[{"case":"x.a","check":"","reason":"r"}]}"#,
            "empty check",
        ),
        (
            r#"{"version":1,"expected_failures":[{"case":"x.a","reason":"r"},{"case":"x.a","reason":"s"}]}"#,
            "listed twice",
        ),
    ] {
        let error = parse(text).unwrap_err();
        assert!(error.to_string().contains(problem), "{error}");
        assert!(error.to_string().contains("b.json"), "{error}");
    }
    let ok = parse(
        r#"{"version":1,"expected_failures":[{"case":"x.a","check":"status","reason":"r"}]}"#,
    )
    .unwrap();
    assert_eq!(ok.expected_failures[0].check.as_deref(), Some("status"));
}
