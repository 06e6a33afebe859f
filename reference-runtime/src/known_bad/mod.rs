//! The seam through which known-bad behaviour enters the runtime.
//!
//! A clean runtime carries [`KnownBad::clean`]; a known-bad one (`--defect NAME`) carries the
//! policy built once from its defect set. Production code never asks which defect is on: it
//! asks the policy a decision (`refusal_event_omitted`, `event_ids_short`, …), and only this
//! module reads the defect set. A defect that changes only what goes over the wire (a status, a
//! request's cursor, a member of an answer or a refusal, the frames of an event stream) is no
//! decision of the runtime: it is a rewrite of the wire layer (`wire/`), wrapped around a
//! router only when such a defect is on. Each defect is behind exactly one decision or one
//! rewrite (`decisions.rs` declares both tables; `wire/rewrites.rs`'s test guards them).

mod decisions;
mod policy;
mod wire;

pub use policy::KnownBad;
pub use wire::wire;
