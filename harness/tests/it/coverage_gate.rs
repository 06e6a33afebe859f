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

#[test]
fn the_contracts_fixtures_judge_every_wire_must_requirement() {
    // The extra fixtures of `spec/fixtures/` (`conformance-all-tiers`) add depth, not coverage:
    // a host seeding the contract's fixtures has every wire MUST requirement judged by some
    // case. The eight of CONTRACT.md's table judge all but the AI-envelope rules, which need a
    // structured-output node none of the eight has.
    let corpus =
        harness::case::load_corpus(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases"))
            .unwrap();
    let cases: Vec<harness::case::Case> = corpus.cases.into_iter().map(|c| c.case).collect();
    let report = CoverageReport::compute(&cases, spec::requirements::registry());
    let set = |name: &str| {
        report
            .by_fixture_set
            .iter()
            .find(|set| set.name == name)
            .unwrap_or_else(|| panic!("fixture set `{name}` is reported"))
    };
    let contract = set("contract");
    assert_eq!(contract.fixtures.len(), 10);
    assert!(
        contract.only_with_other_fixtures.is_empty(),
        "wire MUST requirements judged only with a fixture the contract does not name: {:#?}",
        contract.only_with_other_fixtures
    );
    assert_eq!(contract.wire_must_covered, contract.wire_must_total);
    let table = set("contract-table");
    assert_eq!(table.fixtures.len(), 8);
    let beyond: Vec<&String> = table
        .only_with_other_fixtures
        .iter()
        .filter(|id| !id.starts_with("events.ai-envelopes."))
        .collect();
    assert!(
        beyond.is_empty(),
        "wire MUST requirements the eight table fixtures leave unjudged beyond the AI envelopes: {beyond:#?}"
    );
}
