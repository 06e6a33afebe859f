//! The driver of one execution: the attempt loop (the router), the deadline, cancellation, the
//! best-effort remote cancel of an async job, and the terminal event.
//!
//! Rules that live here and only here: each attempt's `route.selected` precedes its provider
//! events; once output was exposed a failure is terminal and non-retryable (no fallback);
//! `route.attempt_failed` is appended only when another attempt follows; `Retry-After` is
//! honoured before retrying the same provider, within `retry_budget_ms` (measured from the
//! start of routing); `deadline_ms` covers routing, every attempt and every wait, and ends in
//! `deadline_exceeded`; cancel ends in `execution.failed` with status `cancelled`.

use std::sync::Arc;
use std::time::Duration;

use spec::execution::{ErrorCode, EventBody, ExecutionRequest, PortableError, Target};
use tokio::sync::watch;
use tokio::time::Instant;

use super::log_writer::LogWriter;
use super::routing::{self, Candidate};
use crate::config::ProviderConfig;
use crate::execution::config::ExecutionConfig;
use crate::known_bad::KnownBad;
use crate::providers::{Adapter, AttemptFailure, ProviderCall, RemoteJobSlot};
use crate::redact::{CredentialSource, Redactor};

/// What the driver reads from the service that runs it. The service implements it; the driver
/// does not know the service.
pub(crate) trait DriverHost: Send + Sync {
    /// Surface X's configuration (limits, choices).
    fn config(&self) -> &ExecutionConfig;
    /// The configured providers, in configuration order (an index names one).
    fn providers(&self) -> &[ProviderConfig];
    /// Switched-on defects.
    fn defects(&self) -> &KnownBad;
    /// Where provider credentials come from.
    fn credentials(&self) -> &CredentialSource;
    /// The redactor that learns every credential it sends.
    fn redactor(&self) -> &Redactor;
    /// One adapter per configured provider, in configuration order.
    fn adapters(&self) -> &[Adapter];
    /// Drops a finished execution from the live table.
    fn forget(&self, execution_id: &str);
}

/// What the driver needs.
pub(crate) struct DriveContext {
    pub service: Arc<dyn DriverHost>,
    pub execution_id: String,
    pub request: ExecutionRequest,
    pub candidates: Vec<Candidate>,
    pub cancel: watch::Receiver<bool>,
    /// Whether the driver appends `execution.accepted` (the host choice that appends it after
    /// the 202), after [`ACCEPTED_AFTER_RESPONSE_DELAY`].
    pub accepted_after_response: bool,
}

/// How long after the submission the driver appends `execution.accepted` when the host choice
/// appends it after the response.
const ACCEPTED_AFTER_RESPONSE_DELAY: Duration = Duration::from_millis(25);

/// How an execution ends.
enum Outcome {
    Completed(Target),
    Failed(PortableError),
    Cancelled,
}

/// What the attempt loop leaves behind for the driver.
struct AttemptState {
    writer: LogWriter,
    remote: RemoteJobSlot,
    current_provider: Option<usize>,
}

/// Runs the execution to its terminal event.
pub(crate) async fn drive(context: DriveContext, mut writer: LogWriter) {
    if context.accepted_after_response {
        tokio::time::sleep(ACCEPTED_AFTER_RESPONSE_DELAY).await;
        if let Err(error) = writer.append(EventBody::Accepted {}) {
            tracing::error!(execution_id = %context.execution_id, %error, "failed to append execution.accepted");
            context.service.forget(&context.execution_id);
            return;
        }
    }
    let started = Instant::now();
    let deadline = context
        .request
        .deadline_ms
        .filter(|_| !context.service.defects().deadline_ignored())
        .map(|ms| started + Duration::from_millis(ms));
    let mut state = AttemptState {
        writer,
        remote: RemoteJobSlot::default(),
        current_provider: None,
    };
    let mut cancel = context.cancel.clone();
    let outcome = {
        let attempts = run_attempts(&context, &mut state, started);
        tokio::pin!(attempts);
        tokio::select! {
            biased;
            () = sleep_until(deadline) => Outcome::Failed(PortableError::new(
                ErrorCode::DeadlineExceeded,
                "Execution deadline exceeded",
                false,
            )),
            () = cancelled(&mut cancel) => Outcome::Cancelled,
            outcome = &mut attempts => outcome,
        }
    };
    // The attempt's future is gone, and with it any open provider stream. A submitted async
    // job that did not complete is cancelled remotely, best effort and bounded.
    if let (Some(job), Some(provider)) = (state.remote.take(), state.current_provider) {
        let service = &context.service;
        let provider_config = &service.providers()[provider];
        if let Some(credential) = service
            .credentials()
            .resolve(&provider_config.credential_env)
        {
            service.adapters()[provider]
                .cancel_remote(&job, &credential)
                .await;
        }
    }
    let terminal = match outcome {
        Outcome::Completed(target) => Some(EventBody::Completed { target }),
        Outcome::Failed(error) => Some(EventBody::Failed { error }),
        Outcome::Cancelled => {
            if context
                .service
                .defects()
                .execution_cancel_without_terminal()
            {
                // The defect: the provider was stopped but no terminal event is appended.
                None
            } else {
                Some(EventBody::Failed {
                    error: PortableError::new(
                        ErrorCode::Cancelled,
                        "Execution was cancelled",
                        false,
                    ),
                })
            }
        }
    };
    if let Some(body) = terminal
        && let Err(error) = state.writer.finish(body)
    {
        tracing::error!(execution_id = %context.execution_id, %error, "terminal append failed");
    }
    context.service.forget(&context.execution_id);
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

async fn cancelled(cancel: &mut watch::Receiver<bool>) {
    if cancel.wait_for(|requested| *requested).await.is_err() {
        std::future::pending::<()>().await;
    }
}

async fn run_attempts(
    context: &DriveContext,
    state: &mut AttemptState,
    started: Instant,
) -> Outcome {
    let service = &context.service;
    let candidates = &context.candidates;
    if candidates.is_empty() {
        return Outcome::Failed(PortableError::new(
            ErrorCode::CapabilityUnavailable,
            "No provider satisfies the requested ability and capabilities",
            false,
        ));
    }
    let limit = if service.defects().max_attempts_ignored()
        && context
            .request
            .routing
            .as_ref()
            .and_then(|r| r.allow_fallback)
            == Some(true)
    {
        // The defect: with fallback allowed, every candidate is tried whatever max_attempts says.
        u32::try_from(candidates.len()).unwrap_or(u32::MAX).max(1)
    } else {
        routing::attempt_limit(&context.request, candidates.len())
    };
    let budget = context
        .request
        .routing
        .as_ref()
        .and_then(|r| r.retry_budget_ms)
        .map(Duration::from_millis);
    let max_wait = Duration::from_millis(service.config().limits.max_retry_after_ms);
    let mut last_error = None;
    for attempt in 1..=limit {
        let candidate = &candidates[(attempt as usize - 1) % candidates.len()];
        state.current_provider = Some(candidate.provider);
        let selected = EventBody::RouteSelected {
            target: candidate.target.clone(),
            attempt,
        };
        if state.writer.append(selected).is_err() {
            return Outcome::Failed(storage_failure());
        }
        let mut failure = match call(context, candidate, state).await {
            Ok(()) => return Outcome::Completed(candidate.target.clone()),
            Err(failure) => failure,
        };
        if state.writer.output_exposed() && !service.defects().falls_back_after_output() {
            // Output was exposed: no fallback, and the failure is not retryable.
            failure.error.retryable = false;
        }
        // The defect: a 429 the provider marked not retryable (its quota error) is retried, and
        // the failed attempt is not recorded.
        let quota_retried_unrecorded = service.defects().quota_retry_unrecorded()
            && failure.error.code == ErrorCode::RateLimited
            && !failure.error.retryable
            && !state.writer.output_exposed();
        if quota_retried_unrecorded {
            failure.error.retryable = true;
        }
        if attempt == limit || !failure.error.retryable {
            return Outcome::Failed(failure.error);
        }
        let next = &candidates[attempt as usize % candidates.len()];
        let mut wait = if next.provider == candidate.provider {
            failure.retry_after.unwrap_or(Duration::ZERO)
        } else {
            Duration::ZERO
        };
        match budget {
            Some(budget) if started.elapsed() + wait > budget => {
                return Outcome::Failed(failure.error);
            }
            Some(_) => {}
            None => wait = wait.min(max_wait),
        }
        let attempt_failed = EventBody::RouteAttemptFailed {
            target: candidate.target.clone(),
            attempt,
            error: failure.error.clone(),
        };
        if !quota_retried_unrecorded && state.writer.append(attempt_failed).is_err() {
            return Outcome::Failed(storage_failure());
        }
        last_error = Some(failure.error);
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
    }
    Outcome::Failed(last_error.unwrap_or_else(|| {
        PortableError::new(ErrorCode::ProviderUnavailable, "Execution failed", true)
    }))
}

fn storage_failure() -> PortableError {
    PortableError::new(
        ErrorCode::InternalError,
        "Execution event storage failed",
        false,
    )
}

/// One provider attempt.
async fn call(
    context: &DriveContext,
    candidate: &Candidate,
    state: &mut AttemptState,
) -> Result<(), AttemptFailure> {
    let service = &context.service;
    let provider = &service.providers()[candidate.provider];
    let Some(credential) = service.credentials().resolve(&provider.credential_env) else {
        return Err(AttemptFailure::new(
            ErrorCode::ProviderUnavailable,
            "Provider credential is not configured",
            false,
        ));
    };
    service.redactor().learn(&credential);
    let call = ProviderCall {
        request: &context.request,
        model: &candidate.target.model,
        credential: &credential,
    };
    service.adapters()[candidate.provider]
        .run(call, &mut state.writer, &state.remote)
        .await
}
