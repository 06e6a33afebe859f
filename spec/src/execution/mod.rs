//! Surface X: the execution protocol (`../shared/spec-seeds/000_…txt`) as serde types.
//!
//! Every type here serialises to exactly the wire shape of `CONTRACT.md` § "Surface X". The
//! published schemas in `spec/schema/execution-*.json` are generated from them.

mod error;
mod event;
mod request;
mod resources;
mod usage;

pub use error::{ErrorCode, ErrorEnvelope, PortableError};
pub use event::{
    Artifact, EventBody, ExecutionEvent, ExecutionEventType, ExecutionStatus, ProgressPhase, Target,
};
pub use request::{
    ExecutionRequest, IDEMPOTENCY_KEY_MAX_LEN, InputPart, MAX_REQUEST_BYTES, MediaRef, Modality,
    Requirements, Routing, RoutingStrategy,
};
pub use resources::{
    ExecutionResult, ExecutionSnapshot, ExecutionSubmission, MaterialisedOutput,
    MaterialisedToolCall, ModelCapability, ProviderLimits, ProviderManifest, ProviderManifests,
    RuntimeInfo, RuntimeState, TextResult,
};
pub use usage::{CUSTOM_UNIT_PATTERN, KNOWN_UNITS, UsageFact, UsageSource, is_valid_unit};
