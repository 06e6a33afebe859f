//! What every encoder is told about the completion it writes.

/// Identity of one encoded completion.
pub(crate) struct CompletionContext<'a> {
    pub model: &'a str,
    pub response_id: &'a str,
    pub created: u64,
    pub include_usage: bool,
}
