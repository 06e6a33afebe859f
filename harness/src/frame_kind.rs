//! What one SSE frame of a transcript is: a dispatched event or a comment line.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A dispatched frame or a comment line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", tag = "frame")]
pub enum FrameKind {
    /// A dispatched event (a blank line ended it).
    Event {
        /// `id:` — `None` when the frame had no id field; `Some("")` for an empty one.
        id: Option<String>,
        /// `event:` — `None` when absent.
        event: Option<String>,
        /// The joined `data:` lines.
        data: String,
        /// `data` parsed as JSON, when it is JSON.
        json: Option<Value>,
        /// `retry:` when present.
        retry: Option<u64>,
    },
    /// A `:` comment line (keep-alive).
    Comment {
        /// The comment text after the colon.
        text: String,
    },
}
