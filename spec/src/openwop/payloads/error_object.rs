//! The error object every failure payload carries.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// `_errorObject` (run.failed, node.failed, …): closed with the extension hatch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "_errorObject")]
#[schemars(extend("additionalProperties" = false, "patternProperties" = {"^(openwop-|x-|vendor\\.)": {}}))]
pub struct ErrorObject {
    /// A registered or vendor code.
    #[schemars(length(min = 1))]
    pub code: String,
    /// A message (non-empty).
    #[schemars(length(min = 1))]
    pub message: String,
    /// Context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Map<String, Value>>,
    /// Whether retrying may help.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retryable: Option<bool>,
}
