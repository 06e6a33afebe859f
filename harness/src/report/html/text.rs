//! What the page's parts share: escaping, cutting text, and the bounds on what one page embeds.

use std::fmt::Write as _;

use crate::report::repro;
use crate::verdict::Verdict;

/// Most bytes of one body, frame data or check value embedded in the page.
pub const HTML_TEXT_LIMIT: usize = 16 * 1024;
/// Most SSE frames shown per response.
pub const HTML_FRAME_LIMIT: usize = 500;
/// Most exchanges shown per step (the first and last halves are kept).
pub const HTML_EXCHANGE_LIMIT: usize = 40;
/// Most steps shown per case (the first and last halves are kept).
pub const HTML_STEP_LIMIT: usize = 100;
/// Most bytes of SSE frame data shown per frame row.
pub const HTML_FRAME_DATA_LIMIT: usize = 2 * 1024;
/// Most lines of one expected-against-actual diff.
pub const HTML_DIFF_LINE_LIMIT: usize = 300;
/// Roughly the most bytes one case adds to the page: past it, diffs and exchanges are left out.
pub const HTML_CASE_BUDGET: usize = 2 * 1024 * 1024;
/// Roughly the most bytes of the whole page: past it, cases keep only their summary and checks.
pub const HTML_PAGE_BUDGET: usize = 24 * 1024 * 1024;
/// Most passing checks listed per case.
pub const HTML_PASSING_CHECK_LIMIT: usize = 100;
/// Most checks that did not hold listed per case (each with its diff).
pub const HTML_FAILING_CHECK_LIMIT: usize = 200;

pub(super) fn absent(text: &str) -> String {
    format!("<span class=\"absent\">{}</span>", esc(text))
}

pub(super) fn pretty_json(value: &serde_json::Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

/// A `<pre>` of (cut) text, saying when it was cut.
pub(super) fn pre(text: &str) -> String {
    let (shown, omitted) = cut(text, HTML_TEXT_LIMIT);
    let mut out = format!("<pre>{}</pre>", esc(shown));
    if omitted > 0 {
        let _ = write!(
            out,
            "<div class=\"note\">{omitted} more byte(s) not shown in this page.</div>"
        );
    }
    out
}

/// Text cut to [`HTML_TEXT_LIMIT`] with an inline marker.
pub(super) fn capped(text: &str) -> String {
    capped_to(text, HTML_TEXT_LIMIT)
}

/// Text cut to `limit` bytes with an inline marker.
pub(super) fn capped_to(text: &str, limit: usize) -> String {
    let (shown, omitted) = cut(text, limit);
    if omitted > 0 {
        format!("{shown}… [{omitted} more bytes not shown]")
    } else {
        shown.to_string()
    }
}

/// The longest prefix of at most `limit` bytes ending on a character boundary, and how many
/// bytes were left out.
pub(super) fn cut(text: &str, limit: usize) -> (&str, usize) {
    if text.len() <= limit {
        return (text, 0);
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (&text[..end], text.len() - end)
}

/// Escapes text for HTML content and attribute values; control characters other than tab,
/// newline and carriage return are shown as `\u{..}`.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// A verdict as a coloured badge.
pub(super) fn badge(verdict: Verdict) -> String {
    format!(
        "<span class=\"badge {}\">{verdict}</span>",
        verdict_class(verdict)
    )
}

/// The CSS class of a verdict.
pub(super) fn verdict_class(verdict: Verdict) -> String {
    format!("v-{}", verdict.as_str().to_ascii_lowercase())
}

/// The HTML id of a case's section.
pub fn case_anchor(case_id: &str) -> String {
    format!("case-{}", repro::file_stem(case_id))
}
