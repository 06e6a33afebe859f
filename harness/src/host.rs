//! The host under test, as the harness sees it: where it is, how to authenticate, which
//! capabilities it has, and the fake upstream it was configured with.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde_json::Value;

use crate::capability::HostCapability;
use crate::case::CaseSurface;
use crate::case::model::Principal;
use crate::case::needs::{CaseNeed, Need, NeedForm};
use crate::upstream::role::Role;

/// One header the harness sends (its value is a secret unless proven otherwise and is never
/// reported).
#[derive(Clone, PartialEq, Eq)]
pub struct SecretHeader {
    /// The header name.
    pub name: String,
    /// The value.
    pub value: String,
}

impl std::fmt::Debug for SecretHeader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: [REDACTED]", self.name)
    }
}

/// Fake providers the host calls: the harness registers each case's scripts before the case
/// runs and reads the calls afterwards.
pub trait Upstream: Send + Sync {
    /// Registers a script under a unique id; returns the marker a request must carry to select
    /// it, and the script exactly as the fake providers serve it.
    fn register(&self, script_id: &str, script: &Value) -> Result<(String, Value), String>;
    /// Calls received for a script, per fake instance (and model, when two roles share one
    /// provider), with the role that played them.
    fn calls(&self, script_id: &str) -> Vec<ProviderCalls>;
    /// The host's provider manifests (provider id → model ids in manifest order), for roles
    /// bound to one provider without a model. The default ignores them.
    fn learn_models(&self, _manifests: &BTreeMap<String, Vec<String>>) {}
    /// The role bindings the fakes serve (`plan` applies the same ones to what it foresees).
    fn bindings(&self) -> Vec<crate::upstream::binding::RoleBinding> {
        Vec::new()
    }
    /// Where the fake instance a role is bound to listens: the fake's name, its base URL and
    /// the requests a host makes there (`POST /v1/messages`, …). `None` when not bound.
    fn role_endpoint(&self, _role: &str) -> Option<RoleEndpoint> {
        None
    }
    /// Requests that carried a script's marker but matched no fake (a wrong path or instance),
    /// as `METHOD /path → status`.
    fn stray_requests(&self, _script_id: &str) -> Vec<String> {
        Vec::new()
    }
    /// Every request that reached the providers listener and matched no fake (no or an unknown
    /// marker, an unknown instance or endpoint), as `METHOD /path → status`, in arrival order.
    fn unmatched_requests(&self) -> Vec<String> {
        Vec::new()
    }
}

/// Where a role's fake instance listens (for the cause of a BLOCKED case and for `plan`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoleEndpoint {
    /// The fake instance's name.
    pub instance: String,
    /// The base URL to configure the host's provider with.
    pub base_url: String,
    /// The requests a host makes relative to the base URL.
    pub paths: Vec<String>,
}

/// How often one fake instance (or one model of it) was called for a script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderCalls {
    /// The instance, or `<instance>@<model>`.
    pub instance: String,
    /// The role that played the calls, when the script named one.
    pub role: Option<String>,
    /// Calls received.
    pub count: u32,
}

/// Which host a run judges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetKind {
    /// The built-in reference runtime, with what sets it apart from the standard clean one
    /// (its profile, its providers, its defects), each as reports name it.
    BuiltIn {
        /// `divergent profile`, `defects: a, b`, … (empty for the standard clean runtime).
        traits: Vec<String>,
    },
    /// A host the operator runs, reached by URL.
    External,
}

impl std::fmt::Display for TargetKind {
    /// As reports name it: `external`, `built-in`, `built-in (divergent profile; defects: a)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TargetKind::External => f.write_str("external"),
            TargetKind::BuiltIn { traits } if traits.is_empty() => f.write_str("built-in"),
            TargetKind::BuiltIn { traits } => write!(f, "built-in ({})", traits.join("; ")),
        }
    }
}

/// Everything the driver needs to reach and judge a host.
#[derive(Clone)]
pub struct Target {
    /// The built-in runtime or an external host.
    pub kind: TargetKind,
    /// The base URL, without a trailing slash.
    pub base_url: String,
    /// Headers sent on every request.
    pub headers: Vec<SecretHeader>,
    /// Headers per principal ([`Principal::A`], [`Principal::B`]); [`Principal::Invalid`]
    /// uses a credential the host cannot know and [`Principal::None`] none, whatever is here.
    pub principals: BTreeMap<Principal, Vec<SecretHeader>>,
    /// Provider ids by role, as configured in the host.
    pub providers: BTreeMap<Role, String>,
    /// Facts cases may read as `${target.<name>}`.
    pub facts: BTreeMap<String, Value>,
    /// What the host has (`fixture:…`, `stream-mode:…`, `capability:…`, `provider:…`, …).
    pub capabilities: BTreeSet<HostCapability>,
    /// The canary credential the fake providers require: it must never come back from the host.
    pub canary: Option<String>,
    /// The fake upstream, when one is running.
    pub upstream: Option<Arc<dyn Upstream>>,
    /// The host's self-description.
    pub implementation: Option<String>,
    /// Needs the harness could not establish either way, with why (a discovery document it
    /// could not read, providers none of which is bound to a role, stream modes it could not
    /// probe). A case needing one is BLOCKED, never SKIP.
    pub unjudgeable: BTreeMap<Unestablished, String>,
}

/// What the harness could not establish about a host: one need (`surface:openwop`,
/// `provider:text-primary`), or every need of a form (`stream-mode:*`, `fixture:*`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Unestablished {
    /// One need.
    Need(Need),
    /// Every need of the form.
    EveryNeedOf(NeedForm),
}

impl std::fmt::Display for Unestablished {
    /// As a need is written, or `<form>:*`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unestablished::Need(need) => need.fmt(f),
            Unestablished::EveryNeedOf(form) => write!(f, "{form}:*"),
        }
    }
}

/// Whether a case's need holds for a target, and if not, whose fact that is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NeedStatus {
    /// The target has it.
    Met,
    /// The host lacks an optional capability it does not advertise: the case is SKIP.
    Lacking(String),
    /// The harness cannot tell or cannot set the case up: the case is BLOCKED.
    Unjudgeable(String),
}

/// Why a host with [`HostCapability::ServesOpenwopV1Only`] is not judged on surface W.
pub(crate) const OPENWOP_V1_ONLY_REASON: &str = "the host serves OpenWOP v1 only: its discovery document offers no 2.x representation (asked with OpenWOP-Version)";

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Target")
            .field("kind", &self.kind)
            .field("base_url", &self.base_url)
            .field("headers", &self.headers)
            .field("providers", &self.providers)
            .field("capabilities", &self.capabilities)
            .finish_non_exhaustive()
    }
}

impl Target {
    /// The headers a request as `principal` carries (beside the global ones).
    pub fn principal_headers(&self, principal: Principal) -> Vec<SecretHeader> {
        match principal {
            Principal::A | Principal::B => {
                self.principals.get(&principal).cloned().unwrap_or_default()
            }
            Principal::Invalid => vec![SecretHeader {
                name: "authorization".into(),
                value: "Bearer conformance-invalid-credential-0000".into(),
            }],
            Principal::None => Vec::new(),
        }
    }

    /// Whether the target has a capability, or (`fact:<name>`) the fact a case reads as
    /// `${target.<name>}`. `fixture:A|B|…` (alternatives, upstream's first) holds when the host
    /// lists any of them.
    pub fn has_need(&self, need: &Need) -> bool {
        match need {
            Need::Fixture(ids) => ids
                .iter()
                .any(|id| self.capabilities.contains(&HostCapability::fixture(id))),
            Need::Fact(name) => self.facts.get(name).is_some_and(|v| !v.is_null()),
            other => self
                .capabilities
                .contains(&HostCapability::Meets(other.clone())),
        }
    }

    /// For every `fixture:A|B|…` need of a case, its first alternative → the first alternative
    /// the host lists (what `${fixture.A}` expands to). A single-fixture need maps to itself.
    pub fn chosen_fixtures(&self, needs: &[CaseNeed]) -> BTreeMap<String, String> {
        needs
            .iter()
            .filter_map(|need| need.wanted()?.fixtures())
            .filter_map(|ids| {
                let chosen = self.first_listed_fixture(ids)?;
                Some((ids[0].clone(), chosen.to_string()))
            })
            .collect()
    }

    /// Whether `need` (a case's `needs` entry, `!name` for "does not have") holds, and if not,
    /// whether that is a fact about the host (it lacks an optional capability) or about the
    /// harness (it could not establish the need, or the operator did not give what it takes).
    pub fn need_status(&self, need: &CaseNeed) -> NeedStatus {
        let CaseNeed { negated, need } = need;
        if *negated {
            if let Some(reason) = self.unjudgeable_reason(need) {
                return NeedStatus::Unjudgeable(reason);
            }
            return if self.has_need(need) {
                NeedStatus::Lacking(format!(
                    "the target has {need} (the case is for hosts without it)"
                ))
            } else {
                NeedStatus::Met
            };
        }
        if self.has_need(need) {
            return NeedStatus::Met;
        }
        if let Need::Fixture(ids) = need
            && ids.len() > 1
        {
            // None listed: BLOCKED when the operator required one of them, else SKIP.
            if let Some(reason) = ids
                .iter()
                .find_map(|id| self.unjudgeable_reason(&Need::Fixture(vec![id.clone()])))
            {
                return NeedStatus::Unjudgeable(reason);
            }
            return NeedStatus::Lacking(format!(
                "the host lists none of the fixtures that serve this case ({}): {}",
                ids.join(", "),
                fixture_not_listed(&ids[0])
            ));
        }
        if let Some(reason) = self.unjudgeable_reason(need) {
            return NeedStatus::Unjudgeable(reason);
        }
        match need {
            // A host seeds the fixtures of the features it has: one it does not list is the
            // host's fact (SKIP), unless the operator required it ([`require_fixtures`]:
            // recorded in `unjudgeable`, so BLOCKED above).
            Need::Fixture(ids) => NeedStatus::Lacking(fixture_not_listed(&ids[0])),
            Need::MockProvider(mock) => NeedStatus::Unjudgeable(format!(
                "the host's discovery document does not list `{mock}` in testing.mockProviders, so the harness cannot set the case up"
            )),
            Need::Fact(fact) if self.facts.get(fact).is_some_and(Value::is_null) => {
                // The operator said the host has nothing of the kind (`--fact NAME=null`): a
                // fact about the host, like an optional capability it lacks.
                NeedStatus::Lacking(format!(
                    "the host has no `{fact}` (the operator gave `--fact {fact}=null`)"
                ))
            }
            Need::Fact(fact) => NeedStatus::Unjudgeable(format!(
                "the operator gave no fact `{fact}` (--fact {fact}=… or --facts-file)"
            )),
            Need::TenantB => NeedStatus::Unjudgeable(
                "the operator gave no second principal (--auth-b or CONFORMANCE_AUTH_B)".into(),
            ),
            Need::Surface(CaseSurface::Openwop)
                if self
                    .capabilities
                    .contains(&HostCapability::ServesOpenwopV1Only) =>
            {
                NeedStatus::Lacking(format!(
                    "{OPENWOP_V1_ONLY_REASON}, so the v2 run events chapter is not judged"
                ))
            }
            Need::Provider(role) => {
                let capable = if *role == Role::Media {
                    "media-capable model (asynchronous, or with image, audio or video output)"
                } else {
                    "text-capable model"
                };
                NeedStatus::Lacking(format!(
                    "the host lists no {capable} for role `{role}` in GET /v1/providers and the operator bound none (--provider-role {role}=ID or --bind, with the host's provider pointed at the fake providers)"
                ))
            }
            Need::Seam(seam) => NeedStatus::Lacking(format!(
                "the host does not serve upstream's {seam} seam (`{}`, an upstream host-sample test seam, asked by the probe): a host that has it serves it with its test seams on, and one whose answer the probe cannot read says so with `--capabilities` (`{{\"add\": [\"seam:{seam}\"]}}`)",
                seam.path()
            )),
            other => NeedStatus::Lacking(format!("the target does not have {other}")),
        }
    }

    /// The first of `alternatives` (fixture ids, in the case's order: upstream's first) the
    /// host lists, if any.
    pub fn first_listed_fixture<'a>(&self, alternatives: &'a [String]) -> Option<&'a str> {
        alternatives
            .iter()
            .map(String::as_str)
            .find(|id| self.capabilities.contains(&HostCapability::fixture(id)))
    }

    /// Why the harness could not establish `need`, when it could not.
    fn unjudgeable_reason(&self, need: &Need) -> Option<String> {
        self.unjudgeable
            .get(&Unestablished::Need(need.clone()))
            .or_else(|| {
                let every = Unestablished::EveryNeedOf(need.form()?);
                self.unjudgeable.get(&every)
            })
            .cloned()
    }

    /// Every secret value the harness holds, for scrubbing reports.
    pub fn secrets(&self) -> Vec<String> {
        let mut secrets: Vec<String> = self
            .headers
            .iter()
            .chain(self.principals.values().flatten())
            .map(|h| h.value.clone())
            .filter(|v| v.len() >= 6)
            .collect();
        secrets.extend(self.canary.clone());
        secrets
    }
}

/// Why a case needing `fixture` does not run on a host that does not list it: the reason names
/// the fixture's catalogue and how to run the case.
fn fixture_not_listed(fixture: &str) -> String {
    match spec::fixtures::get(fixture) {
        Some(f) if f.catalogue == spec::fixtures::Catalogue::Upstream => format!(
            "the host does not list fixture `{fixture}` (upstream's catalogue) in discovery fixtures[]: seed it to run this case (--require-fixture {fixture} makes this BLOCKED)"
        ),
        Some(f) => format!(
            "the host does not list fixture `{fixture}` (this project's catalogue: {}) in discovery fixtures[]: seed spec/fixtures/{fixture}.json to run this case (--require-fixture {fixture} makes this BLOCKED)",
            f.note
        ),
        None => format!(
            "the host does not list fixture `{fixture}` in discovery fixtures[] (--require-fixture {fixture} makes this BLOCKED)"
        ),
    }
}

/// Records the operator's requirement that the host list `fixtures` (or, with `all`, every
/// fixture a case needs): a case needing one the host does not list is then BLOCKED (the
/// harness cannot set it up), not SKIP.
pub fn require_fixtures(target: &mut Target, fixtures: &[String], all: bool) {
    let why = |id: &str| {
        format!(
            "the operator requires fixture `{id}` and the host's discovery document does not list it, so the harness cannot set the case up"
        )
    };
    for id in fixtures {
        if !target.capabilities.contains(&HostCapability::fixture(id)) {
            target.unjudgeable.insert(
                Unestablished::Need(Need::Fixture(vec![id.clone()])),
                why(id),
            );
        }
    }
    if all {
        target.unjudgeable.insert(
            Unestablished::EveryNeedOf(NeedForm::Fixture),
            "the operator requires every fixture a case needs (--require-all-fixtures) and the host's discovery document does not list this one".into(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A need as a case (or the runner) names it.
    fn n(text: &str) -> CaseNeed {
        let bare = text.strip_prefix('!').unwrap_or(text);
        CaseNeed {
            negated: bare != text,
            need: Need::parse(bare).unwrap(),
        }
    }

    fn target() -> Target {
        Target {
            kind: TargetKind::External,
            base_url: "http://host".into(),
            headers: Vec::new(),
            principals: BTreeMap::new(),
            providers: BTreeMap::new(),
            facts: BTreeMap::new(),
            capabilities: [HostCapability::parse("capability:heartbeat").unwrap()]
                .into_iter()
                .collect(),
            canary: None,
            upstream: None,
            implementation: None,
            unjudgeable: [(
                Unestablished::EveryNeedOf(NeedForm::StreamMode),
                "the stream-mode probe failed".to_string(),
            )]
            .into_iter()
            .collect(),
        }
    }

    #[test]
    fn a_missing_capability_is_the_hosts_fact_and_a_missing_setup_the_harnesss() {
        let target = target();
        assert_eq!(
            target.need_status(&n("capability:heartbeat")),
            NeedStatus::Met
        );
        assert!(matches!(
            target.need_status(&n("capability:providerUsage")),
            NeedStatus::Lacking(_)
        ));
        assert!(matches!(
            target.need_status(&n("!capability:heartbeat")),
            NeedStatus::Lacking(_)
        ));
        assert_eq!(
            target.need_status(&n("!capability:providerUsage")),
            NeedStatus::Met
        );
        assert!(matches!(
            target.need_status(&n("fixture:conformance-all-tiers")),
            NeedStatus::Lacking(_)
        ));
        assert!(matches!(
            target.need_status(&n("fixture:conformance-noop")),
            NeedStatus::Lacking(_)
        ));
        for need in [
            "mock-provider:stream-text",
            "fact:heartbeat_interval_ms",
            "tenant-b",
        ] {
            assert!(
                matches!(target.need_status(&n(need)), NeedStatus::Unjudgeable(_)),
                "{need}"
            );
        }
        assert_eq!(
            target.need_status(&n("stream-mode:debug")),
            NeedStatus::Unjudgeable("the stream-mode probe failed".into())
        );
    }

    #[test]
    fn a_fact_given_as_null_says_the_host_has_none() {
        let mut target = target();
        target
            .facts
            .insert("heartbeat_toggle_id".into(), Value::Null);
        assert!(!target.has_need(&Need::Fact("heartbeat_toggle_id".into())));
        assert!(matches!(
            target.need_status(&n("fact:heartbeat_toggle_id")),
            NeedStatus::Lacking(_)
        ));
        target
            .capabilities
            .insert(HostCapability::ServesOpenwopV1Only);
        let NeedStatus::Lacking(why) = target.need_status(&n("surface:openwop")) else {
            panic!("a v1-only host lacks surface W");
        };
        assert!(why.contains("v1 only"), "{why}");
    }

    #[test]
    fn an_unlisted_fixture_is_skip_unless_the_operator_requires_it() {
        let mut target = target();
        target
            .capabilities
            .insert(HostCapability::fixture("conformance-stream-text"));
        let NeedStatus::Lacking(why) = target.need_status(&n("fixture:conformance-debug-noise"))
        else {
            panic!("an unlisted fixture is the host's fact");
        };
        assert!(why.contains("this project's catalogue"), "{why}");
        require_fixtures(&mut target, &["conformance-noop".into()], false);
        assert!(matches!(
            target.need_status(&n("fixture:conformance-noop")),
            NeedStatus::Unjudgeable(_)
        ));
        assert!(matches!(
            target.need_status(&n("fixture:conformance-debug-noise")),
            NeedStatus::Lacking(_)
        ));
        require_fixtures(&mut target, &[], true);
        assert!(matches!(
            target.need_status(&n("fixture:conformance-debug-noise")),
            NeedStatus::Unjudgeable(_)
        ));
        // A listed fixture stays met, required or not.
        assert_eq!(
            target.need_status(&n("fixture:conformance-stream-text")),
            NeedStatus::Met
        );
        assert_eq!(
            target.first_listed_fixture(&[
                "conformance-all-tiers".into(),
                "conformance-stream-text".into()
            ]),
            Some("conformance-stream-text")
        );
        // Alternatives: met when any is listed, and the first listed one is chosen.
        let either = "fixture:conformance-cancellable|conformance-stream-text";
        assert_eq!(target.need_status(&n(either)), NeedStatus::Met);
        assert_eq!(
            target.chosen_fixtures(&[n(either)])["conformance-cancellable"],
            "conformance-stream-text"
        );
        assert!(matches!(
            target.need_status(&n("fixture:conformance-cancellable|conformance-delay")),
            NeedStatus::Unjudgeable(_)
        ));
    }
}
