//! The built-in reference host: both protocol surfaces over axum, one event store, provider
//! adapters.
//!
//! See ARCHITECTURE.md for the module map.

pub mod choices;
pub mod clock;
pub mod config;
pub mod defects;
pub mod execution;
pub mod log;
pub mod openwop;
pub mod providers;
pub mod redact;
pub mod runtime;
pub mod sse;
pub mod store;
