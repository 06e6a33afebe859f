//! The vendor-org registry and the type-name rules that depend on it.

use std::sync::LazyLock;

use serde::{Deserialize, Serialize};

use super::event_types::event_types;

/// A registered org.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegisteredOrg {
    /// The org, the first segment of its vendor types.
    pub org: String,
    /// Whether it may be assigned to a vendor (`example` may not).
    pub assignable: bool,
    /// What it is.
    pub note: String,
}

/// The org registry.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OrgRegistry {
    /// Format version.
    pub version: u32,
    /// Registered orgs.
    pub registered: Vec<RegisteredOrg>,
    /// Reserved orgs: never registered, never usable.
    pub reserved: Vec<String>,
    /// Pack namespaces: a type under them is invalid.
    pub pack_namespaces: Vec<String>,
    /// The only reserved type prefix.
    pub reserved_type_prefix: String,
    /// The vendor branch of `type`.
    pub vendor_type_pattern: String,
    /// The shape of `<org>.<name>` extension keys.
    pub extensions_key_pattern: String,
    /// Envelope kinds that need no namespace.
    pub universal_envelope_kinds: Vec<String>,
    /// Core content-primitive families of envelope kinds (`ui.`, `media.`).
    pub core_envelope_families: Vec<String>,
    #[serde(rename = "$comment", default, skip_serializing)]
    _comment: Option<String>,
}

/// How a `type` string classifies against the registries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeNameVerdict {
    /// A registered protocol type.
    Registered,
    /// A vendor type whose org is registered.
    Vendor,
    /// A vendor-shaped type whose org is not registered.
    UnregisteredOrg,
    /// Under a reserved org, the `openwop.` prefix, or a pack namespace.
    Reserved,
    /// Matches neither branch.
    Malformed,
}

impl OrgRegistry {
    /// Whether `org` is registered.
    pub fn is_registered(&self, org: &str) -> bool {
        self.registered.iter().any(|o| o.org == org)
    }

    /// Classifies an event `type`.
    pub fn classify_type(&self, name: &str) -> TypeNameVerdict {
        if event_types().is_registered(name) {
            return TypeNameVerdict::Registered;
        }
        let Some((org, _)) = name.split_once('.') else {
            return TypeNameVerdict::Malformed;
        };
        if name.starts_with(&self.reserved_type_prefix)
            || self.reserved.iter().any(|r| r == org)
            || self.pack_namespaces.iter().any(|p| p == org)
        {
            return TypeNameVerdict::Reserved;
        }
        if !vendor_shape(name) {
            return TypeNameVerdict::Malformed;
        }
        if self.is_registered(org) {
            TypeNameVerdict::Vendor
        } else {
            TypeNameVerdict::UnregisteredOrg
        }
    }

    /// Whether an envelope kind is namespaced correctly: universal, a core family (`ui.`,
    /// `media.`), or under a registered org.
    pub fn is_valid_envelope_kind(&self, kind: &str) -> bool {
        if self.universal_envelope_kinds.iter().any(|k| k == kind)
            || self
                .core_envelope_families
                .iter()
                .any(|f| kind.starts_with(f.as_str()))
        {
            return true;
        }
        matches!(kind.split_once('.'), Some((org, rest)) if !rest.is_empty() && self.is_registered(org))
    }
}

/// The vendor pattern without the lookahead (the lookahead is the `openwop.` check above).
fn vendor_shape(name: &str) -> bool {
    static SHAPE: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*\.[a-z][a-z0-9]*(-[a-z0-9]+)*(\.[a-z][a-z0-9]*(-[a-z0-9]+)*)?$")
            .expect("valid regex")
    });
    SHAPE.is_match(name)
}

static REGISTRY: LazyLock<OrgRegistry> = LazyLock::new(|| {
    serde_json::from_str(include_str!("../../registry/orgs.json"))
        .expect("spec/registry/orgs.json is valid (guarded by a test)")
});

/// The vendor-org registry.
pub fn orgs() -> &'static OrgRegistry {
    &REGISTRY
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_type_names() {
        let orgs = orgs();
        assert_eq!(
            orgs.classify_type("run.started"),
            TypeNameVerdict::Registered
        );
        assert_eq!(
            orgs.classify_type("example.thing-happened"),
            TypeNameVerdict::Vendor
        );
        assert_eq!(orgs.classify_type("example.a.b"), TypeNameVerdict::Vendor);
        assert_eq!(
            orgs.classify_type("acme.thing"),
            TypeNameVerdict::UnregisteredOrg
        );
        assert_eq!(orgs.classify_type("openwop.x"), TypeNameVerdict::Reserved);
        assert_eq!(orgs.classify_type("core.x"), TypeNameVerdict::Reserved);
        assert_eq!(orgs.classify_type("vendor.x"), TypeNameVerdict::Reserved);
        assert_eq!(orgs.classify_type("events.x"), TypeNameVerdict::Reserved);
        assert_eq!(orgs.classify_type("Example.X"), TypeNameVerdict::Malformed);
        assert_eq!(orgs.classify_type("nodot"), TypeNameVerdict::Malformed);
        assert!(
            !orgs
                .registered
                .iter()
                .find(|o| o.org == "example")
                .unwrap()
                .assignable
        );
    }

    #[test]
    fn envelope_kinds() {
        let orgs = orgs();
        assert!(orgs.is_valid_envelope_kind("error"));
        assert!(orgs.is_valid_envelope_kind("ui.a2ui-surface"));
        assert!(orgs.is_valid_envelope_kind("example.plan"));
        assert!(!orgs.is_valid_envelope_kind("acme.plan"));
        assert!(!orgs.is_valid_envelope_kind("plan"));
    }
}
