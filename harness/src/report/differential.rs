//! Differential mode: each case's transcript against the target beside its transcript against
//! the reference runtime, normalised for what may differ by right, and the differences that
//! remain, aligned in two columns. Differences are INFO: they never change a verdict; they
//! show an implementer where a FAIL comes from.
//!
//! Normalised before comparing (each side on its own): ids the host chooses (UUIDs and long
//! opaque tokens become `<id:N>`, numbered by first appearance, so the same id seen twice is
//! still the same), times (RFC 3339 stamps, and values of members named like times or
//! durations, become `<time>`), the base URL (`<host>`), headers that vary by server (`date`,
//! `content-length`, …), SSE comments (keep-alives come by the clock), frame timings and the
//! fake providers' call counts (read when a step ends, they race with the host's work). The
//! options of these open points of `spec/open-points.json` are normalised too, and each case
//! lists those that applied: header name case, a JSON content type's parameters, an error's
//! `message` wording (and, on X, `provider_code`), the status a submission reports and the
//! status of an idempotent replay (200 or 202). The other open points a case borders are named
//! beside its differences: a difference there may be by right.

use std::fmt::Write as _;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;
use similar::{ChangeTag, TextDiff};

pub use super::model::{CaseDifference, DiffRow, Differential, RowKind};
use super::model::{CaseResult, ResultSurface, RunReport};
use crate::transcript::{FrameKind, StepRecord};

/// Lines of context kept around each difference.
const CONTEXT_LINES: usize = 2;
/// Most rows kept per case.
const ROW_LIMIT: usize = 400;
/// Most characters of one line kept in a row.
const LINE_LIMIT: usize = 2048;

/// Response headers left out: they vary by server or by the moment.
const VOLATILE_HEADERS: [&str; 9] = [
    "date",
    "content-length",
    "server",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "vary",
    "x-request-id",
    "etag",
];

impl Differential {
    /// Compares each case of `target` with the same case of `reference` (by id).
    pub fn compare(
        target: &RunReport,
        reference: &RunReport,
        reference_name: &str,
    ) -> Differential {
        let mut cases = Vec::new();
        let mut compared = 0;
        for case in &target.cases {
            let Some(other) = reference.cases.iter().find(|c| c.id == case.id) else {
                continue;
            };
            compared += 1;
            if let Some(difference) = compare_case(
                case,
                &target.target.base_url,
                other,
                &reference.target.base_url,
            ) {
                cases.push(difference);
            }
        }
        Differential {
            reference: reference_name.to_string(),
            cases_compared: compared,
            cases,
        }
    }
}

/// The difference of one case, when its normalised transcripts differ.
pub fn compare_case(
    target: &CaseResult,
    target_base: &str,
    reference: &CaseResult,
    reference_base: &str,
) -> Option<CaseDifference> {
    let (left, left_by_right) = normalised_lines(&target.transcript, target_base, target.surface);
    let (right, right_by_right) =
        normalised_lines(&reference.transcript, reference_base, reference.surface);
    let mut normalised: Vec<String> = left_by_right.into_iter().chain(right_by_right).collect();
    normalised.sort();
    normalised.dedup();
    let rows = align(&left, &right);
    let differing = rows
        .iter()
        .filter(|r| !matches!(r.kind, RowKind::Same | RowKind::Gap))
        .count() as u32;
    if differing == 0 && target.verdict == reference.verdict {
        return None;
    }
    let registry = spec::open_points::open_points();
    let mut open_points: Vec<String> = target
        .requirements
        .iter()
        .flat_map(|r| {
            registry
                .bordering(r)
                .map(|p| p.id.clone())
                .collect::<Vec<_>>()
        })
        .collect();
    open_points.sort();
    open_points.dedup();
    Some(CaseDifference {
        case: target.id.clone(),
        target_verdict: target.verdict,
        reference_verdict: reference.verdict,
        open_points,
        normalised,
        differing_lines: differing,
        rows,
    })
}

/// Numbers ids and strips times in one side's text.
struct Normaliser {
    base: String,
    ids: Vec<String>,
    /// `x.` or `w.`: the surface whose open points apply.
    surface: &'static str,
    /// The open points whose options were normalised away, by id.
    applied: std::collections::BTreeSet<String>,
}

static UUID: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
        .expect("a valid pattern")
});
static OPAQUE: LazyLock<Regex> = LazyLock::new(|| {
    // A prefix and 16 or more hex or base-62 characters with at least one digit: run ids,
    // `exe_<hex>`, cursors, keys.
    Regex::new(r"\b(?:[A-Za-z]{1,12}[_-])?[A-Za-z0-9]{16,}\b").expect("a valid pattern")
});
static SCRIPT_MARKER: LazyLock<Regex> = LazyLock::new(|| {
    // The harness's own per-run nonce in a fake-provider script marker.
    Regex::new(r"\[\[script:([^\]]*?)\.[0-9a-f]{8}\]\]").expect("a valid pattern")
});
static STAMP: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?")
        .expect("a valid pattern")
});

impl Normaliser {
    fn new(base_url: &str, surface: &'static str) -> Normaliser {
        Normaliser {
            base: base_url.trim_end_matches('/').to_string(),
            ids: Vec::new(),
            surface,
            applied: Default::default(),
        }
    }

    /// Records that an option of the surface's open point `name` was normalised.
    fn by_right(&mut self, name: &str) {
        self.applied.insert(format!("{}{name}", self.surface));
    }

    fn text(&mut self, text: &str) -> String {
        let text = if self.base.is_empty() {
            text.to_string()
        } else {
            text.replace(&self.base, "<host>")
        };
        let text = SCRIPT_MARKER
            .replace_all(&text, "[[script:$1.<nonce>]]")
            .into_owned();
        let text = STAMP.replace_all(&text, "<time>").into_owned();
        let text = UUID
            .replace_all(&text, |c: &regex::Captures<'_>| self.id(&c[0]))
            .into_owned();
        OPAQUE
            .replace_all(&text, |c: &regex::Captures<'_>| {
                let token = &c[0];
                if token.chars().any(|ch| ch.is_ascii_digit()) {
                    self.id(token)
                } else {
                    token.to_string()
                }
            })
            .into_owned()
    }

    fn id(&mut self, id: &str) -> String {
        let n = match self.ids.iter().position(|known| known == id) {
            Some(n) => n,
            None => {
                self.ids.push(id.to_string());
                self.ids.len() - 1
            }
        };
        format!("<id:{}>", n + 1)
    }

    fn json(&mut self, value: &Value, key: Option<&str>) -> Value {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                // An error's wording and its provider-native code are the host's to choose.
                let is_error = map.contains_key("code") || map.contains_key("error");
                let mut out = serde_json::Map::new();
                for k in keys {
                    let member = &map[k];
                    if is_error && k == "message" && member.is_string() {
                        self.by_right(if self.surface == "x." {
                            "errors.message-text"
                        } else {
                            "errors.details"
                        });
                        out.insert(k.clone(), Value::String("<message>".into()));
                    } else if self.surface == "x." && k == "provider_code" {
                        self.by_right("errors.provider-code");
                    } else {
                        out.insert(k.clone(), self.json(member, Some(k)));
                    }
                }
                Value::Object(out)
            }
            Value::Array(items) => Value::Array(items.iter().map(|v| self.json(v, key)).collect()),
            Value::Number(_) if key.is_some_and(is_time_key) => Value::String("<time>".into()),
            Value::String(s) if key.is_some_and(is_time_key) && !s.is_empty() => {
                Value::String("<time>".into())
            }
            Value::String(s) => Value::String(self.text(s)),
            other => other.clone(),
        }
    }
}

/// Members whose values are times or durations (`created_at`, `startedAt`, `duration_ms`,
/// `timestamp`, …).
fn is_time_key(key: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    key.ends_with("_at")
        || (key.ends_with("At") && key.len() > 2)
        || lower.ends_with("_ms")
        || (key.ends_with("Ms") && key.len() > 2)
        || lower.contains("timestamp")
        || lower == "time"
        || lower.contains("duration")
        || lower.contains("latency")
        || lower.contains("elapsed")
}

/// One side's transcript as normalised lines, and the open points (of the case's `surface`,
/// `execution` or `openwop`) whose options were normalised away.
pub fn normalised_lines(
    transcript: &[StepRecord],
    base_url: &str,
    surface: ResultSurface,
) -> (Vec<String>, Vec<String>) {
    let prefix = if surface == ResultSurface::Execution {
        "x."
    } else {
        "w."
    };
    let mut n = Normaliser::new(base_url, prefix);
    let mut lines = Vec::new();
    for step in transcript {
        lines.push(format!("== {} ({})", step.step, step.action));
        let mut blocks: Vec<Vec<String>> = Vec::new();
        for exchange in &step.exchanges {
            let mut block: Vec<String> = Vec::new();
            let request = &exchange.request;
            block.push(format!("> {} {}", request.method, n.text(&request.url)));
            if let Some(body) = &request.body {
                push_body(&mut block, &mut n, "> ", body);
            }
            if let Some(error) = &exchange.transport_error {
                block.push(format!(
                    "< transport error (unreachable: {})",
                    error.unreachable
                ));
            }
            let Some(response) = &exchange.response else {
                blocks.push(block);
                continue;
            };
            let submission = n.surface == "x."
                && request.method == "POST"
                && request
                    .url
                    .trim_end_matches('/')
                    .ends_with("/v1/executions");
            let keyed = request
                .headers
                .iter()
                .any(|h| h.name.eq_ignore_ascii_case("idempotency-key"));
            if submission && keyed && (200..=202).contains(&response.status) {
                // A replay may answer 200 or 202 (and a first submission 202).
                n.by_right("idempotency.replay-status");
                block.push("< 2xx (accepted or replayed)".to_string());
            } else {
                block.push(format!("< {}", response.status));
            }
            let mut headers: Vec<String> = Vec::new();
            for h in &response.headers {
                let name = h.name.to_ascii_lowercase();
                if VOLATILE_HEADERS.contains(&name.as_str()) {
                    continue;
                }
                if name != h.name {
                    n.by_right("http.header-name-case");
                }
                let mut value = n.text(&h.value);
                if name == "content-type" && value.contains(';') {
                    n.by_right("http.json-content-type-parameters");
                    value = value
                        .split(';')
                        .next()
                        .unwrap_or_default()
                        .trim()
                        .to_string();
                }
                headers.push(format!("< {name}: {value}"));
            }
            headers.sort();
            block.extend(headers);
            let events: Vec<_> = response.events().collect();
            if events.is_empty() && !response.body.is_empty() {
                match &response.json {
                    Some(json) if submission && json.get("status").is_some() => {
                        // The status a submission reports: the execution may have moved on.
                        n.by_right("submission.initial-status");
                        let mut json = json.clone();
                        json["status"] = Value::String("<as read>".into());
                        push_json(&mut block, &mut n, "< ", &json);
                    }
                    Some(json) => push_json(&mut block, &mut n, "< ", json),
                    None => push_body(&mut block, &mut n, "< ", &response.body),
                }
            }
            for frame in &response.frames {
                if let FrameKind::Event {
                    id,
                    event,
                    data,
                    json,
                    retry,
                } = &frame.kind
                {
                    let mut line = String::from("< event");
                    if let Some(event) = event {
                        let _ = write!(line, " {}", n.text(event));
                    }
                    if let Some(id) = id {
                        let _ = write!(line, " id={}", n.text(id));
                    }
                    if let Some(retry) = retry {
                        let _ = write!(line, " retry={retry}");
                    }
                    let data = match json {
                        Some(json) => n.json(json, None).to_string(),
                        None => n.text(data),
                    };
                    let _ = write!(line, " {data}");
                    block.push(line);
                }
            }
            if let Some(partial) = &response.trailing_partial_frame {
                block.push(format!("< partial frame {}", n.text(partial)));
            }
            block.push(format!("< end {}", end_name(&response.end)));
            blocks.push(block);
        }
        // Concurrent copies race: which one the host answered first is not a difference.
        if step.action == "concurrent" {
            blocks.sort();
        }
        lines.extend(blocks.into_iter().flatten());
        // The fake providers' call counts are left out: read when the step ends, they race
        // with the host's work; what the host answered shows a second execution.
    }
    (lines, n.applied.into_iter().collect())
}

fn end_name(end: &crate::transcript::BodyEnd) -> String {
    use crate::transcript::BodyEnd;
    match end {
        BodyEnd::ServerClosed => "server-closed".into(),
        BodyEnd::ClientStopped => "client-stopped".into(),
        BodyEnd::Timeout => "timeout".into(),
        BodyEnd::Broken(_) => "broken".into(),
        BodyEnd::TooLarge(_) => "too-large".into(),
    }
}

fn push_body(lines: &mut Vec<String>, n: &mut Normaliser, prefix: &str, body: &str) {
    match serde_json::from_str::<Value>(body) {
        Ok(json) => push_json(lines, n, prefix, &json),
        Err(_) => lines.extend(body.lines().map(|l| format!("{prefix}{}", n.text(l)))),
    }
}

fn push_json(lines: &mut Vec<String>, n: &mut Normaliser, prefix: &str, json: &Value) {
    let normalised = n.json(json, None);
    let pretty = serde_json::to_string_pretty(&normalised).unwrap_or_default();
    lines.extend(pretty.lines().map(|l| format!("{prefix}{l}")));
}

/// Aligns two sides: differing runs paired row by row, a few lines of context around each,
/// gaps between; at most [`ROW_LIMIT`] rows of at most [`LINE_LIMIT`] characters.
fn align(left: &[String], right: &[String]) -> Vec<DiffRow> {
    let left_text = left.join("\n") + "\n";
    let right_text = right.join("\n") + "\n";
    let diff = TextDiff::configure()
        .timeout(std::time::Duration::from_millis(500))
        .diff_lines(&left_text, &right_text);
    let mut rows = Vec::new();
    for (index, group) in diff.grouped_ops(CONTEXT_LINES).iter().enumerate() {
        if index > 0 {
            rows.push(DiffRow {
                kind: RowKind::Gap,
                target: None,
                reference: None,
            });
        }
        for op in group {
            let mut deleted = Vec::new();
            let mut inserted = Vec::new();
            for change in diff.iter_changes(op) {
                let line = change.value().trim_end_matches('\n').to_string();
                match change.tag() {
                    ChangeTag::Equal => rows.push(DiffRow {
                        kind: RowKind::Same,
                        target: Some(line.clone()),
                        reference: Some(line),
                    }),
                    ChangeTag::Delete => deleted.push(line),
                    ChangeTag::Insert => inserted.push(line),
                }
            }
            let pairs = deleted.len().max(inserted.len());
            for i in 0..pairs {
                let (target, reference) = (deleted.get(i).cloned(), inserted.get(i).cloned());
                let kind = match (&target, &reference) {
                    (Some(_), Some(_)) => RowKind::Changed,
                    (Some(_), None) => RowKind::TargetOnly,
                    _ => RowKind::ReferenceOnly,
                };
                rows.push(DiffRow {
                    kind,
                    target,
                    reference,
                });
            }
        }
    }
    for row in &mut rows {
        for side in [&mut row.target, &mut row.reference].into_iter().flatten() {
            if side.chars().count() > LINE_LIMIT {
                *side = side.chars().take(LINE_LIMIT).collect::<String>() + " …";
            }
        }
    }
    if rows.len() > ROW_LIMIT {
        rows.truncate(ROW_LIMIT);
        rows.push(DiffRow {
            kind: RowKind::Gap,
            target: Some(format!(
                "… more rows not shown (report.json has at most {ROW_LIMIT})"
            )),
            reference: None,
        });
    }
    rows
}

/// The aligned transcript as plain text, two columns of `width` characters.
pub fn render_text(difference: &CaseDifference, width: usize) -> String {
    let mut out = format!(
        "{}: target {}, reference {}{}\n",
        difference.case,
        difference.target_verdict,
        difference.reference_verdict,
        if difference.open_points.is_empty() {
            String::new()
        } else {
            format!(
                " (borders open point(s) {})",
                difference.open_points.join(", ")
            )
        }
    );
    let fit = |text: &str| -> String {
        let cut: String = text.chars().take(width).collect();
        format!("{cut:<width$}")
    };
    if !difference.normalised.is_empty() {
        let _ = writeln!(
            out,
            "normalised by right: {}",
            difference.normalised.join(", ")
        );
    }
    let _ = writeln!(out, "  {} | {}", fit("target"), fit("reference"));
    for row in &difference.rows {
        let mark = match row.kind {
            RowKind::Same => ' ',
            RowKind::Changed => '~',
            RowKind::TargetOnly => '<',
            RowKind::ReferenceOnly => '>',
            RowKind::Gap => '⋯',
        };
        let _ = writeln!(
            out,
            "{mark} {} | {}",
            fit(row.target.as_deref().unwrap_or("")),
            fit(row.reference.as_deref().unwrap_or(""))
        )
        .map(|()| ());
    }
    out.lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_numbered_by_first_appearance_and_times_dropped() {
        let mut n = Normaliser::new("http://127.0.0.1:4000", "x.");
        let a = n.text("http://127.0.0.1:4000/v1/executions/0190c1d2-3e4f-7a8b-9c0d-112233445566 at 2026-12-01T11:00:00.123Z");
        assert_eq!(a, "<host>/v1/executions/<id:1> at <time>");
        assert_eq!(n.text("0190c1d2-3e4f-7a8b-9c0d-112233445566"), "<id:1>");
        assert_eq!(n.text("exe_0123456789abcdef0123"), "<id:2>");
        assert_eq!(n.text("text.delta"), "text.delta");
        let json = n.json(
            &serde_json::json!({"created_at": 17, "durationMs": 3, "b": "x"}),
            None,
        );
        assert_eq!(
            json,
            serde_json::json!({"b": "x", "created_at": "<time>", "durationMs": "<time>"})
        );
    }

    #[test]
    fn every_open_point_normalised_by_right_is_in_the_registry() {
        let registry = spec::open_points::open_points();
        for surface in ["x.", "w."] {
            for name in ["http.header-name-case", "http.json-content-type-parameters"] {
                let id = format!("{surface}{name}");
                assert!(registry.get(&id).is_some(), "{id}");
            }
        }
        for id in [
            "x.errors.message-text",
            "x.errors.provider-code",
            "w.errors.details",
            "x.submission.initial-status",
            "x.idempotency.replay-status",
        ] {
            assert!(registry.get(id).is_some(), "{id}");
        }
    }

    #[test]
    fn differing_runs_are_aligned_row_by_row() {
        let left: Vec<String> = ["a", "b", "c", "d"].map(String::from).to_vec();
        let right: Vec<String> = ["a", "B", "c", "d", "e"].map(String::from).to_vec();
        let rows = align(&left, &right);
        assert!(rows.iter().any(|r| r.kind == RowKind::Changed
            && r.target.as_deref() == Some("b")
            && r.reference.as_deref() == Some("B")));
        assert!(
            rows.iter()
                .any(|r| r.kind == RowKind::ReferenceOnly && r.reference.as_deref() == Some("e"))
        );
    }
}
