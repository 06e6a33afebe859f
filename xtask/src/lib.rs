//! Development commands for this workspace. `cargo module-graph` reads every crate's sources,
//! builds the module dependency graph and prints its import cycles (strongly connected
//! components); `tests/it` fails when there is one.

pub mod graph;
pub mod modules;
pub mod workspace;

pub use graph::{Cycle, Graph};
pub use workspace::{WorkspaceError, crate_roots, file_graph, module_graph};
