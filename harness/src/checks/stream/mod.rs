//! Checks on event logs, one concept per module: validity ([`validity`]), sequences
//! ([`sequence`]), the exclusive cursor ([`cursor`]), poll's `lastSequence`
//! ([`last_sequence`]), terminal rules ([`terminal`]), ordering ([`order`], by
//! [`EventSelector`](crate::event_selector::EventSelector)s), SSE frames ([`frames`]), how the
//! stream was held ([`connection`], the keep-alive rule in [`keepalive`]), materialisation
//! ([`fold`]), event sets ([`event_set`]) and arrival spacing ([`gaps`]); a stream not kept whole
//! is judged with its fold ([`whole`]). What they share, reading a step's events, is in
//! [`observed`].

// First: its `observed!` macro is used by the modules declared after it.
#[macro_use]
mod observed;

mod connection;
mod cursor;
mod event_set;
mod fold;
mod frames;
mod gaps;
mod keepalive;
mod last_sequence;
mod order;
mod sequence;
mod terminal;
mod validity;
mod whole;

pub(super) use connection::{closed_by_server, keepalive};
pub(super) use cursor::exclusive_after;
pub(super) use event_set::{events_equal, events_include, every_event, listed_types_observed};
pub(super) use fold::fold_equals;
pub(super) use frames::frames;
pub(super) use gaps::event_gaps;
pub(super) use last_sequence::last_sequence;
pub(super) use order::order;
pub(super) use sequence::sequence;
pub(super) use terminal::terminal;
pub(crate) use terminal::{is_terminal, is_terminal_snapshot};
pub(super) use validity::events_valid;
pub(super) use whole::whole_stream;
