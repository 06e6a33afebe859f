//! The differential section: per case, the target's and the reference runtime's normalised
//! transcripts side by side, aligned around their differences (INFO, never a verdict).

use std::fmt::Write as _;

use super::text::{badge, case_anchor, esc};
use crate::report::differential::{Differential, RowKind};

/// The section's `id`, and the marker tests cut the section out by.
pub(super) const SECTION_ID: &str = "differential";

/// Renders the section (nothing when the run was not differential).
pub(super) fn differential(out: &mut String, differential: Option<&Differential>) {
    let Some(differential) = differential else {
        return;
    };
    let _ = write!(
        out,
        "<section id=\"{SECTION_ID}\">\n<h2>Differences from the reference runtime ({} of {} case(s))</h2>\n\
         <p class=\"note\">Each case ran against the target and against the {} reference runtime. \
         Ids, times, the base URL, volatile headers, keep-alive comments and frame timings are \
         normalised first. What remains is INFO, never a verdict: it shows where a FAIL comes \
         from. A case bordering an open point of the seeds may differ there by right.</p>\n",
        differential.cases.len(),
        differential.cases_compared,
        esc(&differential.reference)
    );
    if differential.cases.is_empty() {
        out.push_str("<p class=\"muted\">No case differs.</p>\n</section>\n");
        return;
    }
    for case in &differential.cases {
        let _ = write!(
            out,
            "<div class=\"differential-case\" id=\"differential-{anchor}\">\n<h3><a href=\"#{anchor}\"><code>{}</code></a> \
             target {} reference {} — {} differing line(s)</h3>\n",
            esc(&case.case),
            badge(case.target_verdict),
            badge(case.reference_verdict),
            case.differing_lines,
            anchor = case_anchor(&case.case),
        );
        if !case.normalised.is_empty() {
            let _ = writeln!(
                out,
                "<p class=\"note\">Normalised by right (open points): {}.</p>",
                case.normalised
                    .iter()
                    .map(|p| format!("<code>{}</code>", esc(p)))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        if !case.open_points.is_empty() {
            let _ = writeln!(
                out,
                "<p class=\"note\">Borders open point(s) {}: a difference there may be by right.</p>",
                case.open_points
                    .iter()
                    .map(|p| format!("<code>{}</code>", esc(p)))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        out.push_str(
            "<table class=\"two-column\"><tr><th>target</th><th>reference runtime</th></tr>\n",
        );
        for row in &case.rows {
            let class = match row.kind {
                RowKind::Same => "same",
                RowKind::Changed => "changed",
                RowKind::TargetOnly => "target-only",
                RowKind::ReferenceOnly => "reference-only",
                RowKind::Gap => "gap",
            };
            let cell = |text: &Option<String>| {
                text.as_deref()
                    .map(|t| format!("<code>{}</code>", esc(t)))
                    .unwrap_or_default()
            };
            if row.kind == RowKind::Gap {
                let _ = writeln!(
                    out,
                    "<tr class=\"gap\"><td colspan=\"2\">⋯ {}</td></tr>",
                    row.target.as_deref().map(esc).unwrap_or_default()
                );
            } else {
                let _ = writeln!(
                    out,
                    "<tr class=\"{class}\"><td>{}</td><td>{}</td></tr>",
                    cell(&row.target),
                    cell(&row.reference)
                );
            }
        }
        out.push_str("</table>\n</div>\n");
    }
    out.push_str("</section>\n");
}
