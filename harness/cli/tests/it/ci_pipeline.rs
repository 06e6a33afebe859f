//! What a CI pipeline does with the installed binary: run it from a directory outside the
//! checkout (the corpus is embedded), against the built-in runtime and an external
//! `conformance serve`; split a run into partitions and merge their reports.
//!
//! Every test runs the one built binary on a small subset of the corpus: the properties hold
//! per case, so a few cases of each surface show them.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// A few cases of each surface, fast against the built-in runtime.
const SUBSET: [&str; 4] = ["--id", "x.idempotency", "--id", "w.cursor.e"];

fn binary() -> Command {
    Command::new(env!("CARGO_BIN_EXE_conformance"))
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn report(dir: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap()
}

/// Case id → verdict.
fn verdicts(dir: &Path) -> BTreeMap<String, String> {
    report(dir)["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_string(),
                c["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn explain(output: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Kills the server when the test ends, however it ends.
struct Server(std::process::Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn the_version_names_the_embedded_corpus_and_its_digest() {
    let output = binary().arg("--version").output().unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    let digest = regex_like_hex(&text);
    assert!(output.status.success(), "{}", explain(&output));
    assert!(text.contains("corpus 0.1.0"), "{text}");
    assert_eq!(digest.len(), 64, "{text}");
}

fn regex_like_hex(text: &str) -> String {
    text.split("sha256 ")
        .nth(1)
        .unwrap_or_default()
        .chars()
        .take_while(char::is_ascii_hexdigit)
        .collect()
}

#[test]
fn outside_the_checkout_the_binary_certifies_the_built_in_runtime_and_an_external_serve() {
    let outside = tempfile::tempdir().unwrap();
    assert!(!outside.path().join("cases").exists());

    // The built-in runtime, from a directory with no cases in it.
    let built_in = binary()
        .current_dir(outside.path())
        .args([
            "run",
            "--quiet",
            "--proptest-seed",
            "7",
            "--report-dir",
            "built-in",
        ])
        .args(SUBSET)
        .output()
        .unwrap();
    assert_eq!(built_in.status.code(), Some(0), "{}", explain(&built_in));
    let written = report(&outside.path().join("built-in"));
    assert_eq!(written["corpus"]["source"], "embedded");
    assert_eq!(
        written["corpus"]["digest"].as_str().unwrap(),
        regex_like_hex(&String::from_utf8_lossy(
            &binary().arg("--version").output().unwrap().stdout
        ))
    );
    let built_in_verdicts = verdicts(&outside.path().join("built-in"));
    assert!(built_in_verdicts.keys().any(|id| id.starts_with("x.")));
    assert!(built_in_verdicts.keys().any(|id| id.starts_with("w.")));

    // An external `conformance serve`, started from there too, with the keys and the fake
    // providers the run serves.
    let (fakes, streaming) = (free_port(), free_port());
    let canary = format!("sk-canary-{}", uuid::Uuid::new_v4().simple());
    let auth_a = format!(
        "Authorization: Bearer hk_test_a_{}",
        uuid::Uuid::new_v4().simple()
    );
    let auth_b = format!(
        "Authorization: Bearer hk_test_b_{}",
        uuid::Uuid::new_v4().simple()
    );
    let env = [
        ("CONFORMANCE_CANARY", canary.as_str()),
        ("CONFORMANCE_AUTH_A", auth_a.as_str()),
        ("CONFORMANCE_AUTH_B", auth_b.as_str()),
    ];
    let mut serve = binary();
    serve
        .current_dir(outside.path())
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--keep-alive-ms",
            "1000",
        ])
        .args(["--write-facts", "facts.json"])
        .args(["--providers-at", &format!("127.0.0.1:{fakes}")])
        .args([
            "--providers-streaming-at",
            &format!("127.0.0.1:{streaming}"),
        ])
        .envs(env)
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut server = Server(serve.spawn().unwrap());
    let mut first_line = String::new();
    BufReader::new(server.0.stdout.take().unwrap())
        .read_line(&mut first_line)
        .unwrap();
    let url = first_line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line: {first_line:?}"))
        .to_string();
    let external = binary()
        .current_dir(outside.path())
        .args(["run", "--quiet", "--target", &url, "--proptest-seed", "7"])
        .args(["--providers-listen", &format!("127.0.0.1:{fakes}")])
        .args([
            "--providers-streaming-listen",
            &format!("127.0.0.1:{streaming}"),
        ])
        .args(["--facts-file", "facts.json", "--report-dir", "external"])
        .args(SUBSET)
        .envs(env)
        .output()
        .unwrap();
    assert_eq!(external.status.code(), Some(0), "{}", explain(&external));
    assert_eq!(
        verdicts(&outside.path().join("external")),
        built_in_verdicts
    );
}

#[test]
fn partitions_merged_give_the_verdicts_of_the_unsplit_run() {
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str, extra: &[&str]| {
        let output = binary()
            .current_dir(dir.path())
            .args([
                "run",
                "--quiet",
                "--proptest-seed",
                "11",
                "--report-dir",
                name,
            ])
            .args(SUBSET)
            .args(["--id", "x.cursors"])
            .args(extra)
            .output()
            .unwrap();
        assert!(output.status.code().is_some(), "{}", explain(&output));
        output.status.code()
    };
    let whole = run("whole", &[]);
    let mut slices = Vec::new();
    for k in 1..=3 {
        let name = format!("part{k}");
        run(&name, &["--partition", &format!("{k}/3")]);
        let part = verdicts(&dir.path().join(&name));
        assert!(
            !part.is_empty(),
            "partition {k}/3 is empty: pick another subset"
        );
        slices.push(part);
    }
    // Each case ran in exactly one partition.
    let total: usize = slices.iter().map(BTreeMap::len).sum();
    assert_eq!(total, verdicts(&dir.path().join("whole")).len());

    let merge = binary()
        .current_dir(dir.path())
        .args([
            "merge",
            "part3/report.json",
            "part1",
            "part2",
            "--report-dir",
            "merged",
        ])
        .output()
        .unwrap();
    assert_eq!(merge.status.code(), whole, "{}", explain(&merge));
    let merged = report(&dir.path().join("merged"));
    let unsplit = report(&dir.path().join("whole"));
    let ids = |r: &serde_json::Value| -> Vec<(String, String)> {
        r["cases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (c["id"].to_string(), c["verdict"].to_string()))
            .collect()
    };
    // The same cases with the same verdicts, in the unsplit run's order.
    assert_eq!(ids(&merged), ids(&unsplit));
    for same in [
        "verdict",
        "summary",
        "requirements",
        "not_judged",
        "surfaces",
        "corpus",
    ] {
        assert_eq!(merged[same], unsplit[same], "{same}");
    }
    assert_eq!(
        merged["options"]["case_set_digest"],
        unsplit["options"]["case_set_digest"]
    );
    assert_eq!(merged["options"]["filters"], unsplit["options"]["filters"]);
    for file in ["junit.xml", "report.html", "summary.md"] {
        assert!(dir.path().join("merged").join(file).is_file(), "{file}");
    }

    // Not one run: a partition missing, a partition twice, another target.
    let refused = |args: &[&str], why: &str| {
        let output = binary()
            .current_dir(dir.path())
            .arg("merge")
            .args(args)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{}", explain(&output));
        assert!(
            String::from_utf8_lossy(&output.stderr).contains(why),
            "{}",
            explain(&output)
        );
    };
    refused(&["part1", "part2"], "missing partition(s) 3/3");
    refused(
        &["part1", "part2", "part2", "part3"],
        "partition hash:2/3 is both",
    );
    refused(&["part1", "whole"], "not the report of a partition");
    let mut other = report(&dir.path().join("part3"));
    other["target"]["kind"] = "external".into();
    other["target"]["base_url"] = "http://elsewhere.test".into();
    std::fs::create_dir_all(dir.path().join("other")).unwrap();
    std::fs::write(dir.path().join("other/report.json"), other.to_string()).unwrap();
    refused(&["part1", "part2", "other"], "target differs");
    let mut other = report(&dir.path().join("part3"));
    other["corpus"]["digest"] = "0".repeat(64).into();
    std::fs::write(dir.path().join("other/report.json"), other.to_string()).unwrap();
    refused(&["part1", "part2", "other"], "corpus differs");
}

/// Copies a directory tree (the cases, so a test can change one of them).
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Replaces the first `from` after `anchor` in a file with `to` (same length: one byte moved).
fn change_one_byte(file: &Path, anchor: &str, from: u8, to: u8) {
    let mut bytes = std::fs::read(file).unwrap();
    let start = String::from_utf8_lossy(&bytes)
        .find(anchor)
        .unwrap_or_else(|| panic!("`{anchor}` not in {}", file.display()))
        + anchor.len();
    let at = start + bytes[start..].iter().position(|b| *b == from).unwrap();
    bytes[at] = to;
    std::fs::write(file, bytes).unwrap();
}

#[test]
fn a_claim_verifies_and_a_changed_byte_of_it_or_of_a_case_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let cases = dir.path().join("cases");
    copy_tree(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../cases"),
        &cases,
    );
    let keys = binary()
        .current_dir(dir.path())
        .args([
            "claim-key",
            "--secret",
            "claim.key",
            "--public",
            "claim.pub",
        ])
        .output()
        .unwrap();
    assert!(keys.status.success(), "{}", explain(&keys));
    let secret = std::fs::read_to_string(dir.path().join("claim.key")).unwrap();
    let run = binary()
        .current_dir(dir.path())
        .args([
            "run",
            "--quiet",
            "--cases",
            "cases",
            "--report-dir",
            "report",
        ])
        .args(["--claim", "claim.json"])
        .args(SUBSET)
        .env("CONFORMANCE_CLAIM_KEY", secret.trim())
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(0), "{}", explain(&run));
    assert!(
        !String::from_utf8_lossy(&run.stderr).contains(secret.trim())
            && !String::from_utf8_lossy(&run.stdout).contains(secret.trim()),
        "the secret key was printed"
    );
    let claim_text = std::fs::read_to_string(dir.path().join("claim.json")).unwrap();
    assert!(!claim_text.contains(secret.trim()));
    let claim: serde_json::Value = serde_json::from_str(&claim_text).unwrap();
    let validator = spec::schema::compile(&harness::report::claim::claim_schema()).unwrap();
    assert!(
        validator.is_valid(&claim),
        "the claim does not match its published schema"
    );
    let named: Vec<String> = claim["claim"]["digests"]["cases"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(named.len(), verdicts(&dir.path().join("report")).len());
    for (id, d) in claim["claim"]["dispositions"].as_object().unwrap() {
        if d["cases"].as_array().unwrap().is_empty() {
            assert_eq!(d["disposition"], "not-judged", "{id}");
            assert_eq!(d["reason"], "no case of the run proves it", "{id}");
        }
    }
    assert!(
        claim["claim"]["dispositions"]
            .as_object()
            .unwrap()
            .values()
            .any(|d| d["disposition"] == "judged-pass")
    );
    let badge = std::fs::read_to_string(dir.path().join("report/badge.svg")).unwrap();
    assert!(
        badge.starts_with("<svg") && badge.contains("PASS"),
        "{badge}"
    );
    let line = std::fs::read_to_string(dir.path().join("report/claim-summary.md")).unwrap();
    assert_eq!(line.lines().count(), 1, "{line}");

    let verify = |claim: &str| {
        binary()
            .current_dir(dir.path())
            .args([
                "verify-claim",
                claim,
                "--key",
                "claim.pub",
                "--cases",
                "cases",
            ])
            .output()
            .unwrap()
    };
    let verified = verify("claim.json");
    assert_eq!(verified.status.code(), Some(0), "{}", explain(&verified));
    assert_eq!(
        String::from_utf8_lossy(&verified.stdout).trim(),
        format!("verified: {}", line.trim())
    );

    // One byte of the claim: the member it is in is named.
    let refused_with = |claim: &str, what: &str| {
        let output = verify(claim);
        assert_eq!(output.status.code(), Some(1), "{}", explain(&output));
        assert!(
            String::from_utf8_lossy(&output.stdout).contains(what),
            "{}",
            explain(&output)
        );
    };
    let copy = |name: &str| {
        std::fs::copy(dir.path().join("claim.json"), dir.path().join(name)).unwrap();
        dir.path().join(name)
    };
    change_one_byte(&copy("run-id.json"), "\"run_id\": \"", b'Z', b'Y');
    refused_with("run-id.json", "claim member `run_id` changed after signing");
    let requirement = claim["claim"]["dispositions"]
        .as_object()
        .unwrap()
        .iter()
        .find(|(_, d)| d["disposition"] == "judged-pass")
        .map(|(id, _)| id.clone())
        .unwrap();
    change_one_byte(
        &copy("disposition.json"),
        &format!("\"{requirement}\": {{"),
        b'S',
        b'T',
    );
    refused_with(
        "disposition.json",
        &format!("claim member `dispositions/{requirement}/level` changed after signing"),
    );
    let signature = claim["signature"]["value"].as_str().unwrap();
    let flipped = if signature.starts_with('0') {
        b'1'
    } else {
        b'0'
    };
    change_one_byte(
        &copy("signature.json"),
        "\"value\": \"",
        signature.as_bytes()[0],
        flipped,
    );
    refused_with(
        "signature.json",
        "the signature does not match the signed manifest",
    );
    change_one_byte(&copy("syntax.json"), "\"claim\"", b':', b';');
    refused_with("syntax.json", "does not read as a claim");
    // Another key.
    let other = binary()
        .current_dir(dir.path())
        .args([
            "claim-key",
            "--secret",
            "other.key",
            "--public",
            "other.pub",
        ])
        .output()
        .unwrap();
    assert!(other.status.success());
    let output = binary()
        .current_dir(dir.path())
        .args([
            "verify-claim",
            "claim.json",
            "--key",
            "other.pub",
            "--cases",
            "cases",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", explain(&output));

    // One byte of a case file the claim names.
    let file = &named[0];
    change_one_byte(&cases.join(file), "\"title\": \"", b' ', b'_');
    refused_with("claim.json", &format!("case file `{file}` changed"));
}

#[test]
fn verify_claim_refuses_a_claim_with_a_blocked_must() {
    let dir = tempfile::tempdir().unwrap();
    let keys = binary()
        .current_dir(dir.path())
        .args([
            "claim-key",
            "--secret",
            "claim.key",
            "--public",
            "claim.pub",
        ])
        .output()
        .unwrap();
    assert!(keys.status.success(), "{}", explain(&keys));
    // The built-in runtime, told it lists neither fixture the case can use, which the operator
    // requires: BLOCKED.
    std::fs::write(
        dir.path().join("capabilities.json"),
        r#"{"remove": ["fixture:conformance-cancellable", "fixture:conformance-delay"]}"#,
    )
    .unwrap();
    let run = binary()
        .current_dir(dir.path())
        .args([
            "run",
            "--quiet",
            "--id",
            "w.terminal.cancel",
            "--report-dir",
            "report",
        ])
        .args([
            "--capabilities",
            "capabilities.json",
            "--require-all-fixtures",
        ])
        .args(["--claim", "claim.json", "--claim-key-file", "claim.key"])
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(4), "{}", explain(&run));
    let output = binary()
        .current_dir(dir.path())
        .args(["verify-claim", "claim.json", "--key", "claim.pub"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", explain(&output));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains("MUST requirement(s) BLOCKED (not judged)"),
        "{text}"
    );
}

fn repository_file(path: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join(path),
    )
    .unwrap()
}

/// The lines between `# install-steps:begin` and `# install-steps:end`.
fn install_steps(text: &str) -> Vec<String> {
    text.lines()
        .skip_while(|l| l.trim() != "# install-steps:begin")
        .skip(1)
        .take_while(|l| l.trim() != "# install-steps:end")
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect()
}

#[test]
fn the_dockerfile_and_the_action_install_as_the_readme_says() {
    let readme = install_steps(&repository_file("README.md"));
    assert!(!readme.is_empty(), "README.md has no install steps");
    let dockerfile = repository_file("Dockerfile");
    let docker: Vec<String> = install_steps(&dockerfile)
        .into_iter()
        .map(|l| l.strip_prefix("RUN ").unwrap_or(&l).to_string())
        .collect();
    assert_eq!(
        docker, readme,
        "the Dockerfile's build steps are README.md's"
    );
    // Multi-stage, and the image holds only the (static) binary.
    assert!(dockerfile.contains(" AS build"));
    assert!(dockerfile.contains("FROM scratch"));
    assert!(dockerfile.contains("-alpine"), "musl: a static binary");

    let action = repository_file("action.yml");
    for step in &readme {
        assert!(
            action.contains(&format!("run: {step}")),
            "action.yml installs with `{step}`"
        );
    }
    assert!(action.contains("using: composite"));
    assert!(action.contains(".ci/conformance-action.sh"));
    assert!(action.contains("actions/upload-artifact"));
    assert!(action.contains("if: always()"));
}

#[test]
fn the_action_script_writes_the_step_summary_and_the_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.ci/conformance-action.sh");
    let step = |args: &str, report_dir: &str| {
        let summary = dir.path().join(format!("{report_dir}.summary"));
        let output_file = dir.path().join(format!("{report_dir}.output"));
        std::fs::write(&summary, "# earlier steps\n").unwrap();
        let output = Command::new("bash")
            .arg(&script)
            .current_dir(dir.path())
            .env("CONFORMANCE_BIN", env!("CARGO_BIN_EXE_conformance"))
            .env("CONFORMANCE_ACTION_TARGET", "")
            .env("CONFORMANCE_ACTION_ARGS", args)
            .env("CONFORMANCE_ACTION_REPORT_DIR", report_dir)
            .env("GITHUB_STEP_SUMMARY", &summary)
            .env("GITHUB_OUTPUT", &output_file)
            .output()
            .unwrap();
        // The step succeeds whatever the verdict, so that the upload step runs.
        assert!(output.status.success(), "{}", explain(&output));
        (
            std::fs::read_to_string(summary).unwrap(),
            std::fs::read_to_string(output_file).unwrap(),
        )
    };
    let (summary, outputs) = step("--id x.idempotency --proptest-seed 3", "clean");
    let written = std::fs::read_to_string(dir.path().join("clean/summary.md")).unwrap();
    assert_eq!(summary, format!("# earlier steps\n{written}"));
    assert_eq!(outputs, "exit-code=0\n");
    // A host that does not conform: its exit code is the step's output.
    let defect = "x-replay-creates-new-execution";
    assert!(
        conformance_cli::launch::defect_catalogue()
            .iter()
            .any(|d| d.name == defect)
    );
    let (summary, outputs) = step(&format!("--id x.idempotency --defect {defect}"), "broken");
    assert!(summary.contains("FAIL"), "{summary}");
    assert_eq!(outputs, "exit-code=1\n");
    // No report at all (a usage error): the summary says so.
    let (summary, outputs) = step("--no-such-flag", "usage");
    assert!(
        summary.contains("conformance wrote no report (exit code 2)"),
        "{summary}"
    );
    assert_eq!(outputs, "exit-code=2\n");
}

#[test]
fn differential_mode_shows_the_difference_a_defect_fail_comes_from() {
    let dir = tempfile::tempdir().unwrap();
    let case = "x.idempotency.replay-same-request";
    let run = binary()
        .current_dir(dir.path())
        .args([
            "run",
            "--quiet",
            "--differential",
            "--id",
            case,
            "--report-dir",
            "report",
        ])
        .args([
            "--defect",
            "x-replay-creates-new-execution",
            "--proptest-seed",
            "1",
        ])
        .output()
        .unwrap();
    // The defect's FAIL is the run's verdict; the differences themselves are never one.
    assert_eq!(run.status.code(), Some(1), "{}", explain(&run));
    let report_json = report(&dir.path().join("report"));
    assert_eq!(report_json["cases"][0]["verdict"], "FAIL");
    let differential: harness::report::differential::Differential =
        serde_json::from_value(report_json["differential"].clone()).unwrap();
    assert_eq!(differential.cases_compared, 1);
    let mut difference = differential.cases[0].clone();
    assert_eq!(difference.case, case);
    assert_eq!(
        (difference.target_verdict, difference.reference_verdict),
        (
            harness::verdict::Verdict::Fail,
            harness::verdict::Verdict::Pass
        )
    );
    // The snapshot keeps the rows that differ; an execution's status in an answer is the
    // moment it was read (`accepted`, `routing`, `running` or already `succeeded`), not the
    // defect: it is written `<as read>`, and a row that then reads the same on both sides is
    // dropped.
    use harness::report::differential::RowKind;
    let status = regex::Regex::new(r#""status": "[a-z]+""#).unwrap();
    let in_flight = |line: &mut Option<String>| {
        if let Some(text) = line {
            *text = status
                .replace_all(text, "\"status\": \"<as read>\"")
                .into_owned();
        }
    };
    for row in &mut difference.rows {
        in_flight(&mut row.target);
        in_flight(&mut row.reference);
    }
    difference.rows.retain(|row| {
        !matches!(row.kind, RowKind::Same | RowKind::Gap) && row.target != row.reference
    });
    insta::assert_snapshot!(
        "differential_replay_creates_new_execution",
        harness::report::differential::render_text(&difference, 44)
    );
    // The HTML report shows it as an aligned two-column transcript.
    let html = std::fs::read_to_string(dir.path().join("report/report.html")).unwrap();
    let section = &html[html.find("<section id=\"differential\">").unwrap()..];
    assert!(
        section.contains("<table class=\"two-column\">"),
        "{section}"
    );
    assert!(
        section.contains(
            "<tr class=\"changed\"><td><code>&lt;   &quot;execution_id&quot;: &quot;&lt;id:2&gt;&quot;,</code></td><td><code>&lt;   &quot;execution_id&quot;: &quot;&lt;id:1&gt;&quot;,</code></td></tr>"
        ),
        "{section}"
    );
    let summary = std::fs::read_to_string(dir.path().join("report/summary.md")).unwrap();
    assert!(
        summary.contains("Differences from the built-in reference runtime (INFO)"),
        "{summary}"
    );
}

#[test]
fn differential_mode_against_the_clean_runtime_finds_no_difference_in_deterministic_cases() {
    let dir = tempfile::tempdir().unwrap();
    let run = binary()
        .current_dir(dir.path())
        .args([
            "run",
            "--quiet",
            "--differential",
            "--proptest-seed",
            "1",
            "--report-dir",
            "report",
        ])
        .args([
            "--id",
            "x.idempotency.replay-same-request",
            "--id",
            "w.cursor.end-of-log",
        ])
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(0), "{}", explain(&run));
    let differential = &report(&dir.path().join("report"))["differential"];
    assert_eq!(differential["cases_compared"], 2);
    for case in differential["cases"].as_array().unwrap() {
        // Only the moment-of-reading status may differ between two clean runtimes.
        for row in case["rows"].as_array().unwrap() {
            if row["kind"] != "same" && row["kind"] != "gap" {
                assert!(
                    row["target"]
                        .as_str()
                        .unwrap_or_default()
                        .contains("\"status\"")
                        && row["reference"]
                            .as_str()
                            .unwrap_or_default()
                            .contains("\"status\""),
                    "{case}"
                );
            }
        }
    }
}
