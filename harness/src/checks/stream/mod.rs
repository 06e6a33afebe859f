//! Checks on event logs, one concept per module: validity ([`validity`]), sequences
//! ([`sequence`]), the exclusive cursor ([`cursor`]), poll's `lastSequence`
//! ([`last_sequence`]), terminal rules ([`terminal`]), ordering ([`order`], by
//! [`EventSelector`](crate::event_selector::EventSelector)s), SSE frames ([`frames`]), how the stream was held
//! ([`connection`]), materialisation ([`fold`]), event sets ([`event_set`]) and arrival spacing
//! ([`gaps`]); a stream not kept whole is judged with its fold ([`whole`]). What they share, reading a step's events, is in `observed`.

use observed::{observed_of, render_types};

/// The step's response and its observed events, or (from the calling check) the failure
/// saying why there is none.
macro_rules! observed {
    ($out:expr, $step:expr) => {
        match super::observed_of($out, $step) {
            Ok(pair) => pair,
            Err(failure) => return *failure,
        }
    };
}

mod connection;
mod cursor;
mod event_set;
mod fold;
mod frames;
mod gaps;
mod last_sequence;
mod observed;
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
pub(crate) use terminal::is_terminal;
pub(super) use terminal::terminal;
pub(super) use validity::events_valid;
pub(super) use whole::whole_stream;
