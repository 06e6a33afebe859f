//! `cargo module-graph [WORKSPACE_DIR]`: prints the workspace's module dependency graph's import
//! cycles and exits 1 when there is one. `--edges` also prints every edge of each cycle with one
//! path that makes it; `--files` uses the graph of files instead of modules (a path through a
//! `mod.rs` that re-exports the name is an edge to that `mod.rs`); `--layers` prints surface W's
//! layers (files per layer, imports, the imports running upward) and exits 1 on an upward one.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut edges = false;
    let mut files = false;
    let mut layers = false;
    let mut dir = None;
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--edges" => edges = true,
            "--files" => files = true,
            "--layers" => layers = true,
            "-h" | "--help" => {
                println!(
                    "usage: cargo module-graph [--edges] [--files | --layers] [WORKSPACE_DIR]"
                );
                return ExitCode::SUCCESS;
            }
            other => dir = Some(PathBuf::from(other)),
        }
    }
    let dir = dir.unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".."));
    if layers {
        return print_layers(&dir, &xtask::SURFACE_W);
    }
    let graph = if files {
        xtask::file_graph(&dir)
    } else {
        xtask::module_graph(&dir)
    };
    let graph = match graph {
        Ok(g) => g,
        Err(e) => {
            eprintln!("module-graph: {e}");
            return ExitCode::from(2);
        }
    };
    let cycles = graph.cycles();
    println!(
        "{} {}, {} edges, {} import cycle(s)",
        graph.node_count(),
        if files { "files" } else { "modules" },
        graph.edge_count(),
        cycles.len()
    );
    for cycle in &cycles {
        println!("cycle of {}:", cycle.members.len());
        for m in &cycle.members {
            println!("  {m}");
        }
        if edges {
            for (from, to, why) in &cycle.edges {
                println!("    {from} -> {to}   ({why})");
            }
        }
    }
    if cycles.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn print_layers(dir: &std::path::Path, layers: &xtask::Layers) -> ExitCode {
    let graph = match xtask::file_graph(dir) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("module-graph: {e}");
            return ExitCode::from(2);
        }
    };
    for (prefix, name) in layers.table {
        let files = graph
            .names()
            .iter()
            .filter(|f| {
                f.starts_with(layers.folder)
                    && layers.rank(f).map(|r| layers.table[r].0) == Some(*prefix)
            })
            .count();
        println!("{name:<10} {files:>3} file(s)  {prefix}");
    }
    let unassigned = layers.unassigned(&graph);
    for file in &unassigned {
        println!("no layer: {file}");
    }
    let upward = layers.upward(&graph);
    println!(
        "{} imports between files of {}, {} upward",
        layers.imports(&graph).len(),
        layers.folder,
        upward.len()
    );
    for i in &upward {
        println!("  {} -> {}   ({})", i.from, i.to, i.why);
    }
    if upward.is_empty() && unassigned.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
