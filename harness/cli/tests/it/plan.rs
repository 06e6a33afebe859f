//! `conformance plan` against a separately started runtime: per case run / SKIP / BLOCKED, the
//! base URL of every bound provider, the fixtures and facts; nothing runs (the fake providers'
//! address stays free).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

/// Kills the server when the test ends, however it ends.
struct Server(std::process::Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_plan_lists_what_each_case_would_be_and_what_to_configure_without_running_anything() {
    let binary = env!("CARGO_BIN_EXE_conformance");
    let mut server = Server(
        Command::new(binary)
            .args(["serve", "--listen", "127.0.0.1:0"])
            .env_remove("CONFORMANCE_AUTH_A")
            .env_remove("CONFORMANCE_AUTH_B")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let mut first_line = String::new();
    // Kept open for the test: `serve` goes on printing (the test keys it made up).
    let mut stdout = BufReader::new(server.0.stdout.take().unwrap());
    stdout.read_line(&mut first_line).unwrap();
    let url = first_line
        .trim()
        .strip_prefix("listening on ")
        .unwrap()
        .to_string();
    let fakes = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let fakes_address = fakes.local_addr().unwrap();
    drop(fakes);

    let output = Command::new(binary)
        .args(["plan", "--json", "--target", &url, "--providers-listen"])
        .arg(fakes_address.to_string())
        .args([
            "--bind",
            "text-primary=anthropic-secondary,anthropic-messages",
            "--bind",
            "text-secondary=anthropic-secondary,anthropic-messages",
        ])
        .env_remove("CONFORMANCE_AUTH_A")
        .env_remove("CONFORMANCE_AUTH_B")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let plan: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let cases = plan["cases"].as_array().unwrap();
    let count = |what: &str| cases.iter().filter(|c| c["disposition"] == what).count();
    assert!(
        count("run") > 0 && count("skip") > 0 && count("blocked") > 0,
        "{plan:#}"
    );
    // Without a principal the surface-W cases that need one are the harness's to set up.
    assert!(
        cases
            .iter()
            .filter(|c| c["disposition"] == "blocked")
            .all(|c| c["reason"].as_str().is_some_and(|r| !r.is_empty()))
    );
    let providers = plan["providers"].as_array().unwrap();
    let anthropic = providers
        .iter()
        .find(|p| p["provider"] == "anthropic-secondary")
        .unwrap();
    assert_eq!(anthropic["wire_format"], "anthropic-messages");
    assert_eq!(
        anthropic["roles"],
        serde_json::json!(["text-primary", "text-secondary"])
    );
    assert_eq!(
        anthropic["base_url"],
        format!("http://{fakes_address}/anthropic-secondary")
    );
    assert_eq!(anthropic["listed_by_host"], true);
    assert!(
        plan["fixtures"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["id"] == "conformance-noop" && f["seeded"] == true)
    );
    assert!(
        plan["facts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["name"] == "heartbeat_interval_ms" && f["supplied"] == false)
    );
    // Nothing ran: the fake providers were never started.
    assert!(std::net::TcpListener::bind(fakes_address).is_ok());
    drop(stdout);
}
