//! The self-test as a test: the clean runtime passes every case, every known defect is caught
//! by at least one MUST or SHOULD check (FAIL or WARN), and every MUST case that catches no defect has a
//! recorded reason (`cases/selftest-exemptions.json`).
//!
//! It runs the whole suite once per defect, so it runs when the tests are built with `CI=true`
//! (as `.ci/run` sets) or `CONFORMANCE_SELFTEST=1` (cfg `conformance_gated`, see `build.rs`);
//! otherwise it is reported as ignored, with the reason.

use std::path::Path;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[cfg_attr(
    not(conformance_gated),
    ignore = "the kill matrix runs the suite once per defect (minutes): built to run under CI=true or CONFORMANCE_SELFTEST=1, or pass --include-ignored"
)]
async fn every_defect_is_killed_and_the_clean_runtime_passes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let corpus = harness::case::load_corpus(&root.join("cases")).unwrap();
    assert!(corpus.problems.is_empty(), "{:#?}", corpus.problems);
    let matrix = conformance_cli::selftest::kill_matrix(&corpus.cases, &[], 8, 1.0)
        .await
        .unwrap();
    let dir = root.join("target/kill-matrix");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("kill-matrix.md"),
        conformance_cli::selftest::render_markdown(&matrix),
    )
    .unwrap();
    assert!(
        matrix.clean_failures.is_empty(),
        "the clean runtime must pass every case:\n{}",
        matrix.clean_failures.join("\n")
    );
    let survivors: Vec<&str> = matrix
        .defects
        .iter()
        .filter(|d| !d.killed)
        .map(|d| d.defect.name.as_str())
        .collect();
    assert!(
        survivors.is_empty(),
        "defects no MUST or SHOULD check caught: {survivors:?}\n{}",
        conformance_cli::selftest::render_markdown(&matrix)
    );
    let unexplained: Vec<&str> = matrix
        .must_cases_without_kill
        .iter()
        .filter(|(_, reason)| reason.is_none())
        .map(|(case, _)| case.as_str())
        .collect();
    assert!(
        unexplained.is_empty(),
        "MUST cases that catch no defect, without a recorded reason in cases/selftest-exemptions.json: {unexplained:?}"
    );
}
