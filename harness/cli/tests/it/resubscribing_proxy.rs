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
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::forwarding_proxy;
use super::probed_runner::{corpus, run_probed};
use axum::response::IntoResponse;
use conformance_cli::launch::{BuiltInOptions, BuiltInProfile, start_built_in};
use harness::case::{CaseSurface, LoadedCase};
use harness::target::Target;
use harness::verdict::Verdict;
use serde_json::json;

/// The surface-W cases, without the subscriber-limit ones.
fn cases() -> Vec<LoadedCase> {
    corpus()
        .into_iter()
        .filter(|c| c.case.surface == CaseSurface::Openwop)
        .filter(|c| !c.case.tags.iter().any(|t| t == "subscribers"))
        .collect()
}

/// Every case's verdict against the built-in host, directly or behind a proxy refusing every
/// other subscription to a run's events, and the subscriptions the proxy refused.
async fn verdicts(cases: &[LoadedCase], refusing: bool) -> (BTreeMap<String, Verdict>, usize) {
    let running = start_built_in(&BuiltInOptions {
        profile: BuiltInProfile::Standard,
        ..BuiltInOptions::default()
    })
    .await
    .unwrap();
    let mut target: Target = running.target.clone();
    let subscriptions = Arc::new(AtomicUsize::new(0));
    let refused = Arc::new(AtomicUsize::new(0));
    if refusing {
        let (subscriptions, refused) = (subscriptions.clone(), refused.clone());
        let proxy = forwarding_proxy::start(target.base_url.clone(), move |parts, body| {
            let path = parts.uri.path();
            let subscribes = parts.method == axum::http::Method::GET
                && path.starts_with("/runs/")
                && path.ends_with("/events");
            if !(subscribes
                && subscriptions
                    .fetch_add(1, Ordering::SeqCst)
                    .is_multiple_of(2))
            {
                return forwarding_proxy::Intercepted::Forward(body);
            }
            refused.fetch_add(1, Ordering::SeqCst);
            let error = json!({"error": "rate_limited", "message": "too many requests"});
            forwarding_proxy::Intercepted::Answer(
                (
                    axum::http::StatusCode::TOO_MANY_REQUESTS,
                    [(axum::http::header::RETRY_AFTER, "1")],
                    axum::Json(error),
                )
                    .into_response(),
            )
        })
        .await;
        target.base_url = format!("http://{proxy}");
    }
    let report = run_probed(target, cases, 8).await;
    running.shutdown().await;
    let verdicts = report
        .cases
        .into_iter()
        .map(|c| (c.id.clone(), c.verdict))
        .collect();
    (verdicts, refused.load(Ordering::SeqCst))
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
