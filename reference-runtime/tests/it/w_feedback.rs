//! Feedback annotations over HTTP: terminal runs, targets, signals, tenant isolation,
//! redaction, and nothing in the run log.

use crate::w_host::*;
use crate::w_structured_runs::*;
use serde_json::{Value, json};

fn annotations(run_id: &str) -> String {
    format!("{}/annotations", run_path(run_id))
}

async fn finished_noop(host: &Host) -> String {
    let run_id = host.create_fixture("conformance-noop").await;
    host.finished_log(&run_id).await;
    run_id
}

#[tokio::test(start_paused = true)]
async fn a_terminal_run_accepts_annotations_that_never_reach_its_log() {
    let host = host().await;
    let run_id = finished_noop(&host).await;
    let before = raw_log(&host, &run_id).await;
    for signal in [
        json!({"kind": "rating", "rating": 4}),
        json!({"kind": "correction", "correction": "better"}),
        json!({"kind": "label", "label": "good"}),
        json!({"kind": "flag"}),
    ] {
        let response = host
            .post(
                &annotations(&run_id),
                Some(KEY_A),
                &json!({"signal": signal, "target": {"nodeId": "noop"}}),
            )
            .await;
        assert_eq!(response.status(), 201);
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["target"]["runId"], run_id.as_str());
        assert_eq!(body["actor"]["principalRef"], "conformance-a");
        assert!(body["annotationId"].as_str().unwrap().starts_with("ann-"));
    }
    let listed = get_json(&host, &annotations(&run_id)).await;
    assert_eq!(listed["annotations"].as_array().unwrap().len(), 4);
    assert_eq!(raw_log(&host, &run_id).await, before);
}

#[tokio::test(start_paused = true)]
async fn targets_outside_the_advertised_ones_and_bad_signals_are_refused() {
    let host = host().await;
    let run_id = finished_noop(&host).await;
    let before = raw_log(&host, &run_id).await;
    let event_id = before[0]["eventId"].as_str().unwrap();
    for (body, status, code) in [
        (
            json!({"target": {"eventId": event_id}, "signal": {"kind": "flag"}}),
            422,
            "capability_not_provided",
        ),
        (
            json!({"target": {"nodeId": "nope"}, "signal": {"kind": "flag"}}),
            400,
            "validation_error",
        ),
        (
            json!({"signal": {"kind": "thumbs"}}),
            400,
            "validation_error",
        ),
        (
            json!({"signal": {"kind": "rating", "rating": 9}}),
            400,
            "validation_error",
        ),
        (
            json!({"signal": {"kind": "flag"}, "extra": 1}),
            400,
            "validation_error",
        ),
    ] {
        let response = host.post(&annotations(&run_id), Some(KEY_A), &body).await;
        assert_eq!(response.status(), status, "{body}");
        let envelope: Value = response.json().await.unwrap();
        assert_eq!(envelope["error"], code);
    }
    assert_eq!(raw_log(&host, &run_id).await, before);
    assert_eq!(
        get_json(&host, &annotations(&run_id)).await["annotations"],
        json!([])
    );
}

#[tokio::test(start_paused = true)]
async fn a_host_listing_other_targets_and_fewer_signals_refuses_what_it_does_not_list() {
    use reference_runtime::openwop::{FeedbackSignals, FeedbackTargets, OpenWopConfig};
    let mut config = OpenWopConfig::default();
    config.feedback.targets = FeedbackTargets::RunAndEvent;
    config.feedback.signals = FeedbackSignals::RatingAndCorrection;
    let host = host_with(config, &[]).await;
    let doc = get_json(&host, "/.well-known/openwop").await;
    assert_eq!(doc["feedback"]["targets"], json!(["run", "event"]));
    assert_eq!(doc["feedback"]["signals"], json!(["rating", "correction"]));
    let run_id = finished_noop(&host).await;
    let before = raw_log(&host, &run_id).await;
    let event_id = before[0]["eventId"].as_str().unwrap();
    let accepted =
        json!({"target": {"eventId": event_id}, "signal": {"kind": "rating", "rating": 2}});
    let response = host
        .post(&annotations(&run_id), Some(KEY_A), &accepted)
        .await;
    assert_eq!(response.status(), 201);
    for (body, facet) in [
        (
            json!({"target": {"nodeId": "noop"}, "signal": {"kind": "rating", "rating": 2}}),
            "targets",
        ),
        (json!({"signal": {"kind": "flag"}}), "signals"),
    ] {
        let response = host.post(&annotations(&run_id), Some(KEY_A), &body).await;
        assert_eq!(response.status(), 422, "{body}");
        let envelope: Value = response.json().await.unwrap();
        assert_eq!(envelope["error"], "capability_not_provided");
        assert!(envelope["details"][facet].is_array(), "{envelope}");
    }
    assert_eq!(raw_log(&host, &run_id).await, before);
    let listed = get_json(&host, &annotations(&run_id)).await;
    assert_eq!(listed["annotations"].as_array().unwrap().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn annotations_are_tenant_bound_and_redacted() {
    let host = host().await;
    let run_id = finished_noop(&host).await;
    let response = host
        .post(
            &annotations(&run_id),
            Some(KEY_A),
            &json!({"signal": {"kind": "correction", "correction": "key sk-live-abcdefgh1234"},
                    "note": "token ghp_abcdefghijklmnopqrstuvwx"}),
        )
        .await;
    assert_eq!(response.status(), 201);
    let text = response.text().await.unwrap();
    assert!(
        !text.contains("sk-live-abcdefgh1234") && !text.contains("ghp_abcdefghijklmnopqrstuvwx")
    );
    let listed = host
        .get(&annotations(&run_id), Some(KEY_A), &[])
        .await
        .text()
        .await
        .unwrap();
    assert!(listed.contains("[REDACTED]"));
    assert!(
        !listed.contains("sk-live-abcdefgh1234")
            && !listed.contains("ghp_abcdefghijklmnopqrstuvwx")
    );
    let foreign = host.get(&annotations(&run_id), Some(KEY_B), &[]).await;
    assert_eq!(foreign.status(), 403);
    let posted = host
        .post(
            &annotations(&run_id),
            Some(KEY_B),
            &json!({"signal": {"kind": "flag"}}),
        )
        .await;
    assert_eq!(posted.status(), 403);
    let anonymous = host.get(&annotations(&run_id), None, &[]).await;
    assert_eq!(anonymous.status(), 401);
}
