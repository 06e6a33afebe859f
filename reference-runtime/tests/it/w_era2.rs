//! Era-2 logs over HTTP: the seed seam (off by default, authenticated when on) and the reader
//! rule on every reader (snapshot, poll, each stream mode).

use crate::w_host::*;
use crate::w_structured_runs::*;
use reference_runtime::openwop::OpenWopConfig;
use serde_json::{Value, json};

const SEAM: &str = "/conformance/seams/sample/event-log/seed";

fn seams_on() -> OpenWopConfig {
    OpenWopConfig {
        seams_enabled: true,
        ..OpenWopConfig::default()
    }
}

fn seed_body(events: Value) -> Value {
    json!({"eventLogSchemaVersion": 2, "status": "completed", "events": events})
}

fn v1_log(extra: Value) -> Value {
    let mut completed = json!({"outputs": {}});
    if let (Some(c), Some(e)) = (completed.as_object_mut(), extra.as_object()) {
        c.extend(e.clone());
    }
    json!([
        {"type": "run.started", "sequence": 0, "payload": {"workflowId": "conformance-noop"}},
        {"type": "envelope.retry.attempted", "sequence": 1, "payload": {"nodeId": "n1", "attempt": 2, "reason": "truncation"}},
        {"type": "run.resuming", "sequence": 2, "payload": {"fromStatus": "paused"}, "timestamp": "2026-01-15T10:00:02Z", "causationId": "evt-cause-000000000001"},
        {"type": "run.completed", "sequence": 3, "payload": completed}
    ])
}

async fn seed(host: &Host, body: &Value) -> String {
    let response = host.post(SEAM, Some(KEY_A), body).await;
    let status = response.status();
    let body: Value = response.json().await.unwrap();
    assert_eq!(status, 201, "{body}");
    body["runId"].as_str().unwrap().to_string()
}

#[tokio::test(start_paused = true)]
async fn the_seam_is_off_by_default_and_authenticated_when_on() {
    let off = host().await;
    for key in [None, Some(KEY_A)] {
        let response = off.post(SEAM, key, &seed_body(v1_log(json!({})))).await;
        assert_eq!(response.status(), 404);
    }
    let on = host_with(seams_on(), &[]).await;
    let response = on.post(SEAM, None, &seed_body(v1_log(json!({})))).await;
    assert_eq!(response.status(), 401);
    let doc = get_json(&on, "/.well-known/openwop").await;
    assert_eq!(
        doc["conformance"]["seamsProfile"],
        "openwop-conformance-seams-v2"
    );
    for bad in [
        json!({"eventLogSchemaVersion": 3, "status": "completed", "events": v1_log(json!({}))}),
        json!({"eventLogSchemaVersion": 2, "status": "running", "events": v1_log(json!({}))}),
        json!({"eventLogSchemaVersion": 2, "status": "completed", "events": [{"type": "run.completed", "sequence": 1, "payload": {"outputs": {}}}]}),
    ] {
        assert_eq!(
            on.post(SEAM, Some(KEY_A), &bad).await.status(),
            400,
            "{bad}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn every_reader_translates_an_era_2_log() {
    let host = host_with(seams_on(), &[]).await;
    let run_id = seed(&host, &seed_body(v1_log(json!({"x-era": "kept"})))).await;
    let want = [
        "run.started",
        "envelope.retry-attempted",
        "run.resume-started",
        "run.completed",
    ];
    let polled = host.finished_log(&run_id).await;
    assert_eq!(types(&polled), want);
    assert_eq!(polled[2]["causationId"], "evt-cause-000000000001");
    assert_eq!(polled[2]["timestamp"], "2026-01-15T10:00:02Z");
    assert_eq!(polled[3]["payload"]["x-era"], "kept");
    let streamed = SseReader::new(host.stream(&run_id, "?streamMode=debug", &[]).await)
        .frames_until_close()
        .await;
    let streamed: Vec<String> = streamed
        .iter()
        .map(|f| f.json()["type"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(streamed, want);
    let values = read_all(host.stream(&run_id, "?streamMode=values", &[]).await).await;
    assert!(!values.is_empty());
    let snapshot = get_json(&host, &run_path(&run_id)).await;
    assert_eq!(snapshot["status"], "completed");
    assert_eq!(snapshot["eventLogSchemaVersion"], 2);
    assert_eq!(snapshot["workflowId"], "conformance-noop");
    // Another tenant cannot read it.
    let foreign = host.get(&run_path(&run_id), Some(KEY_B), &[]).await;
    assert_eq!(foreign.status(), 403);
}

#[tokio::test(start_paused = true)]
async fn an_unprojectable_property_fails_every_reader_with_500() {
    let host = host_with(seams_on(), &[]).await;
    let run_id = seed(&host, &seed_body(v1_log(json!({"legacyTotal": 3})))).await;
    for path in [
        run_path(&run_id),
        format!("{}/events/poll?timeout=1", run_path(&run_id)),
        format!("{}/events?streamMode=debug", run_path(&run_id)),
        format!("{}/events?streamMode=values", run_path(&run_id)),
    ] {
        let response = host.get(&path, Some(KEY_A), &[]).await;
        assert_eq!(response.status(), 500, "{path}");
        let body: Value = response.json().await.unwrap();
        validate_doc(spec::schema::Published::OpenWopError, &body);
        assert_eq!(body["error"], "payload_unprojectable");
        assert_eq!(body["details"]["keys"], json!(["legacyTotal"]));
        assert_eq!(body["details"]["type"], "run.completed");
        assert_eq!(body["details"]["sequence"], 3);
    }
    let unmapped = seed(
        &host,
        &seed_body(json!([
            {"type": "acme.legacyThing", "sequence": 0, "payload": {}},
            {"type": "run.completed", "sequence": 1, "payload": {"outputs": {}}}
        ])),
    )
    .await;
    let response = host
        .get(
            &format!("{}/events/poll?timeout=1", run_path(&unmapped)),
            Some(KEY_A),
            &[],
        )
        .await;
    assert_eq!(response.status(), 500);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"], "event_type_unmapped");
}

#[tokio::test(start_paused = true)]
async fn a_host_carrying_unprojectable_properties_serves_them_under_the_hatch_on_every_reader() {
    let mut config = seams_on();
    config.choices.unprojectable_property =
        reference_runtime::UnprojectableProperty::CarriedUnderHatch;
    let host = host_with(config, &[]).await;
    let run_id = seed(&host, &seed_body(v1_log(json!({"legacyTotal": 3})))).await;
    let polled = host.finished_log(&run_id).await;
    for event in &polled {
        validate_event(event);
    }
    assert_eq!(
        polled[3]["payload"],
        json!({"outputs": {}, "x-legacyTotal": 3})
    );
    let streamed = SseReader::new(host.stream(&run_id, "?streamMode=debug", &[]).await)
        .frames_until_close()
        .await;
    assert_eq!(streamed[3].json()["payload"]["x-legacyTotal"], 3);
    let snapshot = host.get(&run_path(&run_id), Some(KEY_A), &[]).await;
    assert_eq!(snapshot.status(), 200);
}
