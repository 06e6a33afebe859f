//! The workspace's own module graph.

use std::path::Path;

#[test]
fn the_workspace_has_no_import_cycle() {
    let graph = xtask::module_graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("..")).unwrap();
    assert!(
        graph.node_count() > 100,
        "the reader found the crates' modules"
    );
    let cycles = graph.cycles();
    let listing: Vec<String> = cycles
        .iter()
        .map(|c| {
            let edges: Vec<String> = c
                .edges
                .iter()
                .map(|(f, t, why)| format!("  {f} -> {t} ({why})"))
                .collect();
            format!("{}\n{}", c.members.join(", "), edges.join("\n"))
        })
        .collect();
    assert!(
        cycles.is_empty(),
        "import cycles (`cargo module-graph --edges`):\n{}",
        listing.join("\n\n")
    );
}
