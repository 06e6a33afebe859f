//! A host that reads a run id in a request path only percent-encoded (upstream's first v2
//! reference host: `/runs/t%2Frun_…` is its run, `/runs/t~2Frun_…` a 404). Upstream's identity
//! chapter has hosts accept both forms, its OpenAPI text names only `%2F`, and the run events
//! chapter says nothing: the probe finds the form the host reads, and every case writes it.

use std::time::Duration;

use harness::run::{ClientOptions, HttpDriver, Limits};
use serde_json::{Value, json};

use super::raw_host::{answering, external_target, json_response};

const RUN_ID: &str = "t/run_0123456789abcdef";

async fn percent_only_host() -> String {
    answering(Duration::ZERO, |path| {
        let (status, body) = if path.starts_with("/.well-known/openwop") {
            (
                "200 OK",
                json!({"protocolVersions": ["2.0"], "preferredVersion": "2.0", "fixtures": ["conformance-noop"]}),
            )
        } else if path == "/runs" {
            ("201 Created", json!({"runId": RUN_ID}))
        } else if path
            .starts_with("/runs/t%2Frun_0123456789abcdef/events?streamMode=conformance-probe")
        {
            (
                "400 Bad Request",
                json!({"error": "unsupported_stream_mode", "message": "no such mode", "details": {"supported": ["updates", "debug"]}}),
            )
        } else {
            (
                "404 Not Found",
                json!({"error": "not_found", "message": "no such run"}),
            )
        };
        json_response(status, "", &body.to_string())
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_probe_finds_the_path_form_the_host_reads_and_the_stream_modes_behind_it() {
    let driver = HttpDriver::new(&ClientOptions::default(), Limits::default()).unwrap();
    let target = external_target(percent_only_host().await);
    let findings = harness::target::probe(&driver, &target, Duration::from_secs(10)).await;
    assert_eq!(
        findings.facts.get("run_id_path_encoding"),
        Some(&Value::from("percent")),
        "{findings:#?}"
    );
    assert!(
        findings.notes.iter().any(|n| n.contains("`%2F`")),
        "{:#?}",
        findings.notes
    );
    // The modes came from the answer at the percent path: known, not "unknown".
    assert!(
        !findings
            .unjudgeable
            .values()
            .any(|why| why.contains("stream modes")),
        "{:#?}",
        findings.unjudgeable
    );
}
