//! The console reporter: non-PASS cases are printed as they finish, then a summary with the
//! counts, the exit code's meaning and where the reports are.

use std::io::Write;
use std::sync::{Arc, Mutex};

use crate::sample_report::{fail_case, pass_case, realistic_report, skip_case};
use harness::report::console::{ConsoleReporter, case_line, summary_text};
use harness::report::write_all;

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}

#[test]
fn pass_is_quiet_and_failures_say_what_broke() {
    assert_eq!(case_line(&pass_case()), None);
    let line = case_line(&fail_case()).unwrap();
    assert_eq!(
        line,
        "FAIL  w.resume.exclusive-cursor (912 ms): exclusive_after at /steps/2/expect/0: \
         the resumed stream starts at sequence 2; after cursor 2 it must start at 3 \
         [events.resume.exclusive-cursor]"
    );
    let skip = case_line(&skip_case()).unwrap();
    assert!(
        skip.starts_with("SKIP  w.feedback.signals-listed (0 ms): needs `capability:feedback`")
    );
}

#[test]
fn peer_text_cannot_inject_terminal_escapes() {
    let mut case = fail_case();
    case.checks[1].message = "evil \u{1b}[2J\nnext line".into();
    let line = case_line(&case).unwrap();
    assert!(!line.contains('\u{1b}') && !line.contains('\n'), "{line:?}");
}

#[test]
fn reporter_prints_non_pass_cases_and_the_summary() {
    let captured = Captured::default();
    let reporter = ConsoleReporter::plain(Box::new(captured.clone()));
    let report = realistic_report();
    for case in &report.cases {
        reporter.case_started(&case.id);
        reporter.case_finished(case);
    }
    let dir = tempfile::tempdir().unwrap();
    let written = write_all(&report, dir.path()).unwrap();
    reporter.finish(&report, Some(&written));
    let text = captured.text();
    assert!(
        !text.contains("x.submission.returns-202"),
        "PASS is not printed:\n{text}"
    );
    for id in [
        "FAIL  w.resume.exclusive-cursor",
        "SKIP  w.feedback.signals-listed",
        "BLOCKED w.terminal.approve",
        "ERROR x.idempotency.different-request-fails",
        "XFAIL x.idempotency.concurrent-same-key",
    ] {
        assert!(text.contains(id), "{id} missing:\n{text}");
    }
    assert!(text.contains("Conformance: ERROR (6 case(s)"));
    assert!(text.contains("1 PASS, 1 FAIL, 1 SKIP, 1 BLOCKED, 1 XFAIL, 1 ERROR"));
    assert!(
        text.contains("not judged: 1 MUST case(s) BLOCKED (w.terminal.approve): the host's discovery document does not list fixture `conformance-approval`"),
        "{text}"
    );
    assert!(
        text.contains("openwop (served): 1 of 3 case(s) judged, 1 of 2 MUST requirement(s) judged"),
        "{text}"
    );
    assert!(text.contains("exit code 3: a harness or environment error"));
    assert!(text.contains(&written.html.display().to_string()));
    assert!(text.contains("repro scripts: 2"));
}

#[test]
fn summary_without_reports_or_cases() {
    let mut report = realistic_report();
    report.cases.clear();
    report.summary.total = 0;
    report.summary.by_verdict.clear();
    report.verdict = harness::verdict::Verdict::Pass;
    let text = summary_text(&report, None);
    assert!(text.contains("no case ran"));
    assert!(text.contains("exit code 0: the host conforms"));
    assert!(!text.contains("reports:"));
}
