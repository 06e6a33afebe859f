//! What the event-log checks share: a step's observed events, and their rendering in failure
//! messages.

use crate::checks::context::Outcome;
use crate::checks::events::{Observed, ObservedEvent, observe};
use crate::transcript::{ResponseRecord, StepRecord};
use crate::verdict::CheckOutcome;

/// The step's response and its observed events, or (from the calling check) the failure
/// saying why there is none.
macro_rules! observed {
    ($out:expr, $step:expr) => {
        match $crate::checks::stream::observed::observed_of($out, $step) {
            Ok(pair) => pair,
            Err(failure) => return *failure,
        }
    };
}

/// The step's response and its observed events, or (for the calling check) the failure saying
/// why there is none.
pub(super) fn observed_of<'r>(
    out: &Outcome<'_>,
    step: &'r StepRecord,
) -> Result<(&'r ResponseRecord, Observed), Box<CheckOutcome>> {
    // A stream held open through its window without its headers delivered nothing in it: its
    // events are none (a status or header check on it is not judged, see `Outcome::response`).
    let response = out.received(step)?;
    Ok((response, observe(response)))
}

/// One line per event: its sequence and type (for failure messages).
pub(super) fn render_types(events: &[ObservedEvent]) -> String {
    events
        .iter()
        .map(|e| {
            format!(
                "{} {}",
                e.sequence.map_or("?".into(), |s| s.to_string()),
                e.event_type.as_deref().unwrap_or("?")
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}
