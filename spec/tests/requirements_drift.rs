//! Drift check of the requirement registry (`spec/requirements.json`) against the normative
//! documents (its own test binary, on libtest-mimic, so that a check that cannot run shows as
//! ignored with its reason rather than as passed).
//!
//! The documents are read from the directory named by `SPEC_DOCUMENTS_DIR` (a relative path is
//! resolved against the workspace root; `.ci/run` sets `../shared/spec-seeds`). When the
//! variable is unset or the directory is missing, the document checks fail under `CI=true`;
//! elsewhere they are reported as **ignored**, with the reason.
//!
//! Run them: `SPEC_DOCUMENTS_DIR=../shared/spec-seeds cargo test -p spec --test requirements_drift`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use libtest_mimic::{Arguments, Completion, Trial};
use spec::requirements::{Document, Requirement, normalise_whitespace, registry};

const DOCUMENTS_DIR_VAR: &str = "SPEC_DOCUMENTS_DIR";

/// Keywords whose every occurrence must lie inside some record's quote, per document. The run
/// events chapter uses uppercase RFC 2119 keywords; the execution protocol uses lowercase ones.
/// Matching is case-sensitive and on whole words (`MUST` inside `MUST NOT` counts as `MUST`).
const KEYWORDS: &[(Document, &[&str])] = &[
    (
        Document::RunEvents,
        &["MUST", "SHOULD", "MAY", "REQUIRED", "OPTIONAL"],
    ),
    (Document::ExecutionProtocol, &["must", "may"]),
];

/// Keyword occurrences that are intentionally not requirements of their own. Each entry is an
/// exact phrase of the document (whitespace-normalised, bullets excluded); an occurrence inside
/// it counts as covered. Every entry must still occur in its document.
const NOT_REQUIREMENTS: &[(Document, &str)] = &[
    // Lead-in of a bullet list: each of the five bullets that follow is its own record
    // (events.heartbeat.skip-overlapping-tick … events.heartbeat.unchanged-tick-no-create-run).
    (Document::RunEvents, "On each tick it MUST:"),
    // Lead-in of a bullet list: each bullet is its own record (events.feedback.accept-on-terminal-run
    // … events.feedback.audit-log-principal).
    (Document::RunEvents, "A host advertising feedback MUST:"),
];

fn main() {
    let args = Arguments::from_args();
    let trials = vec![
        Trial::test(
            "registry_is_valid_and_has_at_least_150_complete_records",
            || {
                registry_is_valid_and_has_at_least_150_complete_records();
                Ok(())
            },
        ),
        with_documents(
            "every_quote_occurs_in_its_document",
            every_quote_occurs_in_its_document,
        ),
        with_documents(
            "every_normative_keyword_is_covered_by_a_quote",
            every_normative_keyword_is_covered_by_a_quote,
        ),
        with_documents(
            "run_events_sections_are_headings_of_the_chapter",
            run_events_sections_are_headings_of_the_chapter,
        ),
    ];
    libtest_mimic::run(&args, trials).exit();
}

/// A check of the documents: ignored, with the reason, when they are unavailable outside CI.
fn with_documents(name: &'static str, check: fn(&Path)) -> Trial {
    Trial::ignorable_test(name, move || match documents_dir() {
        Ok(dir) => {
            check(&dir);
            Ok(Completion::Completed)
        }
        Err(reason) => Ok(Completion::ignored_with(reason)),
    })
}

fn registry_is_valid_and_has_at_least_150_complete_records() {
    let registry = registry();
    if let Err(problems) = registry.validate() {
        let listing: Vec<String> = problems.iter().map(|problem| problem.to_string()).collect();
        panic!(
            "spec/requirements.json breaks {} registry rule(s):\n  {}",
            listing.len(),
            listing.join("\n  ")
        );
    }
    assert!(
        registry.len() >= 150,
        "the registry has {} records; the bar is at least 150",
        registry.len()
    );
    for requirement in registry {
        assert!(
            !requirement.quote.trim().is_empty(),
            "{} has an empty quote",
            requirement.id
        );
        assert!(
            !requirement.level.as_str().is_empty()
                && !requirement.testability.to_string().is_empty(),
            "{} lacks a level or a testability",
            requirement.id
        );
    }
    for document in [Document::ExecutionProtocol, Document::RunEvents] {
        assert!(
            registry.document(document).is_some(),
            "the registry does not list document `{document}`"
        );
        assert!(
            registry.in_document(document).next().is_some(),
            "no requirement cites `{document}`"
        );
    }
}

fn every_quote_occurs_in_its_document(dir: &Path) {
    let documents = load_documents(dir);
    let failures: Vec<String> = registry()
        .iter()
        .filter(|requirement| !documents[&requirement.document].contains(&requirement.quote))
        .map(|requirement| {
            format!(
                "{} ({}): {:?}",
                requirement.id, requirement.document, requirement.quote
            )
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} quote(s) of spec/requirements.json do not occur (whitespace-normalised) in the document they cite:\n  {}",
        failures.len(),
        failures.join("\n  ")
    );
}

fn every_normative_keyword_is_covered_by_a_quote(dir: &Path) {
    let documents = load_documents(dir);
    let mut uncovered = Vec::new();
    for (document, keywords) in KEYWORDS {
        let text = &documents[document];
        let mut spans = quote_spans(text, registry().in_document(*document));
        for (excluded_document, phrase) in NOT_REQUIREMENTS {
            if excluded_document != document {
                continue;
            }
            let found = spans_of(text, phrase);
            assert!(
                !found.is_empty(),
                "stale exclusion in NOT_REQUIREMENTS: {phrase:?} no longer occurs in `{document}`"
            );
            spans.extend(found);
        }
        for keyword in *keywords {
            for start in word_occurrences(text, keyword) {
                let end = start + keyword.len();
                if !spans.iter().any(|&(from, to)| from <= start && end <= to) {
                    uncovered.push(format!(
                        "{document}: {keyword} in {:?}",
                        sentence_around(text, start)
                    ));
                }
            }
        }
    }
    assert!(
        uncovered.is_empty(),
        "{} normative keyword occurrence(s) lie in no record's quote; add a record to spec/requirements.json \
         (or, if it is not a requirement, an exclusion with a comment in this test):\n  {}",
        uncovered.len(),
        uncovered.join("\n  ")
    );
}

fn run_events_sections_are_headings_of_the_chapter(dir: &Path) {
    let path = document_path(dir, Document::RunEvents);
    let text = read(&path);
    let headings: Vec<&str> = text.lines().map(str::trim).collect();
    let failures: Vec<String> = registry()
        .in_document(Document::RunEvents)
        .filter(|requirement| !headings.contains(&requirement.section.as_str()))
        .map(|requirement| format!("{}: section {:?}", requirement.id, requirement.section))
        .collect();
    assert!(
        failures.is_empty(),
        "{} run-events record(s) name a section that is no line of {}:\n  {}",
        failures.len(),
        path.display(),
        failures.join("\n  ")
    );
}

/// Every document the registry lists, whitespace-normalised.
fn load_documents(dir: &Path) -> BTreeMap<Document, String> {
    [Document::ExecutionProtocol, Document::RunEvents]
        .into_iter()
        .map(|document| {
            let text = read(&document_path(dir, document));
            (document, normalise_whitespace(&text))
        })
        .collect()
}

fn document_path(dir: &Path, document: Document) -> PathBuf {
    let info = registry()
        .document(document)
        .unwrap_or_else(|| panic!("spec/requirements.json does not list document `{document}`"));
    dir.join(&info.file)
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|error| {
        panic!(
            "cannot read spec document {} ({error}); {DOCUMENTS_DIR_VAR} must name the directory holding both documents",
            path.display()
        )
    })
}

/// The documents directory, or why it is unavailable (outside CI: the check is then ignored).
///
/// # Panics
///
/// Under `CI=true`, when the variable is unset or the directory is missing.
fn documents_dir() -> Result<PathBuf, String> {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let workspace_root = manifest_dir.parent().unwrap_or(manifest_dir);
    let problem = match std::env::var_os(DOCUMENTS_DIR_VAR) {
        Some(value) if !value.is_empty() => {
            let dir = PathBuf::from(&value);
            let dir = if dir.is_relative() {
                workspace_root.join(dir)
            } else {
                dir
            };
            if dir.is_dir() {
                return Ok(dir);
            }
            format!(
                "{DOCUMENTS_DIR_VAR}={} does not name a directory (resolved to {})",
                value.to_string_lossy(),
                dir.display()
            )
        }
        _ => format!("{DOCUMENTS_DIR_VAR} is not set"),
    };
    let how = format!(
        "set {DOCUMENTS_DIR_VAR} to the directory holding the spec documents, e.g. \
         `{DOCUMENTS_DIR_VAR}=../shared/spec-seeds cargo test -p spec` (a relative path is resolved \
         against the workspace root {})",
        workspace_root.display()
    );
    if running_in_ci() {
        panic!("{problem}: under CI=true the requirement drift check may not be skipped; {how}");
    }
    Err(format!("no quote checked: {problem}; to run it, {how}"))
}

fn running_in_ci() -> bool {
    std::env::var("CI").is_ok_and(|value| value.eq_ignore_ascii_case("true") || value == "1")
}

/// The byte spans of every occurrence of every quote in `text`.
fn quote_spans<'a>(
    text: &str,
    requirements: impl Iterator<Item = &'a Requirement>,
) -> Vec<(usize, usize)> {
    requirements
        .flat_map(|requirement| spans_of(text, &requirement.quote))
        .collect()
}

fn spans_of(text: &str, phrase: &str) -> Vec<(usize, usize)> {
    if phrase.is_empty() {
        return Vec::new();
    }
    text.match_indices(phrase)
        .map(|(start, found)| (start, start + found.len()))
        .collect()
}

/// Byte offsets of `word` in `text` where it is a whole word (no letter, digit or `_` on
/// either side).
fn word_occurrences(text: &str, word: &str) -> Vec<usize> {
    let is_word_char = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(word)
        .map(|(start, _)| start)
        .filter(|&start| {
            let before = text[..start].chars().next_back();
            let after = text[start + word.len()..].chars().next();
            !before.is_some_and(is_word_char) && !after.is_some_and(is_word_char)
        })
        .collect()
}

/// The sentence (or bullet) around byte offset `at`, for reporting.
fn sentence_around(text: &str, at: usize) -> &str {
    let start = [". ", "• ", "; "]
        .iter()
        .filter_map(|boundary| text[..at].rfind(boundary).map(|i| i + boundary.len()))
        .max()
        .unwrap_or(0);
    let end = [". ", " •", "; "]
        .iter()
        .filter_map(|boundary| text[at..].find(boundary).map(|i| at + i + 1))
        .min()
        .unwrap_or(text.len());
    text[start..end].trim()
}
