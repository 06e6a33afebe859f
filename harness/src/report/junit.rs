//! `junit.xml`: one `<testsuite>` per surface, one `<testcase>` per case.
//!
//! Mapping: FAIL and STALE → `<failure>`; ERROR → `<error>`; SKIP → `<skipped>` with the
//! reason; XFAIL → `<skipped type="xfail">` with the baseline's reason (as pytest does); PASS,
//! INFO and WARN → passed, with a `verdict` property and, for INFO and WARN, a `<system-out>`
//! listing the checks that did not hold; BLOCKED → `<error type="blocked">` for a MUST case (the
//! run does not conform), `<skipped type="blocked">` otherwise, with the reason. Every test case
//! carries the properties `level`, `requirements` and `verdict`. Run-level errors become an
//! `<error>` test case `run` in a `harness` suite, and what the run could not judge an `<error>`
//! test case `not-judged` there, so CI sees them. Control characters are written as visible `\u{..}`
//! escapes (XML 1.0 cannot carry them).

use std::time::Duration;

use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};

use super::model::{CaseResult, ResultSurface, RunReport};
use crate::verdict::Verdict;

/// Renders the report as JUnit XML.
///
/// # Errors
///
/// Fails only if the XML writer fails (it writes into memory).
pub fn to_junit_xml(report: &RunReport) -> Result<String, quick_junit::SerializeError> {
    let mut junit = Report::new("conformance");
    junit.set_time(Duration::from_millis(report.duration_ms));
    if let Ok(started) = chrono::DateTime::parse_from_rfc3339(&report.started_at) {
        junit.set_timestamp(started);
    }

    let mut surfaces: Vec<ResultSurface> = Vec::new();
    for case in &report.cases {
        if !surfaces.contains(&case.surface) {
            surfaces.push(case.surface);
        }
    }
    for surface in surfaces {
        let mut suite = TestSuite::new(surface.as_str());
        let cases = report.cases.iter().filter(|c| c.surface == surface);
        let time: u64 = cases.clone().map(|c| c.duration_ms).sum();
        suite.set_time(Duration::from_millis(time));
        suite.add_test_cases(cases.map(|case| test_case(case, surface.as_str())));
        junit.add_test_suite(suite);
    }

    let mut harness_suite = TestSuite::new("harness");
    if !report.run_errors.is_empty() {
        let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
        status.set_type("run-error");
        status.set_message(xml_text(&report.run_errors[0]));
        status.set_description(xml_text(&report.run_errors.join("\n")));
        let mut case = TestCase::new("run", status);
        case.set_classname("harness");
        harness_suite.add_test_case(case);
    }
    if !report.not_judged.is_empty() {
        let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
        status.set_type("not-judged");
        status.set_message(xml_text(&report.not_judged[0]));
        status.set_description(xml_text(&report.not_judged.join("\n")));
        let mut case = TestCase::new("not-judged", status);
        case.set_classname("harness");
        harness_suite.add_test_case(case);
    }
    if !harness_suite.test_cases.is_empty() {
        junit.add_test_suite(harness_suite);
    }
    junit.to_string()
}

fn test_case(case: &CaseResult, surface: &str) -> TestCase {
    let mut test = TestCase::new(xml_text(&case.id), status(case));
    test.set_classname(xml_text(surface));
    test.set_time(Duration::from_millis(case.duration_ms));
    test.set_assertions(case.checks.len());
    test.add_property(Property::new("level", case.level.as_str()));
    test.add_property(Property::new(
        "requirements",
        xml_text(&case.requirements.join(",")),
    ));
    test.add_property(Property::new("verdict", case.verdict.as_str()));
    if case.raw_verdict != case.verdict {
        test.add_property(Property::new("raw_verdict", case.raw_verdict.as_str()));
    }
    test.add_property(Property::new("title", xml_text(&case.title)));
    test.add_property(Property::new("file", xml_text(&case.file)));
    if matches!(case.verdict, Verdict::Info | Verdict::Warn) {
        test.set_system_out(xml_text(&format!(
            "{}: {}",
            case.verdict,
            failing_checks_text(case)
        )));
    }
    test
}

fn status(case: &CaseResult) -> TestCaseStatus {
    let reason = case.reason.as_deref().unwrap_or("");
    match case.verdict {
        Verdict::Pass | Verdict::Info | Verdict::Warn => TestCaseStatus::success(),
        Verdict::Fail => {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
            let first = case.checks.iter().find(|c| c.verdict == Verdict::Fail);
            status.set_type(first.map_or("fail", |c| c.check.as_str()));
            status.set_message(xml_text(first.map_or(reason, |c| c.message.as_str())));
            status.set_description(xml_text(&failing_checks_text(case)));
            status
        }
        Verdict::Stale => {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
            status.set_type("stale-baseline");
            status.set_message(xml_text(or_default(
                reason,
                "the baseline expects a failure that no longer happens",
            )));
            status
        }
        Verdict::Error => {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
            status.set_type("harness-error");
            status.set_message(xml_text(or_default(
                reason,
                "the harness or environment broke",
            )));
            status
        }
        Verdict::Blocked => {
            let mut status = if case.level == crate::verdict::Level::Must {
                TestCaseStatus::non_success(NonSuccessKind::Error)
            } else {
                TestCaseStatus::skipped()
            };
            status.set_type("blocked");
            status.set_message(xml_text(or_default(
                reason,
                "the harness could not judge the case",
            )));
            status
        }
        Verdict::Skip => {
            let mut status = TestCaseStatus::skipped();
            status.set_type("skip");
            status.set_message(xml_text(or_default(reason, "skipped")));
            status
        }
        Verdict::Xfail => {
            let mut status = TestCaseStatus::skipped();
            status.set_type("xfail");
            status.set_message(xml_text(or_default(reason, "expected failure (baseline)")));
            status.set_description(xml_text(&failing_checks_text(case)));
            status
        }
    }
}

fn or_default<'a>(text: &'a str, default: &'a str) -> &'a str {
    if text.trim().is_empty() {
        default
    } else {
        text
    }
}

/// Every check that did not hold, one per paragraph, with expected and actual.
fn failing_checks_text(case: &CaseResult) -> String {
    let mut out = String::new();
    for check in case.checks.iter().filter(|c| !c.passed()) {
        out.push_str(&format!(
            "[{}] {} at {}",
            check.verdict, check.check, check.location
        ));
        if let Some(step) = &check.step {
            out.push_str(&format!(" (step {step})"));
        }
        out.push_str(&format!(": {}\n", check.message));
        if !check.requirements.is_empty() {
            out.push_str(&format!(
                "  requirements: {}\n",
                check.requirements.join(", ")
            ));
        }
        if let Some(expected) = &check.expected {
            out.push_str(&format!("  expected: {}\n", indent_tail(expected)));
        }
        if let Some(actual) = &check.actual {
            out.push_str(&format!("  actual:   {}\n", indent_tail(actual)));
        }
    }
    if out.is_empty()
        && let Some(reason) = &case.reason
    {
        out.push_str(reason);
    }
    out
}

fn indent_tail(text: &str) -> String {
    text.replace('\n', "\n            ")
}

/// Makes text safe for XML 1.0: control characters other than tab, newline and carriage
/// return (and the non-characters U+FFFE, U+FFFF) become visible `\u{..}` escapes instead of
/// being dropped silently. XML markup escaping is the writer's job.
pub fn xml_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\t' | '\n' | '\r' => out.push(c),
            c if c.is_control() || c == '\u{FFFE}' || c == '\u{FFFF}' => {
                out.push_str(&format!("\\u{{{:x}}}", c as u32));
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_become_visible_escapes() {
        assert_eq!(xml_text("a\u{1b}[31mb\u{0}c\td"), "a\\u{1b}[31mb\\u{0}c\td");
        assert_eq!(xml_text("\u{FFFF}"), "\\u{ffff}");
    }
}
