//! The harness's normalised transcripts, snapshot-tested: what a case sends and what the
//! built-in runtime answers, with ids, timestamps, ports and timings redacted.

use std::path::Path;

use super::probed_runner::probed_runner;
use conformance_cli::launch::{BuiltInOptions, start_built_in};
use harness::case::load_corpus;
use harness::transcript::{FrameKind, StepRecord};
use serde_json::{Value, json};

/// A transcript reduced to what is stable across runs: methods, paths, statuses, content types,
/// bodies and frames, without timings.
fn normalise(records: &[StepRecord]) -> Value {
    let steps: Vec<Value> = records
        .iter()
        .map(|record| {
            let exchanges: Vec<Value> = record
                .exchanges
                .iter()
                .map(|exchange| {
                    let path = exchange.request.url.split_once("://").and_then(|(_, rest)| rest.split_once('/')).map(|(_, p)| format!("/{p}"));
                    let response = exchange.response.as_ref().map(|r| {
                        let frames: Vec<Value> = r
                            .frames
                            .iter()
                            .filter_map(|f| match &f.kind {
                                FrameKind::Event { id, event, json, .. } => Some(json!({"id": id, "event": event, "data": json})),
                                FrameKind::Comment { .. } => None,
                            })
                            .collect();
                        json!({
                            "status": r.status,
                            "content_type": r.header("content-type"),
                            "body": if r.frames.is_empty() { r.json.clone() } else { None },
                            "frames": frames,
                            "end": format!("{:?}", r.end),
                        })
                    });
                    json!({"method": exchange.request.method, "path": path, "body": exchange.request.body, "response": response})
                })
                .collect();
            json!({"step": record.step, "action": record.action, "exchanges": exchanges})
        })
        .collect();
    Value::Array(steps)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamed_execution_transcript() {
    let corpus = load_corpus(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../cases")).unwrap();
    let loaded = corpus
        .cases
        .iter()
        .find(|c| c.case.id == "x.events.text-stream-log")
        .unwrap();
    let built_in = start_built_in(&BuiltInOptions::default()).await.unwrap();
    let runner = probed_runner(built_in.target.clone()).await;
    let execution = runner.run(&loaded.case).await;
    built_in.shutdown().await;
    assert!(
        execution.checks.iter().all(|c| c.passed()),
        "{:#?}",
        execution.checks
    );
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(
        r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
        "[uuid]",
    );
    settings.add_filter(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z", "[time]");
    settings.add_filter(r"\[\[script:[^\]]+\]\]", "[[script:…]]");
    settings.bind(|| {
        insta::assert_json_snapshot!("text_stream_transcript", normalise(&execution.transcript))
    });
}
