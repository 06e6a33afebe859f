//! Surface W's engine: the run loop ([`runner`]), the seeded workflows, the node context, the
//! node kinds (the AI node in [`ai`], the envelope node kinds in [`envelopes`]), usage and
//! pricing. Imports infrastructure only.

pub(crate) mod ai;
pub(crate) mod envelopes;
pub(crate) mod live;
pub(crate) mod node_context;
pub(crate) mod pricing;
pub(crate) mod runner;
pub(crate) mod secrets;
pub(crate) mod usage;
pub(crate) mod workflow;
