//! What the harness records a host has: each entry of [`crate::host::Target::capabilities`]
//! and of a report's `target.capabilities`. It is parsed once where it enters (the probe
//! reading the host's documents, the operator's `--capabilities` file, a report read back)
//! and written as the strings it always was: a need's (`fixture:<id>`, `capability:<family>…`,
//! `stream-mode:<mode>`, …) or the marker `openwop-serves:v1-only`.

use std::fmt;

use crate::case::needs::Need;

/// The marker's written form.
const SERVES_OPENWOP_V1_ONLY: &str = "openwop-serves:v1-only";

/// The forms a capability is written in, for a parse error.
const FORMS: &str = "fixture:<id>, mock-provider:<id>, stream-mode:<mode>, capability:<family>[.<facet>[=<value>]], provider:<role>, surface:<surface>, fact:<name>, tenant-b, subscriber-limit, openwop-serves:v1-only";

/// One thing a host has.
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(try_from = "String", into = "String")]
pub enum HostCapability {
    /// A need the host meets (written as the need).
    Meets(Need),
    /// `openwop-serves:v1-only`: the host's discovery offers no OpenWOP 2.x document, so
    /// surface W is not served (the reason is in the probe's notes and
    /// [`crate::host::Target::need_status`]).
    ServesOpenwopV1Only,
}

/// A string that is no capability: it names the string, why, and the forms a capability takes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{text}` is no capability ({reason}); a capability is one of: {FORMS}")]
pub struct CapabilityError {
    /// The string given.
    pub text: String,
    /// Why it is none.
    pub reason: String,
}

impl HostCapability {
    /// Parses a capability as written (a need without `!`, or `openwop-serves:v1-only`).
    pub fn parse(text: &str) -> Result<HostCapability, CapabilityError> {
        if text == SERVES_OPENWOP_V1_ONLY {
            return Ok(HostCapability::ServesOpenwopV1Only);
        }
        Need::parse(text)
            .map(HostCapability::Meets)
            .map_err(|reason| CapabilityError {
                text: text.to_string(),
                reason,
            })
    }

    /// A host listing the fixture `id`.
    pub(crate) fn fixture(id: &str) -> HostCapability {
        HostCapability::Meets(Need::Fixture(vec![id.to_string()]))
    }

    /// `capabilities` in the order of their written forms (the order reports list them in).
    pub(crate) fn in_written_order(
        capabilities: impl IntoIterator<Item = HostCapability>,
    ) -> Vec<HostCapability> {
        let mut listed: Vec<HostCapability> = capabilities.into_iter().collect();
        listed.sort_by_cached_key(HostCapability::to_string);
        listed.dedup();
        listed
    }
}

impl From<Need> for HostCapability {
    fn from(need: Need) -> HostCapability {
        HostCapability::Meets(need)
    }
}

impl fmt::Display for HostCapability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HostCapability::Meets(need) => need.fmt(f),
            HostCapability::ServesOpenwopV1Only => f.write_str(SERVES_OPENWOP_V1_ONLY),
        }
    }
}

impl std::str::FromStr for HostCapability {
    type Err = CapabilityError;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        HostCapability::parse(text)
    }
}

impl TryFrom<String> for HostCapability {
    type Error = CapabilityError;
    fn try_from(text: String) -> Result<Self, Self::Error> {
        HostCapability::parse(&text)
    }
}

impl From<HostCapability> for String {
    fn from(capability: HostCapability) -> String {
        capability.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_capability_reads_and_writes_the_same_string() {
        for text in [
            "fixture:conformance-noop",
            "mock-provider:stream-text",
            "stream-mode:debug",
            "capability:heartbeat",
            "capability:envelopeStrictness.mode=strict",
            "capability:feedback.targets=event",
            "capability:conformance.seamsProfile",
            "provider:media",
            "surface:openwop",
            "tenant-b",
            "subscriber-limit",
            "openwop-serves:v1-only",
        ] {
            let capability = HostCapability::parse(text).expect(text);
            assert_eq!(capability.to_string(), text);
            let json = serde_json::to_value(&capability).unwrap();
            assert_eq!(json, serde_json::json!(text));
            assert_eq!(
                serde_json::from_value::<HostCapability>(json).unwrap(),
                capability
            );
        }
        assert_eq!(
            HostCapability::parse("openwop-serves:v1-only"),
            Ok(HostCapability::ServesOpenwopV1Only)
        );
    }

    #[test]
    fn no_capability_names_the_string_and_the_forms() {
        for (text, reason) in [
            ("heartbeat", "unknown need `heartbeat`"),
            ("stream-mode:everything", "unknown stream mode `everything`"),
            ("provider:text", "unknown provider role `text`"),
            ("surface:w", "unknown surface `w`"),
            ("fixture:", "names no fixture"),
        ] {
            let message = HostCapability::parse(text).unwrap_err().to_string();
            assert!(
                message.starts_with(&format!("`{text}` is no capability")),
                "{message}"
            );
            assert!(message.contains(reason), "{message}");
            assert!(
                message.contains("capability:<family>[.<facet>[=<value>]]")
                    && message.contains("openwop-serves:v1-only"),
                "{message}"
            );
        }
        assert!(serde_json::from_value::<HostCapability>(serde_json::json!("heartbeat")).is_err());
    }

    #[test]
    fn capabilities_are_listed_as_written() {
        let listed = HostCapability::in_written_order(
            [
                "tenant-b",
                "surface:openwop",
                "capability:heartbeat",
                "fixture:b",
                "fixture:a",
            ]
            .map(|text| HostCapability::parse(text).unwrap()),
        );
        let written: Vec<String> = listed.iter().map(ToString::to_string).collect();
        assert_eq!(
            written,
            [
                "capability:heartbeat",
                "fixture:a",
                "fixture:b",
                "surface:openwop",
                "tenant-b"
            ]
        );
    }
}
