//! Expected against actual, rendered as a readable diff.

use std::fmt::Write as _;
use std::time::Duration;

use similar::{ChangeTag, TextDiff};

use super::text::{HTML_DIFF_LINE_LIMIT, HTML_TEXT_LIMIT, cut, esc, pre};

/// Expected against actual: a line diff for multi-line values, a character diff for one-line
/// values, the value alone when only one side exists.
pub(super) fn diff(expected: Option<&str>, actual: Option<&str>) -> String {
    let (Some(expected), Some(actual)) = (expected, actual) else {
        let mut out = String::from("<table class=\"single-diff\">");
        if let Some(expected) = expected {
            let _ = write!(out, "<tr><th>expected</th><td>{}</td></tr>", pre(expected));
        }
        if let Some(actual) = actual {
            let _ = write!(out, "<tr><th>actual</th><td>{}</td></tr>", pre(actual));
        }
        out.push_str("</table>");
        return out;
    };
    let (expected, expected_cut) = cut(expected, HTML_TEXT_LIMIT);
    let (actual, actual_cut) = cut(actual, HTML_TEXT_LIMIT);
    let note = if expected_cut + actual_cut > 0 {
        format!(
            "<div class=\"note\">Values cut to {} KiB each for this page.</div>",
            HTML_TEXT_LIMIT / 1024
        )
    } else {
        String::new()
    };
    if expected.contains('\n') || actual.contains('\n') {
        let diff = TextDiff::configure()
            .timeout(Duration::from_millis(250))
            .diff_lines(expected, actual);
        let mut out = String::from(
            "<div class=\"legend\"><span class=\"del\">− expected</span><span class=\"ins\">+ actual</span></div><pre class=\"diff\">",
        );
        let mut lines = 0;
        let mut omitted = 0;
        for (index, group) in diff.grouped_ops(3).iter().enumerate() {
            if index > 0 && lines < HTML_DIFF_LINE_LIMIT {
                out.push_str("<span class=\"gap\">⋯</span>");
            }
            for op in group {
                for change in diff.iter_changes(op) {
                    if lines == HTML_DIFF_LINE_LIMIT {
                        omitted += 1;
                        continue;
                    }
                    lines += 1;
                    let (class, sign) = match change.tag() {
                        ChangeTag::Delete => ("del", '-'),
                        ChangeTag::Insert => ("ins", '+'),
                        ChangeTag::Equal => ("eq", ' '),
                    };
                    let line = change.value().trim_end_matches(['\n', '\r']);
                    let _ = write!(out, "<span class=\"{class}\">{sign} {}</span>", esc(line));
                }
            }
        }
        if omitted > 0 {
            let _ = write!(
                out,
                "<span class=\"gap\">… {omitted} more diff line(s) not shown</span>"
            );
        }
        if diff
            .ops()
            .iter()
            .all(|op| op.tag() == similar::DiffTag::Equal)
        {
            out.push_str("<span class=\"gap\">(the rendered values are equal)</span>");
        }
        out.push_str("</pre>");
        out.push_str(&note);
        return out;
    }
    let diff = TextDiff::configure()
        .timeout(Duration::from_millis(250))
        .diff_chars(expected, actual);
    let mut old = String::new();
    let mut new = String::new();
    for change in diff.iter_all_changes() {
        let text = esc(change.value());
        match change.tag() {
            ChangeTag::Equal => {
                old.push_str(&text);
                new.push_str(&text);
            }
            ChangeTag::Delete => {
                let _ = write!(old, "<del>{text}</del>");
            }
            ChangeTag::Insert => {
                let _ = write!(new, "<ins>{text}</ins>");
            }
        }
    }
    format!(
        "<table class=\"single-diff\"><tr><th>expected</th><td><code>{old}</code></td></tr>\
         <tr><th>actual</th><td><code>{new}</code></td></tr></table>{note}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multi_line_values_get_a_line_diff() {
        let html = diff(Some("a\nb\nc"), Some("a\nB\nc"));
        assert!(html.contains("<span class=\"del\">- b</span>"), "{html}");
        assert!(html.contains("<span class=\"ins\">+ B</span>"), "{html}");
    }

    #[test]
    fn single_line_values_get_a_character_diff() {
        let html = diff(Some("202"), Some("500"));
        assert!(html.contains("<del>"), "{html}");
        assert!(html.contains("<ins>"), "{html}");
    }
}
