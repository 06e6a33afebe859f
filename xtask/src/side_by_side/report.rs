//! The side-by-side tables: each side's figures (the median of its runs, measure by measure)
//! and the runtime's ratios to a bare server against the targets.

use serde_json::Value;

use super::servers::{Load, Side};

/// Which load a set of runs measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// N events published as fast as possible.
    Burst,
    /// N events paced at a fixed rate.
    Paced,
}

impl Mode {
    fn title(self, load: Load) -> String {
        match (self, load.rate) {
            (Mode::Paced, Some(rate)) => format!(
                "paced: S = {}, N = {}, {rate} events/s",
                load.subscribers, load.events
            ),
            _ => format!("burst: S = {}, N = {}", load.subscribers, load.events),
        }
    }
}

/// Every run of one side under one mode.
#[derive(Debug, Clone)]
pub struct Runs {
    /// The mode.
    pub mode: Mode,
    /// The load.
    pub load: Load,
    /// The side.
    pub side: Side,
    /// `sse-load`'s JSON line of each run.
    pub lines: Vec<Value>,
}

fn number(line: &Value, path: &[&str]) -> Option<f64> {
    path.iter().try_fold(line, |v, k| v.get(k))?.as_f64()
}

fn median(mut values: Vec<f64>) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    Some(if values.len() % 2 == 1 {
        values[mid]
    } else {
        (values[mid - 1] + values[mid]) / 2.0
    })
}

impl Runs {
    /// The median of one measure over the runs that report it.
    pub fn median(&self, path: &[&str]) -> Option<f64> {
        median(self.lines.iter().filter_map(|l| number(l, path)).collect())
    }

    /// The largest of one count over the runs.
    fn worst(&self, count: impl Fn(&Value) -> f64) -> f64 {
        self.lines.iter().map(count).fold(0.0, f64::max)
    }

    /// Deliveries that never arrived, in the worst run (`expected − total`, plus every run that
    /// printed no figures at all counts its whole expectation).
    pub fn lost(&self) -> f64 {
        let expected = (self.load.subscribers * self.load.events) as f64;
        self.worst(|l| {
            let total = number(l, &["total_deliveries"]).unwrap_or(0.0);
            (number(l, &["expected_deliveries"]).unwrap_or(expected) - total).max(0.0)
        })
    }

    /// Order anomalies beyond the ones a gap-free stream of this side shows, in the worst run.
    pub fn excess_anomalies(&self) -> f64 {
        let offset = self.side.offset_anomalies(self.load.subscribers) as f64;
        self.worst(|l| (number(l, &["seq_anomalies"]).unwrap_or(0.0) - offset).abs())
    }

    /// Frames without `t_ns` beyond the untimed backlog event, in the worst run.
    pub fn excess_untimed(&self) -> f64 {
        let expected = self.side.untimed_frames(self.load.subscribers) as f64;
        self.worst(|l| (number(l, &["frames_without_t_ns"]).unwrap_or(0.0) - expected).max(0.0))
    }

    /// Runs that ended with errors or incomplete streams.
    pub fn incomplete(&self) -> usize {
        self.lines
            .iter()
            .filter(|l| l.get("complete").and_then(Value::as_bool) != Some(true))
            .count()
    }
}

fn fmt(value: Option<f64>, decimals: usize) -> String {
    value.map_or_else(|| "n/a".to_string(), |v| format!("{v:.decimals$}"))
}

fn thousands(value: Option<f64>) -> String {
    value.map_or_else(|| "n/a".to_string(), |v| format!("{:.0} k", v / 1e3))
}

/// One mode's table: a row per side.
pub fn side_table(runs: &[&Runs]) -> String {
    let Some(first) = runs.first() else {
        return String::new();
    };
    let mut out = format!(
        "### {} (median of {} run(s) per side)\n\n",
        first.mode.title(first.load),
        first.lines.len()
    );
    out.push_str(
        "| side | complete runs | deliveries/s | wall s | latency p50 / p99 / max (ms) | \
         server idle KB / subscriber | server peak RSS (MiB) | server CPU µs / delivery | \
         client peak RSS (MiB) | lost deliveries | order anomalies beyond the log's start | \
         untimed frames beyond the backlog event |\n",
    );
    out.push_str("|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for r in runs {
        let mib = |path: &[&str]| r.median(path).map(|kb| kb / 1024.0);
        out.push_str(&format!(
            "| {} | {}/{} | {} | {} | {} / {} / {} | {} | {} | {} | {} | {} | {} | {} |\n",
            r.side.label(),
            r.lines.len() - r.incomplete(),
            r.lines.len(),
            thousands(r.median(&["deliveries_per_s"])),
            fmt(r.median(&["wall_s"]), 2),
            fmt(r.median(&["latency_ms", "p50"]), 1),
            fmt(r.median(&["latency_ms", "p99"]), 1),
            fmt(r.median(&["latency_ms", "max"]), 1),
            fmt(r.median(&["server_idle_kb_per_subscriber"]), 1),
            fmt(mib(&["server_peak_rss_kb"]), 1),
            fmt(r.median(&["server_cpu_us_per_delivery"]), 2),
            fmt(mib(&["client_peak_rss_kb"]), 1),
            r.lost(),
            r.excess_anomalies(),
            r.excess_untimed(),
        ));
    }
    out
}

/// A ratio against its target: `0.93 (≥ 0.8: yes)`.
fn verdict(ratio: Option<f64>, target: f64, at_least: bool) -> String {
    match ratio {
        None => "n/a".to_string(),
        Some(r) => {
            let met = if at_least { r >= target } else { r <= target };
            let sign = if at_least { "≥" } else { "≤" };
            format!(
                "{r:.2} ({sign} {target}: {})",
                if met { "met" } else { "MISSED" }
            )
        }
    }
}

fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    }
}

/// Which bare server a ratio divides by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Baseline {
    /// The shared anchor, with its own 41-byte frame.
    Anchor,
    /// The same bare server writing the runtime surface's frame.
    Framed,
}

impl Baseline {
    /// The bare side a runtime side is divided by.
    fn of(self, runtime: Side) -> Side {
        match (self, runtime) {
            (Baseline::Framed, Side::RuntimeX) => Side::FramedX,
            (Baseline::Framed, Side::RuntimeW) => Side::FramedW,
            _ => Side::Anchor,
        }
    }

    fn title(self) -> &'static str {
        match self {
            Baseline::Anchor => {
                "### Ratios, runtime / anchor with its own frame (same client, same machine, same run)"
            }
            Baseline::Framed => {
                "### Ratios, runtime / the same bare server writing the runtime's frame (same client, same machine, same run)"
            }
        }
    }
}

/// The ratios of each runtime side to `baseline`, with the targets.
pub fn ratio_table(all: &[Runs], baseline: Baseline) -> String {
    let find = |mode: Mode, side: Side| all.iter().find(|r| r.mode == mode && r.side == side);
    // Idle cost per subscriber is measured before every run: the median over both modes.
    let idle = |side: Side| {
        median(
            all.iter()
                .filter(|r| r.side == side)
                .flat_map(|r| r.lines.iter())
                .filter_map(|l| number(l, &["server_idle_kb_per_subscriber"]))
                .collect(),
        )
    };
    let measure = |mode: Mode, side: Side, path: &[&str]| find(mode, side)?.median(path);
    let mut out = format!(
        "{}\n\n| measure | target | surface X | surface W |\n|---|---|---|---|\n",
        baseline.title()
    );
    let sides = [Side::RuntimeX, Side::RuntimeW];
    let row = |name: &str, target: &str, cells: [String; 2]| {
        format!("| {name} | {target} | {} | {} |\n", cells[0], cells[1])
    };
    out.push_str(&row(
        "deliveries/s, burst",
        "≥ 0.8×",
        sides.map(|s| {
            let bare = measure(Mode::Burst, baseline.of(s), &["deliveries_per_s"]);
            verdict(
                ratio(measure(Mode::Burst, s, &["deliveries_per_s"]), bare),
                0.8,
                true,
            )
        }),
    ));
    out.push_str(&row(
        "server memory per idle subscriber",
        "≤ 2×",
        sides.map(|s| verdict(ratio(idle(s), idle(baseline.of(s))), 2.0, false)),
    ));
    out.push_str(&row(
        "p99 latency, paced",
        "≤ 1.5×",
        sides.map(|s| {
            let bare = measure(Mode::Paced, baseline.of(s), &["latency_ms", "p99"]);
            verdict(
                ratio(measure(Mode::Paced, s, &["latency_ms", "p99"]), bare),
                1.5,
                false,
            )
        }),
    ));
    let lost = |side: Side| {
        let runs: Vec<&Runs> = all.iter().filter(|r| r.side == side).collect();
        let lost: f64 = runs.iter().map(|r| r.lost()).sum();
        let anomalies: f64 = runs.iter().map(|r| r.excess_anomalies()).sum();
        let met = lost == 0.0 && anomalies == 0.0 && runs.iter().all(|r| r.incomplete() == 0);
        format!(
            "{lost} lost, {anomalies} out of order ({})",
            if met { "met" } else { "MISSED" }
        )
    };
    out.push_str(&row(
        "lost or reordered events, every run",
        "0",
        sides.map(lost),
    ));
    out
}
