//! A host whose rate limit refuses subscriptions (`429 rate_limited`, `Retry-After`) is judged
//! as one that never did: a refused `stream` step waits out `Retry-After` and subscribes again,
//! and the re-sent subscription, which reads the run at a later moment, draws the verdict the
//! first would have, or none when the waits leave the case no budget (SKIP or BLOCKED, with the
//! reason), never a FAIL.
//!
//! The host is the built-in runtime behind a proxy that refuses every other subscription to a
//! run's events (`GET …/events`, not the poll) with `429 rate_limited` and `Retry-After: 1`,
//! as a per-key rate limit would; everything else is forwarded as it came. The cases of the
//! subscriber limit are left out: their concurrent subscriptions are the host's limit under
//! test, and a refusal there is their verdict's input, never waited out.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::probed_runner::probed_runner;
use axum::body::Body;
use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use conformance_cli::launch::{BuiltInOptions, BuiltInProfile, start_built_in};
use harness::case::{CaseSurface, LoadedCase};
use harness::run::{Filters, Quiet, RunSettings, run_cases};
use harness::target::Target;
use harness::verdict::Verdict;
use serde_json::json;

/// The surface-W cases, without the subscriber-limit ones.
fn cases() -> Vec<LoadedCase> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let corpus = harness::case::load_corpus(&root.join("cases")).unwrap();
    assert!(corpus.problems.is_empty(), "{:#?}", corpus.problems);
    corpus
        .cases
        .into_iter()
        .filter(|c| c.case.surface == CaseSurface::Openwop)
        .filter(|c| !c.case.tags.iter().any(|t| t == "subscribers"))
        .collect()
}

/// A proxy in front of `upstream` refusing every other subscription to a run's events; the
/// count of refusals it answered.
async fn start_refusing_proxy(upstream: String) -> (SocketAddr, Arc<AtomicUsize>) {
    let client = reqwest::Client::new();
    let subscriptions = Arc::new(AtomicUsize::new(0));
    let refused = Arc::new(AtomicUsize::new(0));
    let counted = refused.clone();
    let forward = move |request: Request| {
        let client = client.clone();
        let upstream = upstream.clone();
        let subscriptions = subscriptions.clone();
        let refused = refused.clone();
        async move {
            let (parts, body) = request.into_parts();
            let subscribes = parts.method == axum::http::Method::GET
                && parts.uri.path().starts_with("/runs/")
                && parts.uri.path().ends_with("/events");
            if subscribes
                && subscriptions
                    .fetch_add(1, Ordering::SeqCst)
                    .is_multiple_of(2)
            {
                refused.fetch_add(1, Ordering::SeqCst);
                let error = json!({"error": "rate_limited", "message": "too many requests"});
                return (
                    axum::http::StatusCode::TOO_MANY_REQUESTS,
                    [(axum::http::header::RETRY_AFTER, "1")],
                    axum::Json(error),
                )
                    .into_response();
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
    (addr, counted)
}

/// Every case's verdict against the built-in host, directly or behind the refusing proxy, and
/// the subscriptions the proxy refused.
async fn verdicts(cases: &[LoadedCase], refusing: bool) -> (BTreeMap<String, Verdict>, usize) {
    let running = start_built_in(&BuiltInOptions {
        profile: BuiltInProfile::Standard,
        ..BuiltInOptions::default()
    })
    .await
    .unwrap();
    let mut target: Target = running.target.clone();
    let mut refused = None;
    if refusing {
        let (proxy, count) = start_refusing_proxy(target.base_url.clone()).await;
        target.base_url = format!("http://{proxy}");
        refused = Some(count);
    }
    let runner = probed_runner(target).await;
    let settings = RunSettings {
        jobs: 8,
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
    let refused = refused.map_or(0, |c| c.load(Ordering::SeqCst));
    let verdicts = report
        .cases
        .into_iter()
        .map(|c| (c.id.clone(), c.verdict))
        .collect();
    (verdicts, refused)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[cfg_attr(
    not(conformance_gated),
    ignore = "runs the surface-W corpus twice, the second time waiting out a refusal per subscription: built to run under CI=true or CONFORMANCE_SELFTEST=1, or pass --include-ignored"
)]
async fn a_subscription_refused_by_a_rate_limit_is_sent_again_and_never_misjudged() {
    let cases = cases();
    let (direct, _) = verdicts(&cases, false).await;
    let (refusing, refused) = verdicts(&cases, true).await;
    assert!(
        refused >= 50,
        "the proxy refused only {refused} subscriptions"
    );
    // Nothing is judged on a refusal: a case PASS directly is PASS behind the proxy, or not
    // judged (a case subscribing many times can run out of budget waiting: SKIP or BLOCKED,
    // with the reason), never FAIL, WARN or ERROR.
    let misjudged: Vec<String> = direct
        .iter()
        .filter(|(id, verdict)| {
            **verdict == Verdict::Pass
                && !matches!(
                    refusing.get(*id),
                    Some(Verdict::Pass | Verdict::Skip | Verdict::Blocked)
                )
        })
        .map(|(id, _)| format!("{id}: {:?} refused first", refusing.get(id)))
        .collect();
    assert!(misjudged.is_empty(), "{misjudged:#?}");
    // And the refusals are waited out: most of what passes directly is judged alike (without
    // the resubscription every case's first subscription would leave it SKIP).
    let passing = |verdicts: &BTreeMap<String, Verdict>| {
        verdicts.values().filter(|v| **v == Verdict::Pass).count()
    };
    let (direct_passing, refused_passing) = (passing(&direct), passing(&refusing));
    assert!(
        refused_passing * 10 >= direct_passing * 8,
        "{refused_passing} of {direct_passing} cases passing directly still pass behind the proxy"
    );
}
