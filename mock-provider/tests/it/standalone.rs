//! Standalone use: scripts from files, through the library entry point and the binary.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use mock_provider::{ServeError, ServeOptions, marker, serve_from_files};
use serde_json::{Value, json};

use crate::support::{CANARY, client};

fn script_file(dir: &std::path::Path, id: &str) {
    let script = json!({
        "id": id,
        "calls": {"openai-primary": [
            {"kind": "completion", "chunks": [{"kind": "text", "delta": "from a file"}]}
        ]}
    });
    std::fs::write(dir.join(format!("{id}.json")), script.to_string()).unwrap();
    std::fs::write(dir.join("notes.txt"), "not a script").unwrap();
}

async fn ask(base: &str, id: &str) -> Value {
    client()
        .post(format!("{base}/openai-primary/v1/chat/completions"))
        .bearer_auth(CANARY)
        .json(&json!({"model": "m", "messages": [{"role": "user", "content": marker(id)}]}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

#[tokio::test]
async fn serve_from_files_serves_every_script_file() {
    let dir = tempfile::tempdir().unwrap();
    script_file(dir.path(), "file-script-1");
    let providers = serve_from_files(ServeOptions {
        listen: "127.0.0.1:0".parse().unwrap(),
        streaming_listen: None,
        scripts_dir: dir.path().to_owned(),
        canary: CANARY.to_owned(),
        instances: Vec::new(),
    })
    .await
    .expect("serves");
    let report = providers.startup_report();
    let first = report.lines().next().unwrap();
    assert_eq!(
        first,
        format!("listening on http://{}", providers.wiremock_address())
    );
    let body = ask(
        &format!("http://{}", providers.wiremock_address()),
        "file-script-1",
    )
    .await;
    assert_eq!(body["choices"][0]["message"]["content"], "from a file");
    providers.shutdown().await;
}

#[tokio::test]
async fn a_bad_script_file_names_its_path() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("broken.json"),
        r#"{"id": "x", "calls": {}, "extra": 1}"#,
    )
    .unwrap();
    let outcome = serve_from_files(ServeOptions {
        listen: "127.0.0.1:0".parse().unwrap(),
        streaming_listen: None,
        scripts_dir: dir.path().to_owned(),
        canary: CANARY.to_owned(),
        instances: Vec::new(),
    })
    .await;
    match outcome {
        Err(ServeError::Parse { path, .. }) => assert!(path.ends_with("broken.json")),
        Err(other) => panic!("unexpected error {other}"),
        Ok(_) => panic!("an unknown field must be refused"),
    }
}

/// Kills the child when the test ends, whatever happens.
struct ChildGuard(std::process::Child);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test]
async fn the_binary_prints_its_address_first_and_serves() {
    let dir = tempfile::tempdir().unwrap();
    script_file(dir.path(), "binary-script-1");
    let child = Command::new(env!("CARGO_BIN_EXE_mock-provider"))
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--canary-env",
            "MOCK_PROVIDER_TEST_CANARY",
        ])
        .arg("--scripts")
        .arg(dir.path())
        .env("MOCK_PROVIDER_TEST_CANARY", CANARY)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("binary starts");
    let mut child = ChildGuard(child);
    let stdout = child.0.stdout.take().expect("stdout");
    let first_line = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).map(|_| line)
    })
    .await
    .unwrap()
    .unwrap();
    let base = first_line
        .trim_end()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("first line was {first_line:?}"))
        .to_owned();
    let body = ask(&base, "binary-script-1").await;
    assert_eq!(body["choices"][0]["message"]["content"], "from a file");
}

#[test]
fn the_binary_refuses_a_missing_canary_variable() {
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_mock-provider"))
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--canary-env",
            "MOCK_PROVIDER_UNSET_VARIABLE",
        ])
        .arg("--scripts")
        .arg(dir.path())
        .env_remove("MOCK_PROVIDER_UNSET_VARIABLE")
        .output()
        .expect("binary runs");
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("MOCK_PROVIDER_UNSET_VARIABLE"));
}
