//! How a known-bad host reads an era-2 log (the `ERA2_READINGS` table): handed to surface W's
//! state by its composition root, so the era-2 reader (`openwop/infra/era2.rs`) has no defect
//! branch.

use super::decisions::decisions;
use super::policy::KnownBad;
use crate::defects::{Defect, Defects};
use crate::openwop::infra::era2::Era2Reader;
use crate::openwop::infra::error::ApiError;
use crate::store::StoredEvent;

/// The era-2 reading defects of a known-bad host.
#[derive(Debug, Clone, Default)]
pub(super) struct Era2Readings {
    defects: Defects,
}

decisions! {
    Era2Readings, ERA2_READINGS {
        era2_untranslated => WEra2Untranslated,
    }
}

impl Era2Readings {
    /// The readings of `defects` (the policy's era-2 reading defects).
    pub(super) fn new(defects: Defects) -> Self {
        Era2Readings { defects }
    }

    /// The reader: the rows as stored under the defect, `clean` (the reader rule as the host
    /// chose to read it) otherwise.
    fn reader(&self, clean: Era2Reader) -> Era2Reader {
        if self.era2_untranslated() {
            verbatim
        } else {
            clean
        }
    }
}

impl KnownBad {
    /// How this host reads an era-2 log, `clean` being how a host without these defects reads
    /// it.
    pub(crate) fn era2_reader(&self, clean: Era2Reader) -> Era2Reader {
        Era2Readings::new(self.layered_in(ERA2_READINGS)).reader(clean)
    }
}

/// The defect: an era-2 log served in its v1 vocabulary, untranslated.
fn verbatim(events: Vec<StoredEvent>) -> Result<Vec<StoredEvent>, ApiError> {
    Ok(events)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::openwop::infra::era2;

    fn row(event_type: &str) -> StoredEvent {
        StoredEvent {
            sequence: 0,
            time: chrono::DateTime::UNIX_EPOCH,
            event_type: Arc::from(event_type),
            terminal: false,
            json: Arc::from(format!(r#"{{"type":"{event_type}","payload":{{}}}}"#)),
        }
    }

    #[test]
    fn only_the_defect_serves_the_rows_untranslated() {
        let unmapped = || vec![row("no.such.v1.type")];
        assert!(KnownBad::clean().era2_reader(era2::translate)(unmapped()).is_err());
        let untranslated =
            KnownBad::of([Defect::WEra2Untranslated]).era2_reader(era2::translate)(unmapped());
        assert_eq!(&*untranslated.unwrap()[0].event_type, "no.such.v1.type");
        assert!(
            KnownBad::of([Defect::WEra2SilentDrop]).era2_reader(era2::translate)(unmapped())
                .is_err()
        );
    }
}
