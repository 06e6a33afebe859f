//! One provider call's vocabulary: what a call streams ([`CallEvent`]), how it ends, where it
//! goes and its token counts.

use spec::openwop::payloads::ChunkToolCall;

/// Token counts of one call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct TokenUsage {
    pub(crate) input: u64,
    pub(crate) output: u64,
    pub(crate) total: u64,
}

/// How a call ended well.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CallEnd {
    pub(crate) finish_reason: String,
    pub(crate) usage: TokenUsage,
    pub(crate) tool_calls: Vec<ChunkToolCall>,
}

/// How a call failed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CallFailure {
    pub(crate) code: String,
    pub(crate) message: String,
    pub(crate) retryable: bool,
    pub(crate) usage: TokenUsage,
}

/// One step of a call.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum CallEvent {
    /// Output text.
    Delta(String),
    /// The provider's completion signal.
    Done(CallEnd),
    /// The call failed.
    Failed(CallFailure),
}

/// Which provider and model a call goes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CallTarget {
    /// Lowercase provider id (`provider.usage.provider`).
    pub(crate) provider: String,
    /// The model.
    pub(crate) model: String,
}
