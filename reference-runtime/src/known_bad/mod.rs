//! The seam through which known-bad behaviour enters the runtime.
//!
//! A clean runtime carries [`KnownBad::clean`]; a known-bad one (`--defect NAME`) carries the
//! policy built once from its defect set. Production code never asks which defect is on: it
//! asks the policy a decision (`refusal_event_skipped`, `batch_id_lowest`, …), and only this
//! module reads the defect set. Each defect is behind exactly one decision (`policy.rs`, whose
//! test guards it).

mod policy;

pub use policy::KnownBad;
