//! Surface W's HTTP layer: the router, the route handlers and extractors, discovery, the error
//! envelope as a response. Imports
//! services, the engine and infrastructure; nothing below imports it.

pub(crate) mod discovery;
pub(crate) mod era2_seam;
pub(crate) mod error_response;
pub(crate) mod extract;
pub(crate) mod feedback;
pub(crate) mod heartbeat_seam;
pub(crate) mod host_events;
pub(crate) mod idempotency;
pub(crate) mod journal;
pub(crate) mod poll;
pub(crate) mod router;
pub(crate) mod run_routes;
pub(crate) mod seam_program;
pub(crate) mod stream;
pub(crate) mod version;
pub(crate) mod workflow_routes;
