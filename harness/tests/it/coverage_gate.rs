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

#[test]
fn upstreams_catalogue_runs_every_rule_but_those_only_project_fixtures_serve() {
    let corpus =
        harness::case::load_corpus(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases"))
            .unwrap();
    let cases: Vec<harness::case::Case> = corpus.cases.into_iter().map(|c| c.case).collect();
    let project = spec::fixtures::ids_of(spec::fixtures::Catalogue::Project);
    // Every case that needs a project-only fixture says so, and why, in its description; and
    // every case names the fixtures that serve it among spec/fixtures/ (alternatives upstream's
    // catalogue first where both serve).
    for case in &cases {
        for need in &case.needs {
            let Some(alternatives) = need.wanted().and_then(harness::case::needs::Need::fixtures)
            else {
                continue;
            };
            let ids: Vec<&str> = alternatives.iter().map(String::as_str).collect();
            let alternatives = ids.join("|");
            for id in &ids {
                assert!(
                    spec::fixtures::get(id).is_some(),
                    "{}: fixture `{id}` is in neither catalogue",
                    case.id
                );
            }
            let catalogues: Vec<spec::fixtures::Catalogue> = ids
                .iter()
                .filter_map(|id| spec::fixtures::catalogue_of(id))
                .collect();
            assert!(
                catalogues.windows(2).all(|w| w[0] <= w[1]),
                "{}: name upstream's fixtures first in `{need}`",
                case.id
            );
            if ids.iter().all(|id| project.contains(id)) {
                assert!(
                    case.description
                        .as_deref()
                        .is_some_and(|d| d.contains("Project-only fixture")),
                    "{}: needs the project-only `{alternatives}` without saying why no upstream fixture serves it",
                    case.id
                );
            }
        }
    }
    let report = CoverageReport::compute(&cases, spec::requirements::registry());
    let upstream = report
        .by_fixture_set
        .iter()
        .find(|set| set.name == "upstream")
        .expect("the upstream catalogue's set is reported");
    eprintln!(
        "upstream's catalogue: {} of {} wire MUST requirements run; only with project fixtures: {:#?}",
        upstream.wire_must_covered, upstream.wire_must_total, upstream.only_with_other_fixtures
    );
    // What only project fixtures serve: the AI envelopes (a per-run envelope program) and the
    // vendor events' debug-only rule (a vendor event).
    let unexpected: Vec<&String> = upstream
        .only_with_other_fixtures
        .iter()
        .filter(|id| {
            !id.starts_with("events.ai-envelopes.")
                && !id.starts_with("events.reliability.")
                && !id.starts_with("events.envelope-catalog.")
                && !id.starts_with("events.envelope-contracts.")
                && !id.starts_with("events.types.vendor")
                && !id.starts_with("events.stream-mode.vendor")
        })
        .collect();
    assert!(
        unexpected.is_empty(),
        "wire MUST rules upstream's catalogue leaves unrun beyond those only project fixtures serve: {unexpected:#?}"
    );
    // The envelope reliability rules upstream's envelope fixtures can state run on them (one
    // at a time on their global mock-AI seam; a retry's budget through upstream's
    // last-dispatch-budget seam); what stays with the project's fixture needs a view of each
    // provider call's corrective fragment, which no upstream seam shows.
    eprintln!(
        "upstream's catalogue: {} of {} capability MUST requirements run; only with project fixtures: {:#?}",
        upstream.capability_must_covered,
        upstream.capability_must_total,
        upstream.capability_only_with_other_fixtures
    );
    let reliability_left: Vec<&str> = upstream
        .capability_only_with_other_fixtures
        .iter()
        .map(String::as_str)
        .filter(|id| id.starts_with("events.reliability."))
        .collect();
    assert_eq!(
        reliability_left,
        [
            "events.reliability.truncation-retry-no-schema-fragment",
            "events.reliability.violation-fragment-no-model-output",
        ],
        "the reliability MUST rules only project fixtures serve"
    );
}
