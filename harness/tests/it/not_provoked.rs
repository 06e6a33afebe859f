//! Evidence: a case none of whose checks applied (every `when` premise failed on the host's
//! path) is SKIP, never a PASS on its preconditions alone; a path the host's value makes no
//! request of is BLOCKED (the case cannot go on), never an ERROR of the harness; how long an
//! answer took (`answered_in_ms`) decides whether a check applies, never its verdict; a
//! subscription refused with 429 and `Retry-After` (a subscriber limit) is SKIP, not FAIL; a
//! CONTRACT check met on the way is no evidence; a list of premises applies when each holds;
//! the canary check is evidence only for a case that names it (`judged_by_canary`).

use std::time::Duration;

use harness::case::lint_case;
use harness::run::Limits;
use harness::verdict::Verdict;
use serde_json::{Value, json};

use super::raw_host::{answering, json_response, judge_on};

/// A host answering every request with `document`.
async fn document_host(document: Value) -> String {
    let body = document.to_string();
    answering(Duration::ZERO, move |_| json_response("200 OK", "", &body)).await
}

/// Reads `/doc` and judges `/channel` only when the host declares it; then, with `follow`,
/// reads the declared channel.
async fn run(document: Value, follow: bool) -> (Verdict, harness::run::CaseExecution) {
    let mut steps = vec![json!({"id": "doc", "request": {"path": "/doc"}, "expect": [
        {"precondition": true, "status": 200},
        {
            "when": {"step": "doc", "json": {"pointer": "/body/channel", "present": true}},
            "json": {"pointer": "/channel", "type": "string", "matches": "^/"}
        }
    ]})];
    if follow {
        steps.push(json!({"id": "follow", "request": {"path": "${steps.doc.body.channel|or:/doc}"}, "expect": [{"status": 200}]}));
    }
    let case = json!({
        "id": "w.provoked.probe", "title": "provoked", "requirements": ["events.host-events.every-channel-has-address"],
        "level": "MUST", "surface": "openwop", "timeout_ms": 1500, "steps": steps
    });
    let case = lint_case("provoked.json", case.to_string().as_bytes())
        .unwrap()
        .case;
    judge_on(&case, document_host(document).await, Limits::default()).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_case_whose_every_premise_failed_is_skip_not_pass() {
    let (verdict, execution) = run(json!({"other": 1}), false).await;
    assert_eq!(verdict, Verdict::Skip, "{execution:#?}");
    assert!(
        execution
            .checks
            .iter()
            .any(|c| c.check == "implicit:not-provoked" && c.message.starts_with("not provoked")),
        "{:#?}",
        execution.checks
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provoked_case_is_judged_on_what_the_host_sent() {
    let (verdict, execution) = run(json!({"channel": "/doc"}), false).await;
    assert_eq!(verdict, Verdict::Pass, "{execution:#?}");
    let (verdict, execution) = run(json!({"channel": {"address": "/doc"}}), false).await;
    assert_eq!(verdict, Verdict::Fail, "{execution:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_value_that_makes_no_path_blocks_the_case_without_an_error() {
    let (verdict, execution) = run(json!({"channel": {"address": "/doc"}}), true).await;
    // The declared value is judged (FAIL) before the step that cannot use it stops the case.
    assert_eq!(verdict, Verdict::Fail, "{execution:#?}");
    assert!(execution.error.is_none(), "{:?}", execution.error);
    assert!(
        execution
            .checks
            .iter()
            .any(|c| c.check == "implicit:value-available" && c.verdict == Verdict::Blocked),
        "{:#?}",
        execution.checks
    );
}

/// Judges `/status` is `timeout` only on an answer that took at least `ran_ms`: the premise that
/// the work ran that long (`w.heartbeat.tick-seam-overrun`'s reading of an overrun).
async fn judge_overrun(delay_ms: u64, ran_ms: u64) -> (Verdict, harness::run::CaseExecution) {
    let case = json!({
        "id": "w.provoked.overrun", "title": "overrun", "requirements": ["events.heartbeat.overrun-status-timeout"],
        "level": "MUST", "surface": "openwop", "timeout_ms": 3000,
        "steps": [{"id": "tick", "request": {"path": "/tick"}, "expect": [
            {"precondition": true, "status": 200},
            {
                "when": {"step": "tick", "json": {"pointer": "/answered_in_ms", "min": ran_ms}},
                "json": {"pointer": "/status", "equals": "timeout"}
            }
        ]}]
    });
    let case = lint_case("overrun.json", case.to_string().as_bytes())
        .unwrap()
        .case;
    let host = answering(Duration::from_millis(delay_ms), |_| {
        json_response("200 OK", "", r#"{"status":"ok"}"#)
    })
    .await;
    judge_on(&case, host, Limits::default()).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn how_long_an_answer_took_is_a_premise_not_a_verdict() {
    // Answered at once: nothing ran as long as the premise asks, so nothing is judged.
    let (verdict, execution) = judge_overrun(0, 10_000).await;
    assert_eq!(verdict, Verdict::Skip, "{execution:#?}");
    // Answered after the work ran past the bound, and still `ok`: the rule was broken.
    let (verdict, execution) = judge_overrun(300, 200).await;
    assert_eq!(verdict, Verdict::Fail, "{execution:#?}");
}

/// A host refusing every subscription with 429 and `Retry-After` (a subscriber limit for
/// resource protection) and serving everything else.
async fn subscriber_limited_host() -> String {
    answering(Duration::ZERO, |path| {
        if path.starts_with("/events") {
            json_response(
                "429 Too Many Requests",
                "retry-after: 1\r\n",
                r#"{"error":"rate_limited","message":"one subscriber per run"}"#,
            )
        } else {
            json_response("200 OK", "", "{}")
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_refused_for_resource_protection_is_not_judged() {
    let case = json!({
        "id": "w.provoked.subscriber", "title": "subscriber", "requirements": ["events.sse.close-after-terminal"],
        "level": "MUST", "surface": "openwop", "timeout_ms": 3000,
        "steps": [
            {"id": "doc", "request": {"path": "/doc"}, "expect": [{"status": 200}]},
            {"parallel": [
                {"id": "first", "stream": {"path": "/events"}, "expect": [{"status": 200}, {"closed_by_server": true}]},
                {"id": "second", "stream": {"path": "/events"}, "expect": [{"status": 200}]}
            ]}
        ]
    });
    let case = lint_case("subscriber.json", case.to_string().as_bytes())
        .unwrap()
        .case;
    let (verdict, execution) =
        judge_on(&case, subscriber_limited_host().await, Limits::default()).await;
    assert_eq!(verdict, Verdict::Skip, "{execution:#?}");
    let refused: Vec<_> = execution
        .checks
        .iter()
        .filter(|c| c.check == "implicit:subscriber-limit")
        .collect();
    assert_eq!(refused.len(), 2, "{:#?}", execution.checks);
    assert!(
        execution.checks.iter().all(|c| c.verdict != Verdict::Fail),
        "{:#?}",
        execution.checks
    );
}

/// Reads `/doc` with a CONTRACT status check and one MUST check on `/channel` under `when`.
async fn judge_with_premise(
    document: Value,
    when: Value,
) -> (Verdict, harness::run::CaseExecution) {
    let case = json!({
        "id": "w.provoked.all", "title": "all", "requirements": ["events.host-events.every-channel-has-address"],
        "level": "MUST", "surface": "openwop", "timeout_ms": 1500,
        "steps": [{"id": "doc", "request": {"path": "/doc"}, "expect": [
            {"level": "CONTRACT", "status": 200},
            {"when": when, "json": {"pointer": "/channel", "type": "string", "matches": "^/"}}
        ]}]
    });
    let case = lint_case("all.json", case.to_string().as_bytes())
        .unwrap()
        .case;
    judge_on(&case, document_host(document).await, Limits::default()).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_contract_check_on_the_way_is_no_evidence_and_every_premise_of_a_list_must_hold() {
    let both = json!({"all": [
        {"step": "doc", "json": {"pointer": "/body/channel", "present": true}},
        {"step": "doc", "json": {"pointer": "/body/declared", "present": true}}
    ]});
    // One premise of the two fails: the MUST check does not apply, and the CONTRACT status
    // alone does not make the case judged.
    let (verdict, execution) =
        judge_with_premise(json!({"channel": {"address": "/doc"}}), both.clone()).await;
    assert_eq!(verdict, Verdict::Skip, "{execution:#?}");
    // Both hold: the check is judged (and the object is no path).
    let (verdict, execution) = judge_with_premise(
        json!({"channel": {"address": "/doc"}, "declared": true}),
        both.clone(),
    )
    .await;
    assert_eq!(verdict, Verdict::Fail, "{execution:#?}");
    let (verdict, execution) =
        judge_with_premise(json!({"channel": "/doc", "declared": true}), both).await;
    assert_eq!(verdict, Verdict::Pass, "{execution:#?}");
}

/// Lists `/v1/providers` with CONTRACT checks only, against a target watching `canary`; with
/// `judged_by_canary`, the canary check is the case's evidence.
async fn judge_manifests(answer: Value, judged_by_canary: bool) -> Verdict {
    let case = json!({
        "id": "x.provoked.manifests", "title": "manifests", "requirements": ["exec.credentials.never-in-manifests"],
        "level": "MUST", "surface": "execution", "timeout_ms": 1500, "judged_by_canary": judged_by_canary,
        "steps": [{"id": "providers", "request": {"path": "/v1/providers"}, "expect": [
            {"level": "CONTRACT", "status": 200}
        ]}]
    });
    let case = lint_case("manifests.json", case.to_string().as_bytes())
        .unwrap()
        .case;
    let mut runner = super::raw_host::runner_for(document_host(answer).await, Limits::default());
    let mut target = super::raw_host::external_target(runner.target.base_url.clone());
    target.canary = Some("sk-canary-manifest-0001".into());
    runner.target = std::sync::Arc::new(target);
    super::raw_host::judge_with(&runner, &case).await.0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_canary_check_is_evidence_only_for_a_case_it_judges() {
    let clean = json!({"data": [{"id": "text-primary"}]});
    let leaking = json!({"data": [{"id": "text-primary", "api_key": "sk-canary-manifest-0001"}]});
    assert_eq!(judge_manifests(clean.clone(), true).await, Verdict::Pass);
    assert_eq!(judge_manifests(leaking.clone(), true).await, Verdict::Fail);
    // Not named as the case's evidence: CONTRACT checks alone judge no rule.
    assert_eq!(judge_manifests(clean, false).await, Verdict::Skip);
    assert_eq!(judge_manifests(leaking, false).await, Verdict::Fail);
}
