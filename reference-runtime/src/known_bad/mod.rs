//! The seam through which known-bad behaviour enters the runtime.
//!
//! A clean runtime carries [`KnownBad::clean`]; a known-bad one (`--defect NAME`) carries the
//! policy built once from its defect set. Production code never asks which defect is on: it
//! asks the policy a decision (`refusal_event_skipped`, `batch_id_lowest`, …), and only this
//! module reads the defect set. Each defect is behind exactly one decision (`policy.rs`, whose
//! test guards it). The decisions that change only what goes over the wire (a status, a member
//! of an answer or a refusal) are taken by a response layer, `wire.rs`, wrapped around a router
//! only when the runtime runs known-bad; the rest are the engine's and services' decisions.

mod policy;
mod wire;

pub use policy::KnownBad;
pub use wire::wire;
