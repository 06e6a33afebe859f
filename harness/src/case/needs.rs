//! The closed vocabulary of a case's `needs`: every fixture, mock provider, stream mode,
//! capability and provider role a case may name. `conformance lint` reports a need outside it
//! (with the closest known name), so a misspelled need cannot make a case SKIP everywhere
//! unnoticed.
//!
//! | form | known values |
//! |---|---|
//! | `fixture:<id>[\|<id>…]` | the fixtures of `spec/fixtures/` ([`spec::fixtures::all`]), alternatives separated by `\|` |
//! | `mock-provider:<id>` | [`MOCK_PROVIDERS`] |
//! | `stream-mode:<mode>` | the four modes ([`spec::openwop::StreamMode`]) |
//! | `capability:<family>[.<facet>[=<value>]]` | the discovery document's families and their facets ([`spec::openwop::CORE_FAMILIES`], [`spec::openwop::family_facets`]), `conformance.seamsProfile` |
//! | `provider:<role>` | the provider roles ([`Role`]) |
//! | `fact:<name>` | any name of lowercase letters, digits and `_` (the operator gives facts) |
//! | `seam:<name>` | the upstream test seams the probe asks a host about ([`UpstreamSeam`]) |
//! | `tenant-b`, `subscriber-limit` | themselves |
//!
//! Each form may be negated with a leading `!`.
//!
//! A case's needs are parsed once, when the case is loaded, into [`CaseNeed`] (a [`Need`] and
//! whether it is negated); on disk they stay the strings above.

use std::fmt;

use serde_json::Value;

use super::surface::CaseSurface;
use super::upstream_seam::UpstreamSeam;
use crate::suggest::closest;
use crate::upstream::role::Role;

/// The mock provider ids a case may need (`testing.mockProviders`): upstream's four
/// (`stream-text`, `tool-calls`, `error`, `usage-only`) and `envelope-program`, the
/// structured-output mock the envelope cases drive.
pub const MOCK_PROVIDERS: [&str; 5] = [
    "stream-text",
    "tool-calls",
    "error",
    "usage-only",
    "envelope-program",
];

/// The forms a need takes before its `:` (and the two needs without one).
pub const FORMS: [&str; 7] = [
    "fixture",
    "mock-provider",
    "stream-mode",
    "capability",
    "provider",
    "fact",
    "seam",
];

/// The needs that take no value.
pub const PLAIN: [&str; 2] = ["tenant-b", "subscriber-limit"];

/// The capability that is a metadata key of the discovery document, not a family record.
pub const SEAMS_PROFILE: &str = "conformance.seamsProfile";

/// What a case may need of a host (the part of a `needs` entry after its `!`), and what the
/// harness may record a host has.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Need {
    /// `fixture:<id>[|<id>…]`: the alternatives, upstream's first (never empty).
    Fixture(Vec<String>),
    /// `mock-provider:<id>`.
    MockProvider(String),
    /// `stream-mode:<mode>`.
    StreamMode(spec::openwop::StreamMode),
    /// `capability:<family>[.<facet>[=<value>]]` (`conformance.seamsProfile` is the family
    /// `conformance` with the facet `seamsProfile`).
    Capability {
        /// The discovery document's family.
        family: String,
        /// The family's facet, when named.
        facet: Option<String>,
        /// The facet's value, when named.
        value: Option<String>,
    },
    /// `provider:<role>`.
    Provider(Role),
    /// `fact:<name>`: the operator gave the fact `${target.<name>}` reads.
    Fact(String),
    /// `seam:<name>`: the host serves an upstream test seam (the probe asked it).
    Seam(UpstreamSeam),
    /// `surface:<surface>`: the harness could read the surface's discovery document (never
    /// in a case file; the runner asks it of every case).
    Surface(CaseSurface),
    /// `tenant-b`: a second principal.
    TenantB,
    /// `subscriber-limit`.
    SubscriberLimit,
}

/// The form of a need that names a value (what comes before its `:`); `<form>:*` stands for
/// every need of the form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NeedForm {
    /// `fixture:`.
    Fixture,
    /// `mock-provider:`.
    MockProvider,
    /// `stream-mode:`.
    StreamMode,
    /// `capability:`.
    Capability,
    /// `provider:`.
    Provider,
    /// `fact:`.
    Fact,
    /// `seam:`.
    Seam,
    /// `surface:`.
    Surface,
}

impl NeedForm {
    /// The form as written before the `:`.
    pub fn as_str(self) -> &'static str {
        match self {
            NeedForm::Fixture => "fixture",
            NeedForm::MockProvider => "mock-provider",
            NeedForm::StreamMode => "stream-mode",
            NeedForm::Capability => "capability",
            NeedForm::Provider => "provider",
            NeedForm::Fact => "fact",
            NeedForm::Seam => "seam",
            NeedForm::Surface => "surface",
        }
    }
}

impl fmt::Display for NeedForm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One entry of a case's `needs`: a [`Need`], or (`!<need>`) its absence.
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(try_from = "String", into = "String")]
pub struct CaseNeed {
    /// `!<need>`: the case is for hosts without the need.
    pub negated: bool,
    /// What is needed (or must be absent).
    pub need: Need,
}

impl Need {
    /// Parses a need's form (no `!`); the vocabulary is [`check_need`]'s.
    pub fn parse(text: &str) -> Result<Need, String> {
        match text {
            "tenant-b" => return Ok(Need::TenantB),
            "subscriber-limit" => return Ok(Need::SubscriberLimit),
            _ => {}
        }
        let Some((form, value)) = text.split_once(':') else {
            return Err(format!("unknown need `{text}`"));
        };
        if value.is_empty() {
            return Err(format!("need `{text}` names no {form}"));
        }
        Ok(match form {
            "fixture" => Need::Fixture(value.split('|').map(String::from).collect()),
            "mock-provider" => Need::MockProvider(value.to_string()),
            "stream-mode" => Need::StreamMode(
                spec::openwop::StreamMode::from_name(value)
                    .ok_or_else(|| format!("unknown stream mode `{value}`"))?,
            ),
            "capability" => {
                let (name, wanted) = match value.split_once('=') {
                    Some((name, wanted)) => (name, Some(wanted.to_string())),
                    None => (value, None),
                };
                let (family, facet) = match name.split_once('.') {
                    Some((family, facet)) => (family, Some(facet.to_string())),
                    None => (name, None),
                };
                Need::Capability {
                    family: family.to_string(),
                    facet,
                    value: wanted,
                }
            }
            "provider" => Need::Provider(
                Role::parse(value).ok_or_else(|| format!("unknown provider role `{value}`"))?,
            ),
            "fact" => Need::Fact(value.to_string()),
            "seam" => Need::Seam(
                UpstreamSeam::from_name(value)
                    .ok_or_else(|| format!("unknown upstream seam `{value}`"))?,
            ),
            "surface" => Need::Surface(
                CaseSurface::parse(value).ok_or_else(|| format!("unknown surface `{value}`"))?,
            ),
            other => return Err(format!("unknown need form `{other}:`")),
        })
    }

    /// The fixture alternatives of a `fixture:` need.
    pub fn fixtures(&self) -> Option<&[String]> {
        match self {
            Need::Fixture(ids) => Some(ids),
            _ => None,
        }
    }

    /// The form before the `:` (`fixture`, `capability`, …); `None` for a need without one
    /// (`tenant-b`, `subscriber-limit`).
    pub fn form(&self) -> Option<NeedForm> {
        Some(match self {
            Need::Fixture(_) => NeedForm::Fixture,
            Need::MockProvider(_) => NeedForm::MockProvider,
            Need::StreamMode(_) => NeedForm::StreamMode,
            Need::Capability { .. } => NeedForm::Capability,
            Need::Provider(_) => NeedForm::Provider,
            Need::Fact(_) => NeedForm::Fact,
            Need::Seam(_) => NeedForm::Seam,
            Need::Surface(_) => NeedForm::Surface,
            Need::TenantB | Need::SubscriberLimit => return None,
        })
    }
}

impl fmt::Display for Need {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Need::Fixture(ids) => write!(f, "fixture:{}", ids.join("|")),
            Need::MockProvider(id) => write!(f, "mock-provider:{id}"),
            Need::StreamMode(mode) => write!(f, "stream-mode:{}", mode.as_str()),
            Need::Capability {
                family,
                facet,
                value,
            } => {
                write!(f, "capability:{family}")?;
                if let Some(facet) = facet {
                    write!(f, ".{facet}")?;
                }
                if let Some(value) = value {
                    write!(f, "={value}")?;
                }
                Ok(())
            }
            Need::Provider(role) => write!(f, "provider:{role}"),
            Need::Fact(name) => write!(f, "fact:{name}"),
            Need::Seam(seam) => write!(f, "seam:{seam}"),
            Need::Surface(surface) => write!(f, "surface:{surface}"),
            Need::TenantB => f.write_str("tenant-b"),
            Need::SubscriberLimit => f.write_str("subscriber-limit"),
        }
    }
}

impl CaseNeed {
    /// Parses one `needs` entry of a case file, checking it against the vocabulary (the error
    /// is lint's message).
    pub fn parse(text: &str) -> Result<CaseNeed, String> {
        check_need(text)?;
        let negated = text.starts_with('!');
        let need = Need::parse(text.strip_prefix('!').unwrap_or(text))?;
        Ok(CaseNeed { negated, need })
    }

    /// The need itself, when it is not negated.
    pub fn wanted(&self) -> Option<&Need> {
        (!self.negated).then_some(&self.need)
    }
}

impl fmt::Display for CaseNeed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.negated {
            f.write_str("!")?;
        }
        self.need.fmt(f)
    }
}

impl TryFrom<String> for CaseNeed {
    type Error = String;
    fn try_from(text: String) -> Result<Self, Self::Error> {
        CaseNeed::parse(&text)
    }
}

impl From<CaseNeed> for String {
    fn from(need: CaseNeed) -> String {
        need.to_string()
    }
}

impl std::str::FromStr for CaseNeed {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        CaseNeed::parse(text)
    }
}

/// Checks one `needs` entry against the vocabulary; the error is the one message lint
/// reports, with the closest known name or the allowed values.
pub fn check_need(need: &str) -> Result<(), String> {
    let bare = need.strip_prefix('!').unwrap_or(need);
    let Some((form, value)) = bare.split_once(':') else {
        if PLAIN.contains(&bare) {
            return Ok(());
        }
        let forms: Vec<String> = FORMS
            .iter()
            .map(|f| format!("{f}:<…>"))
            .chain(PLAIN.iter().map(|p| p.to_string()))
            .collect();
        return Err(unknown(
            "need",
            need,
            bare,
            PLAIN.iter().copied(),
            &forms.join(", "),
        ));
    };
    if value.is_empty() {
        return Err(format!("need `{need}` names no {form}"));
    }
    match form {
        // `fixture:A|B|…`: alternatives (upstream's first), each a known fixture.
        "fixture" => {
            let ids: Vec<&str> = spec::fixtures::all().iter().map(|f| f.id).collect();
            value
                .split('|')
                .try_for_each(|id| known("fixture", need, id, &ids, "spec/fixtures/"))
        }
        "mock-provider" => known("mock provider", need, value, &MOCK_PROVIDERS, ""),
        "stream-mode" => {
            let modes: Vec<&str> = spec::openwop::StreamMode::ALL
                .iter()
                .map(|m| m.as_str())
                .collect();
            known("stream mode", need, value, &modes, "")
        }
        "provider" => known("provider role", need, value, &Role::names(), ""),
        "capability" => check_capability(need, value),
        "seam" => {
            let seams: Vec<&str> = UpstreamSeam::ALL.iter().map(|s| s.as_str()).collect();
            known("upstream seam", need, value, &seams, "")
        }
        "fact" => {
            if value
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
            {
                Ok(())
            } else {
                Err(format!(
                    "fact name `{value}` in `{need}`: a fact is named with lowercase letters, digits and `_` (as `${{target.<name>}}` reads it)"
                ))
            }
        }
        other => {
            let forms: Vec<String> = FORMS.iter().map(|f| format!("{f}:<…>")).collect();
            Err(format!(
                "unknown need form `{other}:` in `{need}`{}; one of {}, {}",
                closest(other, FORMS)
                    .map(|c| format!(" (did you mean `{c}:`?)"))
                    .unwrap_or_default(),
                forms.join(", "),
                PLAIN.join(", ")
            ))
        }
    }
}

fn check_capability(need: &str, value: &str) -> Result<(), String> {
    if value == SEAMS_PROFILE {
        return Ok(());
    }
    let (name, wanted) = match value.split_once('=') {
        Some((name, wanted)) => (name, Some(wanted)),
        None => (value, None),
    };
    let (family, facet) = match name.split_once('.') {
        Some((family, facet)) => (family, Some(facet)),
        None => (name, None),
    };
    let families: Vec<&str> = spec::openwop::CORE_FAMILIES
        .iter()
        .chain(spec::openwop::FAMILIES_NAMED_ELSEWHERE.iter())
        .copied()
        .chain(std::iter::once(SEAMS_PROFILE))
        .collect();
    if !families.contains(&family) {
        return Err(unknown(
            "capability family",
            need,
            family,
            families.iter().copied(),
            "the families of the discovery document (spec::openwop::CORE_FAMILIES)",
        ));
    }
    let Some(facet) = facet else {
        return match wanted {
            Some(_) => Err(format!(
                "`{need}`: a value is given to a facet (`capability:<family>.<facet>=<value>`), not to the family"
            )),
            None => Ok(()),
        };
    };
    // A family without an upstream facet schema (hostEvents) has open facets.
    let Some(facets) = spec::openwop::family_facets(family) else {
        return Ok(());
    };
    let Some(schema) = facets.get(facet) else {
        let names: Vec<&str> = facets.keys().map(String::as_str).collect();
        let allowed = if names.is_empty() {
            format!("`{family}` has no facets")
        } else {
            format!("`{family}` facets: {}", names.join(", "))
        };
        return Err(format!(
            "unknown facet `{facet}` of capability family `{family}` in `{need}`{}; {allowed}",
            closest(facet, names.iter().copied())
                .map(|c| format!(" (did you mean `{c}`?)"))
                .unwrap_or_default()
        ));
    };
    if let (Some(wanted), Some(options)) = (wanted, schema.get("enum").and_then(Value::as_array)) {
        let options: Vec<&str> = options.iter().filter_map(Value::as_str).collect();
        if !options.contains(&wanted) {
            return Err(format!(
                "`{wanted}` is no value of `{family}.{facet}` in `{need}`{}; one of {}",
                closest(wanted, options.iter().copied())
                    .map(|c| format!(" (did you mean `{c}`?)"))
                    .unwrap_or_default(),
                options.join(", ")
            ));
        }
    }
    Ok(())
}

/// `value` must be one of `names`.
fn known(what: &str, need: &str, value: &str, names: &[&str], source: &str) -> Result<(), String> {
    if names.contains(&value) {
        return Ok(());
    }
    let listing = if source.is_empty() {
        names.join(", ")
    } else {
        format!("{} (from {source})", names.join(", "))
    };
    Err(unknown(what, need, value, names.iter().copied(), &listing))
}

/// One message: the unknown name and the closest known one, or (none close) the allowed ones.
fn unknown<'a>(
    what: &str,
    need: &str,
    value: &str,
    names: impl IntoIterator<Item = &'a str> + Clone,
    allowed: &str,
) -> String {
    let within = if need == value {
        String::new()
    } else {
        format!(" in `{need}`")
    };
    match closest(value, names) {
        Some(near) => format!("unknown {what} `{value}`{within}; did you mean `{near}`?"),
        None => format!("unknown {what} `{value}`{within}; known: {allowed}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_need_of_the_vocabulary_is_accepted() {
        for need in [
            "fixture:conformance-noop",
            "fixture:conformance-all-tiers",
            "fixture:conformance-cancellable|conformance-delay",
            "mock-provider:envelope-program",
            "mock-provider:stream-text",
            "stream-mode:debug",
            "!stream-mode:updates",
            "capability:heartbeat",
            "capability:supportedEnvelopes.kinds",
            "!capability:envelopeStrictness.mode=strict",
            "capability:conformance.seamsProfile",
            "capability:hostEvents.anything",
            "provider:text-secondary",
            "fact:heartbeat_interval_ms",
            "tenant-b",
            "!subscriber-limit",
        ] {
            assert_eq!(check_need(need), Ok(()), "{need}");
            let parsed = CaseNeed::parse(need).expect(need);
            assert_eq!(
                parsed.to_string(),
                need,
                "a need reads and writes the same string"
            );
        }
    }

    #[test]
    fn a_surface_need_is_one_of_the_surfaces() {
        for surface in CaseSurface::ALL {
            let need = Need::parse(&format!("surface:{surface}"));
            assert_eq!(need, Ok(Need::Surface(surface)));
            assert_eq!(need.unwrap().to_string(), format!("surface:{surface}"));
        }
        assert_eq!(
            Need::parse("surface:w"),
            Err("unknown surface `w`".to_string())
        );
    }

    #[test]
    fn a_misspelled_need_names_the_closest_known_one() {
        let cases = [
            ("fixture:conformance-multinode", "`conformance-multi-node`"),
            ("mock-provider:stream_text", "`stream-text`"),
            ("stream-mode:debgu", "`debug`"),
            ("capability:heartbeats", "`heartbeat`"),
            ("capability:envelopes.reasonning", "`reasoning`"),
            ("capability:envelopeStrictness.mode=strikt", "`strict`"),
            ("provider:text-primay", "`text-primary`"),
            ("fixtures:conformance-noop", "`fixture:`"),
            ("tenant_b", "`tenant-b`"),
        ];
        for (need, hint) in cases {
            let message = check_need(need).unwrap_err();
            assert!(
                message.contains(&format!("did you mean {hint}")),
                "{need}: {message}"
            );
        }
        // Nothing close: the allowed values are listed.
        let message = check_need("stream-mode:everything").unwrap_err();
        assert!(
            message.contains("values, updates, messages, debug"),
            "{message}"
        );
        assert!(check_need("fact:Bad-Name").is_err());
        assert!(check_need("fixture:").is_err());
        let message = check_need("fixture:conformance-cancellable|conformance-dealy").unwrap_err();
        assert!(
            message.contains("did you mean `conformance-delay`"),
            "{message}"
        );
        assert!(check_need("capability:heartbeat=on").is_err());
    }
}
