//! The `spec` crate's integration tests, one binary: the published schemas and the overlays
//! they carry, their drift against the types and their fidelity to upstream, the upstream-shaped
//! corpus, and the requirement registry's loader. The registry's drift against the normative
//! documents is its own binary (`tests/requirements_drift.rs`, libtest-mimic: ignored with the
//! reason when the documents are unavailable).

mod fidelity;
mod fidelity_comparer;
mod overlays;
mod published_schemas;
mod requirements_registry;
mod schema_drift;
mod upstream_corpus;
