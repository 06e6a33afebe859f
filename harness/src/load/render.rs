//! The load result as a Markdown summary and a self-contained HTML page whose plots (latency
//! histogram, deliveries over time) are inline SVG: no script, no external resource.

use std::fmt::Write as _;

use super::result::{HistogramBucket, LoadResult, Percentiles, TimelineBucket};

fn ms(value: Option<f64>) -> String {
    value.map_or("–".into(), |v| format!("{v:.1}"))
}

fn triple(p: &Percentiles) -> String {
    format!("{} / {} / {}", ms(p.p50), ms(p.p99), ms(p.max))
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The one-screen summary lines (console and Markdown share them).
pub fn summary_lines(result: &LoadResult) -> Vec<String> {
    let t = &result.totals;
    let c = &result.connections;
    // A run's events after its terminal one may arrive on top of the required ones.
    let more_than_expected = t.deliveries > t.expected_deliveries;
    vec![
        format!(
            "verdict: {:?} — {} subscriber(s) on {} {}(s), {} of them read to the end",
            result.verdict,
            t.subscribers,
            result.plan.logs,
            match result.plan.surface {
                super::LoadSurface::Execution => "execution",
                super::LoadSurface::Openwop => "run",
            },
            t.completed_subscribers
        ),
        format!(
            "deliveries: {} {} {} expected{}; lost {}, duplicated {}, reordered {}, after the terminal event {}, unexpected {}",
            t.deliveries,
            if more_than_expected { "for" } else { "of" },
            t.expected_deliveries,
            if more_than_expected {
                " (a run's events after its terminal one may add to them)"
            } else {
                ""
            },
            t.lost,
            t.duplicated,
            t.reordered,
            t.after_terminal,
            t.unexpected
        ),
        format!(
            "warnings: {} stream(s) open after the terminal event, {} keep-alive gap(s)",
            t.open_after_terminal, t.keepalive_gaps
        ),
        format!(
            "latency ms p50/p99/max: {} (host timestamp → arrival; see the clock caveat)",
            triple(&result.latency_ms)
        ),
        format!(
            "time to first event ms p50/p99/max: {}; to first byte: {}",
            triple(&result.time_to_first_event_ms),
            triple(&result.time_to_first_byte_ms)
        ),
        format!(
            "frames/s: {:.0} total over {:.2} s; per stream p50 {}",
            result.frames_per_s_total,
            result.wall_s,
            ms(result.frames_per_s_per_stream.p50)
        ),
        format!(
            "connections: {} opened, {} forced disconnects, {} resumptions, {} × 429 with Retry-After, {} × 429 without, {} × 503 with Retry-After, {} error(s)",
            c.opened,
            c.forced_disconnects,
            c.resumptions,
            c.rate_limited,
            c.rate_limited_without_retry_after,
            c.at_capacity,
            c.errors
        ),
    ]
}

/// The Markdown summary.
pub fn to_markdown(result: &LoadResult) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Load: {}\n", result.target);
    for line in summary_lines(result) {
        let _ = writeln!(out, "- {line}");
    }
    for reason in &result.not_judged_reasons {
        let _ = writeln!(out, "- not judged: {reason}");
    }
    let _ = writeln!(out, "\n> {}\n", result.clock_caveat);
    if !result.anomalies.is_empty() {
        let _ = writeln!(
            out,
            "## Anomalies\n\n| log | subscriber | kind | detail |\n|---|---:|---|---|"
        );
        for a in &result.anomalies {
            let _ = writeln!(
                out,
                "| `{}` | {} | {:?} | {} |",
                a.log,
                a.subscriber,
                a.kind,
                a.detail.replace('|', "\\|")
            );
        }
        out.push('\n');
    }
    out.push_str(&streams_markdown(result));
    out
}

fn streams_markdown(result: &LoadResult) -> String {
    let mut out = String::from(
        "## Slowest streams\n\n| log | subscriber | deliveries | frames/s | first byte ms | first event ms | largest gap ms | connections |\n|---|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for s in &result.slowest_streams {
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {:.1} | {} | {} | {:.1} | {} |",
            s.log,
            s.subscriber,
            s.deliveries,
            s.frames_per_s,
            ms(s.time_to_first_byte_ms),
            ms(s.time_to_first_event_ms),
            s.largest_gap_ms,
            s.connections
        );
    }
    out
}

/// A bar chart as inline SVG: `bars` are `(label, value)`.
fn bar_chart(title: &str, x_label: &str, bars: &[(String, u64)]) -> String {
    let width = 720.0;
    let height = 220.0;
    let left = 50.0;
    let bottom = 40.0;
    let max = bars.iter().map(|b| b.1).max().unwrap_or(0).max(1) as f64;
    let slot = (width - left - 10.0) / bars.len().max(1) as f64;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {width} {height}\" width=\"{width}\" height=\"{height}\" role=\"img\" aria-label=\"{}\">",
        escape(title)
    );
    let _ = write!(
        svg,
        "<text x=\"{left}\" y=\"14\" font-size=\"12\">{}</text><text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">{}</text><text x=\"4\" y=\"30\" font-size=\"10\">{max:.0}</text>",
        escape(title),
        left + (width - left) / 2.0,
        height - 4.0,
        escape(x_label)
    );
    let plot = height - bottom - 20.0;
    let label_every = (bars.len() / 8).max(1);
    for (i, (label, value)) in bars.iter().enumerate() {
        let h = plot * (*value as f64) / max;
        let x = left + i as f64 * slot;
        let _ = write!(
            svg,
            "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{h:.1}\" fill=\"#4a78b5\"><title>{}: {value}</title></rect>",
            height - bottom - h,
            (slot - 1.0).max(1.0),
            escape(label)
        );
        if i % label_every == 0 {
            let _ = write!(
                svg,
                "<text x=\"{x:.1}\" y=\"{}\" font-size=\"9\">{}</text>",
                height - bottom + 12.0,
                escape(label)
            );
        }
    }
    let _ = write!(
        svg,
        "<line x1=\"{left}\" y1=\"{y}\" x2=\"{width}\" y2=\"{y}\" stroke=\"#333\"/></svg>",
        y = height - bottom
    );
    svg
}

fn histogram_svg(buckets: &[HistogramBucket]) -> String {
    let bars: Vec<(String, u64)> = buckets
        .iter()
        .map(|b| (format!("<{:.1}", b.to_ms), b.count))
        .collect();
    bar_chart(
        "Delivery latency (deliveries per bucket)",
        "latency, ms (upper bound of each bucket, log scale)",
        &bars,
    )
}

fn timeline_svg(buckets: &[TimelineBucket]) -> String {
    let bars: Vec<(String, u64)> = buckets
        .iter()
        .map(|b| (format!("{:.1}s", b.at_ms as f64 / 1000.0), b.deliveries))
        .collect();
    bar_chart(
        "Deliveries over time (all streams)",
        "time since the start",
        &bars,
    )
}

/// The HTML page section (also usable inside another page): summary, plots, anomalies, the
/// slowest streams.
pub fn to_html_section(result: &LoadResult) -> String {
    let mut out = String::from("<section class=\"load\"><h2>Load</h2><ul>");
    for line in summary_lines(result) {
        let _ = write!(out, "<li>{}</li>", escape(&line));
    }
    for reason in &result.not_judged_reasons {
        let _ = write!(out, "<li>not judged: {}</li>", escape(reason));
    }
    let _ = write!(
        out,
        "</ul><p><em>{}</em></p>{}{}",
        escape(&result.clock_caveat),
        histogram_svg(&result.latency_histogram),
        timeline_svg(&result.deliveries_over_time)
    );
    if !result.anomalies.is_empty() {
        out.push_str("<h3>Anomalies</h3><table><tr><th>log</th><th>subscriber</th><th>kind</th><th>detail</th></tr>");
        for a in &result.anomalies {
            let _ = write!(
                out,
                "<tr><td><code>{}</code></td><td>{}</td><td>{:?}</td><td>{}</td></tr>",
                escape(&a.log),
                a.subscriber,
                a.kind,
                escape(&a.detail)
            );
        }
        out.push_str("</table>");
    }
    out.push_str("<h3>Slowest streams</h3><table><tr><th>log</th><th>subscriber</th><th>deliveries</th><th>frames/s</th><th>first byte ms</th><th>first event ms</th><th>largest gap ms</th><th>connections</th></tr>");
    for s in &result.slowest_streams {
        let _ = write!(
            out,
            "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{:.1}</td><td>{}</td><td>{}</td><td>{:.1}</td><td>{}</td></tr>",
            escape(&s.log),
            s.subscriber,
            s.deliveries,
            s.frames_per_s,
            ms(s.time_to_first_byte_ms),
            ms(s.time_to_first_event_ms),
            s.largest_gap_ms,
            s.connections
        );
    }
    out.push_str("</table></section>");
    out
}

/// A complete, self-contained HTML page.
pub fn to_html(result: &LoadResult) -> String {
    format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Load: {}</title>\
         <style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:2px 6px}}</style>\
         </head><body>{}</body></html>\n",
        escape(&result.target),
        to_html_section(result)
    )
}
