//! Figures over samples: nearest-rank percentiles, a log-spaced latency histogram, deliveries
//! per time slice.

use super::result::{HistogramBucket, Percentiles, TimelineBucket};

/// p50 / p99 / max of `samples` (nearest rank; non-finite samples ignored).
pub(crate) fn percentiles(samples: &[f64]) -> Percentiles {
    let mut sorted: Vec<f64> = samples.iter().copied().filter(|s| s.is_finite()).collect();
    sorted.sort_by(f64::total_cmp);
    let rank = |p: f64| -> Option<f64> {
        if sorted.is_empty() {
            return None;
        }
        let index = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1;
        Some(round3(sorted[index]))
    };
    Percentiles {
        count: sorted.len() as u64,
        p50: rank(0.50),
        p99: rank(0.99),
        max: sorted.last().copied().map(round3),
    }
}

/// Three decimals, so reports do not carry float noise.
pub(crate) fn round3(value: f64) -> f64 {
    (value * 1000.0).round() / 1000.0
}

/// Latency buckets: below 0.1 ms, then four per decade up to the largest sample.
pub(crate) fn histogram(samples: &[f64]) -> Vec<HistogramBucket> {
    let finite: Vec<f64> = samples.iter().copied().filter(|s| s.is_finite()).collect();
    let Some(max) = finite.iter().copied().reduce(f64::max) else {
        return Vec::new();
    };
    let mut edges = vec![f64::NEG_INFINITY, 0.1];
    while *edges.last().unwrap_or(&0.1) <= max {
        let last = *edges.last().unwrap_or(&0.1);
        edges.push(round3(last * 10f64.powf(0.25)));
    }
    let mut counts = vec![0u64; edges.len() - 1];
    for sample in finite {
        let index = edges.partition_point(|e| *e <= sample).saturating_sub(1);
        if let Some(count) = counts.get_mut(index.min(edges.len() - 2)) {
            *count += 1;
        }
    }
    counts
        .into_iter()
        .enumerate()
        .map(|(i, count)| HistogramBucket {
            from_ms: if i == 0 { 0.0 } else { edges[i] },
            to_ms: edges[i + 1],
            count,
        })
        .collect()
}

/// Deliveries per slice of `slice_ms` since the start (slices chosen so there are at most 120).
pub(crate) fn timeline(arrivals_ms: &[f64]) -> Vec<TimelineBucket> {
    let Some(last) = arrivals_ms.iter().copied().reduce(f64::max) else {
        return Vec::new();
    };
    let slice_ms = [10u64, 50, 100, 250, 500, 1000, 5000, 10_000, 60_000]
        .into_iter()
        .find(|s| last / (*s as f64) <= 120.0)
        .unwrap_or(60_000);
    let slices = (last / slice_ms as f64) as usize + 1;
    let mut counts = vec![0u64; slices];
    for at in arrivals_ms {
        if let Some(count) = counts.get_mut((at.max(0.0) / slice_ms as f64) as usize) {
            *count += 1;
        }
    }
    counts
        .into_iter()
        .enumerate()
        .map(|(i, deliveries)| TimelineBucket {
            at_ms: i as u64 * slice_ms,
            deliveries,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let samples: Vec<f64> = (1..=100).map(f64::from).collect();
        let p = percentiles(&samples);
        assert_eq!(
            (p.count, p.p50, p.p99, p.max),
            (100, Some(50.0), Some(99.0), Some(100.0))
        );
        assert_eq!(percentiles(&[]).p50, None);
    }

    #[test]
    fn histogram_and_timeline_count_every_sample() {
        let samples = [0.05, 0.5, 5.0, 50.0, 500.0];
        let buckets = histogram(&samples);
        assert_eq!(buckets.iter().map(|b| b.count).sum::<u64>(), 5);
        let slices = timeline(&[0.0, 5.0, 15.0, 1190.0]);
        assert_eq!(slices.iter().map(|b| b.deliveries).sum::<u64>(), 4);
        assert!(slices.len() <= 121);
    }
}
