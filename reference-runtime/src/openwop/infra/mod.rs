//! Surface W's shared infrastructure: configuration (with the surface's host choices), auth,
//! ids, the error type every layer refuses with, the log projection and the recorder, era-2
//! translation. Imports nothing of surface W above it.

pub(crate) mod auth;
pub(crate) mod choices;
pub(crate) mod config;
pub(crate) mod envelope_settings;
pub(crate) mod era2;
pub(crate) mod error;
pub(crate) mod event_draft;
pub(crate) mod ids;
pub(crate) mod projection;
pub(crate) mod recorder;
