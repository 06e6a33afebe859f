//! The workspace's own module and file graphs.

use std::path::PathBuf;

/// The workspace root, read from the directory cargo runs the test in (it
/// sets `CARGO_MANIFEST_DIR` at run time), so a test binary built in another
/// checkout that shares the target directory still reads this one.
fn workspace() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")))
        .join("..")
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
            format!(
                "cycle of {}: {}\n{}",
                c.members.len(),
                c.members.join(", "),
                edges.join("\n")
            )
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

/// How such a cycle is usually broken, for the failure message.
const HOW_TO_BREAK_A_FILE_CYCLE: &str = "\
A file cycle is usually broken by one of:
  - importing a name from the file that defines it, not through a `mod.rs` (or another parent)
    that re-exports it and also uses the importing file;
  - moving an item that children share out of the parent that calls them into its own file,
    which the children import directly (the parent only declares and re-exports);
  - moving a unit test that goes through a file depending back on this one into that file's
    tests or the crate's `tests/it`.";

#[test]
fn the_workspace_has_no_import_cycle_between_files() {
    let graph = xtask::file_graph(&workspace()).unwrap();
    assert!(
        graph.node_count() > 100,
        "the reader found the crates' files"
    );
    let cycles = graph.cycles();
    assert!(
        cycles.is_empty(),
        "{} import cycle(s) between files (`cargo module-graph --files --edges`), each as its \
         files and the imports between them:\n\n{}\n\n{HOW_TO_BREAK_A_FILE_CYCLE}",
        cycles.len(),
        listing(&cycles)
    );
}

/// Surface W's imports run from a higher layer to a lower one only (issue 26's bar allowed 5
/// upward; none is left: `envelopes.supported_kinds` is checked against the envelope catalog by
/// the runtime's `Config::validate`, outside the layers, not by `infra/config.rs`).
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
        upward.is_empty(),
        "{} import(s) run upward through surface W's layers (none may):\n{}",
        upward.len(),
        listing.join("\n")
    );
}
