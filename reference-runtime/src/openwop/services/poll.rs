//! `GET /runs/{runId}/events/poll?afterSequence=N&timeout=S`: the long-poll fallback (the
//! route is `openwop::http::poll`).
//!
//! Returns the events with `sequence > afterSequence` (all when absent). When there are none and
//! the run is live, it waits up to `timeout` seconds (1–60, default 30) for the next append. The
//! response is the closed `{runId, events, lastSequence, status, isTerminal}`; `lastSequence` is
//! the highest sequence at the time of the response (−1 for an empty log); a cursor past the end
//! answers 200 with `events: []`. Three host choices shape the answer: its page
//! (`poll_page`), what it does with `lastSequence`/`since` (`poll_foreign_parameters`) and the
//! cursors it reads (`cursor_range`).

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::openwop::infra::choices::{AfterTerminalEvents, PollForeignParameters};
use crate::store::StoredEvent;

use super::state::WState;
use crate::openwop::infra::error::ApiError;
use crate::openwop::infra::projection::{Projection, RunMeta, parse_event};
use crate::openwop::infra::recorder::Recorder;
use crate::openwop::services::stream_params::parse_cursor;

/// The default long-poll wait.
const DEFAULT_TIMEOUT_SECS: u64 = 30;

/// The query parameters a poll reads, as received.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct PollParams<'a> {
    /// `afterSequence`: the cursor.
    pub(crate) after_sequence: Option<&'a str>,
    /// `timeout`: seconds to wait for the next append, 1–60.
    pub(crate) timeout: Option<&'a str>,
    /// Whether the query names `lastSequence` or `since` (not parameters of poll).
    pub(crate) names_foreign_parameters: bool,
}

/// One poll of the run `meta` (a run the caller may read): the closed poll response.
pub(crate) async fn poll(
    state: &Arc<WState>,
    meta: RunMeta,
    params: PollParams<'_>,
) -> Result<Value, ApiError> {
    // lastSequence and since are not parameters: only afterSequence is a cursor.
    let choices = &state.config.choices;
    if params.names_foreign_parameters
        && choices.poll_foreign_parameters == PollForeignParameters::Refused
    {
        return Err(ApiError::validation(
            "lastSequence and since are not parameters of poll: its cursor is afterSequence",
        ));
    }
    let after =
        match params.after_sequence {
            None => None,
            Some(value) => Some(parse_cursor(value).ok_or_else(|| {
                ApiError::validation("afterSequence must be a non-negative integer")
            })?),
        };
    if after.is_some_and(|after| !choices.cursor_range.admits(after)) {
        return Err(ApiError::validation(
            "afterSequence must be an integer from 0 to 2^53 - 1",
        ));
    }
    let timeout = match params.timeout {
        None => DEFAULT_TIMEOUT_SECS,
        Some(value) => value
            .parse::<u64>()
            .ok()
            .filter(|s| (1..=60).contains(s))
            .ok_or_else(|| ApiError::validation("timeout must be an integer 1..=60 (seconds)"))?,
    };
    let progress = state
        .hub
        .progress(&meta.run_id)
        .map_err(|_| ApiError::internal())?;
    let behind = match (progress.last_sequence, after) {
        (Some(last), Some(after)) => last > after,
        (Some(_), None) => true,
        (None, _) => false,
    };
    if !behind && !progress.terminal {
        let mut subscription = state
            .hub
            .subscribe(&meta.run_id, after)
            .map_err(|_| ApiError::internal())?;
        let _ = tokio::time::timeout(Duration::from_secs(timeout), subscription.next_batch()).await;
    }
    let all = state.read_events(&meta, None)?;
    let last_sequence = all.last().map(|e| e.sequence);
    let mut projection = Projection::new(meta.clone());
    let mut events = Vec::new();
    for event in &all {
        let Some(doc) = parse_event(&event.json) else {
            continue;
        };
        projection.apply(&doc);
        let paged_out = choices
            .poll_page
            .events()
            .is_some_and(|page| events.len() >= page);
        if after.is_none_or(|after| event.sequence > after) && !paged_out {
            events.push(serde_json::from_str::<Value>(&event.json).unwrap_or(Value::Null));
        }
    }
    let last_sequence = last_sequence.map_or(-1, |s| i64::try_from(s).unwrap_or(i64::MAX));
    let status = projection.status();
    if status.is_terminal() {
        index_finished_run(state, &meta.run_id, &all);
    }
    Ok(json!({
        "runId": meta.run_id,
        "events": events,
        "lastSequence": last_sequence,
        "status": status.as_str(),
        "isTerminal": status.is_terminal(),
    }))
}

/// The vendor event a host carrying events after the terminal one appends once the first poll
/// of the finished run has been read: that poll's answer (and every reading before it) lacks
/// it, every later reading holds it. The chapter lets vendor types follow the terminal event at
/// any time, so a judge comparing two readings of a finished log must tolerate a log that grew.
const INDEXED: &str = "example.run-indexed";

/// Appends [`INDEXED`] after the first poll of a finished run (`after_terminal =
/// "vendor-event"`; `log` is what that poll read).
fn index_finished_run(state: &WState, run_id: &str, log: &[StoredEvent]) {
    if state.config.choices.after_terminal != AfterTerminalEvents::VendorEvent
        || log.iter().any(|e| &*e.event_type == INDEXED)
    {
        return;
    }
    let recorder = Recorder::new(
        Arc::clone(&state.hub),
        run_id,
        &state.defects,
        &state.config.choices,
    );
    if let Err(error) = recorder.record(INDEXED, None, json!({ "indexed": true })) {
        tracing::warn!(%error, run_id, "indexing a finished run failed");
    }
}
