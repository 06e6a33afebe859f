//! The fixture workflow definitions a surface-W host seeds under their ids and lists in
//! discovery `fixtures[]` (`spec/fixtures/*.json`).

use std::sync::LazyLock;

use serde_json::Value;

/// One fixture: its id and its workflow definition.
#[derive(Debug, Clone, PartialEq)]
pub struct Fixture {
    /// The workflow id.
    pub id: &'static str,
    /// The workflow definition (OpenWOP `workflow-definition` shape).
    pub definition: Value,
}

macro_rules! fixture_files {
    ($($id:literal),* $(,)?) => {
        [$(($id, include_str!(concat!("../fixtures/", $id, ".json")))),*]
    };
}

const FILES: [(&str, &str); 11] = fixture_files!(
    "conformance-noop",
    "conformance-multi-node",
    "conformance-delay",
    "conformance-failure",
    "conformance-cancellable",
    "conformance-approval",
    "conformance-stream-text",
    "conformance-debug-noise",
    "conformance-all-tiers",
    "conformance-structured-output",
    "conformance-envelope-contract",
);

static FIXTURES: LazyLock<Vec<Fixture>> = LazyLock::new(|| {
    FILES
        .iter()
        .map(|(id, text)| Fixture {
            id,
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
    fn every_file_in_the_directory_is_embedded() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        let mut on_disk: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| {
                e.unwrap()
                    .file_name()
                    .to_string_lossy()
                    .trim_end_matches(".json")
                    .to_string()
            })
            .collect();
        on_disk.sort();
        let mut embedded: Vec<String> = FILES.iter().map(|(id, _)| id.to_string()).collect();
        embedded.sort();
        assert_eq!(
            on_disk, embedded,
            "add new fixture files to FILES in spec/src/fixtures.rs"
        );
    }
}
