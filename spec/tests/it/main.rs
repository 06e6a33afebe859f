//! The `spec` crate's integration tests, one binary: the published schemas, their drift against
//! the types and their fidelity to upstream, the upstream-shaped corpus, and the requirement
//! registry (its loader and its drift against the normative documents).

mod fidelity;
mod published_schemas;
mod requirements_drift;
mod requirements_registry;
mod schema_drift;
mod upstream_corpus;
