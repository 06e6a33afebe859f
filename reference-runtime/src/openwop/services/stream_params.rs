//! The parameters of `GET /runs/{runId}/events` and which events each stream mode admits.

use std::time::Duration;

use axum::http::StatusCode;
use serde_json::json;
use spec::openwop::{StreamMode, StreamModeSelection};
use spec::registry::{StreamTier, event_types};

use crate::openwop::infra::choices::ImplementedModes;
use crate::openwop::infra::error::{ApiError, details};

/// The largest `bufferMs`.
pub(crate) const MAX_BUFFER_MS: u64 = 5_000;

/// A validated `streamMode`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Selection {
    /// `values`: a `state.snapshot` after each updates-tier transition.
    Values,
    /// One or more of updates, messages, debug, in the client's order.
    Modes(Vec<StreamMode>),
}

impl Selection {
    /// Parses `streamMode` (absent means `updates`) against the chapter's pattern, and refuses
    /// a selection naming a mode the host does not implement (`implemented`).
    pub(crate) fn parse(
        value: Option<&str>,
        implemented: ImplementedModes,
    ) -> Result<Self, ApiError> {
        let Some(value) = value else {
            return Ok(Selection::Modes(vec![StreamMode::Updates]));
        };
        match StreamModeSelection::parse(value) {
            Ok(selection)
                if !selection
                    .modes()
                    .iter()
                    .all(|mode| implemented.serves(mode.as_str())) =>
            {
                Err(unsupported_stream_mode(implemented))
            }
            Ok(selection) if selection.modes() == [StreamMode::Values] => Ok(Selection::Values),
            Ok(selection) => Ok(Selection::Modes(selection.modes().to_vec())),
            Err(_) => Err(unsupported_stream_mode(implemented)),
        }
    }
}

/// Whether `value` combines `values` with other modes, each a mode's name (what a host
/// accepting such a combination, against the pattern, reads as `values`).
pub(crate) fn is_values_combination(value: &str) -> bool {
    value.split(',').count() > 1
        && value.split(',').any(|m| m == "values")
        && value.split(',').all(|m| StreamMode::from_name(m).is_some())
}

/// 400 `unsupported_stream_mode` with `details.supported`: each single mode served.
fn unsupported_stream_mode(implemented: ImplementedModes) -> ApiError {
    let pattern =
        "streamMode must match ^(values|(updates|messages|debug)(,(updates|messages|debug))*)$";
    let message = match implemented {
        ImplementedModes::AllFour => pattern.to_string(),
        ImplementedModes::UpdatesOnly => format!(
            "{pattern} and name only the modes this host implements: {}",
            implemented.served().join(", ")
        ),
    };
    let error = ApiError::new("unsupported_stream_mode", message);
    let supported: Vec<String> = implemented.served().iter().map(|m| m.to_string()).collect();
    error.with_details(details([("supported", json!(supported))]))
}

/// The content negotiation a host refusing on `Accept` runs (the defect
/// `w-406-for-json-accept`, before validating the mode; a clean host never refuses on `Accept`:
/// it always answers `text/event-stream`): 406 unless `accept` (the `Accept` header's value;
/// `None`: absent, or not text) admits an event stream.
pub(crate) fn negotiate(accept: Option<&str>) -> Result<(), ApiError> {
    let accept = accept.unwrap_or("*/*");
    let acceptable = accept.split(',').any(|range| {
        let range = range.split(';').next().unwrap_or("").trim();
        matches!(range, "text/event-stream" | "text/*" | "*/*")
    });
    if acceptable {
        Ok(())
    } else {
        Err(ApiError::new("validation_error", "not acceptable")
            .with_status(StatusCode::NOT_ACCEPTABLE))
    }
}

/// `bufferMs` (0..=5000; 0 or absent means no batching).
pub(crate) fn buffer(value: Option<&str>) -> Result<Option<Duration>, ApiError> {
    let Some(value) = value else {
        return Ok(None);
    };
    let ms = value
        .parse::<u64>()
        .ok()
        .filter(|ms| *ms <= MAX_BUFFER_MS)
        .ok_or_else(|| ApiError::validation("bufferMs must be an integer 0..=5000"))?;
    Ok((ms > 0).then(|| Duration::from_millis(ms)))
}

/// A well-formed cursor: ASCII digits only. A value beyond `u64` is still a well-formed
/// non-negative integer (past the end), so it saturates rather than being refused.
pub(crate) fn parse_cursor(value: &str) -> Option<u64> {
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(value.parse::<u64>().unwrap_or(u64::MAX))
}

/// `Last-Event-ID` (`value`: the header's value, absent when `None`): absent, a cursor, or 400
/// `validation_error`.
pub(crate) fn last_event_id(value: Option<&str>) -> Result<Option<u64>, ApiError> {
    let Some(value) = value else {
        return Ok(None);
    };
    match parse_cursor(value) {
        Some(cursor) => Ok(Some(cursor)),
        None => Err(ApiError::validation(
            "Last-Event-ID must be a non-negative integer (a sequence)",
        )),
    }
}

/// Whether `mode` admits an event of `event_type`.
pub(crate) fn admits(mode: StreamMode, event_type: &str) -> bool {
    match mode {
        StreamMode::Debug => true,
        StreamMode::Messages => event_type == "output.chunk",
        // Vendor events (unregistered types) appear in debug only.
        StreamMode::Updates => event_types()
            .get(event_type)
            .is_some_and(|e| e.tier == StreamTier::Updates),
        StreamMode::Values => event_types()
            .get(event_type)
            .is_some_and(|e| e.tier == StreamTier::Updates),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_and_buffers_are_checked() {
        assert_eq!(parse_cursor("0"), Some(0));
        assert_eq!(parse_cursor("0042"), Some(42));
        assert_eq!(parse_cursor("99999999999999999999999"), Some(u64::MAX));
        for bad in ["", "-1", "abc", "1.5", " 1", "+1"] {
            assert_eq!(parse_cursor(bad), None, "{bad}");
        }
        assert_eq!(buffer(Some("0")).unwrap(), None);
        assert_eq!(buffer(Some("5000")).unwrap(), Some(Duration::from_secs(5)));
        assert!(buffer(Some("5001")).is_err());
        assert!(buffer(Some("-1")).is_err());
    }

    #[test]
    fn a_host_serving_updates_only_refuses_every_other_mode_listing_what_it_serves() {
        let only = ImplementedModes::UpdatesOnly;
        for served in [None, Some("updates"), Some("updates,updates")] {
            assert_eq!(
                Selection::parse(served, only).unwrap(),
                Selection::Modes(vec![StreamMode::Updates]),
                "{served:?}"
            );
        }
        for lacking in [
            "values",
            "messages",
            "debug",
            "updates,debug",
            "messages,updates",
        ] {
            let refusal = Selection::parse(Some(lacking), only).unwrap_err();
            assert_eq!(refusal.code(), "unsupported_stream_mode", "{lacking}");
            assert_eq!(refusal.status(), StatusCode::BAD_REQUEST, "{lacking}");
            assert_eq!(
                refusal.details().map(|d| &d["supported"]),
                Some(&json!(["updates"])),
                "{lacking}"
            );
        }
        // A host serving all four serves each of them.
        for mode in ["values", "messages", "debug", "updates,messages,debug"] {
            assert!(Selection::parse(Some(mode), ImplementedModes::AllFour).is_ok());
        }
    }

    #[test]
    fn modes_admit_their_tier() {
        assert!(admits(StreamMode::Updates, "run.started"));
        assert!(!admits(StreamMode::Updates, "node.started"));
        assert!(!admits(StreamMode::Updates, "example.noise-emitted"));
        assert!(admits(StreamMode::Debug, "example.noise-emitted"));
        assert!(admits(StreamMode::Messages, "output.chunk"));
        assert!(!admits(StreamMode::Messages, "run.started"));
    }
}
