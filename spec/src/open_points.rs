//! The open-points registry (`spec/open-points.json`): every behaviour the two seeds leave open,
//! the options a host may take at it, the requirements it borders, and which built-in profile of
//! the reference runtime takes which option.
//!
//! A case asserts what the seeds say and tolerates every option listed here; the tolerance
//! matrix runs the corpus against profiles of the reference runtime that take the non-standard
//! options and must see no FAIL and no WARN.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use serde::{Deserialize, Serialize};

use crate::requirements::{self, Surface};

/// The profile every other one diverges from.
pub const STANDARD_PROFILE: &str = "standard";

/// The whole registry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenPointRegistry {
    /// Format version.
    pub version: u32,
    /// The built-in profiles the options name, standard first.
    pub profiles: Vec<String>,
    /// The open points.
    pub points: Vec<OpenPoint>,
    #[serde(rename = "$comment", default, skip_serializing)]
    _comment: Option<String>,
}

/// One behaviour the seeds leave open.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenPoint {
    /// Stable id: `x.<area>.<what>` or `w.<area>.<what>`.
    pub id: String,
    /// The surface it belongs to.
    pub surface: Surface,
    /// What leaves it open.
    pub source: OpenPointSource,
    /// What is left open, in one sentence.
    pub question: String,
    /// The options a host may take (at least two).
    pub options: Vec<OpenPointOption>,
    /// The requirement ids it borders (cases of these requirements must tolerate every option).
    pub borders: Vec<String>,
    /// Why no built-in profile takes another option (the other options break a SHOULD, or no
    /// runtime of the protocol can take them), and what exercises the point instead (a
    /// tolerance test on made-up transcripts). Only on a point no profile diverges at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exercised_otherwise: Option<String>,
}

/// What leaves a point open.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenPointSource {
    /// The kind of source.
    pub kind: SourceKind,
    /// The sentence (seed), fact (upstream, RFC) or decision (CONTRACT.md) quoted.
    pub text: String,
}

/// The kind of text that leaves a point open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceKind {
    /// A seed sentence that names a behaviour without fixing it.
    Seed,
    /// A fact of the upstream files the seeds defer to.
    Upstream,
    /// A decision `CONTRACT.md` records for the reference runtime only.
    Contract,
    /// What an RFC (RFC 3339, RFC 9110, the SSE grammar) admits.
    Rfc,
}

impl SourceKind {
    /// The spelling in the registry.
    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::Seed => "seed",
            SourceKind::Upstream => "upstream",
            SourceKind::Contract => "contract",
            SourceKind::Rfc => "rfc",
        }
    }
}

/// One option a host may take at an open point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenPointOption {
    /// Id, unique within the point.
    pub id: String,
    /// What a host taking it does.
    pub description: String,
    /// The built-in profiles that take it (empty: none does).
    pub profiles: Vec<String>,
}

impl OpenPoint {
    /// The option a profile takes.
    pub fn option_of(&self, profile: &str) -> Option<&OpenPointOption> {
        self.options
            .iter()
            .find(|o| o.profiles.iter().any(|p| p == profile))
    }

    /// The profiles that take an option other than the standard profile's.
    pub fn divergent_profiles(&self) -> Vec<&str> {
        let standard = self.option_of(STANDARD_PROFILE).map(|o| o.id.as_str());
        self.options
            .iter()
            .filter(|o| Some(o.id.as_str()) != standard)
            .flat_map(|o| o.profiles.iter().map(String::as_str))
            .collect()
    }
}

/// A registry entry that breaks a rule of the format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenPointProblem {
    /// The point (or `registry`).
    pub point: String,
    /// What is wrong.
    pub problem: String,
}

impl std::fmt::Display for OpenPointProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.point, self.problem)
    }
}

impl OpenPointRegistry {
    /// Parses a registry document.
    pub fn from_json(text: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// A point by id.
    pub fn get(&self, id: &str) -> Option<&OpenPoint> {
        self.points.iter().find(|p| p.id == id)
    }

    /// The points that border a requirement.
    pub fn bordering<'a>(&'a self, requirement: &'a str) -> impl Iterator<Item = &'a OpenPoint> {
        self.points
            .iter()
            .filter(move |p| p.borders.iter().any(|b| b == requirement))
    }

    /// Every problem: ids unique and well-formed, the surface prefix matching, at least two
    /// options with unique ids, every bordering requirement registered (of the same surface),
    /// every listed profile taking exactly one option of every point, the standard profile first.
    pub fn validate(&self) -> Vec<OpenPointProblem> {
        let mut problems = Vec::new();
        let mut problem = |point: &str, text: String| {
            problems.push(OpenPointProblem {
                point: point.to_string(),
                problem: text,
            })
        };
        if self.profiles.first().map(String::as_str) != Some(STANDARD_PROFILE) {
            problem("registry", "`profiles` must list `standard` first".into());
        }
        let profiles: BTreeSet<&str> = self.profiles.iter().map(String::as_str).collect();
        if profiles.len() != self.profiles.len() {
            problem("registry", "`profiles` lists a profile twice".into());
        }
        let registry = requirements::registry();
        let mut ids = BTreeSet::new();
        for point in &self.points {
            let id = point.id.as_str();
            if !ids.insert(id) {
                problem(id, "duplicate id".into());
            }
            let prefix = match point.surface {
                Surface::X => "x.",
                Surface::W => "w.",
            };
            if !id.starts_with(prefix) || !is_kebab_dotted(id) {
                problem(
                    id,
                    format!("id must be `{prefix}<area>.<what>` in lower kebab case"),
                );
            }
            if point.question.trim().is_empty() || point.source.text.trim().is_empty() {
                problem(id, "question and source text must be non-empty".into());
            }
            if point.options.len() < 2 {
                problem(id, "an open point has at least two options".into());
            }
            let mut option_ids = BTreeSet::new();
            for option in &point.options {
                if !option_ids.insert(option.id.as_str()) {
                    problem(id, format!("option `{}` twice", option.id));
                }
                if option.description.trim().is_empty() {
                    problem(id, format!("option `{}` has no description", option.id));
                }
                for profile in &option.profiles {
                    if !profiles.contains(profile.as_str()) {
                        problem(
                            id,
                            format!("option `{}` names unknown profile `{profile}`", option.id),
                        );
                    }
                }
            }
            for profile in &self.profiles {
                let taking = point
                    .options
                    .iter()
                    .filter(|o| o.profiles.contains(profile))
                    .count();
                if taking != 1 {
                    problem(
                        id,
                        format!("profile `{profile}` takes {taking} options (exactly one)"),
                    );
                }
            }
            if point.borders.is_empty() {
                problem(id, "borders no requirement".into());
            }
            if let Some(reason) = &point.exercised_otherwise {
                if reason.trim().is_empty() {
                    problem(id, "`exercised_otherwise` is empty: give the reason".into());
                }
                if !point.divergent_profiles().is_empty() {
                    problem(
                        id,
                        "`exercised_otherwise` on a point a profile diverges at: drop it".into(),
                    );
                }
            }
            for border in &point.borders {
                match registry.get(border) {
                    None => problem(id, format!("borders unregistered requirement `{border}`")),
                    Some(requirement) if requirement.surface != point.surface => {
                        problem(id, format!("borders `{border}` of the other surface"))
                    }
                    Some(_) => {}
                }
            }
        }
        problems
    }
}

fn is_kebab_dotted(id: &str) -> bool {
    let segments: Vec<&str> = id.split('.').collect();
    segments.len() >= 3
        && segments.iter().all(|s| {
            !s.is_empty()
                && !s.starts_with('-')
                && !s.ends_with('-')
                && s.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        })
}

static REGISTRY: LazyLock<OpenPointRegistry> = LazyLock::new(|| {
    OpenPointRegistry::from_json(include_str!("../open-points.json"))
        .expect("spec/open-points.json is valid (guarded by a test)")
});

/// The open-points registry.
pub fn open_points() -> &'static OpenPointRegistry {
    &REGISTRY
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registry_parses_and_lints_clean() {
        let registry = open_points();
        assert!(!registry.points.is_empty());
        let problems = registry.validate();
        assert!(
            problems.is_empty(),
            "{}",
            problems
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n")
        );
    }

    #[test]
    fn the_lint_catches_each_broken_rule() {
        let mut broken = open_points().clone();
        let first = broken.points[0].clone();
        broken.points.push(first);
        let point = &mut broken.points[0];
        point.borders.push("exec.no-such.requirement".into());
        // The option the standard profile takes goes: one option left, standard takes none.
        point.options.remove(0);
        let problems = broken.validate();
        let text = problems
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n");
        assert!(text.contains("duplicate id"), "{text}");
        assert!(text.contains("unregistered requirement"), "{text}");
        assert!(text.contains("at least two options"), "{text}");
        assert!(text.contains("takes 0 options"), "{text}");
    }

    #[test]
    fn divergent_profiles_are_the_ones_off_the_standard_option() {
        let point = open_points().get("w.cross-tenant.answer").unwrap();
        assert_eq!(
            point.option_of(STANDARD_PROFILE).unwrap().id,
            "403-id-tenant-mismatch"
        );
        assert_eq!(point.divergent_profiles(), vec!["divergent"]);
    }
}
