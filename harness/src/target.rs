//! The host under test, as the harness sees it: where it is, how to authenticate, which
//! capabilities it has, and the fake upstream it was configured with ([`external`] builds one
//! from a URL and options; [`probe`] reads its discovery documents).
//!
//! This module is the facade's: it re-exports from the files that define the items, which
//! import from each other, never from here.

pub use crate::capability::{CapabilityError, HostCapability};
pub use crate::external::{
    FakeProvidersOptions, TargetError, TargetOptions, bindings_from, check_url, external,
    parse_header, parse_header_lines,
};
pub use crate::host::*;
pub use crate::probe::{ProbeFindings, describe_answer, probe};
pub use crate::upstream::{
    BindingError, FakeUpstream, ProvidersFile, ProvidersFileRole, Role, RoleBinding, WireFormat,
    instances_for, merge_bindings,
};
