//! Surface X: the execution protocol (`POST /v1/executions`, the execution event log, cursors,
//! results, cancellation) over provider adapters.
//!
//! - [`handlers`]: the routes; [`errors`]: the one error-to-response mapping.
//! - `admission`: validation in the contract's order; `idempotency`: fingerprint, binding,
//!   replay; `routing`: candidates and the attempt plan; `driver`: the attempt loop, deadline,
//!   cancel; `log_writer`: event rendering, the usage gate, capacity; `fold`: the snapshot;
//!   `cursor`: `after` / `Last-Event-ID`.
//! - [`Executions`]: the service the handlers and drivers share; [`ExecutionConfig`]: the one
//!   configuration they read.

pub(crate) mod admission;
pub mod choices;
pub mod config;
mod cursor;
mod driver;
pub mod errors;
mod fold;
pub mod handlers;
mod idempotency;
mod log_writer;
pub(crate) mod routing;
pub(crate) mod service;

pub use config::ExecutionConfig;
pub use errors::ApiError;
pub use handlers::router;
pub use service::{Executions, PROTOCOL_VERSION};
