//! `repro/<case-id>.sh`: curl commands that replay a case's exchanges against the host.
//!
//! Written for every case whose verdict is FAIL, WARN, ERROR or STALE. The script replays the
//! recorded requests in order (`curl -sS -i`; SSE subscriptions with `curl -N` and their
//! `Last-Event-ID` and query as recorded), with the failing checks of each step as comments.
//! Secrets are never written: a redacted header (and any header of
//! [`SECRET_HEADERS`]) becomes a reference to an
//! environment variable documented at the top of the script (`CONFORMANCE_AUTH` for
//! `Authorization`). The host is `$CONFORMANCE_TARGET`, defaulting to the URL the run used.
//! When the case served fake-provider scripts, they are written next to the script as
//! `<case-id>.scripts/<name>.json`, with a comment saying how to serve them. Request bodies
//! larger than [`INLINE_BODY_LIMIT`] (or holding NUL) go to `<case-id>.bodies/<n>.body`.

use std::fmt::Write as _;

use super::model::{CaseResult, RunReport};
use crate::transcript::{BodyEnd, Exchange, FrameKind, REDACTED, SECRET_HEADERS, StepRecord};
use crate::verdict::Verdict;

/// Request bodies up to this many bytes are written inline in the script.
pub const INLINE_BODY_LIMIT: usize = 16 * 1024;

/// Headers curl sets itself; replaying the recorded values would only conflict.
const CURL_OWNED_HEADERS: [&str; 4] = ["host", "content-length", "connection", "transfer-encoding"];

/// Whether a case with this verdict gets a repro script.
pub fn needs_repro(verdict: Verdict) -> bool {
    matches!(
        verdict,
        Verdict::Fail | Verdict::Warn | Verdict::Error | Verdict::Stale
    )
}

/// A repro script and the files it reads, relative to the `repro/` directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReproBundle {
    /// The script's file name (`<case-id>.sh`, the id made safe for a file name).
    pub script_name: String,
    /// The script text.
    pub script: String,
    /// Files the script refers to: fake-provider scripts and large request bodies.
    pub files: Vec<ReproFile>,
}

/// One file next to a repro script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReproFile {
    /// Path relative to the `repro/` directory (`<case-id>.scripts/<name>.json`).
    pub path: String,
    /// The contents.
    pub contents: String,
}

/// A case id made safe as a file name: `[A-Za-z0-9._-]` kept, anything else `_`, no leading
/// dot, never empty.
pub fn file_stem(case_id: &str) -> String {
    let mut stem: String = case_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .take(150)
        .collect();
    if stem.starts_with('.') || stem.is_empty() {
        stem.insert(0, '_');
    }
    stem
}

/// Builds the repro script of one case, with the files it refers to.
pub fn repro_bundle(report: &RunReport, case: &CaseResult) -> ReproBundle {
    repro_bundle_with_stem(report, case, &file_stem(&case.id))
}

/// [`repro_bundle`] with the file stem chosen by the caller (to keep stems unique).
pub fn repro_bundle_with_stem(report: &RunReport, case: &CaseResult, stem: &str) -> ReproBundle {
    let base = report.target.base_url.trim_end_matches('/');
    let mut files = Vec::new();
    let mut body = String::new();
    let mut secrets: Vec<(String, String)> = Vec::new();

    for step in &case.transcript {
        write_step(&mut body, step, case, base, stem, &mut files, &mut secrets);
    }
    if case.transcript.is_empty() {
        body.push_str("# The case recorded no exchange (nothing to replay).\n");
    }

    let mut out = String::new();
    out.push_str("#!/usr/bin/env bash\n");
    let _ = writeln!(
        out,
        "# Replays the exchanges of conformance case `{}` ({}) against a host, in order.",
        comment(&case.id),
        case.verdict
    );
    let _ = writeln!(out, "# {}", comment(&case.title));
    let _ = writeln!(out, "# Case file: {}", comment(&case.file));
    if let Some(reason) = &case.reason {
        let _ = writeln!(out, "# Reason: {}", comment(reason));
    }
    let _ = writeln!(
        out,
        "# Recorded by harness {} in run {} against {}.",
        comment(&report.harness_version),
        comment(&report.run_id),
        comment(base)
    );
    out.push_str("#\n# Environment:\n");
    out.push_str("#   CONFORMANCE_TARGET  base URL of the host (default: the URL the run used)\n");
    for (variable, header) in &secrets {
        let _ = writeln!(
            out,
            "#   {variable:<19} value of the `{}` header (redacted in the report; never written here)",
            comment(header)
        );
    }
    write_provider_comment(&mut out, case, stem, &mut files);
    out.push_str(
        "#\n# Values captured from earlier responses (ids, cursors) are replayed as recorded;\n\
         # against a fresh host, substitute the values its responses give.\n",
    );
    out.push_str("set -u\n");
    out.push_str("HERE=\"$(cd \"$(dirname \"$0\")\" && pwd)\"\n");
    let _ = writeln!(out, "TARGET=\"${{CONFORMANCE_TARGET:-{}}}\"", dq(base));
    out.push_str("TARGET=\"${TARGET%/}\"\n");
    for (variable, header) in &secrets {
        let _ = writeln!(
            out,
            ": \"${{{variable}:?set {variable} to the value of the {} header}}\"",
            dq(&comment(header))
        );
    }
    out.push('\n');
    out.push_str(&body);

    ReproBundle {
        script_name: format!("{stem}.sh"),
        script: out,
        files,
    }
}

fn write_provider_comment(
    out: &mut String,
    case: &CaseResult,
    stem: &str,
    files: &mut Vec<ReproFile>,
) {
    if !case.provider_scripts.is_empty() {
        let dir = format!("{stem}.scripts");
        let _ = writeln!(
            out,
            "#\n# Fake-provider scripts: the case served {} script(s), written to \"$HERE/{dir}/\".",
            case.provider_scripts.len()
        );
        out.push_str(
            "# Serve them, and configure the host's providers to use those fakes, with:\n",
        );
        let _ = writeln!(
            out,
            "#   conformance mock-provider --scripts \"$HERE/{dir}\"  (see --help for addresses and the canary)"
        );
        let mut used = Vec::new();
        for served in &case.provider_scripts {
            let mut name = file_stem(&served.name);
            while used.contains(&name) {
                name.push('_');
            }
            used.push(name.clone());
            let _ = writeln!(
                out,
                "#   {dir}/{name}.json: script `{}` (selected by the marker [[script:{}]])",
                comment(&served.name),
                comment(&served.id)
            );
            let contents = serde_json::to_string_pretty(&served.script)
                .map(|mut text| {
                    text.push('\n');
                    text
                })
                .unwrap_or_else(|_| "null\n".to_string());
            files.push(ReproFile {
                path: format!("{dir}/{name}.json"),
                contents,
            });
        }
    } else if case
        .transcript
        .iter()
        .any(|step| step.provider_calls.iter().any(|c| c.count > 0))
    {
        out.push_str(
            "#\n# The case called fake providers, but the report holds no scripts for them:\n\
             # serve the case's `scripts` with `conformance mock-provider --scripts DIR`.\n",
        );
    }
}

#[allow(clippy::too_many_arguments)]
fn write_step(
    out: &mut String,
    step: &StepRecord,
    case: &CaseResult,
    base: &str,
    stem: &str,
    files: &mut Vec<ReproFile>,
    secrets: &mut Vec<(String, String)>,
) {
    let _ = writeln!(
        out,
        "# --- step {} ({}) at {}",
        comment(&step.step),
        comment(&step.action),
        comment(&step.location)
    );
    for (name, value) in &step.bindings {
        let _ = writeln!(
            out,
            "# binding {} = {}",
            comment(name),
            comment(&value.to_string())
        );
    }
    // A generated step ran once per input: its failures belong to the counterexample's run
    // (the replay of the minimal input), not to the inputs that held.
    let judged_here = match &case.counterexample {
        Some(counterexample) if !step.bindings.is_empty() => step
            .bindings
            .iter()
            .any(|(_, value)| *value == counterexample.value),
        _ => true,
    };
    for check in case
        .checks
        .iter()
        .filter(|c| judged_here && !c.passed() && c.step.as_deref() == Some(step.step.as_str()))
    {
        let _ = writeln!(
            out,
            "# {}: {} at {}: {}",
            check.verdict,
            comment(&check.check),
            comment(&check.location),
            comment(&check.message)
        );
    }
    let concurrent = step.action == "concurrent" && step.exchanges.len() > 1;
    let mut index = 0;
    while index < step.exchanges.len() {
        let exchange = &step.exchanges[index];
        let mut repeats = 1;
        while index + repeats < step.exchanges.len()
            && step.exchanges[index + repeats].request == exchange.request
        {
            repeats += 1;
        }
        let recorded: Vec<String> = step.exchanges[index..index + repeats]
            .iter()
            .map(outcome)
            .collect();
        let command = curl_command(exchange, step, base, stem, files, secrets);
        if repeats == 1 {
            let _ = writeln!(out, "# recorded: {}", recorded[0]);
            if concurrent {
                let _ = writeln!(out, "{command} &");
            } else {
                let _ = writeln!(out, "{command}\necho");
            }
        } else {
            let _ = writeln!(
                out,
                "# the same request was sent {repeats} times; recorded: {}",
                summarise(&recorded)
            );
            let background = if concurrent { " &" } else { "; echo" };
            let _ = writeln!(
                out,
                "for _ in $(seq {repeats}); do\n  {}{background}\ndone",
                command.replace('\n', "\n  ")
            );
        }
        index += repeats;
    }
    if concurrent {
        out.push_str("wait\necho\n");
    }
    out.push('\n');
}

fn curl_command(
    exchange: &Exchange,
    step: &StepRecord,
    base: &str,
    stem: &str,
    files: &mut Vec<ReproFile>,
    secrets: &mut Vec<(String, String)>,
) -> String {
    let request = &exchange.request;
    let sse = is_sse(exchange, step);
    let mut parts: Vec<String> = Vec::new();
    let mut first = String::from("curl -sS -i");
    if sse {
        first.push_str(" -N");
        let limit_s = exchange.response.as_ref().map_or(10, |r| {
            let recorded = r.end_at_ms.div_ceil(1000);
            match r.end {
                BodyEnd::ServerClosed => (recorded + 2).max(5),
                _ => recorded.max(1),
            }
        });
        first.push_str(&format!(" --max-time {limit_s}"));
    }
    match request.method.to_ascii_uppercase().as_str() {
        "GET" => {}
        "HEAD" => first.push_str(" -I"),
        method if method.chars().all(|c| c.is_ascii_alphanumeric()) => {
            first.push_str(&format!(" -X {method}"));
        }
        method => first.push_str(&format!(" -X {}", sq(method))),
    }
    let url = match request.url.strip_prefix(base) {
        Some(rest) if !base.is_empty() => format!("\"$TARGET\"{}", sq(rest)),
        _ => sq(&request.url),
    };
    first.push(' ');
    first.push_str(&url);
    parts.push(first);

    for header in &request.headers {
        let name = header.name.to_ascii_lowercase();
        if CURL_OWNED_HEADERS.contains(&name.as_str()) {
            continue;
        }
        if header.value == REDACTED || SECRET_HEADERS.contains(&name.as_str()) {
            let variable = secret_variable(&name);
            if !secrets.iter().any(|(v, _)| *v == variable) {
                secrets.push((variable.clone(), name.clone()));
            }
            parts.push(format!("-H \"{}: ${variable}\"", dq(&name)));
        } else {
            parts.push(format!(
                "-H {}",
                sq(&format!("{}: {}", header.name, header.value))
            ));
        }
    }
    if let Some(body) = &request.body {
        if body.len() > INLINE_BODY_LIMIT || body.contains('\0') {
            let path = format!("{stem}.bodies/{}.body", files.len() + 1);
            files.push(ReproFile {
                path: path.clone(),
                contents: body.clone(),
            });
            parts.push(format!("--data-binary @\"$HERE\"/{}", sq(&path)));
        } else {
            parts.push(format!("--data-binary {}", sq(body)));
        }
    }
    parts.join(" \\\n  ")
}

fn is_sse(exchange: &Exchange, step: &StepRecord) -> bool {
    let accepts =
        exchange.request.headers.iter().any(|h| {
            h.name.eq_ignore_ascii_case("accept") && h.value.contains("text/event-stream")
        });
    let answered = exchange.response.as_ref().is_some_and(|r| {
        !r.frames.is_empty()
            || r.header("content-type")
                .is_some_and(|v| v.contains("text/event-stream"))
    });
    step.action == "stream" || accepts || answered
}

/// The environment variable a secret header's value is read from.
pub fn secret_variable(header: &str) -> String {
    match header.to_ascii_lowercase().as_str() {
        "authorization" => "CONFORMANCE_AUTH".to_string(),
        "proxy-authorization" => "CONFORMANCE_PROXY_AUTH".to_string(),
        other => {
            let name: String = other
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() {
                        c.to_ascii_uppercase()
                    } else {
                        '_'
                    }
                })
                .collect();
            format!("CONFORMANCE_HEADER_{name}")
        }
    }
}

fn outcome(exchange: &Exchange) -> String {
    if let Some(error) = &exchange.transport_error {
        return format!("no response ({})", error.message);
    }
    let Some(response) = &exchange.response else {
        return "no response".to_string();
    };
    let mut text = format!("{} after {} ms", response.status, response.headers_at_ms);
    let events = response
        .frames
        .iter()
        .filter(|f| matches!(f.kind, FrameKind::Event { .. }))
        .count();
    let comments = response.frames.len() - events;
    if !response.frames.is_empty() {
        text.push_str(&format!(", {events} event frame(s), {comments} comment(s)"));
    } else {
        text.push_str(&format!(", {} body bytes", response.body_bytes));
    }
    let end = match &response.end {
        BodyEnd::ServerClosed => "closed by the server".to_string(),
        BodyEnd::ClientStopped => "stopped by the harness".to_string(),
        BodyEnd::Timeout => "timed out".to_string(),
        BodyEnd::Broken(detail) => format!("broken ({detail})"),
        BodyEnd::TooLarge(detail) => format!("too large ({detail})"),
    };
    text.push_str(&format!(", {end} at {} ms", response.end_at_ms));
    if response.trailing_partial_frame.is_some() {
        text.push_str(", truncated final frame");
    }
    text
}

fn summarise(outcomes: &[String]) -> String {
    let mut counted: Vec<(String, usize)> = Vec::new();
    for outcome in outcomes {
        let status = outcome
            .split(" after ")
            .next()
            .unwrap_or(outcome)
            .to_string();
        match counted.iter_mut().find(|(s, _)| *s == status) {
            Some((_, n)) => *n += 1,
            None => counted.push((status, 1)),
        }
    }
    counted
        .iter()
        .map(|(status, n)| format!("{n}× {status}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One line of comment text: no newline, no control character, bounded.
fn comment(text: &str) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if flat.chars().count() > 400 {
        let cut: String = flat.chars().take(400).collect();
        format!("{cut}…")
    } else {
        flat
    }
}

/// Single-quoted shell word (NUL cannot be passed to a command and is dropped).
fn sq(text: &str) -> String {
    format!("'{}'", text.replace('\0', "").replace('\'', "'\\''"))
}

/// Text safe inside a double-quoted shell word.
fn dq(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' | '"' | '$' | '`' => {
                out.push('\\');
                out.push(c);
            }
            '\0' => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_stems_are_safe() {
        assert_eq!(
            file_stem("x.idempotency.same-key"),
            "x.idempotency.same-key"
        );
        assert_eq!(file_stem("../etc/passwd"), "_.._etc_passwd");
        assert_eq!(file_stem(""), "_");
        assert_eq!(file_stem("a b/c"), "a_b_c");
    }

    #[test]
    fn shell_quoting_survives_quotes_and_dollars() {
        assert_eq!(sq("it's $HOME"), "'it'\\''s $HOME'");
        assert_eq!(dq("a\"$b`c\\"), "a\\\"\\$b\\`c\\\\");
    }

    #[test]
    fn secret_headers_map_to_variables() {
        assert_eq!(secret_variable("Authorization"), "CONFORMANCE_AUTH");
        assert_eq!(secret_variable("x-api-key"), "CONFORMANCE_HEADER_X_API_KEY");
    }
}
