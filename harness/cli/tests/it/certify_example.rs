//! The README's worked example of certifying a host ("Certifying your own host"): the
//! `conformance serve` line and the `conformance run --target` line between the
//! `certify-example` markers, run as written (with the variables the block exports), but on free
//! ports (every `127.0.0.1:<port>` of the block is mapped to one, the same in both lines, so
//! parallel tests never collide). `serve` must print the run line itself, and the run must
//! pass: exit 0, no case BLOCKED.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

/// Kills the server when the test ends, however it ends.
struct Server(std::process::Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A free port for every `127.0.0.1:<port>` the two lines name (the same address, the same
/// port in both): the runtime and the two fake-provider servers.
fn free_ports_for(serve_line: &str, run_line: &str) -> BTreeMap<String, String> {
    let mut ports = BTreeMap::new();
    for word in shell_words(&format!("{serve_line} {run_line}")) {
        if let Some(at) = word.find("127.0.0.1:") {
            let address: String = word[at..]
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.' || *c == ':')
                .collect();
            ports
                .entry(address)
                .or_insert_with(|| format!("127.0.0.1:{}", free_port()));
        }
    }
    assert_eq!(
        ports.len(),
        3,
        "the runtime and the two fake-provider servers: {ports:?}"
    );
    ports
}

/// The lines between the markers.
fn example_block() -> Vec<String> {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
            .unwrap();
    let start = readme
        .find("# certify-example:begin")
        .expect("README.md has the certify-example block");
    let end = readme
        .find("# certify-example:end")
        .expect("README.md closes the certify-example block");
    readme[start..end]
        .lines()
        .skip(1)
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect()
}

/// A line split into words as a POSIX shell would (single and double quotes, no expansion).
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    word.push(q);
                }
            }
            '"' => {
                in_word = true;
                for q in chars.by_ref() {
                    if q == '"' {
                        break;
                    }
                    word.push(q);
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

/// Every `127.0.0.1:<port>` of `text` mapped to a free port.
fn remap(text: &str, ports: &BTreeMap<String, String>) -> String {
    ports
        .iter()
        .fold(text.to_string(), |t, (from, to)| t.replace(from, to))
}

#[test]
fn the_readme_serve_and_run_pair_certifies_the_runtime_as_printed() {
    let block = example_block();
    let mut env: Vec<(String, String)> = Vec::new();
    let mut serve_line = None;
    let mut run_line = None;
    for line in &block {
        if let Some(assignment) = line.strip_prefix("export ") {
            let words = shell_words(assignment);
            let (name, value) = words[0].split_once('=').unwrap();
            env.push((name.to_string(), value.to_string()));
        } else if line.starts_with("conformance serve ") {
            serve_line = Some(line.trim_end_matches('&').trim().to_string());
        } else if line.starts_with("conformance run ") {
            run_line = Some(line.clone());
        } else {
            panic!("unexpected line in the README's certify-example block: {line}");
        }
    }
    let (serve_line, run_line) = (serve_line.unwrap(), run_line.unwrap());
    let dir = tempfile::tempdir().unwrap();
    let binary = env!("CARGO_BIN_EXE_conformance");
    let command = |line: &str| {
        let words = shell_words(line);
        assert_eq!(words[0], "conformance");
        let mut command = Command::new(binary);
        command
            .args(&words[1..])
            .current_dir(dir.path())
            .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .env_remove("CONFORMANCE_TARGET")
            .env_remove("CONFORMANCE_CASES");
        command
    };

    // A port found free can be taken by a parallel test before `serve` binds it: that attempt
    // is retried on other ports (a bind failure is the environment, not the example).
    let mut attempt = 0;
    let (_server, run_line) = loop {
        attempt += 1;
        let ports = free_ports_for(&serve_line, &run_line);
        let (serve_line, run_line) = (remap(&serve_line, &ports), remap(&run_line, &ports));
        let mut serve = command(&serve_line);
        serve.stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut server = Server(serve.spawn().unwrap());
        let mut printed = Vec::new();
        let mut stdout = BufReader::new(server.0.stdout.take().unwrap());
        for _ in 0..3 {
            let mut line = String::new();
            stdout.read_line(&mut line).unwrap();
            printed.push(line.trim().to_string());
        }
        if !printed[0].starts_with("listening on http://") {
            let _ = server.0.wait();
            let mut stderr = String::new();
            if let Some(mut pipe) = server.0.stderr.take() {
                let _ = std::io::Read::read_to_string(&mut pipe, &mut stderr);
            }
            if attempt < 3 && stderr.to_lowercase().contains("in use") {
                continue;
            }
            panic!("serve's first line: {printed:?}\nstderr:\n{stderr}");
        }
        assert_eq!(
            printed[2], run_line,
            "serve prints the README's run line (on these ports); it printed {printed:?}"
        );
        break (server, run_line);
    };

    let run = command(&run_line).output().unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    let reports: Vec<_> = std::fs::read_dir(dir.path().join("reports"))
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert_eq!(
        reports.len(),
        1,
        "one report directory: {reports:?}\n{stderr}"
    );
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(reports[0].join("report.json")).unwrap()).unwrap();
    let not_passing: Vec<String> = report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| !matches!(c["verdict"].as_str(), Some("PASS" | "SKIP")))
        .map(|c| format!("{} {}: {}", c["id"], c["verdict"], c["reason"]))
        .collect();
    assert!(
        not_passing.is_empty(),
        "every case PASS or SKIP:\n{}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        not_passing.join("\n")
    );
    assert_eq!(
        run.status.code(),
        Some(0),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(
        !stdout.contains("BLOCKED") && !stderr.contains("BLOCKED"),
        "{stdout}\n{stderr}"
    );
}
