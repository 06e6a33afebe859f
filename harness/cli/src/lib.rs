//! What the `conformance` command adds to the harness library: the built-in target (the
//! reference runtime and the fake providers started in-process) and the kill matrix that runs
//! the corpus against it with each known defect switched on.
//!
//! - [`corpus`]: the corpus embedded in the binary (cases and spec data), its version and
//!   digest.
//! - [`launch`]: the built-in target; the only module that names `reference_runtime`, through
//!   the runtime's root launching API only.
//! - [`selftest`]: the kill matrix.
//! - [`tolerance`]: the tolerance matrix: the corpus against every divergent profile.
//! - [`temp_store`]: temporary durable stores, removed on drop or by the next start after a
//!   `kill -9`.
//! - [`try_case`]: one new or edited case against the standard runtime, every profile and every
//!   defect (`conformance try`).
//! - [`watchdog`]: ends a long-running command that makes no progress, with a diagnostic.
//!
//! The harness library (`harness`) judges any host over HTTP and never links the runtime.

pub mod corpus;
pub mod launch;
pub mod selftest;
pub mod temp_store;
pub mod tolerance;
pub mod try_case;
pub mod watchdog;
