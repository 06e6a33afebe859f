//! Snapshot tests of every report format, rendered from one realistic hand-built report
//! (PASS, FAIL with a multi-line diff and an SSE transcript, SKIP, ERROR, XFAIL). Ids,
//! timestamps and durations are redacted so the snapshots hold only what the renderers decide.

use crate::sample_report::realistic_report;
use harness::report::{html, json, junit, markdown, repro};

/// Text filters shared by the text snapshots: run id, timestamps, durations.
fn settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(r"20261130T101500Z-4f2a", "[run-id]");
    settings.add_filter(
        r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)",
        "[timestamp]",
    );
    settings.add_filter(r"\b\d+(\.\d+)? (ms|s)\b", "[duration]");
    settings.add_filter(r#"time="[0-9.]+""#, r#"time="[duration]""#);
    settings
}

#[test]
fn report_json_snapshot() {
    let report = realistic_report();
    let text = json::to_json_string(&report).unwrap();
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    insta::assert_json_snapshot!("report_json", value, {
        ".run_id" => "[run-id]",
        ".started_at" => "[timestamp]",
        ".finished_at" => "[timestamp]",
        ".duration_ms" => "[duration]",
        ".cases[].duration_ms" => "[duration]",
    });
}

#[test]
fn summary_markdown_snapshot() {
    let report = realistic_report();
    settings().bind(|| insta::assert_snapshot!("summary_md", markdown::to_markdown(&report)));
}

#[test]
fn junit_snapshot() {
    let report = realistic_report();
    let xml = junit::to_junit_xml(&report).unwrap();
    settings().bind(|| insta::assert_snapshot!("junit_xml", xml));
}

#[test]
fn repro_script_snapshot() {
    let report = realistic_report();
    let case = report
        .cases
        .iter()
        .find(|c| c.id == "w.resume.exclusive-cursor")
        .unwrap();
    let bundle = repro::repro_bundle(&report, case);
    assert_eq!(bundle.script_name, "w.resume.exclusive-cursor.sh");
    let files: Vec<&str> = bundle.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(files, ["w.resume.exclusive-cursor.scripts/slow.json"]);
    settings().bind(|| insta::assert_snapshot!("repro_fail_case_sh", bundle.script));
}

#[test]
fn html_text_snapshot() {
    let report = realistic_report();
    let page = html::to_html(&report);
    settings().bind(|| insta::assert_snapshot!("report_html_text", text_content(&page)));
}

/// The visible text of a page: no `<style>`, tags removed, entities decoded, one line per
/// block of text.
fn text_content(page: &str) -> String {
    let without_style = regex::Regex::new(r"(?s)<style>.*?</style>")
        .unwrap()
        .replace_all(page, "");
    let with_breaks = regex::Regex::new(r"(?i)</?(tr|p|div|h[1-6]|li|pre|summary|details|table|section|header|footer|dt|dd|br|span class=.(ins|del|eq|gap).)[^>]*>")
        .unwrap()
        .replace_all(&without_style, "\n");
    let text = regex::Regex::new(r"<[^>]*>")
        .unwrap()
        .replace_all(&with_breaks, " ");
    let text = text
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&");
    text.lines()
        .map(|line| line.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}
