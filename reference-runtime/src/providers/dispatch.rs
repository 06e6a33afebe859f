//! Which adapter module runs a call: the one place that maps a provider kind to its wire format.

use crate::config::ProviderKind;

use super::{Adapter, AttemptFailure, Emit, ProviderCall, RemoteJob, RemoteJobSlot};
use super::{anthropic, async_media, openai_chat, openai_responses};

impl Adapter {
    /// Runs one call to completion: `Ok(())` only after the provider's completion signal.
    pub async fn run(
        &self,
        call: ProviderCall<'_>,
        out: &mut dyn Emit,
        remote: &RemoteJobSlot,
    ) -> Result<(), AttemptFailure> {
        match self.kind {
            ProviderKind::OpenaiChat => openai_chat::run(self, call, out).await,
            ProviderKind::OpenaiResponses => openai_responses::run(self, call, out).await,
            ProviderKind::AnthropicMessages => anthropic::run(self, call, out).await,
            ProviderKind::AsyncMedia => async_media::run(self, call, out, remote).await,
        }
    }

    /// Best-effort remote cancel of a submitted async job, bounded by its own timeout. Errors are
    /// logged and never replace the execution's own outcome.
    pub async fn cancel_remote(&self, job: &RemoteJob, credential: &str) {
        async_media::cancel(self, job, credential).await;
    }
}
