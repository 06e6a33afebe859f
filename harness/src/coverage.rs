//! Requirement coverage of a case corpus: which requirements the cases prove, per level,
//! document and testability, and which requirement ids cases cite that the registry lacks.
//!
//! A case covers the requirements of its `requirements` list and those its checks name
//! (`requirements` on a check, at any depth: nested steps and `each` checks included).
//! `wire` and `capability:*` requirements are the ones a harness can prove; `not-wire` ones are
//! counted but never expected to be covered. [`CoverageReport::uncovered_wire_must`] is the
//! list a CI test asserts empty once the corpus is complete.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use spec::requirements::{Level as RequirementLevel, RequirementRegistry, Testability};

use crate::case::{Case, Check, CheckKind, Step};

/// The coverage of a corpus against the requirement registry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CoverageReport {
    /// Every registry requirement, in registry order, with the cases that cover it.
    pub requirements: Vec<RequirementCoverage>,
    /// Totals per level (`MUST`, `MUST NOT`, `SHOULD`, `SHOULD NOT`, `MAY`).
    pub by_level: Vec<CoverageTotals>,
    /// Totals per document (`execution-protocol`, `run-events`).
    pub by_document: Vec<CoverageTotals>,
    /// Totals per testability class (`wire`, `capability:*`, `not-wire`).
    pub by_testability: Vec<CoverageTotals>,
    /// Totals per capability (`capability:<name>`).
    pub by_capability: Vec<CoverageTotals>,
    /// Percentage of `wire` requirements covered (`None` when there are none).
    pub wire_covered_percent: Option<f64>,
    /// Percentage of `capability:*` requirements covered (`None` when there are none).
    pub capability_covered_percent: Option<f64>,
    /// Requirement ids cited by cases that the registry does not have.
    pub errors: Vec<UnknownRequirement>,
    /// Per fixture set a host may seed, the `wire` MUST requirements that cases runnable with
    /// just those fixtures cover.
    pub by_fixture_set: Vec<FixtureSetCoverage>,
}

/// The coverage of the cases a host seeding one set of fixtures can run (cases without a
/// `fixture:` need, and those whose every `fixture:` need is in the set).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FixtureSetCoverage {
    /// The set's name (`upstream`: upstream's catalogue, what a real OpenWOP host seeds;
    /// `contract-table`: the eight of `CONTRACT.md`'s fixture table;
    /// `contract`: those and the AI-envelope sections' two, whose fixtures `CONTRACT.md` leaves
    /// to the work that built them; `shipped`: every fixture of `spec/fixtures/`, both
    /// catalogues).
    pub name: String,
    /// The fixture ids.
    pub fixtures: Vec<String>,
    /// `wire` MUST and MUST NOT requirements.
    pub wire_must_total: u32,
    /// Of which covered by a case runnable with the set.
    pub wire_must_covered: u32,
    /// `wire` MUST requirements the corpus covers only with cases needing another fixture.
    pub only_with_other_fixtures: Vec<String>,
    /// MUST and MUST NOT requirements testable on hosts advertising a capability
    /// (`capability:*`: the AI envelopes' sections, heartbeat, feedback, …).
    pub capability_must_total: u32,
    /// Of which covered by a case runnable with the set.
    pub capability_must_covered: u32,
    /// `capability:*` MUST requirements the corpus covers only with cases needing another
    /// fixture.
    pub capability_only_with_other_fixtures: Vec<String>,
}

/// One requirement and the cases that cover it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequirementCoverage {
    /// The requirement id.
    pub id: String,
    /// Its level (`MUST`, `MUST NOT`, …).
    pub level: String,
    /// Its document.
    pub document: String,
    /// Its section.
    pub section: String,
    /// `wire`, `capability:<name>` or `not-wire`.
    pub testability: String,
    /// The covering case ids, sorted.
    pub cases: Vec<String>,
}

impl RequirementCoverage {
    /// Whether any case covers it.
    pub fn is_covered(&self) -> bool {
        !self.cases.is_empty()
    }
}

/// Covered against total for one group.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CoverageTotals {
    /// The group (`MUST`, `run-events`, `wire`, …).
    pub key: String,
    /// Requirements in the group.
    pub total: u32,
    /// Of which covered by at least one case.
    pub covered: u32,
    /// `covered / total` in percent (`None` for an empty group).
    pub percent: Option<f64>,
}

/// A case citing a requirement id the registry does not have.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct UnknownRequirement {
    /// The case id.
    pub case: String,
    /// The unknown requirement id.
    pub requirement: String,
}

impl std::fmt::Display for UnknownRequirement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "case `{}` cites requirement `{}`, which the registry does not have",
            self.case, self.requirement
        )
    }
}

const LEVEL_ORDER: [&str; 5] = ["MUST", "MUST NOT", "SHOULD", "SHOULD NOT", "MAY"];
const TESTABILITY_ORDER: [&str; 3] = ["wire", "capability:*", "not-wire"];

impl CoverageReport {
    /// Computes the coverage of `cases` against `registry`.
    pub fn compute(cases: &[Case], registry: &RequirementRegistry) -> Self {
        let mut covering: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        let mut errors = BTreeSet::new();
        let mut cited_by_case: Vec<(&Case, BTreeSet<&str>)> = Vec::new();
        for case in cases {
            let mut cited: BTreeSet<&str> = case.requirements.iter().map(String::as_str).collect();
            for step in &case.steps {
                step_requirements(step, &mut cited);
            }
            cited_by_case.push((case, cited.clone()));
            for id in cited {
                if registry.get(id).is_some() {
                    covering.entry(id).or_default().insert(case.id.as_str());
                } else {
                    errors.insert(UnknownRequirement {
                        case: case.id.clone(),
                        requirement: id.to_string(),
                    });
                }
            }
        }

        let requirements: Vec<RequirementCoverage> = registry
            .iter()
            .map(|r| RequirementCoverage {
                id: r.id.clone(),
                level: r.level.as_str().to_string(),
                document: r.document.as_str().to_string(),
                section: r.section.clone(),
                testability: r.testability.to_string(),
                cases: covering
                    .get(r.id.as_str())
                    .map(|set| set.iter().map(|s| s.to_string()).collect())
                    .unwrap_or_default(),
            })
            .collect();

        let class = |testability: &str| -> String {
            if testability.starts_with("capability:") {
                "capability:*".to_string()
            } else {
                testability.to_string()
            }
        };
        let by_level = totals(&requirements, |r| r.level.clone(), &LEVEL_ORDER);
        let by_document = totals(&requirements, |r| r.document.clone(), &[]);
        let by_testability = totals(&requirements, |r| class(&r.testability), &TESTABILITY_ORDER);
        let capability_requirements: Vec<RequirementCoverage> = requirements
            .iter()
            .filter(|r| r.testability.starts_with("capability:"))
            .cloned()
            .collect();
        let by_capability = totals(&capability_requirements, |r| r.testability.clone(), &[]);
        let percent_of = |key: &str| {
            by_testability
                .iter()
                .find(|t| t.key == key)
                .and_then(|t| t.percent)
        };
        let shipped: Vec<String> = spec::fixtures::all()
            .iter()
            .map(|f| f.id.to_string())
            .collect();
        let table: Vec<String> = spec::fixtures::CONTRACT_FIXTURES
            .iter()
            .map(|f| f.to_string())
            .collect();
        let contract: Vec<String> = table
            .iter()
            .cloned()
            .chain(
                spec::fixtures::ENVELOPE_FIXTURES
                    .iter()
                    .map(|f| f.to_string()),
            )
            .collect();
        let upstream: Vec<String> = spec::fixtures::ids_of(spec::fixtures::Catalogue::Upstream)
            .into_iter()
            .map(String::from)
            .collect();
        let by_fixture_set = [
            ("upstream", upstream),
            ("contract-table", table),
            ("contract", contract),
            ("shipped", shipped),
        ]
        .into_iter()
        .map(|(name, fixtures)| fixture_set_coverage(name, fixtures, &cited_by_case, &requirements))
        .collect();
        CoverageReport {
            by_fixture_set,
            wire_covered_percent: percent_of("wire"),
            capability_covered_percent: percent_of("capability:*"),
            requirements,
            by_level,
            by_document,
            by_testability,
            by_capability,
            errors: errors.into_iter().collect(),
        }
    }

    /// The `wire` MUST and MUST NOT requirements no case covers.
    pub fn uncovered_wire_must(&self) -> Vec<&RequirementCoverage> {
        let must = [
            RequirementLevel::Must.as_str(),
            RequirementLevel::MustNot.as_str(),
        ];
        let wire = Testability::Wire.to_string();
        self.requirements
            .iter()
            .filter(|r| {
                must.contains(&r.level.as_str()) && r.testability == wire && !r.is_covered()
            })
            .collect()
    }

    /// The report as JSON.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }

    /// The report as Markdown: totals tables, errors, then uncovered testable requirements.
    pub fn to_markdown(&self) -> String {
        let mut out = String::from("# Requirement coverage\n\n");
        let _ = writeln!(
            out,
            "Wire requirements covered: **{}** · capability requirements covered: **{}**\n",
            percent(self.wire_covered_percent),
            percent(self.capability_covered_percent)
        );
        table(&mut out, "By level", &self.by_level);
        table(&mut out, "By document", &self.by_document);
        table(&mut out, "By testability", &self.by_testability);
        if !self.by_capability.is_empty() {
            table(&mut out, "By capability", &self.by_capability);
        }
        if !self.by_fixture_set.is_empty() {
            out.push_str(
                "## By fixture set\n\nMUST requirements covered by cases a host seeding only these fixtures can run (`upstream`: upstream's catalogue alone; `shipped`: both catalogues): `wire` ones, and those testable on hosts advertising a capability (`capability:*`).\n\n| Fixture set | Fixtures | Wire covered | Wire total | Wire covered only with other fixtures | Capability covered | Capability total | Capability covered only with other fixtures |\n|---|--:|--:|--:|---|--:|--:|---|\n",
            );
            let listed = |ids: &[String]| {
                if ids.is_empty() {
                    "none".to_string()
                } else {
                    ids.iter()
                        .map(|id| format!("`{id}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            };
            for set in &self.by_fixture_set {
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {} | {} | {} | {} | {} |",
                    set.name,
                    set.fixtures.len(),
                    set.wire_must_covered,
                    set.wire_must_total,
                    listed(&set.only_with_other_fixtures),
                    set.capability_must_covered,
                    set.capability_must_total,
                    listed(&set.capability_only_with_other_fixtures),
                );
            }
            out.push('\n');
        }
        if !self.errors.is_empty() {
            let _ = writeln!(out, "## Errors ({})\n", self.errors.len());
            for error in &self.errors {
                let _ = writeln!(out, "- {error}");
            }
            out.push('\n');
        }
        let uncovered: Vec<&RequirementCoverage> = self
            .requirements
            .iter()
            .filter(|r| r.testability != "not-wire" && !r.is_covered())
            .collect();
        let _ = writeln!(
            out,
            "## Uncovered testable requirements ({})\n",
            uncovered.len()
        );
        if uncovered.is_empty() {
            out.push_str("None.\n");
        } else {
            out.push_str("| Requirement | Level | Testability | Section |\n|---|---|---|---|\n");
            for r in uncovered {
                let _ = writeln!(
                    out,
                    "| `{}` | {} | {} | {} |",
                    r.id,
                    r.level,
                    r.testability,
                    r.section.replace('|', "\\|")
                );
            }
        }
        out
    }
}

/// Whether a requirement is a `wire` MUST or MUST NOT.
fn is_must(r: &RequirementCoverage) -> bool {
    [
        RequirementLevel::Must.as_str(),
        RequirementLevel::MustNot.as_str(),
    ]
    .contains(&r.level.as_str())
}

fn is_wire_must(r: &RequirementCoverage) -> bool {
    is_must(r) && r.testability == Testability::Wire.to_string()
}

fn fixture_set_coverage(
    name: &str,
    fixtures: Vec<String>,
    cited_by_case: &[(&Case, BTreeSet<&str>)],
    requirements: &[RequirementCoverage],
) -> FixtureSetCoverage {
    // A `fixture:A|B` need is met by any of its alternatives.
    let runnable = |case: &Case| {
        case.needs.iter().all(|need| {
            need.wanted()
                .and_then(crate::case::needs::Need::fixtures)
                .is_none_or(|alternatives| {
                    alternatives
                        .iter()
                        .any(|fixture| fixtures.iter().any(|f| f == fixture))
                })
        })
    };
    let covered: BTreeSet<&str> = cited_by_case
        .iter()
        .filter(|(case, _)| runnable(case))
        .flat_map(|(_, cited)| cited.iter().copied())
        .collect();
    let wire_must: Vec<&RequirementCoverage> =
        requirements.iter().filter(|r| is_wire_must(r)).collect();
    let capability_must: Vec<&RequirementCoverage> = requirements
        .iter()
        .filter(|r| is_must(r) && r.testability.starts_with("capability:"))
        .collect();
    let count = |set: &[&RequirementCoverage]| {
        u32::try_from(
            set.iter()
                .filter(|r| covered.contains(r.id.as_str()))
                .count(),
        )
        .unwrap_or(u32::MAX)
    };
    FixtureSetCoverage {
        capability_must_total: u32::try_from(capability_must.len()).unwrap_or(u32::MAX),
        capability_must_covered: count(&capability_must),
        capability_only_with_other_fixtures: capability_must
            .iter()
            .filter(|r| r.is_covered() && !covered.contains(r.id.as_str()))
            .map(|r| r.id.clone())
            .collect(),
        name: name.to_string(),
        wire_must_total: u32::try_from(wire_must.len()).unwrap_or(u32::MAX),
        wire_must_covered: u32::try_from(
            wire_must
                .iter()
                .filter(|r| covered.contains(r.id.as_str()))
                .count(),
        )
        .unwrap_or(u32::MAX),
        only_with_other_fixtures: wire_must
            .iter()
            .filter(|r| r.is_covered() && !covered.contains(r.id.as_str()))
            .map(|r| r.id.clone())
            .collect(),
        fixtures,
    }
}

fn totals(
    requirements: &[RequirementCoverage],
    key: impl Fn(&RequirementCoverage) -> String,
    order: &[&str],
) -> Vec<CoverageTotals> {
    let mut groups: BTreeMap<String, (u32, u32)> = BTreeMap::new();
    for key_name in order {
        groups.insert(key_name.to_string(), (0, 0));
    }
    for r in requirements {
        let entry = groups.entry(key(r)).or_default();
        entry.0 += 1;
        if r.is_covered() {
            entry.1 += 1;
        }
    }
    let rank = |k: &str| order.iter().position(|o| *o == k).unwrap_or(order.len());
    let mut out: Vec<CoverageTotals> = groups
        .into_iter()
        .map(|(key, (total, covered))| CoverageTotals {
            percent: (total > 0).then(|| f64::from(covered) * 100.0 / f64::from(total)),
            key,
            total,
            covered,
        })
        .collect();
    out.sort_by(|a, b| {
        rank(&a.key)
            .cmp(&rank(&b.key))
            .then_with(|| a.key.cmp(&b.key))
    });
    out
}

fn step_requirements<'a>(step: &'a Step, cited: &mut BTreeSet<&'a str>) {
    for check in &step.expect {
        check_requirements(check, cited);
    }
    for inner in step.action.nested_steps() {
        step_requirements(inner, cited);
    }
}

fn check_requirements<'a>(check: &'a Check, cited: &mut BTreeSet<&'a str>) {
    cited.extend(check.requirements.iter().flatten().map(String::as_str));
    if let CheckKind::Each(checks) = &check.kind {
        for inner in checks {
            check_requirements(inner, cited);
        }
    }
}

fn percent(value: Option<f64>) -> String {
    value.map_or_else(|| "n/a".to_string(), |p| format!("{p:.1}%"))
}

fn table(out: &mut String, title: &str, rows: &[CoverageTotals]) {
    let _ = writeln!(
        out,
        "## {title}\n\n| | Covered | Total | % |\n|---|--:|--:|--:|"
    );
    for row in rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            row.key,
            row.covered,
            row.total,
            percent(row.percent)
        );
    }
    out.push('\n');
}
