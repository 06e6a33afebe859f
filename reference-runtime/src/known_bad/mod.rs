//! The seam through which known-bad behaviour enters the runtime.
//!
//! A clean runtime carries [`KnownBad::clean`]; a known-bad one (`--defect NAME`) carries the
//! policy built once from its defect set, and only this module reads the set. A defect enters
//! in one of these ways:
//!
//! - a rewrite of the wire (`wire/`): a status, a request's cursor, a member of an answer or a
//!   refusal, the frames of an event stream; a layer wrapped around a router only when such a
//!   defect is on;
//! - a rewrite of a log's events as they are recorded (`run_record.rs` for surface W's
//!   recorder, `execution_record.rs` for surface X's log writer): a member dropped or retyped,
//!   an event dropped, repeated or held back, an id cut short, where the event says enough;
//!   present only in a known-bad runtime's recorders, so the clean engine records the clean
//!   event and every read path agrees;
//! - a rewrite of surface X's exchanges that reads the service behind them
//!   (`execution_wire/`): a manifest's credential, a materialised result, a provider probed
//!   before a refusal; a layer around surface X's router only when such a defect is on;
//! - a filter of what the log hub delivers to a live log's subscribers (`delivery.rs`);
//! - a rewrite of what passes between a provider adapter and its provider
//!   (`provider_exchange.rs`): the request sent, the failure an error answer maps to;
//! - a reader of era-2 logs (`era2_reading.rs`) handed to surface W's state;
//! - a decision of the engine or a service (`policy.rs`): what only the code deciding it knows
//!   (an attempt, a budget, an admission, a heartbeat's evaluation, what a stream selects).
//!
//! Each defect is behind exactly one row of one table (`decisions.rs` declares them;
//! `wire/rewrites.rs`'s test guards them).

mod body;
mod decisions;
mod delivery;
mod emission;
mod era2_reading;
mod execution_record;
pub(crate) mod execution_wire;
mod policy;
mod provider_exchange;
mod run_record;
pub(crate) mod wire;

pub(crate) use execution_record::ExecutionRecordRewrites;
pub use policy::KnownBad;
pub(crate) use run_record::RunRecordRewrites;
