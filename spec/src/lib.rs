//! The machine-readable spec of the two protocols this project certifies.
//!
//! - [`execution`]: serde types of the execution protocol (surface X): the request,
//!   the event log, errors, usage facts and the resources of `/v1/executions`.
//! - [`openwop`]: serde types of the OpenWOP v2 run events surface (surface W): `RunEventDoc`,
//!   payloads, poll, snapshots, the flat error envelope, discovery.
//! - [`registry`]: the event-type, vendor-org and error-code registries, loaded from the data
//!   files under `spec/registry/`.
//! - [`requirements`]: the requirement registry (`spec/requirements.json`): one record per
//!   normative statement of both documents.
//! - [`schema`]: the published JSON Schemas (`spec/schema/*.json`), generated from these types by
//!   `cargo run -p spec --bin generate-schemas`, and compiled validators for them.
//! - [`overlay`]: the project-only tightenings applied to the generated schemas, each with the
//!   seed sentence that justifies it.
//! - [`open_points`]: the open-points registry (`spec/open-points.json`): what the seeds leave
//!   open, the options a host may take, and which built-in profile takes which.
//! - [`fixtures`]: the fixture workflow definitions a surface-W host seeds (`spec/fixtures/`).
//! - [`wire_format`]: the wire formats a model provider speaks, shared by the harness, the fake
//!   providers and the reference runtime.
//!
//! The crate does no I/O at run time: every data file is embedded with `include_str!`, so the
//! harness binary carries the spec it judges against.
//!
//! ```
//! use spec::execution::{ExecutionRequest, InputPart};
//!
//! let request: ExecutionRequest = serde_json::from_value(serde_json::json!({
//!     "ability": "text-generation",
//!     "input": [{"type": "text", "text": "hello"}]
//! }))
//! .unwrap();
//! assert!(matches!(request.input[0], InputPart::Text { .. }));
//! assert!(spec::schema::validate(spec::schema::Published::ExecutionRequest, &serde_json::to_value(&request).unwrap()).is_ok());
//! ```

pub mod execution;
pub mod fixtures;
pub mod open_points;
pub mod openwop;
pub mod overlay;
mod published;
pub mod registry;
pub mod requirements;
pub mod schema;
pub mod wire_format;
