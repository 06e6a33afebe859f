//! The known-bad wire: a layer around a router that rewrites requests on their way in (cursor
//! headers, query parameters) and answers on their way out (statuses, JSON members, the frames
//! of an event stream), present only when a wire defect is on. The handlers behind it answer
//! the clean way; each rewrite is one defect's one site.

mod address;
mod exchange;
mod json;
mod layer;
mod request;
mod rewrites;
mod seed;
mod sse;

pub(crate) use address::addressed;
pub(crate) use layer::wire;
