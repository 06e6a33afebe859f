//! The corpus drives hosts simpler than the reference runtime's standard configuration: the
//! built-in runtime configured with only Anthropic Messages and a media provider, with only
//! OpenAI Responses and a media provider, with one provider and two models, seeding only
//! the contract's fixtures, and seeding only upstream's fixture catalogue. Each test is one configuration and asserts the numbers.

use std::collections::BTreeSet;

use super::probed_runner::{corpus, probed_runner};
use conformance_cli::launch::{BuiltInOptions, BuiltInProviders, start_built_in};
use harness::case::{CaseSurface, LoadedCase};
use harness::coverage::CoverageReport;
use harness::report::RunReport;
use harness::run::{Filters, Quiet, RunSettings, run_cases as run};
use harness::verdict::Verdict;

async fn run_surface(options: BuiltInOptions, surface: CaseSurface) -> RunReport {
    let running = start_built_in(&options).await.unwrap();
    let runner = probed_runner(running.target.clone()).await;
    let filters = Filters {
        surfaces: vec![surface],
        ..Filters::default()
    };
    let settings = RunSettings {
        jobs: 8,
        shuffle_seed: None,
        baseline_path: None,
        ..RunSettings::default()
    };
    let report = run(&runner, &corpus(), &filters, &settings, &|r| r, &Quiet).await;
    running.shutdown().await;
    report
}

fn is_judged(verdict: Verdict) -> bool {
    !matches!(verdict, Verdict::Skip | Verdict::Blocked | Verdict::Error)
}

/// `(judged, not judged)` counts, and the cases not judged with their reasons.
fn counts(report: &RunReport) -> (usize, usize, Vec<String>) {
    let not_judged: Vec<String> = report
        .cases
        .iter()
        .filter(|c| !is_judged(c.verdict))
        .map(|c| {
            format!(
                "{} {:?}: {}",
                c.id,
                c.verdict,
                c.reason.clone().unwrap_or_default()
            )
        })
        .collect();
    (
        report.cases.len() - not_judged.len(),
        not_judged.len(),
        not_judged,
    )
}

fn failures(report: &RunReport) -> Vec<String> {
    report
        .cases
        .iter()
        .filter(|c| matches!(c.verdict, Verdict::Fail | Verdict::Error | Verdict::Warn))
        .map(|c| {
            let failing: Vec<String> = c
                .checks
                .iter()
                .filter(|k| k.verdict != Verdict::Pass)
                .map(|k| format!("{} {}", k.check, k.message))
                .collect();
            format!(
                "{} {:?} {:?}: {}",
                c.id,
                c.verdict,
                c.reason,
                failing.join("; ")
            )
        })
        .collect()
}

/// At most 10% of the execution corpus not judged, and nothing failed.
fn assert_mostly_judged(setup: BuiltInProviders, report: &RunReport) {
    let (judged, not_judged, which) = counts(report);
    eprintln!("{setup}: {judged} judged, {not_judged} not judged: {which:#?}");
    assert!(judged > 0);
    assert!(
        not_judged * 10 <= report.cases.len(),
        "{setup}: {not_judged} of {} execution cases not judged: {which:#?}",
        report.cases.len()
    );
    let failed = failures(report);
    assert!(failed.is_empty(), "{setup}: {failed:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runtime_with_only_anthropic_messages_and_media_has_its_execution_corpus_judged() {
    let setup = BuiltInProviders::AnthropicAndMedia;
    let options = BuiltInOptions {
        providers: setup,
        ..BuiltInOptions::default()
    };
    let report = run_surface(options, CaseSurface::Execution).await;
    assert_mostly_judged(setup, &report);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runtime_with_only_openai_responses_and_media_has_its_execution_corpus_judged() {
    let setup = BuiltInProviders::ResponsesAndMedia;
    let options = BuiltInOptions {
        providers: setup,
        ..BuiltInOptions::default()
    };
    let report = run_surface(options, CaseSurface::Execution).await;
    assert_mostly_judged(setup, &report);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runtime_with_one_provider_and_two_models_has_its_routing_cases_run_and_pass() {
    let setup = BuiltInProviders::OneProviderTwoModels;
    let options = BuiltInOptions {
        providers: setup,
        ..BuiltInOptions::default()
    };
    let report = run_surface(options, CaseSurface::Execution).await;
    let routing: Vec<(&str, Verdict)> = report
        .cases
        .iter()
        .filter(|c| c.id.starts_with("x.routing."))
        .map(|c| (c.id.as_str(), c.verdict))
        .collect();
    let (judged, not_judged, which) = counts(&report);
    eprintln!("{setup}: {judged} judged, {not_judged} not judged: {which:#?}");
    assert_eq!(routing.len(), 6, "{routing:?}");
    assert!(
        routing.iter().all(|(_, verdict)| *verdict == Verdict::Pass),
        "{routing:?}\n{:#?}",
        failures(&report)
    );
    let failed = failures(&report);
    assert!(failed.is_empty(), "{setup}: {failed:#?}");
}

/// The wire MUST requirements the cases that ran cite.
fn judged_wire_must(report: &RunReport, cases: &[LoadedCase]) -> BTreeSet<String> {
    let ran: BTreeSet<&str> = report
        .cases
        .iter()
        .filter(|c| is_judged(c.verdict))
        .map(|c| c.id.as_str())
        .collect();
    let ran_cases: Vec<harness::case::Case> = cases
        .iter()
        .filter(|c| ran.contains(c.case.id.as_str()))
        .map(|c| c.case.clone())
        .collect();
    let all: Vec<harness::case::Case> = cases.iter().map(|c| c.case.clone()).collect();
    let registry = spec::requirements::registry();
    let uncovered: BTreeSet<String> = CoverageReport::compute(&ran_cases, registry)
        .uncovered_wire_must()
        .iter()
        .map(|r| r.id.clone())
        .collect();
    let every: BTreeSet<String> = CoverageReport::compute(&all, registry)
        .requirements
        .iter()
        .filter(|r| r.is_covered())
        .map(|r| r.id.clone())
        .collect();
    every
        .into_iter()
        .filter(|id| {
            let requirement = registry.get(id).unwrap();
            matches!(
                requirement.level,
                spec::requirements::Level::Must | spec::requirements::Level::MustNot
            ) && requirement.testability == spec::requirements::Testability::Wire
                && !uncovered.contains(id)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runtime_seeding_only_the_contracts_fixtures_has_every_wire_must_rule_run() {
    let cases = corpus();
    let shipped = run_surface(BuiltInOptions::default(), CaseSurface::Openwop).await;
    let table: Vec<String> = spec::fixtures::CONTRACT_FIXTURES
        .iter()
        .map(|f| f.to_string())
        .collect();
    let eight = run_surface(
        BuiltInOptions {
            fixtures: Some(table.clone()),
            ..BuiltInOptions::default()
        },
        CaseSurface::Openwop,
    )
    .await;
    let with_envelopes = run_surface(
        BuiltInOptions {
            fixtures: Some(
                table
                    .iter()
                    .cloned()
                    .chain(spec::fixtures::ENVELOPE_FIXTURES.map(String::from))
                    .collect(),
            ),
            ..BuiltInOptions::default()
        },
        CaseSurface::Openwop,
    )
    .await;
    let judged_shipped = judged_wire_must(&shipped, &cases);
    let judged_eight = judged_wire_must(&eight, &cases);
    let judged_contract = judged_wire_must(&with_envelopes, &cases);
    for (name, report) in [
        ("shipped fixtures", &shipped),
        ("the eight of CONTRACT.md's table", &eight),
        ("the contract's with the envelope fixtures", &with_envelopes),
    ] {
        let (judged, not_judged, _) = counts(report);
        eprintln!("{name}: {judged} judged, {not_judged} not judged");
        let failed = failures(report);
        assert!(failed.is_empty(), "{name}: {failed:#?}");
    }
    // Seeding the contract's fixtures leaves nothing unjudged: a fixture beyond them is
    // optional (its cases SKIP), never a reason the run does not conform.
    assert!(
        with_envelopes.not_judged.is_empty(),
        "{:#?}",
        with_envelopes.not_judged
    );
    let lost: Vec<&String> = judged_shipped.difference(&judged_contract).collect();
    assert!(
        lost.is_empty(),
        "wire MUST requirements judged only with a fixture the contract does not name: {lost:#?}"
    );
    let lost_with_eight: Vec<&String> = judged_shipped
        .difference(&judged_eight)
        .filter(|id| !id.starts_with("events.ai-envelopes."))
        .collect();
    assert!(
        lost_with_eight.is_empty(),
        "wire MUST requirements the eight table fixtures leave unrun beyond the AI envelopes: {lost_with_eight:#?}"
    );
    eprintln!(
        "wire MUST requirements run: shipped {}, eight {}, contract {}",
        judged_shipped.len(),
        judged_eight.len(),
        judged_contract.len()
    );
}

/// Whether every `fixture:` need of a case (each `A|B` by any alternative) is a fixture of
/// `seeded`.
fn served_by(case: &harness::case::Case, seeded: &[String]) -> bool {
    case.needs.iter().all(|need| {
        need.wanted()
            .and_then(harness::case::needs::Need::fixtures)
            .is_none_or(|alternatives| alternatives.iter().any(|id| seeded.iter().any(|s| s == id)))
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runtime_seeding_only_upstreams_catalogue_has_every_case_an_upstream_fixture_serves_judged()
 {
    // The reference runtime configured as a real OpenWOP host: it seeds only the fixtures of
    // upstream's catalogue (`--built-in-fixtures upstream`).
    let upstream: Vec<String> = spec::fixtures::ids_of(spec::fixtures::Catalogue::Upstream)
        .into_iter()
        .map(String::from)
        .collect();
    let cases = corpus();
    let report = run_surface(
        BuiltInOptions {
            fixtures: Some(upstream.clone()),
            ..BuiltInOptions::default()
        },
        CaseSurface::Openwop,
    )
    .await;
    let count = |v: Verdict| report.cases.iter().filter(|c| c.verdict == v).count();
    let (judged, _, _) = counts(&report);
    eprintln!(
        "upstream's catalogue only: {} W cases, {judged} judged, {} SKIP, {} BLOCKED, {} ERROR",
        report.cases.len(),
        count(Verdict::Skip),
        count(Verdict::Blocked),
        count(Verdict::Error)
    );
    let failed = failures(&report);
    assert!(failed.is_empty(), "{failed:#?}");
    // Nothing is BLOCKED: a project-only fixture the host does not list is its fact (SKIP).
    let blocked: Vec<String> = counts(&report)
        .2
        .into_iter()
        .filter(|c| c.contains(" Blocked: "))
        .collect();
    assert!(blocked.is_empty(), "{blocked:#?}");
    // Every case an upstream fixture can serve is judged; a case SKIPs only for a project-only
    // fixture (with the reason naming it) or a capability the host does not advertise.
    for result in &report.cases {
        let case = &cases.iter().find(|c| c.case.id == result.id).unwrap().case;
        let reason = result.reason.clone().unwrap_or_default();
        if served_by(case, &upstream) {
            assert!(
                is_judged(result.verdict) || !reason.contains("fixture"),
                "{} {:?}: {reason}",
                result.id,
                result.verdict
            );
        } else {
            assert_eq!(result.verdict, Verdict::Skip, "{}: {reason}", result.id);
            assert!(
                reason.contains("this project's catalogue"),
                "{}: {reason}",
                result.id
            );
        }
    }
    // (Which wire MUST rules only project fixtures serve is `conformance coverage`'s
    // `upstream` set, guarded by the harness's coverage gate.)
    eprintln!(
        "wire MUST requirements judged with upstream's catalogue only: {}",
        judged_wire_must(&report, &cases).len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_run_events_ai_node_calls_an_openai_responses_provider() {
    // `configurable.ai.provider` names the host's text-primary, here a Responses provider.
    let options = BuiltInOptions {
        providers: BuiltInProviders::ResponsesAndMedia,
        ..BuiltInOptions::default()
    };
    let report = run_surface(options, CaseSurface::Openwop).await;
    let through_provider: Vec<(&str, Verdict)> = report
        .cases
        .iter()
        .filter(|c| {
            c.transcript
                .iter()
                .any(|step| step.provider_calls.iter().any(|calls| calls.count > 0))
        })
        .map(|c| (c.id.as_str(), c.verdict))
        .collect();
    assert!(
        through_provider
            .iter()
            .any(|(id, _)| *id == "w.provider-usage.configured-provider"),
        "{through_provider:?}"
    );
    assert!(
        through_provider.iter().all(|(_, v)| *v == Verdict::Pass),
        "{through_provider:?}\n{:#?}",
        failures(&report)
    );
    let failed = failures(&report);
    assert!(failed.is_empty(), "{failed:#?}");
}

/// The steps of a case, nested ones included.
fn all_steps(steps: &[harness::case::Step]) -> Vec<&harness::case::Step> {
    use harness::case::StepAction;
    let mut out = Vec::new();
    for step in steps {
        out.push(step);
        match &step.action {
            StepAction::Parallel(inner) => out.extend(all_steps(inner)),
            StepAction::Repeat(repeat) => out.extend(all_steps(&repeat.steps)),
            StepAction::Generate(generate) => out.extend(all_steps(&generate.steps)),
            _ => {}
        }
    }
    out
}

/// Execution cases that script fake providers but whose checks judge only what needs no
/// provider call (refusals before any call, the 202 of a submission): no step has `evidence`.
const JUDGED_WITHOUT_A_PROVIDER_CALL: [&str; 5] = [
    "x.admission.contract-bounds",
    "x.admission.malformed-requests",
    "x.admission.unsatisfiable-requirements",
    "x.idempotency.malformed-key-refused",
    "x.submission.accepted-202",
];

#[test]
fn every_case_that_scripts_a_provider_says_which_step_depends_on_its_calls() {
    // Both surfaces: a run-events case scripting the fakes (an AI node calling the bound
    // provider) depends on the call as an execution case does.
    for loaded in corpus().iter().filter(|c| !c.case.scripts.is_empty()) {
        let with_evidence = all_steps(&loaded.case.steps)
            .iter()
            .any(|s| !s.evidence.is_empty());
        let listed = JUDGED_WITHOUT_A_PROVIDER_CALL.contains(&loaded.case.id.as_str());
        assert!(
            with_evidence != listed,
            "{}: a case scripting providers either has a step with `evidence` or is listed as judged without a provider call (not both)",
            loaded.case.id
        );
    }
}

/// The kill matrix's check of the evidence preconditions: the built-in runtime with every
/// provider base URL one path segment off (a known-bad configuration, the fakes unreachable).
/// No case whose checks depend on a provider call PASSes; each is BLOCKED with the cause (the
/// fake the host never called, where it listens, the requests that matched no fake), and the
/// report lists the unmatched requests.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_providers_misdirected_no_provider_dependent_case_passes() {
    misdirected(CaseSurface::Execution, 40).await;
}

/// As above, for the run-events cases whose AI node calls a bound provider (an echoed canary
/// never received proves nothing; a usage never reported has nothing to judge).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_providers_misdirected_no_provider_dependent_run_events_case_passes() {
    misdirected(CaseSurface::Openwop, 2).await;
}

async fn misdirected(surface: CaseSurface, at_least: usize) {
    let options = BuiltInOptions {
        providers: BuiltInProviders::Misdirected,
        ..BuiltInOptions::default()
    };
    let report = run_surface(options, surface).await;
    let cases = corpus();
    let dependent: BTreeSet<&str> = cases
        .iter()
        .filter(|c| {
            c.case.surface == surface
                && all_steps(&c.case.steps)
                    .iter()
                    .any(|s| !s.evidence.is_empty())
        })
        .map(|c| c.case.id.as_str())
        .collect();
    assert!(dependent.len() >= at_least, "{dependent:?}");
    let mut wrong = Vec::new();
    for case in report
        .cases
        .iter()
        .filter(|c| dependent.contains(c.id.as_str()))
    {
        let reason = case.reason.clone().unwrap_or_default();
        let blocked_with_the_cause = case.verdict == Verdict::Blocked
            && reason.contains("the host never called")
            && reason.contains("it listens at http://")
            && reason.contains("-misdirected/");
        // A failure a step found before the evidence was needed stands (a FAIL is the host's).
        if !blocked_with_the_cause && case.verdict != Verdict::Fail {
            wrong.push(format!("{} {:?}: {reason}", case.id, case.verdict));
        }
        assert_ne!(case.verdict, Verdict::Pass, "{}: {reason}", case.id);
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    assert!(
        report
            .unmatched_provider_requests
            .iter()
            .any(|line| line.contains("-misdirected/")),
        "{:?}",
        report.unmatched_provider_requests
    );
    let summary = harness::report::console::summary_text(&report, None);
    assert!(summary.contains("matched no fake"), "{summary}");
}
