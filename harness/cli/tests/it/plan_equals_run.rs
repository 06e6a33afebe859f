//! `plan` ≡ `run`: what `conformance plan` foresees for each case (run, SKIP or BLOCKED and the
//! reason) is what a run decides before running it, on every built-in profile and provider
//! setup, and on a binding of both text roles to one provider without a model when the host
//! lists one model for it (BLOCKED in both, never an ERROR in the run).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use conformance_cli::launch::{BuiltInOptions, BuiltInProfile, BuiltInProviders, start_built_in};
use harness::case::LoadedCase;
use harness::run::not_run_on;
use harness::run::{ClientOptions, HttpDriver, Limits};
use harness::target::Target;
use harness::target::{FakeUpstream, Role, RoleBinding, WireFormat};
use harness::verdict::Verdict;

fn corpus() -> Vec<LoadedCase> {
    harness::case::load_corpus(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../cases"))
        .unwrap()
        .cases
}

/// The run's target (probed with its fakes, as `run` does) and the plan's (probed without
/// fakes, the bindings applied as `plan` does).
async fn run_and_plan_targets(target: &Target, bindings: &[RoleBinding]) -> (Target, Target) {
    let driver = HttpDriver::new(&ClientOptions::default(), Limits::default()).unwrap();
    let mut run = target.clone();
    harness::target::probe(&driver, &run, Duration::from_secs(10))
        .await
        .apply_to(&mut run);
    let mut plan = Target {
        upstream: None,
        capabilities: Default::default(),
        unjudgeable: Default::default(),
        ..target.clone()
    };
    let mut findings = harness::target::probe(&driver, &plan, Duration::from_secs(10)).await;
    findings.scope_roles(bindings);
    findings.apply_to(&mut plan);
    (run, plan)
}

/// Per case, where the two decisions differ.
fn disagreements(run: &Target, plan: &Target, cases: &[LoadedCase]) -> Vec<String> {
    cases
        .iter()
        .filter_map(|loaded| {
            let ran = not_run_on(run, &loaded.case, true);
            let planned = not_run_on(plan, &loaded.case, true);
            (ran != planned).then(|| format!("{}: run {ran:?}, plan {planned:?}", loaded.case.id))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_and_run_decide_alike_on_every_built_in_profile_and_provider_setup() {
    let cases = corpus();
    let mut differ = Vec::new();
    let setups = BuiltInProviders::ALL.map(|p| (BuiltInProfile::Standard, p));
    let profiles = BuiltInProfile::ALL.map(|p| (p, BuiltInProviders::Standard));
    for (profile, providers) in setups.into_iter().chain(profiles) {
        let running = start_built_in(&BuiltInOptions {
            profile,
            providers,
            ..BuiltInOptions::default()
        })
        .await
        .unwrap();
        let (run, plan) = run_and_plan_targets(&running.target, &providers.bindings()).await;
        differ.extend(
            disagreements(&run, &plan, &cases)
                .into_iter()
                .map(|d| format!("{profile}/{providers}: {d}")),
        );
        running.shutdown().await;
    }
    assert!(differ.is_empty(), "{differ:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_provider_for_both_text_roles_without_a_model_is_blocked_in_plan_and_run() {
    let cases = corpus();
    // The standard runtime lists one model for `anthropic-secondary`: bound to both text roles
    // without a model, the fakes cannot tell the roles' calls apart.
    let running = start_built_in(&BuiltInOptions::default()).await.unwrap();
    let bindings = vec![
        RoleBinding {
            role: Role::TextPrimary,
            provider: "anthropic-secondary".into(),
            wire_format: WireFormat::AnthropicMessages,
            model: None,
        },
        RoleBinding {
            role: Role::TextSecondary,
            provider: "anthropic-secondary".into(),
            wire_format: WireFormat::AnthropicMessages,
            model: None,
        },
    ];
    let canary = running.target.canary.clone().unwrap();
    let fakes = FakeUpstream::start(&canary, bindings.clone(), None, None)
        .await
        .unwrap();
    let target = Target {
        providers: fakes.roles(),
        upstream: Some(Arc::new(fakes)),
        ..running.target.clone()
    };
    let (run, plan) = run_and_plan_targets(&target, &bindings).await;
    let differ = disagreements(&run, &plan, &cases);
    assert!(differ.is_empty(), "{differ:#?}");
    let blocked: Vec<&str> = cases
        .iter()
        .filter(|c| {
            c.case
                .needs
                .iter()
                .any(|n| n.to_string() == "provider:text-secondary")
        })
        .map(|c| {
            let decided = not_run_on(&run, &c.case, true);
            assert!(
                matches!(&decided, Some((Verdict::Blocked, why)) if why.contains("no model")),
                "{}: {decided:?}",
                c.case.id
            );
            c.case.id.as_str()
        })
        .collect();
    assert!(!blocked.is_empty());
    running.shutdown().await;
}
