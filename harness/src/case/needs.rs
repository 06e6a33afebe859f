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
//! | `provider:<role>` | the provider roles ([`crate::upstream::ROLES`]) |
//! | `fact:<name>` | any name of lowercase letters, digits and `_` (the operator gives facts) |
//! | `tenant-b`, `subscriber-limit` | themselves |
//!
//! Each form may be negated with a leading `!`.

use serde_json::Value;

use crate::suggest::closest;

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
pub const FORMS: [&str; 6] = [
    "fixture",
    "mock-provider",
    "stream-mode",
    "capability",
    "provider",
    "fact",
];

/// The needs that take no value.
pub const PLAIN: [&str; 2] = ["tenant-b", "subscriber-limit"];

/// The capability that is a metadata key of the discovery document, not a family record.
pub const SEAMS_PROFILE: &str = "conformance.seamsProfile";

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
        "provider" => known("provider role", need, value, &crate::upstream::ROLES, ""),
        "capability" => check_capability(need, value),
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
        }
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
