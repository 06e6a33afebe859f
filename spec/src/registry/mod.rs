//! The registries of the two protocols, as data (`spec/registry/*.json`) with typed access.
//!
//! Each file is embedded at compile time and parsed once; a test guards that every file parses,
//! so the accessors never fail at run time.

mod error_codes;
mod event_types;
mod orgs;

pub use error_codes::{ErrorCodeRegistry, ExecutionErrorCode, OpenWopErrorCode, error_codes};
pub use event_types::{AfterTerminal, EventTypeEntry, EventTypeRegistry, StreamTier, event_types};
pub use orgs::{OrgRegistry, RegisteredOrg, TypeNameVerdict, orgs};
