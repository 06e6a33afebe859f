//! The workspace's own module and file graphs.

use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn listing(cycles: &[xtask::Cycle]) -> String {
    cycles
        .iter()
        .map(|c| {
            let edges: Vec<String> = c
                .edges
                .iter()
                .map(|(f, t, why)| format!("  {f} -> {t} ({why})"))
                .collect();
            format!("{}\n{}", c.members.join(", "), edges.join("\n"))
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

#[test]
fn the_workspace_has_no_import_cycle() {
    let graph = xtask::module_graph(&workspace()).unwrap();
    assert!(
        graph.node_count() > 100,
        "the reader found the crates' modules"
    );
    let cycles = graph.cycles();
    assert!(
        cycles.is_empty(),
        "import cycles (`cargo module-graph --edges`):\n{}",
        listing(&cycles)
    );
}

/// TEMPORARY: the source folders whose file-level import cycles are not fixed yet (issue 26).
/// Each entry is removed once its folder has no cycle between files; the list only shrinks.
const FILE_CYCLES_NOT_YET_FIXED: &[&str] = &[
    "harness/src/",
    "harness/cli/src/",
    // overlay.rs's unit tests validate through schema.rs, which applies the overlays.
    "spec/src/overlay.rs",
    "spec/src/schema.rs",
    // bench_publisher.rs's tests build the app through runtime.rs, which installs the publisher.
    "reference-runtime/src/bench_publisher.rs",
    "reference-runtime/src/runtime.rs",
];

#[test]
fn the_workspace_has_no_import_cycle_between_files() {
    let graph = xtask::file_graph(&workspace()).unwrap();
    assert!(
        graph.node_count() > 100,
        "the reader found the crates' files"
    );
    let cycles: Vec<xtask::Cycle> = graph
        .cycles()
        .into_iter()
        .filter(|c| {
            !c.members
                .iter()
                .all(|m| FILE_CYCLES_NOT_YET_FIXED.iter().any(|p| m.starts_with(p)))
        })
        .collect();
    assert!(
        cycles.is_empty(),
        "import cycles between files (`cargo module-graph --files --edges`):\n{}",
        listing(&cycles)
    );
}

/// The most imports surface W's layers may have from a lower layer to a higher one (issue 26's
/// bar is 5): none is left (`envelopes.supported_kinds` is checked against the envelope
/// catalog by the runtime's `Config::validate`, outside the layers, not by `infra/config.rs`).
const SURFACE_W_UPWARD_IMPORTS_AT_MOST: usize = 0;

#[test]
fn surface_w_imports_run_down_its_layers() {
    let graph = xtask::file_graph(&workspace()).unwrap();
    let layers = xtask::SURFACE_W;
    assert_eq!(
        layers.unassigned(&graph),
        Vec::<&str>::new(),
        "every file of {} belongs to a layer (xtask/src/layers.rs)",
        layers.folder
    );
    assert!(
        layers.imports(&graph).len() > 50,
        "the reader found the surface's imports"
    );
    let upward = layers.upward(&graph);
    let listing: Vec<String> = upward
        .iter()
        .map(|i| format!("  {} -> {} ({})", i.from, i.to, i.why))
        .collect();
    assert!(
        upward.len() <= SURFACE_W_UPWARD_IMPORTS_AT_MOST,
        "{} imports run upward through surface W's layers (at most {}):\n{}",
        upward.len(),
        SURFACE_W_UPWARD_IMPORTS_AT_MOST,
        listing.join("\n")
    );
}
