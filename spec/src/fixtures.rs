//! The fixture workflow definitions a surface-W host seeds under their ids and lists in
//! discovery `fixtures[]` (`spec/fixtures/*.json`), from two catalogues.
//!
//! **Upstream's catalogue** ([`Catalogue::Upstream`]): the fixtures of OpenWOP's own conformance
//! suite, the ones a real host seeds. Their definitions here transcribe the facts of
//! `conformance-fixtures/` in `openwop/openwop-app-install` at [`UPSTREAM_COMMIT`] (the
//! suite's copy is `conformance/fixtures/` of `openwop/openwop`, described in its
//! `conformance/fixtures.md`): workflow id, node ids and types, node config, variables with
//! their defaults, triggers. Only those the W corpus can use are transcribed.
//!
//! **This project's catalogue** ([`Catalogue::Project`]): fixtures no upstream fixture
//! replaces, each with the reason ([`Fixture::note`]). A case needing one is SKIP on a host
//! that does not list it (BLOCKED only when the operator requires it).

use std::sync::LazyLock;

use serde_json::Value;

pub mod mock_nodes;

/// The commit of `openwop/openwop-app-install` whose `conformance-fixtures/` the upstream
/// definitions transcribe.
pub const UPSTREAM_COMMIT: &str = "75b28328fa56ae2dcb488cc7f7a608c141bb8489";

/// Which catalogue a fixture belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Catalogue {
    /// OpenWOP's own conformance fixture catalogue (what real hosts seed).
    Upstream,
    /// This project's fixtures, kept only where no upstream fixture produces what a rule needs.
    Project,
}

impl Catalogue {
    /// `upstream` or `project`.
    pub fn name(self) -> &'static str {
        match self {
            Catalogue::Upstream => "upstream",
            Catalogue::Project => "project",
        }
    }

    /// Both catalogues, upstream's first.
    pub const ALL: [Catalogue; 2] = [Catalogue::Upstream, Catalogue::Project];
}

impl std::fmt::Display for Catalogue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One fixture: its id, catalogue and workflow definition.
#[derive(Debug, Clone, PartialEq)]
pub struct Fixture {
    /// The workflow id.
    pub id: &'static str,
    /// The catalogue it belongs to.
    pub catalogue: Catalogue,
    /// For an upstream fixture, how upstream's suite drives it; for a project fixture, why no
    /// upstream fixture serves the rules that need it.
    pub note: &'static str,
    /// The workflow definition (OpenWOP `workflow-definition` shape).
    pub definition: Value,
}

macro_rules! fixture_files {
    ($(($id:literal, $catalogue:ident, $note:literal)),* $(,)?) => {
        [$(($id, Catalogue::$catalogue, $note, include_str!(concat!("../fixtures/", $id, ".json")))),*]
    };
}

const FILES: [(&str, Catalogue, &str, &str); 18] = fixture_files!(
    (
        "conformance-noop",
        Upstream,
        "POST /runs {workflowId} with no inputs."
    ),
    (
        "conformance-multi-node",
        Upstream,
        "POST /runs {workflowId} with no inputs."
    ),
    (
        "conformance-delay",
        Upstream,
        "inputs.delayMs, 0..30000 upstream (default 1000)."
    ),
    (
        "conformance-failure",
        Upstream,
        "POST /runs {workflowId} with no inputs; ends failed."
    ),
    (
        "conformance-cancellable",
        Upstream,
        "inputs.delayMs, 1..60000 upstream (default 30000); cancelled mid-flight."
    ),
    (
        "conformance-approval",
        Upstream,
        "suspends at its gate; resolved with {action: accept | reject}."
    ),
    (
        "conformance-stream-text",
        Upstream,
        "configurable.mockProvider = {id: stream-text, config: {tokens, delayMsPerToken, finishReason, usage}} (upstream's stream-text-fixture scenario), the mock advertised in testing.mockProviders; test keys only."
    ),
    (
        "conformance-envelope-refusal",
        Upstream,
        "POST /conformance/seams/sample/test/mock-ai/program (v1: /v1/host/sample/test/mock-ai/program) {nodeId: structured-call, program: [{stopReason: safety, refusalText}, ...]} before POST /runs {workflowId} (upstream's envelope-refusal-shape scenario); the program is the host's global state keyed by node id, one entry per provider call."
    ),
    (
        "conformance-envelope-retry-attempted",
        Upstream,
        "the mock-AI program seam as for conformance-envelope-refusal (upstream's envelope-retry-attempted scenario): [{content: not JSON}, {content: {\"valid\":true}}], one envelope.retry-attempted, completes; content validated against config.outputSchema."
    ),
    (
        "conformance-envelope-retry-exhausted",
        Upstream,
        "the mock-AI program seam (upstream's envelope-retry-exhausted scenario): invalid JSON on every call, one envelope.retry-exhausted before node.failed, the node fails envelope_invalid."
    ),
    (
        "conformance-envelope-truncated",
        Upstream,
        "the mock-AI program seam (upstream's envelope-truncated scenario): [{stopReason: max_tokens, content}, {stopReason: end_turn, content: {\"valid\":true}}], one envelope.truncated, completes; config.maxTokens 50 is the first budget."
    ),
    (
        "conformance-envelope-truncation-cap-exhaustion",
        Upstream,
        "the mock-AI program seam (upstream's envelope-truncation-cap-exhaustion scenario): stopReason max_tokens on every call (16 entries), retry-exhausted with finalReason truncation, the node fails envelope_truncation_unrecoverable."
    ),
    (
        "conformance-envelope-recovery-applied",
        Upstream,
        "the mock-AI program seam (upstream's recovery-applied scenario): one call returning JSON inside a Markdown fence, one envelope.recovery-applied (markdown-fence), no retry, completes; content validated against config.outputSchema {result: string}."
    ),
    (
        "conformance-envelope-nl-to-format-engaged",
        Upstream,
        "the mock-AI program seam (upstream's envelope-nl-to-format-engaged scenario): three calls of prose, then valid JSON; envelope.nl-to-format-engaged only from a host implementing that fallback (a MAY)."
    ),
    (
        "conformance-debug-noise",
        Project,
        "vendor events (example.*), log.appended and variable.changed on demand: no upstream fixture is specified to emit a vendor event, which the debug-only rule for vendor events needs."
    ),
    (
        "conformance-all-tiers",
        Project,
        "events of every stream tier in one run (debug noise, a suspension, AI chunks): no upstream fixture combines them; each rule it serves has a twin case on conformance-stream-text."
    ),
    (
        "conformance-structured-output",
        Project,
        "AI envelopes programmed per run (configurable.ai.mockProvider envelope-program): upstream's envelope fixtures are programmed through a global test seam keyed by node id with provider stop reasons and raw text validated against a plain outputSchema only, which cannot state the envelope kinds, correlation ids and meta the E1-E5 and catalog rules need, nor a retry policy above the refusal ceiling, nor show a retry's budget and corrective fragment (no call journal): upstream's envelope fixtures serve the no-retry-after-refusal rule and the reliability rules their programs can state, this fixture the rest."
    ),
    (
        "conformance-envelope-contract",
        Project,
        "a node with an envelope contract (config.acceptedEnvelopes): no upstream fixture declares one."
    ),
);

static FIXTURES: LazyLock<Vec<Fixture>> = LazyLock::new(|| {
    FILES
        .iter()
        .map(|(id, catalogue, note, text)| Fixture {
            id,
            catalogue: *catalogue,
            note,
            definition: serde_json::from_str(text).unwrap_or_else(|e| {
                panic!("spec/fixtures/{id}.json is valid JSON (guarded by a test): {e}")
            }),
        })
        .collect()
});

/// The eight fixtures `CONTRACT.md` lists, which every surface-W host under test seeds; the
/// others in `spec/fixtures/` add depth, not coverage.
pub const CONTRACT_FIXTURES: [&str; 8] = [
    "conformance-noop",
    "conformance-multi-node",
    "conformance-delay",
    "conformance-failure",
    "conformance-cancellable",
    "conformance-approval",
    "conformance-stream-text",
    "conformance-debug-noise",
];

/// The fixtures of the AI-envelope sections (E1–E5, the catalog, reliability), whose fixtures
/// `CONTRACT.md` leaves to the work that built them: a structured-output node, and one with
/// an envelope contract. No fixture of [`CONTRACT_FIXTURES`] has such a node.
pub const ENVELOPE_FIXTURES: [&str; 2] = [
    "conformance-structured-output",
    "conformance-envelope-contract",
];

/// Every fixture, in a stable order.
pub fn all() -> &'static [Fixture] {
    &FIXTURES
}

/// A fixture by id.
pub fn get(id: &str) -> Option<&'static Fixture> {
    FIXTURES.iter().find(|f| f.id == id)
}

/// The ids of one catalogue's fixtures, in a stable order.
pub fn ids_of(catalogue: Catalogue) -> Vec<&'static str> {
    FIXTURES
        .iter()
        .filter(|f| f.catalogue == catalogue)
        .map(|f| f.id)
        .collect()
}

/// The catalogue a fixture id belongs to (`None`: a fixture neither catalogue ships here).
pub fn catalogue_of(id: &str) -> Option<Catalogue> {
    get(id).map(|f| f.catalogue)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fixture_parses_and_is_named_after_its_file() {
        assert_eq!(all().len(), FILES.len());
        for fixture in all() {
            assert_eq!(fixture.definition["id"], fixture.id);
            assert!(
                fixture.definition["nodes"]
                    .as_array()
                    .is_some_and(|n| !n.is_empty())
            );
        }
    }

    #[test]
    fn upstream_fixtures_are_upstream_shaped() {
        // Upstream's definitions carry a top-level description and version "1.0", manual
        // triggers, and tag themselves `conformance` (their own `metadata.tags`).
        for fixture in all().iter().filter(|f| f.catalogue == Catalogue::Upstream) {
            let d = &fixture.definition;
            assert_eq!(d["version"], "1.0", "{}", fixture.id);
            assert!(d["description"].is_string(), "{}", fixture.id);
            assert_eq!(d["triggers"][0]["type"], "manual", "{}", fixture.id);
            assert!(
                d["metadata"]["tags"]
                    .as_array()
                    .is_some_and(|t| t.iter().any(|t| t == "conformance")),
                "{}",
                fixture.id
            );
        }
        assert_eq!(
            catalogue_of("conformance-stream-text"),
            Some(Catalogue::Upstream)
        );
        assert_eq!(
            catalogue_of("conformance-debug-noise"),
            Some(Catalogue::Project)
        );
        assert_eq!(ids_of(Catalogue::Upstream).len(), 14);
    }

    #[test]
    fn every_file_in_the_directory_is_embedded() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        let mut on_disk: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| {
                e.unwrap()
                    .file_name()
                    .to_string_lossy()
                    .strip_suffix(".json")
                    .map(str::to_string)
            })
            .collect();
        on_disk.sort();
        let mut embedded: Vec<String> = FILES.iter().map(|(id, ..)| id.to_string()).collect();
        embedded.sort();
        assert_eq!(
            on_disk, embedded,
            "add new fixture files to FILES in spec/src/fixtures.rs"
        );
    }
}
