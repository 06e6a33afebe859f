//! Durable storage of event logs behind the [`EventStore`] trait.
//!
//! A store persists what the [`crate::log::LogHub`] decides: it never assigns sequences, never
//! judges terminal rules and never notifies subscribers. Implementations: [`MemoryEventStore`]
//! (the default; nothing survives the process) and `SqliteEventStore` (`sqlite:PATH`; logs,
//! idempotency claims and key-value state survive a restart).
//!
//! Invariant: append-only. No method edits or deletes an event.

mod event_store;
mod memory;
mod sqlite;
mod view;

pub use event_store::{ClaimOutcome, EventStore, LogRecord, StoreError, StoredEvent, Surface};
pub use memory::MemoryEventStore;
pub use sqlite::{SqliteEventStore, SqliteSync};
pub use view::StoreView;
