//! The `streamMode` query parameter: one pattern, four modes.

use std::fmt;

/// The pattern a `streamMode` value must match.
pub const STREAM_MODE_PATTERN: &str =
    "^(values|(updates|messages|debug)(,(updates|messages|debug))*)$";

/// One stream mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StreamMode {
    /// Run transitions, terminal node transitions, suspensions, interrupts, artifacts.
    Updates,
    /// One `state.snapshot` frame after each updates-tier transition; never combined.
    Values,
    /// One `ai.message.chunk` frame per `output.chunk` event.
    Messages,
    /// Every event, including vendor events (which appear only here).
    Debug,
}

impl StreamMode {
    /// All four modes, in the chapter's order.
    pub const ALL: [StreamMode; 4] = [Self::Values, Self::Updates, Self::Messages, Self::Debug];

    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Updates => "updates",
            Self::Values => "values",
            Self::Messages => "messages",
            Self::Debug => "debug",
        }
    }

    /// Parses one mode name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.as_str() == name)
    }
}

impl fmt::Display for StreamMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A parsed `streamMode` value: `values` alone, or one or more of the other three in the
/// client's order (duplicates kept out).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamModeSelection {
    modes: Vec<StreamMode>,
}

/// Why a `streamMode` value is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("streamMode does not match {STREAM_MODE_PATTERN}")]
pub struct StreamModeError;

impl StreamModeSelection {
    /// Parses a value against [`STREAM_MODE_PATTERN`] (which does not forbid repeats such as
    /// `updates,updates`; a repeat is kept once).
    pub fn parse(value: &str) -> Result<Self, StreamModeError> {
        if value == "values" {
            return Ok(Self {
                modes: vec![StreamMode::Values],
            });
        }
        let mut modes = Vec::new();
        for part in value.split(',') {
            let mode = match part {
                "updates" => StreamMode::Updates,
                "messages" => StreamMode::Messages,
                "debug" => StreamMode::Debug,
                _ => return Err(StreamModeError),
            };
            if !modes.contains(&mode) {
                modes.push(mode);
            }
        }
        Ok(Self { modes })
    }

    /// The default selection, `updates`.
    pub fn default_updates() -> Self {
        Self {
            modes: vec![StreamMode::Updates],
        }
    }

    /// The modes in the client's order.
    pub fn modes(&self) -> &[StreamMode] {
        &self.modes
    }

    /// Whether more than one mode is selected.
    pub fn is_mixed(&self) -> bool {
        self.modes.len() > 1
    }
}

/// The `streamMode` value: the modes comma-separated, in the client's order.
impl fmt::Display for StreamModeSelection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, mode) in self.modes.iter().enumerate() {
            if index > 0 {
                f.write_str(",")?;
            }
            f.write_str(mode.as_str())?;
        }
        Ok(())
    }
}

impl std::str::FromStr for StreamModeSelection {
    type Err = StreamModeError;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        Self::parse(value)
    }
}

/// Serialised as its `streamMode` value.
impl serde::Serialize for StreamModeSelection {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for StreamModeSelection {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = String::deserialize(deserializer)?;
        Self::parse(&value).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_selection_reads_back_from_its_value() {
        for value in ["values", "debug,updates,messages", "messages"] {
            let selection = StreamModeSelection::parse(value).unwrap();
            assert_eq!(selection.to_string(), value);
            let json = serde_json::to_string(&selection).unwrap();
            assert_eq!(json, format!("\"{value}\""));
            assert_eq!(
                serde_json::from_str::<StreamModeSelection>(&json).unwrap(),
                selection
            );
        }
        assert_eq!(
            StreamModeSelection::parse("updates,updates")
                .unwrap()
                .to_string(),
            "updates"
        );
        assert!(serde_json::from_str::<StreamModeSelection>("\"values,debug\"").is_err());
    }

    #[test]
    fn parses_the_pattern() {
        for ok in [
            "values",
            "updates",
            "debug",
            "messages",
            "updates,messages",
            "debug,updates,messages",
            "updates,updates",
        ] {
            assert!(StreamModeSelection::parse(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "values,updates",
            "updates,values",
            "Updates",
            "updates,",
            ",updates",
            "updates ,debug",
            "bogus",
            "updates,bogus",
        ] {
            assert!(StreamModeSelection::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(
            StreamModeSelection::parse("updates,updates")
                .unwrap()
                .modes(),
            &[StreamMode::Updates]
        );
    }
}
