//! What one load run does: how many logs, subscribers and events, which stream, which bounds.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The protocol surface a load run drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LoadSurface {
    /// The execution protocol: executions streamed by a scripted fake provider.
    Execution,
    /// The run events chapter: runs of the `conformance-stream-text` fixture.
    Openwop,
}

impl LoadSurface {
    /// A stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            LoadSurface::Execution => "execution",
            LoadSurface::Openwop => "openwop",
        }
    }
}

/// One load run's shape and bounds. Every count and duration is bounded by
/// [`LoadPlan::validate`], so a run always stops by itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LoadPlan {
    /// The surface.
    pub surface: LoadSurface,
    /// Runs (W) or executions (X) created, each read by `subscribers` subscribers.
    pub logs: usize,
    /// Concurrent subscribers per log.
    pub subscribers: usize,
    /// Streamed items per log (tokens of the fixture run, chunks of the fake provider).
    pub events: usize,
    /// Pause between two streamed items, in milliseconds (keeps the log live while it is read).
    pub event_interval_ms: u64,
    /// The `streamMode` query of W streams (`None`: the host's default, `updates`), serialised
    /// as its value.
    #[schemars(with = "Option<String>")]
    pub stream_mode: Option<spec::openwop::StreamModeSelection>,
    /// The `bufferMs` query of W streams.
    pub buffer_ms: Option<u64>,
    /// Force a disconnect after a seeded number of frames in `1..=2×N` on each connection, and
    /// resume with `Last-Event-ID` (`None`: never).
    pub disconnect_every: Option<u32>,
    /// Resumptions per subscriber, forced or not, before it gives up.
    pub max_connections: u32,
    /// Connection attempts in flight at once (connect storms are the host's problem only up
    /// to this).
    pub connect_concurrency: usize,
    /// The whole run's time bound in milliseconds: past it, every subscriber stops and the run
    /// is reported incomplete (not judged).
    pub time_limit_ms: u64,
    /// The largest gap between two frames of an open stream a host may leave (keep-alive).
    pub keepalive_window_ms: u64,
    /// How long a stream may stay open after its terminal event before the subscriber stops.
    pub close_grace_ms: u64,
    /// Seed of the forced-disconnect points (printed; replays the same disconnects).
    pub seed: u64,
}

/// The largest counts a plan may ask for.
pub const MAX_LOGS: usize = 100;
/// The largest subscriber count per log.
pub const MAX_SUBSCRIBERS: usize = 10_000;
/// The largest item count per log.
pub const MAX_EVENTS: usize = 100_000;
/// The longest run, in milliseconds.
pub const MAX_TIME_LIMIT_MS: u64 = 3_600_000;

/// A plan outside its bounds.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("load plan: {0}")]
pub struct PlanError(pub String);

impl LoadPlan {
    /// A small plan on `surface` with the defaults the command starts from.
    pub fn new(surface: LoadSurface) -> Self {
        LoadPlan {
            surface,
            logs: 1,
            subscribers: 10,
            events: 100,
            event_interval_ms: 5,
            stream_mode: None,
            buffer_ms: None,
            disconnect_every: None,
            max_connections: 16,
            connect_concurrency: 64,
            time_limit_ms: 120_000,
            keepalive_window_ms: 31_000,
            close_grace_ms: 2_000,
            seed: 0,
        }
    }

    /// Checks every bound.
    pub fn validate(&self) -> Result<(), PlanError> {
        let bad = |m: String| Err(PlanError(m));
        if !(1..=MAX_LOGS).contains(&self.logs) {
            return bad(format!("logs must be 1..={MAX_LOGS}"));
        }
        if !(1..=MAX_SUBSCRIBERS).contains(&self.subscribers) {
            return bad(format!("subscribers must be 1..={MAX_SUBSCRIBERS}"));
        }
        if !(1..=MAX_EVENTS).contains(&self.events) {
            return bad(format!("events must be 1..={MAX_EVENTS}"));
        }
        if self.event_interval_ms > 60_000 {
            return bad("the event interval must be at most 60000 ms".into());
        }
        if !(1..=MAX_TIME_LIMIT_MS).contains(&self.time_limit_ms) {
            return bad(format!("the time limit must be 1..={MAX_TIME_LIMIT_MS} ms"));
        }
        if self.max_connections == 0 || self.connect_concurrency == 0 {
            return bad("max connections and connect concurrency must be positive".into());
        }
        if self.disconnect_every == Some(0) {
            return bad("disconnect-every must be positive".into());
        }
        if self.stream_mode.is_some() && self.surface == LoadSurface::Execution {
            return bad("stream modes are a run events (openwop) notion".into());
        }
        if self.buffer_ms.is_some() && self.surface == LoadSurface::Execution {
            return bad("bufferMs is a run events (openwop) notion".into());
        }
        Ok(())
    }

    /// The time bound.
    pub fn time_limit(&self) -> Duration {
        Duration::from_millis(self.time_limit_ms)
    }

    /// The stream modes the subscribers ask for (the default is `updates`), in the plan's
    /// order.
    pub fn modes(&self) -> Vec<spec::openwop::StreamMode> {
        self.stream_mode
            .as_ref()
            .map_or(vec![spec::openwop::StreamMode::Updates], |selection| {
                selection.modes().to_vec()
            })
    }

    /// Where subscriber `subscriber` of log `log` forces its `connection`-th disconnect: after
    /// this many frames (`None`: it reads the connection to its end).
    pub fn disconnect_after(&self, log: usize, subscriber: usize, connection: u32) -> Option<u32> {
        let every = self.disconnect_every?;
        if connection + 1 >= self.max_connections {
            return None;
        }
        let mut x = self.seed
            ^ (log as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ (subscriber as u64).wrapping_mul(0xBF58_476D_1CE4_E5B9)
            ^ u64::from(connection).wrapping_mul(0x94D0_49BB_1331_11EB);
        // splitmix64: a seeded, portable choice (replays across platforms and versions).
        x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
        x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        x ^= x >> 31;
        Some(1 + (x % (2 * u64::from(every))) as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_checked() {
        let mut plan = LoadPlan::new(LoadSurface::Openwop);
        assert!(plan.validate().is_ok());
        plan.subscribers = 0;
        assert!(plan.validate().is_err());
        let debug = spec::openwop::StreamModeSelection::parse("debug").unwrap();
        let mut plan = LoadPlan::new(LoadSurface::Execution);
        plan.stream_mode = Some(debug.clone());
        assert!(plan.validate().is_err());
        let mut plan = LoadPlan::new(LoadSurface::Openwop);
        assert_eq!(plan.modes(), [spec::openwop::StreamMode::Updates]);
        plan.stream_mode = Some(debug);
        assert!(plan.validate().is_ok());
        assert_eq!(plan.modes(), [spec::openwop::StreamMode::Debug]);
    }

    #[test]
    fn disconnect_points_are_seeded_and_bounded() {
        let mut plan = LoadPlan::new(LoadSurface::Openwop);
        assert_eq!(plan.disconnect_after(0, 0, 0), None);
        plan.disconnect_every = Some(5);
        let points: Vec<u32> = (0..200)
            .filter_map(|s| plan.disconnect_after(0, s, 0))
            .collect();
        assert_eq!(points.len(), 200);
        assert!(points.iter().all(|p| (1..=10).contains(p)));
        assert!(points.iter().any(|p| *p != points[0]), "the points vary");
        assert_eq!(
            plan.disconnect_after(0, 7, 1),
            plan.disconnect_after(0, 7, 1)
        );
        assert_eq!(plan.disconnect_after(0, 7, plan.max_connections - 1), None);
    }
}
