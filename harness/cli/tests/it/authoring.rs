//! A spec author's first hour: a new case with a misspelled need is caught by `lint` (with the
//! closest known name) and refused by `try`; a case no built-in runtime runs fails `try`;
//! `lint FILE…` lints exactly the files given (a file it could not read is never clean);
//! inside a checkout the commands use its `cases/` and say so first; `explain` of an unknown
//! id lists the closest ids.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn binary() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_conformance"));
    command
        .env_remove("CONFORMANCE_CASES")
        .env_remove("CONFORMANCE_TARGET");
    command
}

fn explain(output: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn checkout() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// A copy of a corpus case with its id changed and `needs` replaced.
fn new_case(dir: &Path, id: &str, needs: &[&str]) -> PathBuf {
    let source = checkout().join("cases/openwop/terminal-noop.json");
    let mut case: serde_json::Value =
        serde_json::from_slice(&std::fs::read(source).unwrap()).unwrap();
    case["id"] = serde_json::json!(id);
    case["needs"] = serde_json::json!(needs);
    case.as_object_mut().unwrap().remove("$schema");
    let file = dir.join(format!("{id}.json"));
    std::fs::write(&file, serde_json::to_vec_pretty(&case).unwrap()).unwrap();
    file
}

#[test]
fn a_misspelled_need_is_named_by_lint_with_the_closest_match_and_refused_by_try() {
    let dir = tempfile::tempdir().unwrap();
    let file = new_case(
        dir.path(),
        "w.authoring.misspelled-need",
        &["fixture:conformance-noop", "fixture:conformance-multinode"],
    );
    let lint = binary()
        .current_dir(dir.path())
        .arg("lint")
        .arg(&file)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&lint.stdout);
    assert_eq!(lint.status.code(), Some(2), "{}", explain(&lint));
    assert!(
        stdout.contains("/needs/1")
            && stdout.contains("unknown fixture `conformance-multinode`")
            && stdout.contains("did you mean `conformance-multi-node`?"),
        "{}",
        explain(&lint)
    );
    assert_eq!(
        stdout.matches("/needs/").count(),
        1,
        "one message for the one problem: {}",
        explain(&lint)
    );

    let tried = binary()
        .current_dir(dir.path())
        .arg("try")
        .arg(&file)
        .output()
        .unwrap();
    assert_ne!(tried.status.code(), Some(0), "{}", explain(&tried));
    assert!(
        String::from_utf8_lossy(&tried.stderr).contains("did you mean `conformance-multi-node`?"),
        "{}",
        explain(&tried)
    );
}

#[test]
fn try_fails_loudly_for_a_case_no_built_in_runtime_runs() {
    let dir = tempfile::tempdir().unwrap();
    // A known capability family that no built-in profile advertises: every runtime SKIPs it.
    let file = new_case(
        dir.path(),
        "w.authoring.never-runs",
        &["fixture:conformance-noop", "capability:sql"],
    );
    let tried = binary()
        .current_dir(dir.path())
        .arg("try")
        .arg(&file)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&tried.stdout);
    assert_eq!(tried.status.code(), Some(4), "{}", explain(&tried));
    assert!(
        stdout.contains("NOT READY") && stdout.contains("no built-in runtime runs the case"),
        "{}",
        explain(&tried)
    );
    assert!(
        String::from_utf8_lossy(&tried.stderr).starts_with("corpus: "),
        "the first line names the corpus: {}",
        explain(&tried)
    );
}

#[test]
fn lint_lints_exactly_the_files_given_and_never_calls_an_unread_one_clean() {
    let dir = tempfile::tempdir().unwrap();
    let good = new_case(
        dir.path(),
        "w.authoring.good",
        &["fixture:conformance-noop"],
    );
    let missing = dir.path().join("absent.json");
    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, "not a case").unwrap();
    let lint = binary()
        .current_dir(dir.path())
        .arg("lint")
        .args([&good, &missing, &notes])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&lint.stdout);
    assert_eq!(lint.status.code(), Some(2), "{}", explain(&lint));
    assert!(
        stdout.contains("absent.json: /: not linted: failed to read it"),
        "{}",
        explain(&lint)
    );
    assert!(
        stdout.contains("notes.txt: /: not linted: not a case file"),
        "{}",
        explain(&lint)
    );
    assert!(
        stdout.contains("2 problem(s) in 2 of 3 file(s) given; 1 clean"),
        "{}",
        explain(&lint)
    );

    let alone = binary()
        .current_dir(dir.path())
        .arg("lint")
        .arg(&good)
        .output()
        .unwrap();
    assert_eq!(alone.status.code(), Some(0), "{}", explain(&alone));
    assert!(
        String::from_utf8_lossy(&alone.stdout).contains("1 case file(s) linted: no problems"),
        "{}",
        explain(&alone)
    );
}

#[test]
fn inside_a_checkout_the_commands_use_its_cases_and_say_so_first() {
    let root = checkout();
    let lint = binary()
        .current_dir(root.join("harness"))
        .arg("lint")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&lint.stdout);
    let first = stdout.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("corpus: cases directory")
            && first.contains(&root.join("cases").display().to_string())
            && first.contains("this checkout's"),
        "{}",
        explain(&lint)
    );
    let outside = tempfile::tempdir().unwrap();
    let embedded = binary()
        .current_dir(outside.path())
        .arg("lint")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&embedded.stdout);
    assert!(
        stdout.starts_with("corpus: the embedded corpus"),
        "{}",
        explain(&embedded)
    );
}

#[test]
fn explain_of_an_unknown_id_lists_the_closest_ids() {
    let outside = tempfile::tempdir().unwrap();
    let output = binary()
        .current_dir(outside.path())
        .args(["explain", "w.cursor.end-of-logs"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", explain(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("no case `w.cursor.end-of-logs`")
            && stderr.contains("the closest ids: w.cursor.end-of-log"),
        "{}",
        explain(&output)
    );
}
