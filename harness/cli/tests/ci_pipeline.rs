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
