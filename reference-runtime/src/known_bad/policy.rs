//! [`KnownBad`]: the one injected policy, built once from the switched-on defects.
//!
//! Each method is one decision a defect changes, named for that decision; each defect of the
//! catalogue answers exactly one decision (the `DECISIONS` table, checked by the test below).
//! A clean runtime answers every decision the clean way (`false`).

use crate::defects::{Defect, Defects};

/// The known-bad policy: which decisions the runtime takes the defective way.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KnownBad {
    defects: Defects,
}

impl From<Defects> for KnownBad {
    fn from(defects: Defects) -> Self {
        KnownBad { defects }
    }
}

impl KnownBad {
    /// The clean policy: every decision taken the clean way.
    pub fn clean() -> Self {
        Self::default()
    }

    /// The policy of the given defects.
    pub fn of(defects: impl IntoIterator<Item = Defect>) -> Self {
        Defects::of(defects).into()
    }

    /// Whether the runtime runs known-bad at all.
    pub fn is_clean(&self) -> bool {
        self.defects.is_empty()
    }

    /// Whether `defect` is switched on (transitional: sites not yet given a named decision).
    pub(crate) fn has(&self, defect: Defect) -> bool {
        self.defects.has(defect)
    }
}
