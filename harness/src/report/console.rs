//! Console output while a run goes: a progress bar on a terminal (plain lines otherwise) and
//! every non-PASS case as it finishes (stderr), and a final summary with the counts, what the
//! exit code means and where the reports are (the command prints it on stdout; one line with
//! [`summary_line`] under `--quiet`).
//!
//! The runner calls [`ConsoleReporter::case_started`], [`ConsoleReporter::case_finished`] and
//! [`ConsoleReporter::finish`]; the reporter is `Send + Sync`, so parallel cases can share it.

use std::io::{IsTerminal, Write};
use std::sync::Mutex;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::directory::WrittenReports;
use super::model::{CaseResult, RunReport};
pub use super::outcome::surface_line;
use super::outcome::{exit_code, exit_code_meaning, first_failing_check};
use crate::verdict::Verdict;

/// Reports progress on stderr (or any writer).
pub struct ConsoleReporter {
    bar: Option<ProgressBar>,
    out: Mutex<Box<dyn Write + Send>>,
    color: bool,
}

impl std::fmt::Debug for ConsoleReporter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConsoleReporter")
            .field("progress_bar", &self.bar.is_some())
            .field("color", &self.color)
            .finish()
    }
}

impl ConsoleReporter {
    /// A reporter on stderr: a progress bar (and colour, unless `NO_COLOR` is set) when stderr
    /// is a terminal, plain lines otherwise.
    pub fn stderr(total_cases: u64) -> Self {
        let terminal = std::io::stderr().is_terminal();
        let bar = terminal.then(|| {
            let bar =
                ProgressBar::with_draw_target(Some(total_cases), ProgressDrawTarget::stderr());
            if let Ok(style) = ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {wide_msg}",
            ) {
                bar.set_style(style);
            }
            bar
        });
        let color = terminal && std::env::var_os("NO_COLOR").is_none();
        Self {
            bar,
            out: Mutex::new(Box::new(std::io::stderr())),
            color,
        }
    }

    /// A reporter writing plain lines (no progress bar, no colour) to `writer`.
    pub fn plain(writer: Box<dyn Write + Send>) -> Self {
        Self {
            bar: None,
            out: Mutex::new(writer),
            color: false,
        }
    }

    /// A case started.
    pub fn case_started(&self, case_id: &str) {
        if let Some(bar) = &self.bar {
            bar.set_message(case_id.to_string());
        }
    }

    /// A case finished: non-PASS cases are printed at once.
    pub fn case_finished(&self, case: &CaseResult) {
        if let Some(line) = case_line(case) {
            let line = if self.color {
                colored(case.verdict, &line)
            } else {
                line
            };
            self.print(&line);
        }
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
    }

    /// The run finished: clears the bar, so the summary can go elsewhere (stdout).
    pub fn clear(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }

    /// The run finished: clears the bar and prints the summary.
    pub fn finish(&self, report: &RunReport, written: Option<&WrittenReports>) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
        self.print(&summary_text(report, written));
    }

    fn print(&self, text: &str) {
        let write = |out: &mut Box<dyn Write + Send>| {
            let _ = writeln!(out, "{text}");
            let _ = out.flush();
        };
        let mut out = match self.out.lock() {
            Ok(out) => out,
            Err(poisoned) => poisoned.into_inner(),
        };
        match &self.bar {
            Some(bar) => bar.suspend(|| write(&mut out)),
            None => write(&mut out),
        }
    }
}

/// The line printed when a case finishes, or `None` for PASS.
pub fn case_line(case: &CaseResult) -> Option<String> {
    if case.verdict == Verdict::Pass {
        return None;
    }
    let mut line = format!(
        "{:<5} {} ({} ms)",
        case.verdict.as_str(),
        one_line(&case.id),
        case.duration_ms
    );
    let detail = match case.verdict {
        Verdict::Fail | Verdict::Warn | Verdict::Info => first_failing_check(case).map(|check| {
            let requirements = if check.requirements.is_empty() {
                String::new()
            } else {
                format!(" [{}]", check.requirements.join(", "))
            };
            format!(
                "{} at {}: {}{requirements}",
                check.check, check.location, check.message
            )
        }),
        _ => None,
    }
    .or_else(|| case.reason.clone());
    if let Some(detail) = detail {
        line.push_str(": ");
        line.push_str(&one_line(&detail));
    }
    Some(line)
}

/// The final summary: verdict, counts, run errors, exit code and report paths.
pub fn summary_text(report: &RunReport, written: Option<&WrittenReports>) -> String {
    let mut out = format!(
        "\nConformance: {} ({} case(s) in {} ms against {})\n",
        report.verdict,
        report.summary.total,
        report.duration_ms,
        one_line(&report.target.base_url)
    );
    let counts: Vec<String> = report
        .summary
        .counts()
        .filter(|(_, count)| *count > 0)
        .map(|(verdict, count)| format!("{count} {verdict}"))
        .collect();
    if counts.is_empty() {
        out.push_str("  no case ran\n");
    } else {
        out.push_str(&format!("  {}\n", counts.join(", ")));
    }
    for error in &report.run_errors {
        out.push_str(&format!("  run error: {}\n", one_line(error)));
    }
    for surface in report
        .surfaces
        .iter()
        .filter(|s| s.cases > 0 || s.requested)
    {
        out.push_str(&format!("  {}\n", surface_line(surface)));
    }
    for what in &report.not_judged {
        out.push_str(&format!("  not judged: {}\n", one_line(what)));
    }
    if !report.unmatched_provider_requests.is_empty() {
        out.push_str("  requests that reached the fake providers and matched no fake (is the host's provider base URL the one `plan` prints?):\n");
        for line in &report.unmatched_provider_requests {
            out.push_str(&format!("    {}\n", one_line(line)));
        }
    }
    let code = exit_code(report.verdict);
    out.push_str(&format!(
        "  exit code {code}: {}\n",
        exit_code_meaning(code)
    ));
    if let Some(written) = written {
        out.push_str(&format!("  reports: {}\n", written.html.display()));
        out.push_str(&format!(
            "           {} (json), {} (junit), {} (markdown)\n",
            written.json.display(),
            written.junit.display(),
            written.markdown.display()
        ));
        if !written.repro_scripts.is_empty() {
            out.push_str(&format!(
                "  repro scripts: {} in {}\n",
                written.repro_scripts.len(),
                written.dir.join("repro").display()
            ));
        }
    }
    out
}

/// The summary in one line (`--quiet`): verdict, counts, what was not judged, the exit code
/// and the HTML report.
pub fn summary_line(report: &RunReport, written: Option<&WrittenReports>) -> String {
    let counts: Vec<String> = report
        .summary
        .counts()
        .filter(|(_, count)| *count > 0)
        .map(|(verdict, count)| format!("{count} {verdict}"))
        .collect();
    let mut line = format!(
        "Conformance: {} ({}) against {}",
        report.verdict,
        if counts.is_empty() {
            "no case ran".to_string()
        } else {
            counts.join(", ")
        },
        one_line(&report.target.base_url)
    );
    if !report.not_judged.is_empty() {
        let what: Vec<String> = report.not_judged.iter().map(|w| one_line(w)).collect();
        line.push_str(&format!("; not judged: {}", what.join("; ")));
    }
    if !report.run_errors.is_empty() {
        line.push_str(&format!("; {} run error(s)", report.run_errors.len()));
    }
    line.push_str(&format!("; exit code {}", exit_code(report.verdict)));
    if let Some(written) = written {
        line.push_str(&format!("; report {}", written.html.display()));
    }
    line
}

fn one_line(text: &str) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if flat.chars().count() > 240 {
        format!("{}…", flat.chars().take(240).collect::<String>())
    } else {
        flat
    }
}

fn colored(verdict: Verdict, line: &str) -> String {
    let code = match verdict {
        Verdict::Pass => "32",
        Verdict::Fail => "31",
        Verdict::Warn => "33",
        Verdict::Info => "34",
        Verdict::Skip => "90",
        Verdict::Blocked => "35;1",
        Verdict::Xfail => "35",
        Verdict::Stale => "33;1",
        Verdict::Error => "31;1",
    };
    format!("\u{1b}[{code}m{line}\u{1b}[0m")
}
