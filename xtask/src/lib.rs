//! Development commands for this workspace. `cargo module-graph` reads every crate's sources,
//! builds the module (or, with `--files`, the file) dependency graph and prints its import
//! cycles (strongly connected components); `tests/it` fails when there is one, and when an
//! import runs upward through the layers declared in [`layers`].

pub mod graph;
pub mod layers;
pub mod modules;
pub mod workspace;

pub use graph::{Cycle, Graph};
pub use layers::{Import, Layers, SURFACE_W};
pub use workspace::{WorkspaceError, crate_roots, file_graph, module_graph};
