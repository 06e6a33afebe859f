//! Surface W's services: what a route asks for (create, read, cancel and resume runs; the event
//! stream and poll; feedback; heartbeats, schedules and host events; crash recovery) over the
//! shared state [`state::WState`]. Imports the engine and infrastructure.

pub(crate) mod feedback;
pub(crate) mod heartbeat;
pub(crate) mod host_bus;
pub(crate) mod poll;
pub(crate) mod recovery;
pub(crate) mod requested_ticks;
pub(crate) mod runs;
pub(crate) mod scheduling;
pub(crate) mod state;
pub(crate) mod stream;
pub(crate) mod stream_params;
pub(crate) mod subscribers;
