//! Checks: pure functions from a recorded transcript to verdicts.
//!
//! [`evaluate`] judges one check of a case against what a step recorded; it does no I/O. The
//! vocabulary is closed (the variants of [`CheckKind`](crate::case::CheckKind)); each kind is documented on its variant
//! and in `cases/README.md`.

mod context;
mod dispatch;
pub(crate) mod events;
pub(crate) mod json_match;
#[cfg(test)]
mod open_point_tests;
mod provider_calls;
mod response;
mod stream;
#[cfg(test)]
mod tests;

pub(crate) use context::EvalContext;
pub(crate) use dispatch::evaluate;
pub(crate) use json_match::json_condition;
pub(crate) use response::{find_text, preview};
pub(crate) use stream::{is_terminal, is_terminal_snapshot};
