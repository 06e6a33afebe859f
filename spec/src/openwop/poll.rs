//! The long-poll fallback, `GET /runs/{runId}/events/poll`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::run_event::RunEventDoc;

/// The largest cursor a JSON number holds exactly, 2^53 - 1: a host reading cursors (poll's
/// `afterSequence`, a stream's `Last-Event-ID`) as JSON numbers may refuse larger ones as not
/// well-formed (open point `w.cursor.range`); the chapter itself bounds no cursor.
pub const MAX_EXACT_CURSOR: u64 = (1 << 53) - 1;

/// The largest cursor of at most 15 decimal digits, the digits a double always holds (C's
/// `DBL_DIG`): a host bounding cursors by their digits may refuse longer ones as not
/// well-formed (open point `w.cursor.range`, found on two independent hosts). The cursors the
/// harness requires a host to read are at most this.
pub const MAX_FIFTEEN_DIGIT_CURSOR: u64 = 999_999_999_999_999;

/// The closed poll response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(title = "PollResponse")]
pub struct PollResponse {
    /// The run.
    pub run_id: String,
    /// The events with `sequence > afterSequence`, in log order.
    pub events: Vec<RunEventDoc>,
    /// The highest sequence in the log at the time of the response; -1 when the log is empty.
    #[schemars(range(min = -1))]
    pub last_sequence: i64,
    /// The snapshot status.
    pub status: String,
    /// Whether the run is terminal.
    pub is_terminal: bool,
}
