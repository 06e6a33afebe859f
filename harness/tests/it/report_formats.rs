//! Behaviour of the report writers: the files `write_all` produces, the JSON schema, the
//! JUnit mapping, the HTML's structure and bounds, odd data (empty runs, huge bodies,
//! control characters), and that no secret or unescaped markup gets through.

use serde_json::json;
use std::collections::BTreeMap;

use crate::sample_report::{fail_case, realistic_report};
use harness::report::{self, RunReport, Summary, html, json, junit, markdown, repro, write_all};
use harness::transcript::{BodyEnd, FrameKind, FrameRecord};
use harness::verdict::Verdict;

fn empty_report() -> RunReport {
    let mut report = realistic_report();
    report.cases.clear();
    report.requirements.clear();
    report.not_judged.clear();
    report.surfaces.clear();
    report.summary = Summary {
        total: 0,
        by_verdict: BTreeMap::new(),
    };
    report.verdict = Verdict::Error;
    report.run_errors = vec!["discovery was unreachable: connection refused".into()];
    report
}

#[test]
fn write_all_writes_every_format_and_repro_only_for_attention_cases() {
    let dir = tempfile::tempdir().unwrap();
    let report = realistic_report();
    let written = write_all(&report, dir.path()).unwrap();
    for path in [
        &written.json,
        &written.junit,
        &written.html,
        &written.markdown,
    ] {
        assert!(path.is_file(), "{} is written", path.display());
    }
    let names: Vec<String> = written
        .repro_scripts
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    // FAIL and ERROR get one; PASS, SKIP and XFAIL do not.
    assert_eq!(
        names,
        [
            "w.resume.exclusive-cursor.sh",
            "x.idempotency.different-request-fails.sh"
        ]
    );
    let script_file = dir
        .path()
        .join("repro/w.resume.exclusive-cursor.scripts/slow.json");
    let script: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(script_file).unwrap()).unwrap();
    assert_eq!(script["id"], "w.resume.exclusive-cursor.slow");

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&written.repro_scripts[0])
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o111, 0o111, "repro scripts are executable");
    }

    let back = json::from_json_str(&std::fs::read_to_string(&written.json).unwrap()).unwrap();
    assert_eq!(back, report, "report.json round-trips to the same model");
}

#[test]
fn repro_scripts_are_valid_bash_and_hold_no_secret() {
    let report = realistic_report();
    for case in report
        .cases
        .iter()
        .filter(|c| repro::needs_repro(c.verdict))
    {
        let bundle = repro::repro_bundle(&report, case);
        assert!(!bundle.script.contains("[REDACTED]"), "{}", bundle.script);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("script.sh");
        std::fs::write(&path, &bundle.script).unwrap();
        if let Ok(status) = std::process::Command::new("bash")
            .arg("-n")
            .arg(&path)
            .status()
        {
            assert!(status.success(), "bash -n rejects:\n{}", bundle.script);
        }
    }
    let fail = fail_case();
    let script = repro::repro_bundle(&report, &fail).script;
    assert!(script.contains("-H \"authorization: $CONFORMANCE_AUTH\""));
    assert!(script.contains("CONFORMANCE_AUTH    value of the `authorization` header"));
    assert!(script.contains(
        "curl -sS -i -N --max-time 5 \"$TARGET\"'/runs/run_7/events?streamMode=updates'"
    ));
    assert!(script.contains("-H 'last-event-id: 2'"));
    assert!(script.contains(
        "conformance mock-provider --scripts \"$HERE/w.resume.exclusive-cursor.scripts\""
    ));
    // A body with a quote and a dollar sign is replayed literally.
    assert!(script.contains(r#"it'\''s $HOME"#));
}

#[test]
fn large_request_bodies_go_to_side_files() {
    let mut report = realistic_report();
    let big = "x".repeat(repro::INLINE_BODY_LIMIT + 1);
    report.cases[1].transcript[0].exchanges[0].request.body = Some(big.clone());
    let bundle = repro::repro_bundle(&report, &report.cases[1]);
    assert!(!bundle.script.contains(&big));
    let body = bundle
        .files
        .iter()
        .find(|f| f.path.ends_with(".body"))
        .expect("a body file");
    assert_eq!(body.contents, big);
    assert!(
        bundle
            .script
            .contains(&format!("--data-binary @\"$HERE\"/'{}'", body.path))
    );
}

#[test]
fn concurrent_identical_requests_replay_as_a_background_loop() {
    let mut report = realistic_report();
    let case = report
        .cases
        .iter_mut()
        .find(|c| c.id == "x.idempotency.concurrent-same-key")
        .unwrap();
    case.verdict = Verdict::Fail;
    let case = case.clone();
    let script = repro::repro_bundle(&report, &case).script;
    assert!(script.contains("for _ in $(seq 3); do"), "{script}");
    assert!(script.contains(" &\ndone\nwait"), "{script}");
    assert!(script.contains("recorded: 2× 202, 1× 200"), "{script}");
}

#[test]
fn report_validates_against_its_schema() {
    let schema = report::report_schema();
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    let validator = spec::schema::compile(&schema).expect("the report schema compiles");
    for report in [realistic_report(), empty_report()] {
        let value = serde_json::to_value(&report).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&value)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{errors:#?}");
    }
    // And it rejects what is not a report.
    let mut broken = serde_json::to_value(realistic_report()).unwrap();
    broken["cases"][0]["verdict"] = serde_json::json!("MAYBE");
    assert!(!validator.is_valid(&broken));
}

#[test]
fn junit_maps_verdicts_to_statuses() {
    let xml = junit::to_junit_xml(&realistic_report()).unwrap();
    let parsed = quick_junit::Report::deserialize_from_str(&xml).expect("valid JUnit XML");
    let suites: Vec<&str> = parsed.test_suites.iter().map(|s| s.name.as_str()).collect();
    // What the run could not judge is an error test case of the `harness` suite.
    assert_eq!(suites, ["execution", "openwop", "harness"]);
    assert_eq!(parsed.tests, 7);
    assert_eq!(parsed.failures, 1);
    // The ERROR case, the BLOCKED MUST case, and `not-judged`.
    assert_eq!(parsed.errors, 3);
    assert!(xml.contains(r#"type="blocked""#), "{xml}");
    assert!(xml.contains(r#"type="not-judged""#), "{xml}");
    // SKIP and XFAIL are skipped (a skip is not a pass).
    assert_eq!(parsed.skipped, 2);
    assert!(xml.contains(r#"<property name="level" value="MUST"/>"#));
    assert!(xml.contains(r#"<property name="requirements" value="events.resume.exclusive-cursor,events.sse.keep-alive-30s"/>"#));
}

#[test]
fn junit_run_errors_and_control_characters() {
    let mut report = empty_report();
    report
        .run_errors
        .push("bell \u{7} and escape \u{1b}[31m".into());
    let xml = junit::to_junit_xml(&report).unwrap();
    assert!(xml.contains("bell \\u{7} and escape \\u{1b}[31m"), "{xml}");
    let parsed = quick_junit::Report::deserialize_from_str(&xml).expect("valid JUnit XML");
    assert_eq!(parsed.errors, 1);
}

#[test]
fn html_is_self_contained_and_escaped() {
    let page = html::to_html(&realistic_report());
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(
        !page.contains("<script"),
        "no script, and peer data is escaped"
    );
    assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    for external in ["src=\"http", "href=\"http", "@import", "url("] {
        assert!(!page.contains(external), "no external asset ({external})");
    }
    // Failing cases open, passing ones collapsed.
    assert!(
        page.contains("<details class=\"case v-fail\" id=\"case-w.resume.exclusive-cursor\" open>")
    );
    assert!(page.contains(
        "<details class=\"case v-error\" id=\"case-x.idempotency.different-request-fails\" open>"
    ));
    assert!(
        page.contains("<details class=\"case v-pass ok\" id=\"case-x.submission.returns-202\">")
    );
    assert!(page.contains(
        "<details class=\"case v-xfail ok\" id=\"case-x.idempotency.concurrent-same-key\">"
    ));
    // The diff, the SSE frames with their timing, the comment, the truncated frame.
    assert!(
        page.contains("<span class=\"del\">- sequence 3 run.step.completed</span>")
            || page.contains("<span class=\"ins\">+ sequence 2 run.step.started</span>")
    );
    assert!(page.contains("(comment / keep-alive)"));
    assert!(page.contains("Truncated final frame"));
    assert!(
        page.contains("<span class=\"absent\">&quot;&quot; (empty id)</span>"),
        "an empty id: is told from an absent one"
    );
    assert!(page.contains("[REDACTED]"));
}

#[test]
fn empty_run_renders_everywhere() {
    let report = empty_report();
    let dir = tempfile::tempdir().unwrap();
    let written = write_all(&report, &dir.path().join("nested/run")).unwrap();
    assert!(written.repro_scripts.is_empty());
    let page = std::fs::read_to_string(&written.html).unwrap();
    assert!(page.contains("No case ran."));
    assert!(page.contains("discovery was unreachable"));
    let summary = markdown::to_markdown(&report);
    assert!(summary.contains("## 💥 Conformance: ERROR"));
    assert!(summary.contains("Exit code 3"));
}

#[test]
fn huge_bodies_and_streams_are_cut_in_the_html() {
    let mut report = realistic_report();
    let response = report.cases[1].transcript[1].exchanges[0]
        .response
        .as_mut()
        .unwrap();
    response.body = "y".repeat(20 * 1024 * 1024);
    response.frames = (0..50_000)
        .map(|i| FrameRecord {
            at_ms: i,
            kind: FrameKind::Comment {
                text: "z".repeat(100),
            },
        })
        .collect();
    response.end = BodyEnd::TooLarge("over 16 MiB".into());
    // Many steps and many failing checks with large values are bounded too.
    let step = report.cases[1].transcript[0].clone();
    report.cases[1]
        .transcript
        .extend(std::iter::repeat_n(step, 1000));
    let mut failing = report.cases[1].checks[1].clone();
    failing.expected = Some("e\n".repeat(10_000));
    failing.actual = Some("a\n".repeat(10_000));
    report.cases[1]
        .checks
        .extend(std::iter::repeat_n(failing, 1000));
    let page = html::to_html(&report);
    assert!(page.len() < 4 * 1024 * 1024, "page is {} bytes", page.len());
    assert!(page.contains("more byte(s) not shown in this page"));
    assert!(page.contains("frame(s) not shown"));
    assert!(page.contains("too large: over 16 MiB"));
    assert!(page.contains("step(s) not shown"));
    assert!(page.contains("more check(s) not listed"));
}

#[test]
fn write_errors_name_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("not-a-dir");
    std::fs::write(&file, "x").unwrap();
    let error = write_all(&realistic_report(), &file.join("reports")).unwrap_err();
    assert!(error.to_string().contains("not-a-dir"), "{error}");
}

#[test]
fn a_generated_steps_failures_annotate_only_the_counterexamples_run() {
    let report = realistic_report();
    let mut case = fail_case();
    // The resume step ran once per generated cursor: `1` held, `-1` is the counterexample.
    let resume = case
        .transcript
        .iter()
        .find(|s| s.step == "resume")
        .cloned()
        .unwrap();
    let mut held = resume.clone();
    held.bindings = vec![("cursor".into(), json!("1"))];
    let mut failed = resume;
    failed.bindings = vec![("cursor".into(), json!("-1"))];
    case.transcript.retain(|s| s.step != "resume");
    case.transcript.extend([held, failed]);
    case.counterexample = Some(harness::report::Counterexample {
        step: "resume".into(),
        strategy: "MalformedCursor".into(),
        seed: 7,
        value: json!("-1"),
    });
    let script = repro::repro_bundle(&report, &case).script;
    let held_at = script.find("# binding cursor = \"1\"").unwrap();
    let failed_at = script.find("# binding cursor = \"-1\"").unwrap();
    let comment = "# FAIL: exclusive_after at /steps/2/expect/0";
    assert_eq!(script.matches(comment).count(), 1, "{script}");
    let comment_at = script.find(comment).unwrap();
    assert!(held_at < failed_at && failed_at < comment_at, "{script}");
}
