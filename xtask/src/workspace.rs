//! The workspace's crates (every member's library and binary targets) and their module graph.

use std::path::{Path, PathBuf};

use crate::graph::Graph;
use crate::modules::{CrateModules, ReadError};

/// Why the workspace could not be read.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    /// A manifest could not be read or parsed.
    #[error("manifest {path}: {reason}")]
    Manifest {
        /// The manifest.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
    /// A crate's sources could not be read.
    #[error(transparent)]
    Sources(#[from] ReadError),
}

/// One crate target: its name as code writes it and its root file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrateRoot {
    /// `reference_runtime`, or `reference_runtime[bin reference-runtime]` for a binary target.
    pub name: String,
    /// `src/lib.rs`, `src/main.rs`, ….
    pub root: PathBuf,
}

fn manifest(path: &Path) -> Result<toml::Table, WorkspaceError> {
    let text = std::fs::read_to_string(path).map_err(|e| WorkspaceError::Manifest {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })?;
    text.parse::<toml::Table>()
        .map_err(|e| WorkspaceError::Manifest {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })
}

/// Every library and binary target of the workspace rooted at `workspace`.
pub fn crate_roots(workspace: &Path) -> Result<Vec<CrateRoot>, WorkspaceError> {
    let root_manifest = workspace.join("Cargo.toml");
    let table = manifest(&root_manifest)?;
    let members: Vec<String> = table
        .get("workspace")
        .and_then(|w| w.get("members"))
        .and_then(|m| m.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    let mut roots = Vec::new();
    for member in members {
        let dir = workspace.join(&member);
        let table = manifest(&dir.join("Cargo.toml"))?;
        let package = table
            .get("package")
            .and_then(|p| p.get("name"))
            .and_then(|n| n.as_str())
            .unwrap_or(&member)
            .to_string();
        let lib_name = package.replace('-', "_");
        let lib = table
            .get("lib")
            .and_then(|l| l.get("path"))
            .and_then(|p| p.as_str())
            .map(|p| dir.join(p))
            .unwrap_or_else(|| dir.join("src/lib.rs"));
        if lib.is_file() {
            roots.push(CrateRoot {
                name: lib_name.clone(),
                root: lib,
            });
        }
        let mut bins: Vec<(String, PathBuf)> = table
            .get("bin")
            .and_then(|b| b.as_array())
            .into_iter()
            .flatten()
            .filter_map(|b| {
                let name = b.get("name")?.as_str()?.to_string();
                let path = b
                    .get("path")
                    .and_then(|p| p.as_str())
                    .map(|p| dir.join(p))
                    .unwrap_or_else(|| dir.join(format!("src/bin/{name}.rs")));
                Some((name, path))
            })
            .collect();
        let main = dir.join("src/main.rs");
        if main.is_file() && !bins.iter().any(|(_, p)| *p == main) {
            bins.push((package.clone(), main));
        }
        if let Ok(entries) = std::fs::read_dir(dir.join("src/bin")) {
            let mut extra: Vec<PathBuf> =
                entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
            extra.sort();
            for path in extra {
                let file = if path.is_dir() {
                    path.join("main.rs")
                } else {
                    path.clone()
                };
                if file.extension().is_some_and(|e| e == "rs")
                    && file.is_file()
                    && !bins.iter().any(|(_, p)| *p == file)
                {
                    let name = path
                        .file_stem()
                        .unwrap_or_default()
                        .to_string_lossy()
                        .to_string();
                    bins.push((name, file));
                }
            }
        }
        for (name, root) in bins {
            roots.push(CrateRoot {
                name: format!("{lib_name}[bin {name}]"),
                root,
            });
        }
    }
    Ok(roots)
}

/// The module graph of every crate target of the workspace (crates do not share nodes).
pub fn module_graph(workspace: &Path) -> Result<Graph, WorkspaceError> {
    let mut graph = Graph::default();
    for root in crate_roots(workspace)? {
        CrateModules::read(&root.name, &root.root)?.add_to(&mut graph);
    }
    Ok(graph)
}

/// The file graph of every crate target of the workspace, each file named by its path relative
/// to `workspace` (`reference-runtime/src/openwop/mod.rs`); see
/// [`CrateModules::add_files_to`]. A file two targets share (a binary that declares a library
/// file as its module) is one node.
pub fn file_graph(workspace: &Path) -> Result<Graph, WorkspaceError> {
    let mut graph = Graph::default();
    for root in crate_roots(workspace)? {
        CrateModules::read(&root.name, &root.root)?.add_files_to(&mut graph, |file| {
            file.strip_prefix(workspace)
                .unwrap_or(file)
                .to_string_lossy()
                .replace('\\', "/")
        });
    }
    Ok(graph)
}
