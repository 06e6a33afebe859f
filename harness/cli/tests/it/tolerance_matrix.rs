//! The tolerance matrix as tests: the corpus tolerates the profiles of the reference runtime
//! that take the options the seeds leave open (no FAIL, no WARN, no ERROR, INFO only from
//! CONTRACT-level checks), and every open point of `spec/open-points.json` is exercised.
//!
//! The fast tests (the divergent, deferred and updates-only profiles, each against the whole
//! corpus) always run; the full matrix (every non-standard profile) runs when `CI=true` or
//! `CONFORMANCE_SELFTEST=1`, like the kill matrix.
//!
//! One exception to "no WARN": the updates-only profile departs on purpose from the chapter's
//! "SHOULD implement all four" (open point `w.stream-mode.implemented-modes`, option `subset`),
//! so a WARN from it is tolerated exactly at the `events.stream-mode.should-implement-*`
//! requirements of the modes it lacks (`BuiltInProfile::departs_from`), and nowhere else.

use super::probed_runner::corpus;
use std::collections::BTreeSet;
use std::path::Path;

use conformance_cli::launch::BuiltInProfile;
use conformance_cli::tolerance::{
    ToleranceMatrix, matrix_from_reports, matrix_profiles, profile_reports, render_markdown,
    tolerance_matrix,
};
use harness::verdict::Verdict;

/// Open points no built-in profile yet takes another option at (no knob in the reference
/// runtime yet). The list only shrinks: a point that gains a profile must leave it.
const POINTS_WITHOUT_A_DIVERGENT_PROFILE: &[&str] = &[];

fn write(matrix: &ToleranceMatrix, name: &str) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/tolerance-matrix");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(name), render_markdown(matrix)).unwrap();
}

fn assert_tolerated(matrix: &ToleranceMatrix) {
    let lines: Vec<String> = matrix
        .intolerances
        .iter()
        .map(|i| {
            format!(
                "[{}] {} {} ({}): {}",
                i.profile,
                i.verdict,
                i.case,
                i.level.as_str(),
                i.message
            )
        })
        .collect();
    assert!(
        lines.is_empty(),
        "cases that fail a host for an option the seeds leave open:\n{}",
        lines.join("\n")
    );
}

#[test]
fn the_registry_names_exactly_the_built_in_profiles() {
    let registry = spec::open_points::open_points();
    let named: Vec<&str> = registry.profiles.iter().map(String::as_str).collect();
    let built_in: Vec<&str> = BuiltInProfile::ALL.iter().map(|p| p.as_str()).collect();
    assert_eq!(named, built_in);
}

#[test]
fn every_open_point_is_taken_differently_by_some_profile() {
    let registry = spec::open_points::open_points();
    let pending: BTreeSet<&str> = POINTS_WITHOUT_A_DIVERGENT_PROFILE.iter().copied().collect();
    for id in &pending {
        assert!(registry.get(id).is_some(), "`{id}` is not an open point");
    }
    let mut uncovered = Vec::new();
    let mut newly_covered = Vec::new();
    for point in &registry.points {
        // A point no profile can take otherwise says why, and is exercised on made-up
        // transcripts instead.
        let covered = !point.divergent_profiles().is_empty() || point.exercised_otherwise.is_some();
        match (covered, pending.contains(point.id.as_str())) {
            (false, false) => uncovered.push(point.id.as_str()),
            (true, true) => newly_covered.push(point.id.as_str()),
            _ => {}
        }
    }
    assert!(
        uncovered.is_empty(),
        "open points no built-in profile takes another option at: {uncovered:?}"
    );
    assert!(
        newly_covered.is_empty(),
        "now taken by a profile: remove from POINTS_WITHOUT_A_DIVERGENT_PROFILE: {newly_covered:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_corpus_tolerates_the_divergent_profile() {
    let cases = corpus();
    let matrix = tolerance_matrix(&cases, &[BuiltInProfile::Divergent], 8, 1.0)
        .await
        .unwrap();
    write(&matrix, "divergent.md");
    assert_tolerated(&matrix);
    // What the divergent profile diverges at, some case ran against.
    let unexercised: Vec<&str> = matrix
        .points
        .iter()
        .filter(|p| p.divergent_options.contains_key("divergent") && !p.exercised())
        .map(|p| p.point.as_str())
        .collect();
    assert!(
        unexercised.is_empty(),
        "open points the divergent profile diverges at but no case ran against: {unexercised:?}"
    );
}

/// The open point `point` was exercised by some case under `profile`.
fn assert_exercised(matrix: &ToleranceMatrix, point: &str, profile: BuiltInProfile) {
    let row = matrix
        .points
        .iter()
        .find(|p| p.point == point)
        .unwrap_or_else(|| panic!("open point {point}"));
    assert!(
        row.divergent_options.contains_key(profile.as_str()),
        "{profile} does not take another option at {point}: {row:?}"
    );
    assert!(
        row.exercised(),
        "no case bordering {point} ran against {profile}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_corpus_tolerates_a_host_serving_updates_only_but_for_the_missing_modes_shoulds() {
    let cases = corpus();
    let profile = BuiltInProfile::UpdatesOnly;
    let reports = profile_reports(&cases, &[profile], 8, 1.0).await.unwrap();
    let matrix = matrix_from_reports(spec::open_points::open_points(), &reports);
    write(&matrix, "updates-only.md");
    // 0 FAIL, and WARN only at the should-implement-* requirements of values, messages, debug.
    assert_tolerated(&matrix);
    assert_exercised(&matrix, "w.stream-mode.implemented-modes", profile);
    // Its polls answer one event at a time: the cases moved to poll read the log in pages.
    assert_exercised(&matrix, "w.poll.page-size", profile);
    let report = &reports[0].1;
    let verdict = |id: &str| {
        report
            .cases
            .iter()
            .find(|c| c.id == id)
            .unwrap_or_else(|| panic!("case {id}"))
    };
    // The departure shows where the SHOULD is judged (the profile really lacks the modes).
    let optional = verdict("w.stream-mode.optional-modes-implemented");
    assert_eq!(optional.verdict, Verdict::Warn, "{optional:#?}");
    assert!(
        matrix.profiles[0]
            .departures
            .contains(&"w.stream-mode.optional-modes-implemented".to_string())
    );
    // Refusing a mode the host lacks is the chapter's MUST, and it holds.
    let refused = verdict("w.stream-mode.each-mode-served-or-refused");
    assert!(
        matches!(refused.verdict, Verdict::Pass | Verdict::Info),
        "{refused:#?}"
    );
    // Every case needing a missing mode SKIPs by the probe (never BLOCKED, never judged).
    let missing = [
        "stream-mode:values",
        "stream-mode:messages",
        "stream-mode:debug",
    ];
    let mut skipped = 0;
    for loaded in &cases {
        if !loaded
            .case
            .needs
            .iter()
            .any(|n| missing.contains(&n.to_string().as_str()))
        {
            continue;
        }
        let result = verdict(&loaded.case.id);
        assert_eq!(
            result.verdict,
            Verdict::Skip,
            "{} needs a mode the host lacks: {:?}",
            result.id,
            result.reason
        );
        skipped += 1;
    }
    assert!(skipped > 0, "no case needs values, messages or debug");
    // A case that reads a missing mode only in some steps (their `needs`) is judged on the
    // others: those steps are not taken, and the transcript says why.
    let mut judged_without = 0;
    for loaded in &cases {
        let optional: Vec<&str> = optional_steps(&loaded.case.steps);
        if optional.is_empty() {
            continue;
        }
        let result = verdict(&loaded.case.id);
        assert_eq!(
            result.verdict,
            Verdict::Pass,
            "{}: {:?}",
            result.id,
            result.reason
        );
        for step in optional {
            let record = result
                .transcript
                .iter()
                .find(|r| r.step == step)
                .unwrap_or_else(|| panic!("{}: no record of step {step}", result.id));
            assert!(
                record.exchanges.is_empty()
                    && record
                        .not_taken
                        .as_deref()
                        .is_some_and(|why| why.contains("stream-mode:")),
                "{}: step {step} taken: {record:?}",
                result.id
            );
        }
        judged_without += 1;
    }
    assert!(
        judged_without > 0,
        "no case reads a missing mode in some steps only"
    );
    // A wait on poll for an event past the first page reads on (pages and their join).
    let cancel = verdict("w.terminal.cancel");
    let wait = cancel
        .transcript
        .iter()
        .find(|r| r.action == "poll_until")
        .expect("w.terminal.cancel waits on poll");
    assert!(
        wait.completed && wait.exchanges.len() > 2,
        "one-event pages not read on: {wait:?}"
    );
}

/// The ids of the steps (nested ones too) that need an optional stream mode.
fn optional_steps(steps: &[harness::case::Step]) -> Vec<&str> {
    steps
        .iter()
        .flat_map(|step| {
            let reads_optional_mode = step
                .needs
                .iter()
                .any(|need| need.to_string().starts_with("stream-mode:"));
            let own = reads_optional_mode.then_some(step.id.as_deref()).flatten();
            own.into_iter()
                .chain(optional_steps(step.action.nested_steps()))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_corpus_tolerates_the_other_side_of_upstreams_contradictions() {
    let cases = corpus();
    let profile = BuiltInProfile::Deferred;
    let reports = profile_reports(&cases, &[profile], 8, 1.0).await.unwrap();
    let matrix = matrix_from_reports(spec::open_points::open_points(), &reports);
    write(&matrix, "deferred.md");
    assert_tolerated(&matrix);
    assert_exercised(&matrix, "w.upstream.contradictions", profile);
    // The other side was really on the wire: a `negotiation.decided` event, and
    // `interrupt.requested` without the identity members, in the events the cases read.
    let report = &reports[0].1;
    let mut events = Vec::new();
    for case in &report.cases {
        run_events_in(
            &serde_json::to_value(&case.transcript).unwrap(),
            &mut events,
        );
    }
    let of_type = |t: &'static str| events.iter().filter(move |e| e["type"] == t);
    assert!(
        of_type("negotiation.decided").count() > 0,
        "no case read a negotiation.decided event"
    );
    let requested: Vec<&serde_json::Value> = of_type("interrupt.requested").collect();
    assert!(
        !requested.is_empty(),
        "no case read an interrupt.requested event"
    );
    for event in requested {
        let payload = &event["payload"];
        assert!(
            payload.get("interruptId").is_none() && payload.get("nodeId").is_none(),
            "{event}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_corpus_tolerates_the_framings_and_timings_a_host_may_choose() {
    let cases = corpus();
    let profile = BuiltInProfile::UpstreamFraming;
    let reports = profile_reports(&cases, &[profile], 8, 1.0).await.unwrap();
    let matrix = matrix_from_reports(spec::open_points::open_points(), &reports);
    write(&matrix, "upstream-framing.md");
    assert_tolerated(&matrix);
    for point in [
        "w.host-events.framing",
        "w.sse.mixed-messages-data",
        "w.sse.header-timing",
        "w.version.header-less-discovery",
        "w.fixtures.mock-node-ids",
    ] {
        assert_exercised(&matrix, point, profile);
    }
    // The framings were really on the wire, and every unversioned request asked for v2.
    let report = &reports[0].1;
    let mut frames = Vec::new();
    let mut requests = Vec::new();
    for case in &report.cases {
        let transcript = serde_json::to_value(&case.transcript).unwrap();
        frames_in(&transcript, &mut frames);
        requests_in(&transcript, &mut requests);
    }
    let bare = |name: &str| {
        frames
            .iter()
            .filter(|f| {
                f["event"] == name && f["json"].is_object() && f["json"].get("type").is_none()
            })
            .count()
    };
    assert!(
        bare("heartbeat.evaluated") > 0,
        "no bare heartbeat message was read"
    );
    assert!(bare("messages") > 0, "no mixed-mode chunk payload was read");
    let unversioned: Vec<&serde_json::Value> = requests
        .iter()
        .filter(|r| {
            let path = r["url"].as_str().unwrap_or_default();
            !path.contains("/v1/")
                && !r["headers"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|h| h["name"] == "openwop-version" && h["value"] == "2.0")
        })
        .collect();
    assert!(
        unversioned.is_empty(),
        "requests without OpenWOP-Version: 2.0: {unversioned:#?}"
    );
}

/// Every SSE event frame (an object with `event` and `data`) anywhere in `value`.
fn frames_in(value: &serde_json::Value, out: &mut Vec<serde_json::Value>) {
    match value {
        serde_json::Value::Object(map) => {
            if map.contains_key("event") && map.contains_key("data") {
                out.push(value.clone());
            }
            map.values().for_each(|v| frames_in(v, out));
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| frames_in(v, out)),
        _ => {}
    }
}

/// Every recorded request (an object with `method`, `url` and `headers`) anywhere in `value`.
fn requests_in(value: &serde_json::Value, out: &mut Vec<serde_json::Value>) {
    match value {
        serde_json::Value::Object(map) => {
            if map.contains_key("method") && map.contains_key("url") && map.contains_key("headers")
            {
                out.push(value.clone());
            }
            map.values().for_each(|v| requests_in(v, out));
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| requests_in(v, out)),
        _ => {}
    }
}

/// Every run event (an object with a string `type` and an object `payload`) anywhere in
/// `value`.
fn run_events_in(value: &serde_json::Value, out: &mut Vec<serde_json::Value>) {
    match value {
        serde_json::Value::Object(map) => {
            if map.get("type").is_some_and(|t| t.is_string())
                && map.get("payload").is_some_and(|p| p.is_object())
                && map.contains_key("sequence")
            {
                out.push(value.clone());
            }
            map.values().for_each(|v| run_events_in(v, out));
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| run_events_in(v, out)),
        _ => {}
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[cfg_attr(
    not(conformance_gated),
    ignore = "the full tolerance matrix runs the suite once per profile (minutes): built to run under CI=true or CONFORMANCE_SELFTEST=1, or pass --include-ignored"
)]
async fn the_full_tolerance_matrix() {
    let cases = corpus();
    let matrix = tolerance_matrix(&cases, &matrix_profiles(), 8, 1.0)
        .await
        .unwrap();
    write(&matrix, "tolerance-matrix.md");
    assert_tolerated(&matrix);
    let pending: BTreeSet<&str> = POINTS_WITHOUT_A_DIVERGENT_PROFILE.iter().copied().collect();
    let registry = spec::open_points::open_points();
    let unexercised: Vec<&str> = matrix
        .unexercised()
        .into_iter()
        .filter(|p| !pending.contains(p))
        .filter(|p| {
            registry
                .get(p)
                .is_some_and(|p| p.exercised_otherwise.is_none())
        })
        .collect();
    assert!(
        unexercised.is_empty(),
        "open points no case exercised under a profile taking another option: {unexercised:?}\n{}",
        render_markdown(&matrix)
    );
}
