//! `cargo module-graph [WORKSPACE_DIR]`: prints the workspace's module dependency graph's import
//! cycles and exits 1 when there is one. `--edges` also prints every edge of each cycle with one
//! path that makes it; `--files` uses the graph of files instead of modules (a path through a
//! `mod.rs` that re-exports the name is an edge to that `mod.rs`).

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut edges = false;
    let mut files = false;
    let mut dir = None;
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--edges" => edges = true,
            "--files" => files = true,
            "-h" | "--help" => {
                println!("usage: cargo module-graph [--edges] [--files] [WORKSPACE_DIR]");
                return ExitCode::SUCCESS;
            }
            other => dir = Some(PathBuf::from(other)),
        }
    }
    let dir = dir.unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".."));
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
