//! What a run would do, before anything runs (`conformance plan`): from the host's discovery
//! (the probe) and the role bindings, per case whether it would run, SKIP (the host's reason)
//! or be BLOCKED (the harness's reason); the provider base URLs to configure the host with per
//! wire format; the fixtures to seed; the facts to supply.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::case::needs::Need;
use crate::case::{Case, CaseSurface};
use crate::host::Target;
use crate::runner::not_run_on;
use crate::upstream::{Role, RoleBinding};
use crate::verdict::{Level, Verdict};

/// What would happen to one case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Disposition {
    /// The case would run.
    Run,
    /// The host lacks an optional capability the case needs.
    Skip,
    /// The harness could not set the case up or establish what it needs.
    Blocked,
}

/// One case of the plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannedCase {
    /// The case id.
    pub id: String,
    /// Its level.
    pub level: Level,
    /// `execution` or `openwop`.
    pub surface: String,
    /// Run, SKIP or BLOCKED.
    pub disposition: Disposition,
    /// Why not run (whose fact it is follows from the disposition).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// One provider of the host to point at a fake instance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderToConfigure {
    /// The host's provider id.
    pub provider: String,
    /// The wire format its adapter speaks (`openai-chat`, …).
    pub wire_format: String,
    /// The roles bound to it.
    pub roles: Vec<Role>,
    /// The models the roles name, when bound.
    pub models: Vec<String>,
    /// The base URL to configure, when the fake providers' address is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// The requests the host will make, relative to the base URL (`POST /v1/messages`, …;
    /// the text formats' paths are served with and without `/v1`).
    #[serde(default)]
    pub paths: Vec<String>,
    /// Whether the host lists the provider in `GET /v1/providers`.
    pub listed_by_host: bool,
}

/// A fixture some selected case needs (or may use, among alternatives).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FixtureToSeed {
    /// The workflow id (`spec/fixtures/<id>.json`).
    pub id: String,
    /// Its catalogue: `upstream` (OpenWOP's own conformance fixtures) or `project` (this
    /// project's, kept where no upstream fixture serves a rule); `unknown` for an id neither
    /// ships.
    pub catalogue: String,
    /// Whether the host's discovery lists it.
    pub seeded: bool,
    /// How many selected cases need it (or name it among their alternatives).
    pub cases: usize,
}

/// A fact (`--fact NAME=VALUE`) some selected case needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FactToSupply {
    /// The fact's name.
    pub name: String,
    /// Whether it was given.
    pub supplied: bool,
    /// How many selected cases need it.
    pub cases: usize,
}

/// The plan of a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunPlan {
    /// The target's base URL.
    pub target: String,
    /// Per case, what would happen.
    pub cases: Vec<PlannedCase>,
    /// Cases that would run, SKIP and be BLOCKED.
    pub counts: BTreeMap<String, usize>,
    /// The providers to configure, per bound provider.
    pub providers: Vec<ProviderToConfigure>,
    /// The fixtures to seed.
    pub fixtures: Vec<FixtureToSeed>,
    /// The facts to supply.
    pub facts: Vec<FactToSupply>,
    /// How to seed a fixture.
    pub seeding: String,
}

/// The plan for `cases` against a probed `target`; `fakes` says whether fake providers will
/// serve the scripts, `base_url` gives a bound provider's fake base URL when known.
pub fn plan(
    target: &Target,
    cases: &[&Case],
    bindings: &[RoleBinding],
    fakes: bool,
    base_url: &dyn Fn(&str) -> Option<String>,
    listed_providers: &BTreeSet<String>,
) -> RunPlan {
    let planned: Vec<PlannedCase> = cases
        .iter()
        .map(|case| {
            let (disposition, reason) = match not_run_on(target, case, fakes) {
                None => (Disposition::Run, None),
                Some((Verdict::Skip, reason)) => (Disposition::Skip, Some(reason)),
                Some((_, reason)) => (Disposition::Blocked, Some(reason)),
            };
            PlannedCase {
                id: case.id.clone(),
                level: case.level,
                surface: match case.surface {
                    CaseSurface::Execution => "execution".into(),
                    CaseSurface::Openwop => "openwop".into(),
                },
                disposition,
                reason,
            }
        })
        .collect();
    let mut counts = BTreeMap::new();
    for case in &planned {
        let key = match case.disposition {
            Disposition::Run => "run",
            Disposition::Skip => "skip",
            Disposition::Blocked => "blocked",
        };
        *counts.entry(key.to_string()).or_insert(0) += 1;
    }
    let mut providers: Vec<ProviderToConfigure> = Vec::new();
    for binding in bindings {
        if let Some(known) = providers
            .iter_mut()
            .find(|p| p.provider == binding.provider)
        {
            known.roles.push(binding.role);
            known.models.extend(binding.model.clone());
            continue;
        }
        providers.push(ProviderToConfigure {
            provider: binding.provider.clone(),
            wire_format: binding.wire_format.to_string(),
            roles: vec![binding.role],
            models: binding.model.clone().into_iter().collect(),
            base_url: base_url(&binding.provider),
            paths: binding
                .wire_format
                .paths()
                .iter()
                .map(|p| (*p).to_string())
                .collect(),
            listed_by_host: listed_providers.contains(&binding.provider),
        });
    }
    let mut fixtures: BTreeMap<String, usize> = BTreeMap::new();
    let mut facts: BTreeMap<String, usize> = BTreeMap::new();
    for case in cases {
        for need in &case.needs {
            match need.wanted() {
                Some(Need::Fixture(alternatives)) => {
                    for fixture in alternatives {
                        *fixtures.entry(fixture.clone()).or_default() += 1;
                    }
                }
                Some(Need::Fact(fact)) => *facts.entry(fact.clone()).or_default() += 1,
                _ => {}
            }
        }
    }
    RunPlan {
        target: target.base_url.clone(),
        cases: planned,
        counts,
        providers,
        fixtures: fixtures
            .into_iter()
            .map(|(id, cases)| FixtureToSeed {
                seeded: target.has_need(&Need::Fixture(vec![id.clone()])),
                catalogue: spec::fixtures::catalogue_of(&id)
                    .map_or("unknown", spec::fixtures::Catalogue::name)
                    .to_string(),
                id,
                cases,
            })
            .collect(),
        facts: facts
            .into_iter()
            .map(|(name, cases)| FactToSupply {
                supplied: target.facts.contains_key(&name),
                name,
                cases,
            })
            .collect(),
        seeding: "seed each fixture under its id and list the id in the discovery document's fixtures[]: upstream's from OpenWOP's conformance fixtures (spec/fixtures/<id>.json transcribes them), this project's from spec/fixtures/<id>.json".into(),
    }
}

impl RunPlan {
    /// The plan as text.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let count = |key: &str| self.counts.get(key).copied().unwrap_or(0);
        let _ = writeln!(
            out,
            "Plan for {}: {} run, {} SKIP, {} BLOCKED (nothing was run)\n",
            self.target,
            count("run"),
            count("skip"),
            count("blocked")
        );
        out.push_str(
            "Providers to configure (one base URL per provider; every fault is served there):\n",
        );
        for p in &self.providers {
            let models = if p.models.is_empty() {
                String::new()
            } else {
                format!(", models {}", p.models.join(", "))
            };
            let _ =
                writeln!(
                out,
                "  {} ({}) for {}{models}: {}{}",
                p.provider,
                p.wire_format,
                p.roles.iter().map(|r| r.as_str()).collect::<Vec<_>>().join(", "),
                p.base_url.as_deref().unwrap_or(
                    "give --providers-listen ADDR to learn the base URL (http://ADDR/<instance>)"
                ),
                if p.listed_by_host { "" } else { "  [the host does not list this provider]" }
            );
            let base = p.base_url.as_deref().unwrap_or("<base URL>");
            for path in &p.paths {
                let (method, path) = path.split_once(' ').unwrap_or(("", path));
                let _ = writeln!(out, "      the host calls {method} {base}{path}");
            }
        }
        out.push_str(
            "  (configure the base URL exactly: the host's adapter appends the paths above; the \
             text formats' paths are also served without `/v1`, for adapters whose base URL \
             ends in `/v1`)\n",
        );
        out.push_str("\nFixtures to seed:\n");
        for (catalogue, heading) in [
            (
                "upstream",
                "upstream's catalogue (OpenWOP's conformance fixtures)",
            ),
            (
                "project",
                "this project's catalogue (where no upstream fixture serves)",
            ),
            ("unknown", "in neither catalogue"),
        ] {
            let of: Vec<&FixtureToSeed> = self
                .fixtures
                .iter()
                .filter(|f| f.catalogue == catalogue)
                .collect();
            if of.is_empty() {
                continue;
            }
            let _ = writeln!(out, "  {heading}:");
            for f in of {
                let _ = writeln!(
                    out,
                    "    {} ({} case(s)): {}",
                    f.id,
                    f.cases,
                    if f.seeded { "listed" } else { "NOT listed" }
                );
            }
        }
        let _ = writeln!(out, "  ({})", self.seeding);
        out.push_str("\nFacts to supply (--fact NAME=VALUE or --facts-file):\n");
        for f in &self.facts {
            let _ = writeln!(
                out,
                "  {} ({} case(s)): {}",
                f.name,
                f.cases,
                if f.supplied { "given" } else { "NOT given" }
            );
        }
        out.push_str("\nCases:\n");
        for case in &self.cases {
            let what = match case.disposition {
                Disposition::Run => "run",
                Disposition::Skip => "SKIP",
                Disposition::Blocked => "BLOCKED",
            };
            match &case.reason {
                Some(reason) => {
                    let _ = writeln!(out, "  {what:<7} {} — {reason}", case.id);
                }
                None => {
                    let _ = writeln!(out, "  {what:<7} {}", case.id);
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::upstream::WireFormat;

    fn case(id: &str, needs: &[&str]) -> Case {
        serde_json::from_value(serde_json::json!({
            "id": id,
            "title": "t",
            "requirements": [],
            "level": "MUST",
            "surface": "execution",
            "needs": needs,
            "steps": [{"request": {"method": "GET", "path": "/v1/runtime"}}]
        }))
        .unwrap()
    }

    /// An external target with these capabilities (as written) and nothing else.
    fn target(capabilities: &[&str]) -> Target {
        Target {
            kind: crate::host::TargetKind::External,
            base_url: "http://host".into(),
            headers: Vec::new(),
            principals: BTreeMap::new(),
            providers: BTreeMap::new(),
            facts: BTreeMap::new(),
            capabilities: capabilities
                .iter()
                .map(|text| crate::capability::HostCapability::parse(text).unwrap())
                .collect(),
            canary: None,
            upstream: None,
            implementation: None,
            unjudgeable: BTreeMap::new(),
        }
    }

    #[test]
    fn a_fact_not_given_skips_a_case_only_where_its_rules_are_judged_through_a_served_seam() {
        let mut covered = case("x.covered", &["fact:heartbeat_fresh_id"]);
        covered.judged_through =
            vec![crate::case::needs::CaseNeed::parse("seam:heartbeat-tick").unwrap()];
        let plain = case("x.plain", &["fact:heartbeat_fresh_id"]);
        let serving = target(&["surface:execution", "seam:heartbeat-tick"]);
        let (verdict, reason) = not_run_on(&serving, &covered, true).unwrap();
        assert_eq!(verdict, crate::verdict::Verdict::Skip, "{reason}");
        assert!(
            reason.contains("judged through `seam:heartbeat-tick`"),
            "{reason}"
        );
        let plain_verdict = not_run_on(&serving, &plain, true).unwrap().0;
        assert_eq!(plain_verdict, crate::verdict::Verdict::Blocked);
        let without = target(&["surface:execution"]);
        let unserved = not_run_on(&without, &covered, true).unwrap().0;
        assert_eq!(unserved, crate::verdict::Verdict::Blocked);
    }

    #[test]
    fn a_plan_tells_run_skip_and_blocked_apart_and_lists_what_to_set_up() {
        let target = target(&[
            "surface:execution",
            "provider:text-primary",
            "fixture:conformance-noop",
        ]);
        let cases = [
            case("x.a", &["provider:text-primary"]),
            case("x.b", &["capability:heartbeat"]),
            case("x.c", &["fact:subscriber_limit"]),
            // A fixture the host does not list is the host's fact: SKIP.
            case("x.d", &["fixture:conformance-approval"]),
            case("x.e", &["fixture:conformance-debug-noise"]),
        ];
        let refs: Vec<&Case> = cases.iter().collect();
        let bindings = vec![RoleBinding {
            role: Role::TextPrimary,
            provider: "anthropic".into(),
            wire_format: WireFormat::AnthropicMessages,
            model: None,
        }];
        let plan = plan(
            &target,
            &refs,
            &bindings,
            true,
            &|p| Some(format!("http://fakes/{p}")),
            &BTreeSet::new(),
        );
        let dispositions: Vec<Disposition> = plan.cases.iter().map(|c| c.disposition).collect();
        assert_eq!(
            dispositions,
            [
                Disposition::Run,
                Disposition::Skip,
                Disposition::Blocked,
                Disposition::Skip,
                Disposition::Skip
            ]
        );
        assert_eq!(
            plan.providers[0].base_url.as_deref(),
            Some("http://fakes/anthropic")
        );
        assert_eq!(plan.providers[0].wire_format, "anthropic-messages");
        assert_eq!(plan.providers[0].paths, ["POST /v1/messages"]);
        assert!(
            plan.to_text()
                .contains("the host calls POST http://fakes/anthropic/v1/messages")
        );
        assert!(!plan.providers[0].listed_by_host);
        assert_eq!(plan.fixtures.len(), 2);
        assert!(!plan.fixtures[0].seeded);
        assert_eq!(plan.fixtures[0].catalogue, "upstream");
        assert_eq!(plan.fixtures[1].catalogue, "project");
        assert_eq!(plan.facts[0].name, "subscriber_limit");
        assert!(!plan.facts[0].supplied);
        let text = plan.to_text();
        assert!(text.contains("1 run, 3 SKIP, 1 BLOCKED"), "{text}");
        // Fixtures are listed by catalogue, upstream's first.
        let upstream = text.find("upstream's catalogue").unwrap();
        let project = text.find("this project's catalogue").unwrap();
        assert!(upstream < text.find("conformance-approval").unwrap());
        assert!(project < text.find("conformance-debug-noise").unwrap());
        assert!(upstream < project);
    }
}
