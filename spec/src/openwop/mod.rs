//! Surface W: the OpenWOP v2 run events chapter (`../shared/spec-seeds/002_…txt`) as serde
//! types, with the concrete endpoints of `CONTRACT.md` § "Surface W".

mod agent_ref;
mod budget_policy;
mod discovery;
mod discovery_metadata;
mod error;
mod host_event;
pub mod ids;
pub mod payloads;
mod poll;
mod run_event;
mod runs;
mod snapshot;
mod stream_mode;
mod subject;

pub use agent_ref::{AgentRef, ModelClass};
pub use budget_policy::{BudgetPolicy, OnExhaustion};
pub use discovery::{
    CORE_FAMILIES, CapabilityRecord, CapabilityStatus, Discovery, FAMILIES_NAMED_ELSEWHERE,
    ForceEngineVersionRange, Implementation, Testing, VERSION_PATTERN, WitnessClass, family_facets,
    family_record_name, family_records,
};
pub use discovery_metadata::{
    AuthScoped, AuthScopedMode, Compliance, ComplianceClass, ConformanceBlock,
    DiscoveryAdvertisement, MaskingMode, Observability, OtelAdvertisement, OtlpProtocol,
    SigningKey, TestSeams,
};
pub use error::{ErrorEnvelope, details_conditionals};
pub use host_event::{
    CHAPTER_HOST_EVENT_TYPES, HOST_EVENT_TYPE_PATTERN, HeartbeatEvaluated, HeartbeatStateChanged,
    HeartbeatStatus, HostEvent, HostEventDelivery,
};
pub use poll::{MAX_EXACT_CURSOR, MAX_FIFTEEN_DIGIT_CURSOR, PollResponse};
pub use run_event::{
    EVENT_ID_PATTERN, RUN_ID_PATTERN, RunEventDoc, SCHEMA_VERSION, VENDOR_TYPE_PATTERN,
    decode_run_id_path_segment, encode_run_id_for_path,
};
pub use runs::{
    AiOptions, CONFIGURABLE_EXTENSIONS_KEY_PATTERN, CancelRunResponse, Configurable,
    CreateRunRequest, CreateRunResponse, Distillation, MockProvider, ReasoningVerbosity,
    ResolveInterruptRequest, RunLimits,
};
pub use snapshot::{
    CompensationStatus, CostTokens, EXTENSIONS_KEY_PATTERN, OpenwopCost, RunError, RunMetrics,
    RunSnapshot, RunStatus,
};
pub use stream_mode::{STREAM_MODE_PATTERN, StreamMode, StreamModeError, StreamModeSelection};
pub use subject::{
    KeyClass, MAX_ACTOR_DEPTH, Owner, Subject, SubjectError, SubjectKind, SubjectLane,
};

/// The `OpenWOP-Version` a v2 host answers with.
pub const PROTOCOL_VERSION: &str = "2.0";

/// The `eventLogSchemaVersion` of logs a v2 host writes.
pub const EVENT_LOG_SCHEMA_VERSION: u32 = 3;
