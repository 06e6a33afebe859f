//! `summary.md`: a Markdown summary fit for `$GITHUB_STEP_SUMMARY`.
//!
//! A verdict line, a counts table, run errors, then the cases that need attention (FAIL,
//! STALE, ERROR, WARN) with their first failing check and requirements, the skips with their
//! reasons, and the expected failures. Peer-controlled text is escaped for GitHub-flavoured
//! Markdown (no raw HTML gets through, no table cell breaks) and cut to a readable length;
//! long lists are cut with a count of what was left out (the step summary is limited to 1 MiB).

use std::fmt::Write as _;

use super::model::{CaseResult, RunReport};
use super::outcome::{exit_code, exit_code_meaning, first_failing_check};
use crate::verdict::Verdict;

/// Longest message shown in a table cell or list item, in characters.
const MESSAGE_LIMIT: usize = 300;
/// Most rows of one table or list.
const LIST_LIMIT: usize = 200;

/// Renders the Markdown summary.
pub fn to_markdown(report: &RunReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## {} Conformance: {}\n",
        verdict_icon(report.verdict),
        report.verdict
    );
    let implementation = report
        .target
        .implementation
        .as_deref()
        .map(|i| format!(", {}", cell(i)))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "Target {} ({}{implementation}) · {} cases · {} · harness {} · run {}\n",
        code(&report.target.base_url),
        cell(&report.target.kind),
        report.summary.total,
        human_duration(report.duration_ms),
        cell(&report.harness_version),
        code(&report.run_id),
    );

    out.push_str("| Verdict | Cases |\n|:--|--:|\n");
    for (verdict, count) in report.summary.counts() {
        if count > 0 {
            let _ = writeln!(out, "| {} {verdict} | {count} |", verdict_icon(verdict));
        }
    }
    let _ = writeln!(out, "| **Total** | **{}** |\n", report.summary.total);
    let exit = exit_code(report.verdict);
    let _ = writeln!(out, "> Exit code {exit}: {}\n", exit_code_meaning(exit));

    if !report.run_errors.is_empty() {
        out.push_str("### Run errors\n\n");
        for error in &report.run_errors {
            let _ = writeln!(out, "- {}", cell(error));
        }
        out.push('\n');
    }

    if !report.not_judged.is_empty() {
        out.push_str("### Not judged (the host does not conform until these are judged)\n\n");
        for what in &report.not_judged {
            let _ = writeln!(out, "- {}", cell(what));
        }
        out.push('\n');
    }
    if !report.unmatched_provider_requests.is_empty() {
        out.push_str("### Requests to the fake providers that matched no fake\n\n");
        out.push_str("Is the host's provider base URL the one `conformance plan` prints?\n\n");
        for line in &report.unmatched_provider_requests {
            let _ = writeln!(out, "- `{}`", cell(line));
        }
        out.push('\n');
    }
    let shown: Vec<_> = report
        .surfaces
        .iter()
        .filter(|s| s.cases > 0 || s.requested)
        .collect();
    if !shown.is_empty() {
        out.push_str(
            "| Surface | Served | Cases judged | MUST requirements judged |\n|:--|:--|--:|--:|\n",
        );
        for surface in shown {
            let _ = writeln!(
                out,
                "| {} | {} | {} of {} | {} of {} |",
                cell(surface.surface.as_str()),
                if surface.served { "yes" } else { "no" },
                surface.cases_judged,
                surface.cases,
                surface.must_requirements_judged,
                surface.must_requirements
            );
        }
        out.push('\n');
    }

    let attention: Vec<&CaseResult> = report
        .cases
        .iter()
        .filter(|c| {
            matches!(
                c.verdict,
                Verdict::Fail | Verdict::Stale | Verdict::Error | Verdict::Warn
            )
        })
        .collect();
    if !attention.is_empty() {
        let _ = writeln!(out, "### Failures and warnings ({})\n", attention.len());
        out.push_str(
            "| Case | Verdict | First failing check | Requirements |\n|---|---|---|---|\n",
        );
        for case in attention.iter().take(LIST_LIMIT) {
            let _ = writeln!(
                out,
                "| {} {} | {} {} | {} | {} |",
                code(&case.id),
                cell(&case.title),
                verdict_icon(case.verdict),
                case.verdict,
                first_check_cell(case),
                requirements_cell(case),
            );
        }
        more(&mut out, attention.len());
        out.push('\n');
    }

    list_section(
        &mut out,
        "Blocked (the harness could not judge)",
        report
            .cases
            .iter()
            .filter(|c| c.verdict == Verdict::Blocked),
        "no reason recorded",
    );
    list_section(
        &mut out,
        "Skipped",
        report.cases.iter().filter(|c| c.verdict == Verdict::Skip),
        "no reason recorded",
    );
    list_section(
        &mut out,
        "Expected failures (baseline)",
        report.cases.iter().filter(|c| c.verdict == Verdict::Xfail),
        "no reason recorded",
    );
    out.push_str(&super::streaming::to_markdown(&report.streaming));
    if let Some(differential) = &report.differential {
        let _ = writeln!(
            out,
            "### Differences from the {} reference runtime (INFO)\n\n{} of {} case(s) differ after normalising ids, times and volatile headers; `report.html` shows each aligned.\n",
            differential.reference,
            differential.cases.len(),
            differential.cases_compared
        );
        for case in differential.cases.iter().take(LIST_LIMIT) {
            let _ = writeln!(
                out,
                "- {} target {}, reference {}: {} differing line(s)",
                code(&case.case),
                case.target_verdict,
                case.reference_verdict,
                case.differing_lines
            );
        }
        more(&mut out, differential.cases.len());
    }
    out
}

fn list_section<'a>(
    out: &mut String,
    title: &str,
    cases: impl Iterator<Item = &'a CaseResult>,
    default_reason: &str,
) {
    let cases: Vec<&CaseResult> = cases.collect();
    if cases.is_empty() {
        return;
    }
    let _ = writeln!(out, "### {title} ({})\n", cases.len());
    for case in cases.iter().take(LIST_LIMIT) {
        let reason = case.reason.as_deref().unwrap_or(default_reason);
        let _ = writeln!(out, "- {}: {}", code(&case.id), cell(reason));
    }
    more(out, cases.len());
    out.push('\n');
}

fn more(out: &mut String, total: usize) {
    if total > LIST_LIMIT {
        let _ = writeln!(
            out,
            "\n… and {} more (see `report.html`).",
            total - LIST_LIMIT
        );
    }
}

fn first_check_cell(case: &CaseResult) -> String {
    match first_failing_check(case) {
        Some(check) => format!(
            "{} at {}: {}",
            code(&check.check),
            code(&check.location),
            cell(&check.message)
        ),
        None => cell(case.reason.as_deref().unwrap_or("—")),
    }
}

fn requirements_cell(case: &CaseResult) -> String {
    let ids: &[String] = match first_failing_check(case) {
        Some(check) if !check.requirements.is_empty() => &check.requirements,
        _ => &case.requirements,
    };
    if ids.is_empty() {
        return "—".to_string();
    }
    ids.iter().map(|id| code(id)).collect::<Vec<_>>().join(", ")
}

/// The icon shown next to a verdict.
pub fn verdict_icon(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Pass => "✅",
        Verdict::Info => "ℹ️",
        Verdict::Skip => "⏭️",
        Verdict::Blocked => "🚧",
        Verdict::Xfail => "🔕",
        Verdict::Warn => "⚠️",
        Verdict::Fail => "❌",
        Verdict::Stale => "🧹",
        Verdict::Error => "💥",
    }
}

fn human_duration(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms} ms")
    } else {
        format!("{:.1} s", ms as f64 / 1000.0)
    }
}

fn truncate(text: &str) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() > MESSAGE_LIMIT {
        let cut: String = flat.chars().take(MESSAGE_LIMIT).collect();
        format!("{cut}…")
    } else {
        flat
    }
}

/// Text for a table cell or list item: one line, cut, with Markdown and HTML neutralised.
fn cell(text: &str) -> String {
    let mut out = String::new();
    for c in truncate(text).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '|' => out.push_str("\\|"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '#' | '~' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// A code span: no HTML is interpreted inside it; the fence is longer than any backtick run
/// in the text, and `|` is escaped for tables.
fn code(text: &str) -> String {
    let flat: String = truncate(text)
        .chars()
        .filter(|c| !c.is_control())
        .collect::<String>()
        .replace('|', "\\|");
    if flat.is_empty() {
        return "` `".to_string();
    }
    let mut longest = 0;
    let mut run = 0;
    for c in flat.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    let fence = "`".repeat(longest + 1);
    let pad = if flat.starts_with('`') || flat.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{flat}{pad}{fence}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_cannot_break_tables_or_inject_html() {
        assert_eq!(cell("a|b\n<script>"), "a\\|b &lt;script&gt;");
        assert_eq!(code("x`y"), "``x`y``");
        assert_eq!(code("`"), "`` ` ``");
        assert_eq!(code("a|b"), "`a\\|b`");
    }

    #[test]
    fn long_text_is_cut() {
        let long = "x".repeat(MESSAGE_LIMIT + 10);
        assert_eq!(cell(&long).chars().count(), MESSAGE_LIMIT + 1);
    }
}
