//! The error-code registries of both surfaces, with their HTTP statuses.

use std::sync::LazyLock;

use serde::{Deserialize, Serialize};

/// A portable code of the execution protocol.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExecutionErrorCode {
    /// The code.
    pub code: String,
    /// The HTTP status the reference runtime answers with; `None` for event-only codes.
    pub status: Option<u16>,
    /// Whether a new request may succeed.
    pub retryable: bool,
    /// What it means.
    pub meaning: String,
}

/// A registered OpenWOP v2 error code.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenWopErrorCode {
    /// The code.
    pub code: String,
    /// The registered HTTP status.
    pub status: u16,
    /// Whether the registry marks it retriable.
    pub retriable: bool,
}

/// Both registries.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ErrorCodeRegistry {
    /// Format version.
    pub version: u32,
    /// Surface X codes.
    pub execution: Vec<ExecutionErrorCode>,
    /// Surface W codes.
    pub openwop: Vec<OpenWopErrorCode>,
    /// The grammar of a vendor error code.
    pub openwop_vendor_code_pattern: String,
    #[serde(rename = "$comment", default, skip_serializing)]
    _comment: Option<String>,
}

impl ErrorCodeRegistry {
    /// A surface-W code by name.
    pub fn openwop_code(&self, code: &str) -> Option<&OpenWopErrorCode> {
        self.openwop.iter().find(|c| c.code == code)
    }

    /// A surface-X code by name.
    pub fn execution_code(&self, code: &str) -> Option<&ExecutionErrorCode> {
        self.execution.iter().find(|c| c.code == code)
    }
}

static REGISTRY: LazyLock<ErrorCodeRegistry> = LazyLock::new(|| {
    serde_json::from_str(include_str!("../../registry/error-codes.json"))
        .expect("spec/registry/error-codes.json is valid (guarded by a test)")
});

/// The error-code registries.
pub fn error_codes() -> &'static ErrorCodeRegistry {
    &REGISTRY
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::execution::ErrorCode;

    #[test]
    fn registries_are_complete_and_consistent() {
        let registry = error_codes();
        assert_eq!(registry.openwop.len(), 107);
        assert_eq!(
            registry
                .openwop_code("unsupported_stream_mode")
                .unwrap()
                .status,
            400
        );
        assert_eq!(registry.openwop_code("run_terminal").unwrap().status, 409);
        assert!(registry.openwop_code("rate_limited").unwrap().retriable);
        assert_eq!(registry.execution.len(), ErrorCode::ALL.len());
        for code in ErrorCode::ALL {
            let entry = registry
                .execution_code(code.as_str())
                .unwrap_or_else(|| panic!("{code:?} registered"));
            if let Some(status) = entry.status {
                assert_eq!(status, code.http_status(), "{code:?}");
            }
        }
    }
}
