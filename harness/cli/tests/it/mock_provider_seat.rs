//! The cases starting upstream's `conformance-stream-text` meet the seat a host reads its mock
//! provider at (open point `w.fixtures.mock-provider-seat`): upstream's suite writes
//! `configurable.mockProvider`, v2's schema `configurable.ai.mockProvider` under `version: 1`.
//! The probe finds a host that takes only the schema's (the built-in runtime's divergent
//! profile; the tolerance matrix runs the corpus against it), and a host that takes neither
//! leaves those cases BLOCKED, naming what it answered: the built-in runtime behind a proxy that
//! refuses every run naming a mock provider, as a host without the mock would.

use super::forwarding_proxy::{self, Intercepted};
use super::probed_runner::{corpus, run_probed};
use axum::response::IntoResponse;
use conformance_cli::launch::{BuiltInOptions, BuiltInProfile, start_built_in};
use harness::case::LoadedCase;
use harness::verdict::Verdict;
use serde_json::json;

/// The cases that start `conformance-stream-text` as upstream's suite does.
fn stream_text_cases() -> Vec<LoadedCase> {
    let cases: Vec<LoadedCase> = corpus()
        .into_iter()
        .filter(|c| {
            serde_json::to_string(&c.case.steps)
                .unwrap()
                .contains(r#""configurable":{"mockProvider":{"id":"stream-text""#)
        })
        .collect();
    assert!(cases.len() >= 10, "{} cases start the fixture", cases.len());
    cases
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_probe_finds_a_host_reading_only_the_schemas_seat() {
    for (profile, expected) in [
        (BuiltInProfile::Standard, None),
        (BuiltInProfile::Divergent, Some("configurable-ai")),
    ] {
        let running = start_built_in(&BuiltInOptions {
            profile,
            ..BuiltInOptions::default()
        })
        .await
        .unwrap();
        let driver = harness::run::HttpDriver::new(
            &harness::run::ClientOptions::default(),
            harness::run::Limits::default(),
        )
        .unwrap();
        let findings =
            harness::target::probe(&driver, &running.target, std::time::Duration::from_secs(10))
                .await;
        running.shutdown().await;
        assert_eq!(
            findings
                .facts
                .get("mock_provider_seat")
                .and_then(|v| v.as_str()),
            expected,
            "{profile}: {:#?}",
            findings.notes
        );
        assert_eq!(
            findings
                .notes
                .iter()
                .any(|n| n.contains("configurable.ai.mockProvider")),
            expected.is_some(),
            "{profile}: {:#?}",
            findings.notes
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_host_taking_neither_seat_leaves_the_cases_blocked_saying_what_it_answered() {
    let cases = stream_text_cases();
    let running = start_built_in(&BuiltInOptions::default()).await.unwrap();
    let mut target = running.target.clone();
    let proxy = forwarding_proxy::start(target.base_url.clone(), |parts, body| {
        let names_a_mock = String::from_utf8_lossy(&body).contains("mockProvider");
        if parts.method == axum::http::Method::POST && parts.uri.path() == "/runs" && names_a_mock {
            let error = json!({"error": "validation_error",
                               "message": "configurable names no member mockProvider"});
            return Intercepted::Answer(
                (axum::http::StatusCode::BAD_REQUEST, axum::Json(error)).into_response(),
            );
        }
        Intercepted::Forward(body)
    })
    .await;
    target.base_url = format!("http://{proxy}");
    let report = run_probed(target, &cases, 4).await;
    running.shutdown().await;
    for result in &report.cases {
        assert!(
            matches!(result.verdict, Verdict::Blocked | Verdict::Skip),
            "{}: {} {:?}",
            result.id,
            result.verdict,
            result.reason
        );
    }
    let blocked: Vec<&str> = report
        .cases
        .iter()
        .filter(|r| r.verdict == Verdict::Blocked)
        .map(|r| r.reason.as_deref().unwrap_or_default())
        .collect();
    assert!(!blocked.is_empty(), "{:#?}", report.cases);
    for reason in blocked {
        assert!(
            reason.contains(
                "was answered 400 validation_error: configurable names no member mockProvider"
            ),
            "{reason}"
        );
    }
}
