//! The `reference-runtime` binary: first stdout line, `--list-defects`, start-up refusal of a
//! secret-carrying base URL, and no credential in any log line (also when a provider's error
//! body echoes it), with the most verbose log filter.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};

use crate::x_host::*;
use serde_json::json;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

const BINARY: &str = env!("CARGO_BIN_EXE_reference-runtime");

/// Kills the child (by its own id) when dropped.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn write_config(dir: &std::path::Path, base_url: &str) -> std::path::PathBuf {
    let path = dir.join("runtime.toml");
    let text = format!(
        r#"
[server]
keep_alive_ms = 15000

[[providers]]
id = "openai"
kind = "openai-chat"
base_url = "{base_url}"
credential_env = "{CANARY_ENV}"

[[providers.models]]
model = "gpt-test"
abilities = ["text-generation"]
stream = true
"#
    );
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn list_defects_prints_the_catalogue() {
    let output = Command::new(BINARY).arg("--list-defects").output().unwrap();
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("x-after-ignored\t"))
        .expect("x-after-ignored is listed");
    assert_eq!(line.split('\t').count(), 5, "{line}");
    assert!(line.contains("exec.cursors.accepts-after"));
}

#[test]
fn a_base_url_with_a_secret_is_refused_without_echoing_it() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), "http://user:hunter2-secret@127.0.0.1:9/x");
    let output = Command::new(BINARY)
        .args([
            "--config",
            config.to_str().unwrap(),
            "--listen",
            "127.0.0.1:0",
        ])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("userinfo"), "{stderr}");
    assert!(!stderr.contains("hunter2"), "{stderr}");
    assert!(output.stdout.is_empty());
}

#[tokio::test]
async fn serves_after_its_first_line_and_never_logs_the_credential() {
    let server = MockServer::builder().start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(401).set_body_json(
            json!({"error": {"message": format!("Incorrect API key provided: {CANARY}"), "type": "invalid_request_error"}}),
        ))
        .expect(1)
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), &server.uri());
    let mut child = Running(
        Command::new(BINARY)
            .args([
                "--config",
                config.to_str().unwrap(),
                "--listen",
                "127.0.0.1:0",
            ])
            .env(CANARY_ENV, CANARY)
            .env("RUST_LOG", "trace")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let stdout = child.0.stdout.take().unwrap();
    // Drain stderr all along so the child never blocks on a full pipe.
    let mut stderr_pipe = child.0.stderr.take().unwrap();
    let stderr_reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr_pipe.read_to_string(&mut text);
        text
    });
    let first_line = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).unwrap();
        line
    })
    .await
    .unwrap();
    let base = first_line
        .trim_end()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("first line: {first_line:?}"))
        .to_string();
    assert!(
        base.starts_with("http://127.0.0.1:") && !base.ends_with(":0"),
        "{base}"
    );

    let (status, submission) = create(&base, &text_request("hi"), None).await;
    assert_eq!(status, 202);
    let id = submission["execution_id"].as_str().unwrap();
    let frames = events(&base, id).await;
    assert_eq!(frames.last().unwrap().kind(), "execution.failed");

    drop(child);
    let stderr = stderr_reader.join().unwrap();
    assert!(
        stderr.contains("provider answered with an error"),
        "the log has the failure"
    );
    assert!(!stderr.contains(CANARY), "credential in the log");
}
