//! The cases on upstream's envelope fixtures program the node the host seeded, whichever
//! edition of upstream's catalogue it took (open point `w.fixtures.mock-node-ids`): they read
//! the node id from the definition the host serves (`GET /workflows/{workflowId}`), fall back to
//! `structured-call` (upstream's id at the transcribed commit) when it serves none, and check
//! after the run that the node which ran is the one programmed.
//!
//! The host is the built-in runtime, seeding the shared edition (standard profile) or the
//! per-fixture one (upstream-framing), directly or behind a proxy that answers `404` to every
//! `GET …/workflows/…` (a host that does not serve its definitions) and forwards everything
//! else. Only the cases programming upstream's mock-AI seam run.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;

use super::probed_runner::probed_runner;
use axum::body::Body;
use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use conformance_cli::launch::{BuiltInOptions, BuiltInProfile, start_built_in};
use harness::case::LoadedCase;
use harness::case::shared_seam::SharedSeam;
use harness::report::CaseResult;
use harness::run::{Filters, Quiet, RunSettings, run_cases};
use harness::target::Target;
use harness::verdict::Verdict;
use serde_json::json;

/// The cases that program upstream's mock-AI seam.
fn envelope_fixture_cases() -> Vec<LoadedCase> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let corpus = harness::case::load_corpus(&root.join("cases")).unwrap();
    assert!(corpus.problems.is_empty(), "{:#?}", corpus.problems);
    let cases: Vec<LoadedCase> = corpus
        .cases
        .into_iter()
        .filter(|c| c.case.exclusive.contains(&SharedSeam::MockAiProgram))
        .collect();
    assert!(cases.len() >= 10, "{} cases program the seam", cases.len());
    cases
}

/// A proxy in front of `upstream` that does not serve workflow definitions: `404 not_found` to
/// every `GET` whose path holds `/workflows/`, every other request forwarded as it came.
async fn start_definitionless_proxy(upstream: String) -> SocketAddr {
    let client = reqwest::Client::new();
    let forward = move |request: Request| {
        let client = client.clone();
        let upstream = upstream.clone();
        async move {
            let (parts, body) = request.into_parts();
            if parts.method == axum::http::Method::GET && parts.uri.path().contains("/workflows/") {
                let error = json!({"error": {"code": "not_found", "message": "no such resource"}});
                return (axum::http::StatusCode::NOT_FOUND, axum::Json(error)).into_response();
            }
            let path = parts
                .uri
                .path_and_query()
                .map_or("/", |p| p.as_str())
                .to_string();
            let body = axum::body::to_bytes(body, usize::MAX).await.unwrap();
            let mut forwarded = client
                .request(parts.method.clone(), format!("{upstream}{path}"))
                .body(body);
            for (name, value) in &parts.headers {
                if name != axum::http::header::HOST {
                    forwarded = forwarded.header(name, value);
                }
            }
            let answer = forwarded.send().await.unwrap();
            let mut response = Response::builder().status(answer.status());
            for (name, value) in answer.headers() {
                response = response.header(name, value);
            }
            response
                .body(Body::from_stream(answer.bytes_stream()))
                .unwrap()
        }
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        axum::serve(listener, axum::Router::new().fallback(forward))
            .await
            .unwrap();
    });
    addr
}

/// The envelope-fixture cases against the built-in host of `profile`, directly or behind the
/// definition-less proxy; every case's result.
async fn results(
    cases: &[LoadedCase],
    profile: BuiltInProfile,
    serves_definitions: bool,
) -> BTreeMap<String, CaseResult> {
    let running = start_built_in(&BuiltInOptions {
        profile,
        ..BuiltInOptions::default()
    })
    .await
    .unwrap();
    let mut target: Target = running.target.clone();
    if !serves_definitions {
        let proxy = start_definitionless_proxy(target.base_url.clone()).await;
        target.base_url = format!("http://{proxy}");
    }
    let runner = probed_runner(target).await;
    let settings = RunSettings {
        jobs: 4,
        shuffle_seed: None,
        baseline_path: None,
        ..RunSettings::default()
    };
    let report = run_cases(
        &runner,
        cases,
        &Filters::default(),
        &settings,
        &|r| r,
        &Quiet,
    )
    .await;
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
        let results = results(&cases, profile, true).await;
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
    let shared = results(&cases, BuiltInProfile::Standard, false).await;
    for (id, result) in &shared {
        assert_eq!(result.verdict, Verdict::Pass, "{id}: {:?}", result.reason);
    }
    // The per-fixture edition: the fallback id is no node of the host's, so the node that ran
    // was never programmed. Every case is BLOCKED with what to fix, none judged on the mock's
    // unprogrammed answers.
    let per_fixture = results(&cases, BuiltInProfile::UpstreamFraming, false).await;
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
