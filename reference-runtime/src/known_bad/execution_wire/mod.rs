//! The known-bad execution layer: surface X's defects applied at the boundary with the service
//! at hand (the `EXECUTION_WIRE` table): a layer around surface X's router, present only when
//! one of them is on, that reads what it needs through the service (its log hub, providers,
//! credentials and configuration). The service behind it answers the clean way.

mod body;
mod exchange;
mod findings;
mod json;
mod keys;
mod layer;
mod manifest;
mod members;
mod probe;
mod result;
mod rewrites;
mod state;
mod submission;

pub(crate) use layer::execution_wire;
#[cfg(test)]
pub(super) use rewrites::EXECUTION_WIRE;
