//! Coverage is a number CI guards: every `wire` MUST requirement of the registry has a case,
//! and no case names a requirement the registry does not have.

use std::path::Path;

use harness::coverage::CoverageReport;

#[test]
fn every_wire_must_requirement_has_a_case() {
    let corpus =
        harness::case::load_corpus(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases"))
            .unwrap();
    assert!(corpus.problems.is_empty(), "{:#?}", corpus.problems);
    let cases: Vec<harness::case::Case> = corpus.cases.into_iter().map(|c| c.case).collect();
    let report = CoverageReport::compute(&cases, spec::requirements::registry());
    let uncovered: Vec<String> = report
        .uncovered_wire_must()
        .iter()
        .map(|r| r.id.clone())
        .collect();
    assert!(
        uncovered.is_empty(),
        "wire MUST requirements without a case: {uncovered:#?}"
    );
    assert!(
        report.errors.is_empty(),
        "cases name unknown requirements: {}",
        report
            .errors
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    );
}
