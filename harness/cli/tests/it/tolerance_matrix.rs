//! The tolerance matrix as tests: the corpus tolerates the profiles of the reference runtime
//! that take the options the seeds leave open (no FAIL, no WARN, no ERROR, INFO only from
//! CONTRACT-level checks), and every open point of `spec/open-points.json` is exercised.
//!
//! The fast test (one divergent profile, the whole corpus) always runs; the full matrix (every
//! non-standard profile) runs when `CI=true` or `CONFORMANCE_SELFTEST=1`, like the kill matrix.

use std::collections::BTreeSet;
use std::path::Path;

use conformance_cli::launch::BuiltInProfile;
use conformance_cli::tolerance::{
    ToleranceMatrix, matrix_profiles, render_markdown, tolerance_matrix,
};

/// Open points no built-in profile yet takes another option at (no knob in the reference
/// runtime yet). The list only shrinks: a point that gains a profile must leave it.
const POINTS_WITHOUT_A_DIVERGENT_PROFILE: &[&str] = &[];

fn corpus() -> Vec<harness::case::LoadedCase> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let corpus = harness::case::load_corpus(&root.join("cases")).unwrap();
    assert!(corpus.problems.is_empty(), "{:#?}", corpus.problems);
    corpus.cases
}

fn write(matrix: &ToleranceMatrix, name: &str) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/tolerance-matrix");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(name), render_markdown(matrix)).unwrap();
}

fn assert_tolerated(matrix: &ToleranceMatrix) {
    let lines: Vec<String> = matrix
        .intolerances
        .iter()
        .map(|i| {
            format!(
                "[{}] {} {} ({}): {}",
                i.profile,
                i.verdict,
                i.case,
                i.level.as_str(),
                i.message
            )
        })
        .collect();
    assert!(
        lines.is_empty(),
        "cases that fail a host for an option the seeds leave open:\n{}",
        lines.join("\n")
    );
}

#[test]
fn the_registry_names_exactly_the_built_in_profiles() {
    let registry = spec::open_points::open_points();
    let named: Vec<&str> = registry.profiles.iter().map(String::as_str).collect();
    let built_in: Vec<&str> = BuiltInProfile::ALL.iter().map(|p| p.as_str()).collect();
    assert_eq!(named, built_in);
}

#[test]
fn every_open_point_is_taken_differently_by_some_profile() {
    let registry = spec::open_points::open_points();
    let pending: BTreeSet<&str> = POINTS_WITHOUT_A_DIVERGENT_PROFILE.iter().copied().collect();
    for id in &pending {
        assert!(registry.get(id).is_some(), "`{id}` is not an open point");
    }
    let mut uncovered = Vec::new();
    let mut newly_covered = Vec::new();
    for point in &registry.points {
        // A point no profile can take otherwise says why, and is exercised on made-up
        // transcripts instead.
        let covered = !point.divergent_profiles().is_empty() || point.exercised_otherwise.is_some();
        match (covered, pending.contains(point.id.as_str())) {
            (false, false) => uncovered.push(point.id.as_str()),
            (true, true) => newly_covered.push(point.id.as_str()),
            _ => {}
        }
    }
    assert!(
        uncovered.is_empty(),
        "open points no built-in profile takes another option at: {uncovered:?}"
    );
    assert!(
        newly_covered.is_empty(),
        "now taken by a profile: remove from POINTS_WITHOUT_A_DIVERGENT_PROFILE: {newly_covered:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_corpus_tolerates_the_divergent_profile() {
    let cases = corpus();
    let matrix = tolerance_matrix(&cases, &[BuiltInProfile::Divergent], 8, 1.0)
        .await
        .unwrap();
    write(&matrix, "divergent.md");
    assert_tolerated(&matrix);
    // What the divergent profile diverges at, some case ran against.
    let unexercised: Vec<&str> = matrix
        .points
        .iter()
        .filter(|p| p.divergent_options.contains_key("divergent") && !p.exercised())
        .map(|p| p.point.as_str())
        .collect();
    assert!(
        unexercised.is_empty(),
        "open points the divergent profile diverges at but no case ran against: {unexercised:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_full_tolerance_matrix() {
    let enabled = std::env::var("CI").is_ok_and(|v| v == "true")
        || std::env::var("CONFORMANCE_SELFTEST").is_ok_and(|v| v == "1");
    if !enabled {
        eprintln!(
            "NOTICE: full tolerance matrix SKIPPED (set CONFORMANCE_SELFTEST=1, or CI=true, to run it)"
        );
        return;
    }
    let cases = corpus();
    let matrix = tolerance_matrix(&cases, &matrix_profiles(), 8, 1.0)
        .await
        .unwrap();
    write(&matrix, "tolerance-matrix.md");
    assert_tolerated(&matrix);
    let pending: BTreeSet<&str> = POINTS_WITHOUT_A_DIVERGENT_PROFILE.iter().copied().collect();
    let registry = spec::open_points::open_points();
    let unexercised: Vec<&str> = matrix
        .unexercised()
        .into_iter()
        .filter(|p| !pending.contains(p))
        .filter(|p| {
            registry
                .get(p)
                .is_some_and(|p| p.exercised_otherwise.is_none())
        })
        .collect();
    assert!(
        unexercised.is_empty(),
        "open points no case exercised under a profile taking another option: {unexercised:?}\n{}",
        render_markdown(&matrix)
    );
}
