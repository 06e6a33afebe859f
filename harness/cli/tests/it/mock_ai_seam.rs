//! The cases on upstream's envelope fixtures, which program upstream's mock-AI seam, meet the
//! seam a host has.
//!
//! Node ids (open point `w.fixtures.mock-node-ids`): the cases program the node the host seeded,
//! whichever edition of upstream's catalogue it took: they read the node id from the definition
//! the host serves (`GET /workflows/{workflowId}`), fall back to `structured-call` (upstream's
//! id at the transcribed commit) when it serves none, and check after the run that the node
//! which ran is the one programmed.
//!
//! Entries (open point `w.seams.mock-program-entries`): the cases send upstream's `MockBehavior`
//! (`content`), as upstream's suite does; a case whose verdict needs the host to play a clean
//! answer first runs a baseline with one (the run completes, needing no retry), so a seam that
//! reads a program otherwise leaves the case BLOCKED, never judged on a run the program did not
//! make.
//!
//! The host is the built-in runtime, seeding the shared edition (standard profile) or the
//! per-fixture one (upstream-framing), directly or behind a proxy: one that answers `404` to
//! every `GET …/workflows/…` (a host that does not serve its definitions), or one that drops
//! `content` from every program entry posted to the seam (a seam that reads only the seam
//! document's `{mode, envelope}`), or one that puts an empty answer before every one-answer
//! program (a seam that loses the answer and completes the run on one of its own), forwarding
//! everything else. Only the cases programming
//! upstream's mock-AI seam run.

use std::collections::BTreeMap;

use super::forwarding_proxy::{self, Intercepted};
use super::probed_runner::{corpus, run_probed};
use axum::body::Bytes;
use axum::http::request::Parts;
use axum::response::IntoResponse;
use conformance_cli::launch::{BuiltInOptions, BuiltInProfile, start_built_in};
use harness::case::LoadedCase;
use harness::case::shared_seam::SharedSeam;
use harness::report::CaseResult;
use harness::target::Target;
use harness::verdict::Verdict;
use serde_json::json;

/// The cases that program upstream's mock-AI seam.
fn envelope_fixture_cases() -> Vec<LoadedCase> {
    let cases: Vec<LoadedCase> = corpus()
        .into_iter()
        .filter(|c| c.case.exclusive.contains(&SharedSeam::MockAiProgram))
        .collect();
    assert!(cases.len() >= 10, "{} cases program the seam", cases.len());
    cases
}

/// What stands between the harness and the built-in host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Front {
    /// Nothing: the harness talks to the host.
    Direct,
    /// A host that does not serve workflow definitions: `404 not_found` to every `GET` whose
    /// path holds `/workflows/`.
    DefinitionLess,
    /// A seam that does not read `MockBehavior`'s `content`: every program entry posted to the
    /// seam reaches the host without it.
    ContentDeaf,
    /// A seam that loses a one-answer program's answer and completes the run on one of its own
    /// after a retry (as an independent host did, falling back to a valid answer once the
    /// program ran out): every program of one clean answer reaches the host after an empty one.
    FirstAnswerLost,
}

impl Front {
    /// What this front makes of a request on its way to the host.
    fn intercept(self, parts: &Parts, body: Bytes) -> Intercepted {
        let path = parts.uri.path();
        match self {
            Front::DefinitionLess
                if parts.method == axum::http::Method::GET && path.contains("/workflows/") =>
            {
                let error = json!({"error": {"code": "not_found", "message": "no such resource"}});
                Intercepted::Answer(
                    (axum::http::StatusCode::NOT_FOUND, axum::Json(error)).into_response(),
                )
            }
            Front::ContentDeaf if path.ends_with("/mock-ai/program") => {
                let mut program: serde_json::Value = serde_json::from_slice(&body).unwrap();
                for entry in program["program"].as_array_mut().into_iter().flatten() {
                    entry.as_object_mut().map(|e| e.remove("content"));
                }
                Intercepted::Forward(serde_json::to_vec(&program).unwrap().into())
            }
            Front::FirstAnswerLost if path.ends_with("/mock-ai/program") => {
                let mut program: serde_json::Value = serde_json::from_slice(&body).unwrap();
                if let Some(entries) = program["program"].as_array_mut() {
                    let clean = entries.len() == 1
                        && entries[0]["stopReason"] == "end_turn"
                        && entries[0]["content"]
                            .as_str()
                            .and_then(|c| serde_json::from_str::<serde_json::Value>(c).ok())
                            .is_some_and(|v| v.is_object());
                    if clean {
                        entries.insert(0, json!({"stopReason": "end_turn", "content": ""}));
                    }
                }
                Intercepted::Forward(serde_json::to_vec(&program).unwrap().into())
            }
            _ => Intercepted::Forward(body),
        }
    }
}

/// The envelope-fixture cases against the built-in host of `profile` behind `front`; every
/// case's result.
async fn results(
    cases: &[LoadedCase],
    profile: BuiltInProfile,
    front: Front,
) -> BTreeMap<String, CaseResult> {
    let running = start_built_in(&BuiltInOptions {
        profile,
        ..BuiltInOptions::default()
    })
    .await
    .unwrap();
    let mut target: Target = running.target.clone();
    if front != Front::Direct {
        let proxy = forwarding_proxy::start(target.base_url.clone(), move |parts, body| {
            front.intercept(parts, body)
        })
        .await;
        target.base_url = format!("http://{proxy}");
    }
    let report = run_probed(target, cases, 4).await;
    running.shutdown().await;
    report
        .cases
        .into_iter()
        .map(|c| (c.id.clone(), c))
        .collect()
}

/// The node ids the case's program requests named.
fn programmed_nodes(result: &CaseResult) -> Vec<String> {
    let transcript = serde_json::to_string(&result.transcript).unwrap();
    let mut ids = Vec::new();
    for node in spec::fixtures::mock_nodes::PER_FIXTURE_NODES
        .iter()
        .map(|n| n.node_id)
        .chain([spec::fixtures::mock_nodes::SHARED_NODE_ID])
    {
        if transcript.contains(&format!("\\\"nodeId\\\":\\\"{node}\\\"")) {
            ids.push(node.to_string());
        }
    }
    ids
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_cases_program_the_node_each_edition_names_read_from_the_host() {
    let cases = envelope_fixture_cases();
    for (profile, shared) in [
        (BuiltInProfile::Standard, true),
        (BuiltInProfile::UpstreamFraming, false),
    ] {
        let results = results(&cases, profile, Front::Direct).await;
        for (id, result) in &results {
            assert_eq!(
                result.verdict,
                Verdict::Pass,
                "{profile}: {id}: {:?}",
                result.reason
            );
            let programmed = programmed_nodes(result);
            assert!(!programmed.is_empty(), "{profile}: {id} programmed no node");
            let shared_only = programmed == [spec::fixtures::mock_nodes::SHARED_NODE_ID];
            assert_eq!(shared_only, shared, "{profile}: {id}: {programmed:?}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_host_serving_no_definitions_is_programmed_at_the_shared_id_or_blocked() {
    let cases = envelope_fixture_cases();
    // The shared edition: the fallback id is the host's, the cases are judged as before.
    let shared = results(&cases, BuiltInProfile::Standard, Front::DefinitionLess).await;
    for (id, result) in &shared {
        assert_eq!(result.verdict, Verdict::Pass, "{id}: {:?}", result.reason);
    }
    // The per-fixture edition: the fallback id is no node of the host's, so the node that ran
    // was never programmed. Every case is BLOCKED with what to fix, none judged on the mock's
    // unprogrammed answers.
    let per_fixture = results(
        &cases,
        BuiltInProfile::UpstreamFraming,
        Front::DefinitionLess,
    )
    .await;
    for (id, result) in &per_fixture {
        assert_eq!(
            result.verdict,
            Verdict::Blocked,
            "{id}: {:?}",
            result.reason
        );
        let reason = result.reason.clone().unwrap_or_default();
        assert!(
            reason.contains("GET /workflows/"),
            "{id}: the reason says what to serve: {reason}"
        );
        assert!(
            result
                .checks
                .iter()
                .all(|c| !matches!(c.verdict, Verdict::Fail | Verdict::Warn | Verdict::Error)),
            "{id}: {:#?}",
            result.checks
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_host_whose_seam_does_not_play_content_is_blocked_where_a_verdict_needs_it() {
    assert_blocked_where_a_clean_answer_is_needed(
        Front::ContentDeaf,
        "the seam plays a program as upstream's mock does",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_host_completing_the_baseline_on_an_answer_of_its_own_is_blocked_too() {
    assert_blocked_where_a_clean_answer_is_needed(
        Front::FirstAnswerLost,
        "the seam played the clean answer as the run's first answer",
    )
    .await;
}

/// Behind `front`, no envelope-fixture case is FAIL, WARN or ERROR; the cases whose verdict
/// needs a clean answer played are BLOCKED, saying `reason`; refusals and exhaustions are judged.
async fn assert_blocked_where_a_clean_answer_is_needed(front: Front, reason_says: &str) {
    let cases = envelope_fixture_cases();
    let results = results(&cases, BuiltInProfile::Standard, front).await;
    let mut blocked = Vec::new();
    let mut passed = Vec::new();
    for (id, result) in &results {
        assert!(
            result
                .checks
                .iter()
                .all(|c| !matches!(c.verdict, Verdict::Fail | Verdict::Warn | Verdict::Error)),
            "{id} judged the host on a run the program did not make: {:?}",
            result.reason
        );
        match result.verdict {
            Verdict::Blocked => blocked.push(id.as_str()),
            Verdict::Pass => passed.push(id.as_str()),
            other => panic!("{id}: {other:?}: {:?}", result.reason),
        }
    }
    // Every case whose verdict needs a clean answer played says what to fix.
    for id in [
        "w.reliability.schema-violation-retried-envelope-retry-attempted",
        "w.reliability.truncation-retried-envelope-truncated",
        "w.reliability.lenient-recovery-envelope-recovery-applied",
        "w.reliability.events-only-emitted-upstream-fixtures",
    ] {
        assert!(blocked.contains(&id), "{id}: {:?}", results[id].reason);
        let reason = results[id].reason.clone().unwrap_or_default();
        assert!(reason.contains(reason_says), "{front:?} {id}: {reason}");
    }
    // The refusals and the exhaustions need no answer read from `content`: still judged.
    for id in [
        "w.reliability.refusal-fails-node-envelope-refusal",
        "w.reliability.exhaustion-envelope-retry-exhausted",
    ] {
        assert!(passed.contains(&id), "{id}: {:?}", results[id].reason);
    }
}
