//! The 118 registered OpenWOP v2 event types (`spec/registry/event-types.json`): the type enum
//! of `schemas/v2/run-event.schema.json` (openwop/openwop-sdks
//! `22c3e6af`), each type's stream-mode tier as `spec/v2/core/events.md` (openwop/openwop
//! `0f963178`) states it, and the 36 v1 renames of `spec/v2/event-codemap.json` (openwop/openwop
//! `96c270a4`), which era-2 translation reads.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use serde::{Deserialize, Serialize};

/// The stream mode that admits a type besides `debug` (which admits every event).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StreamTier {
    /// Admitted by `updates` (and `values` synthesises a snapshot after it).
    Updates,
    /// Admitted by `messages` as an `ai.message.chunk` frame.
    Messages,
    /// Admitted by `debug` only.
    Debug,
}

/// What the chapter says about a type appearing after the run's terminal event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AfterTerminal {
    /// The log MUST NOT contain it after the terminal event.
    Forbidden,
    /// It MAY follow the terminal event (`compensation.*`, `run.dead-lettered`).
    Allowed,
    /// The chapter is silent; the contract appends nothing, the harness reports INFO.
    Unconstrained,
}

/// One registered type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventTypeEntry {
    /// The v2 type name, `domain.verb-ed`.
    #[serde(rename = "type")]
    pub name: String,
    /// The domain (first segment).
    pub domain: String,
    /// Whether it is a terminal run event.
    pub terminal: bool,
    /// The stream-mode tier.
    pub tier: StreamTier,
    /// The rule after the terminal event.
    pub after_terminal: AfterTerminal,
    /// The payload `$defs` key.
    pub payload_def: String,
    /// The era-2 (v1) spelling when the registry records a rename.
    pub v1: Option<String>,
    /// The chapter's `updates` list ("terminal node transitions", "suspensions", "interrupt
    /// events") reads either way for this type: `tier` is what the reference runtime does, and
    /// a host may admit the type in `updates` (and `values`) or leave it to `debug`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub updates_either: bool,
}

impl EventTypeEntry {
    /// Whether a host may admit this type in `updates` (and synthesise a `values` snapshot
    /// after it) without failing: its tier is `updates`, or the chapter reads either way.
    pub fn may_appear_in_updates(&self) -> bool {
        self.tier == StreamTier::Updates || self.updates_either
    }
}

/// The event-type registry.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EventTypeRegistry {
    /// Format version.
    pub version: u32,
    /// The types, in registry order.
    pub types: Vec<EventTypeEntry>,
    #[serde(skip)]
    by_name: BTreeMap<String, usize>,
}

impl EventTypeRegistry {
    /// Looks a v2 type up.
    pub fn get(&self, name: &str) -> Option<&EventTypeEntry> {
        self.by_name.get(name).map(|&i| &self.types[i])
    }

    /// Whether `name` is a registered protocol type.
    pub fn is_registered(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }

    /// Translates an era-2 (v1) spelling to its v2 type; a type without a recorded rename
    /// translates to itself when registered.
    pub fn translate_v1(&self, v1_name: &str) -> Option<&EventTypeEntry> {
        self.types
            .iter()
            .find(|t| t.v1.as_deref() == Some(v1_name))
            .or_else(|| self.get(v1_name).filter(|t| t.v1.is_none()))
    }

    /// The terminal run event types.
    pub fn terminal_types(&self) -> impl Iterator<Item = &EventTypeEntry> {
        self.types.iter().filter(|t| t.terminal)
    }
}

static REGISTRY: LazyLock<EventTypeRegistry> = LazyLock::new(|| {
    let mut registry: EventTypeRegistry =
        serde_json::from_str(include_str!("../../registry/event-types.json"))
            .expect("spec/registry/event-types.json is valid (guarded by a test)");
    registry.by_name = registry
        .types
        .iter()
        .enumerate()
        .map(|(i, t)| (t.name.clone(), i))
        .collect();
    registry
});

/// The registry of the 118 registered OpenWOP v2 event types.
pub fn event_types() -> &'static EventTypeRegistry {
    &REGISTRY
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn has_the_118_registered_types() {
        let registry = event_types();
        assert_eq!(registry.types.len(), 118);
        assert_eq!(registry.by_name.len(), 118, "type names are unique");
        assert!(
            registry.is_registered("negotiation.decided"),
            "in the type enum and _typeIndex though the codemap has no row"
        );
        assert_eq!(
            registry.types.iter().filter(|t| t.v1.is_some()).count(),
            36,
            "the codemap's 36 v1 renames"
        );
        for updates in [
            "node.dispatched",
            "eval.scored",
            "deployment.promoted",
            "workspace.updated",
        ] {
            assert_eq!(
                registry.get(updates).unwrap().tier,
                StreamTier::Updates,
                "{updates}"
            );
        }
        assert_eq!(
            registry.translate_v1("core.dispatch.fanOut").unwrap().name,
            "dispatch.fanned-out"
        );
        let terminal: Vec<_> = registry.terminal_types().map(|t| t.name.as_str()).collect();
        assert_eq!(terminal, ["run.completed", "run.failed", "run.cancelled"]);
        assert_eq!(
            registry.get("output.chunk").unwrap().tier,
            StreamTier::Messages
        );
        assert_eq!(
            registry.get("node.started").unwrap().tier,
            StreamTier::Debug
        );
        assert_eq!(
            registry.get("node.started").unwrap().after_terminal,
            AfterTerminal::Forbidden
        );
        // "terminal node transitions", "suspensions" and "interrupt events" read either way for
        // these: a host may admit them in updates; node.started is none of the three.
        for either in [
            "node.skipped",
            "node.cancelled",
            "node.suspend-failed",
            "node.resumed",
            "approval.requested",
            "approval.granted",
            "clarification.resolved",
        ] {
            assert!(
                registry.get(either).unwrap().may_appear_in_updates(),
                "{either}"
            );
        }
        assert!(
            !registry
                .get("node.started")
                .unwrap()
                .may_appear_in_updates()
        );
        assert!(
            !registry
                .get("log.appended")
                .unwrap()
                .may_appear_in_updates()
        );
        assert_eq!(
            registry.get("compensation.started").unwrap().after_terminal,
            AfterTerminal::Allowed
        );
        assert_eq!(
            registry.translate_v1("run.resuming").unwrap().name,
            "run.resume-started"
        );
        assert_eq!(
            registry.translate_v1("run.started").unwrap().name,
            "run.started"
        );
        assert!(
            registry.translate_v1("run.resume-started").is_none(),
            "a renamed type's v2 spelling is not a v1 spelling"
        );
    }

    #[test]
    fn names_follow_the_codemap_grammar() {
        let grammar =
            regex::Regex::new(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*\.[a-z][a-z0-9]*(?:-[a-z0-9]+)*$")
                .unwrap();
        for t in &event_types().types {
            assert!(grammar.is_match(&t.name), "{}", t.name);
            assert!(t.name.starts_with(&format!("{}.", t.domain)));
        }
    }
}
