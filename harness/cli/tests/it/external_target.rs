//! `conformance run` against the built-in runtime gives the same verdicts as the same run with
//! `--target` against a separately started runtime (`conformance serve`), whose providers are
//! the fake providers the external run serves on fixed addresses.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Each case's verdict, and the failing checks' messages (for telling a difference apart).
fn verdicts(report: &Path) -> BTreeMap<String, (String, String)> {
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(report.join("report.json")).unwrap()).unwrap();
    report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let failing: Vec<String> = c["checks"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|k| k["verdict"] != "PASS")
                .map(|k| k.to_string())
                .collect();
            (
                c["id"].as_str().unwrap().to_string(),
                (
                    c["verdict"].as_str().unwrap().to_string(),
                    format!("{} {}", c["reason"], failing.join("\n")),
                ),
            )
        })
        .collect()
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
fn an_external_run_against_a_separately_started_runtime_gives_the_same_verdicts() {
    let binary = env!("CARGO_BIN_EXE_conformance");
    let cases = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../cases");
    let dir = tempfile::tempdir().unwrap();
    let (fakes, streaming) = (free_port(), free_port());
    let facts = dir.path().join("facts.json");
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

    // A separately started runtime, configured to call fake providers it does not own.
    let mut serve = Command::new(binary);
    serve
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--keep-alive-ms",
            "1000",
        ])
        // What the cases cannot discover (heartbeat ids and timings, the subscriber limit).
        .arg("--write-facts")
        .arg(&facts)
        .args([
            "--providers-at",
            &format!("127.0.0.1:{fakes}"),
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

    let external_dir = dir.path().join("external");
    let external = Command::new(binary)
        .args(["run", "--quiet", "--target", &url, "--cases"])
        .arg(&cases)
        .args([
            "--providers-listen",
            &format!("127.0.0.1:{fakes}"),
            "--providers-streaming-listen",
            &format!("127.0.0.1:{streaming}"),
        ])
        .arg("--facts-file")
        .arg(&facts)
        .args(["--proptest-seed", "7"])
        .arg("--report-dir")
        .arg(&external_dir)
        .envs(env)
        .output()
        .unwrap();
    let built_in_dir = dir.path().join("built-in");
    let built_in = Command::new(binary)
        .args(["run", "--quiet", "--proptest-seed", "7", "--cases"])
        .arg(&cases)
        .arg("--report-dir")
        .arg(&built_in_dir)
        .output()
        .unwrap();
    let external_verdicts = verdicts(&external_dir);
    let built_in_verdicts = verdicts(&built_in_dir);
    assert!(built_in_verdicts.len() >= 3);
    let differences: Vec<String> = built_in_verdicts
        .iter()
        .filter(|(id, (verdict, _))| external_verdicts.get(*id).map(|(v, _)| v) != Some(verdict))
        .map(|(id, (verdict, why))| {
            let (external_verdict, external_why) = external_verdicts
                .get(id)
                .cloned()
                .unwrap_or_else(|| ("(absent)".into(), String::new()));
            format!(
                "{id}: built-in {verdict}, external {external_verdict}\n  built-in: {why}\n  external: {external_why}"
            )
        })
        .collect();
    assert_eq!(external_verdicts.len(), built_in_verdicts.len());
    assert!(
        differences.is_empty(),
        "verdicts differ:\n{}\nexternal run stderr:\n{}\nbuilt-in run stderr:\n{}",
        differences.join("\n"),
        String::from_utf8_lossy(&external.stderr),
        String::from_utf8_lossy(&built_in.stderr)
    );
    assert_eq!(external.status.code(), built_in.status.code());
}
