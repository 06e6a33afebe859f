//! The parameters of `GET /runs/{runId}/events` and which events each stream mode admits.

use std::time::Duration;

use axum::http::StatusCode;
use serde_json::json;
use spec::openwop::{StreamMode, StreamModeSelection};
use spec::registry::{StreamTier, event_types};

use crate::choices::ImplementedModes;
use crate::known_bad::KnownBad;

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
        defects: &KnownBad,
    ) -> Result<Self, ApiError> {
        let Some(value) = value else {
            return Ok(Selection::Modes(vec![StreamMode::Updates]));
        };
        if defects.values_combination_accepted()
            && value.split(',').count() > 1
            && value.split(',').any(|m| m == "values")
            && value.split(',').all(|m| StreamMode::from_name(m).is_some())
        {
            return Ok(Selection::Values);
        }
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

/// The content negotiation the defect `w-406-for-json-accept` runs before validating the mode
/// (a clean host never refuses on `Accept`: it always answers `text/event-stream`).
/// `accept` is the `Accept` header's value (`None`: absent, or not text).
pub(crate) fn negotiate_before_validation(
    accept: Option<&str>,
    defects: &KnownBad,
) -> Result<(), ApiError> {
    if !defects.negotiates_before_validating_mode() {
        return Ok(());
    }
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
pub(crate) fn last_event_id(
    value: Option<&str>,
    defects: &KnownBad,
) -> Result<Option<u64>, ApiError> {
    let Some(value) = value else {
        return Ok(None);
    };
    match parse_cursor(value) {
        Some(cursor) => Ok(Some(cursor)),
        None if defects.malformed_last_event_id_read_as_zero() => Ok(Some(0)),
        None => Err(ApiError::validation(
            "Last-Event-ID must be a non-negative integer (a sequence)",
        )),
    }
}

/// Whether `mode` admits an event of `event_type`.
pub(crate) fn admits(mode: StreamMode, event_type: &str, defects: &KnownBad) -> bool {
    match mode {
        StreamMode::Debug => true,
        StreamMode::Messages => event_type == "output.chunk",
        StreamMode::Updates => match event_types().get(event_type) {
            Some(entry) => entry.tier == StreamTier::Updates,
            // Vendor events appear in debug only.
            None => defects.vendor_events_in_updates(),
        },
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
        let none = KnownBad::clean();
        let only = ImplementedModes::UpdatesOnly;
        for served in [None, Some("updates"), Some("updates,updates")] {
            assert_eq!(
                Selection::parse(served, only, &none).unwrap(),
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
            let refusal = Selection::parse(Some(lacking), only, &none).unwrap_err();
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
            assert!(Selection::parse(Some(mode), ImplementedModes::AllFour, &none).is_ok());
        }
    }

    #[test]
    fn modes_admit_their_tier() {
        let none = KnownBad::clean();
        assert!(admits(StreamMode::Updates, "run.started", &none));
        assert!(!admits(StreamMode::Updates, "node.started", &none));
        assert!(!admits(StreamMode::Updates, "example.noise-emitted", &none));
        assert!(admits(StreamMode::Debug, "example.noise-emitted", &none));
        assert!(admits(StreamMode::Messages, "output.chunk", &none));
        assert!(!admits(StreamMode::Messages, "run.started", &none));
    }
}
