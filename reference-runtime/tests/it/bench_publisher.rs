//! The bench publisher's routes (`--bench-publisher` only): absent without the flag, and with it
//! every subscriber of the published log reads all N frames.

use axum::extract::Request;
use axum::http::StatusCode;
use reference_runtime::config::Config;
use reference_runtime::runtime::{AppState, RuntimeOptions, app, start};
use serde_json::Value;
use tower::ServiceExt;

#[tokio::test]
async fn without_the_flag_the_routes_do_not_exist() {
    let state = AppState::build(RuntimeOptions::new(Config::default())).unwrap();
    let response = app(state)
        .oneshot(
            Request::post("/bench/logs?surface=x")
                .body(axum::body::Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
}

/// Reads one SSE response to its end: each frame's `data:` JSON.
async fn frames(response: reqwest::Response) -> Vec<Value> {
    let body = response.text().await.unwrap();
    body.split("\n\n")
        .filter_map(|frame| {
            frame
                .lines()
                .find_map(|l| l.strip_prefix("data:"))
                .map(|d| serde_json::from_str(d.trim_start()).unwrap())
        })
        .collect()
}

async fn publishes_to_every_subscriber(surface: &str) {
    let config = Config {
        bench_publisher: true,
        ..Config::default()
    };
    let running = start("127.0.0.1:0".parse().unwrap(), RuntimeOptions::new(config))
        .await
        .unwrap();
    let base = running.base_url();
    let client = reqwest::Client::new();
    let created: Value = client
        .post(format!("{base}/bench/logs?surface={surface}"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let stream_url = format!(
        "{base}{}?events=5",
        created["stream_path"].as_str().unwrap()
    );
    let mut readers = Vec::new();
    for _ in 0..2 {
        // No Authorization: surface W serves the bench tenant's caller.
        let response = client.get(&stream_url).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        readers.push(tokio::spawn(frames(response)));
    }
    let start_url = format!(
        "{base}{}?events=5&subscribers=2",
        created["start_path"].as_str().unwrap()
    );
    let answer: Value = client
        .post(start_url)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(answer["published"], 4);
    assert_eq!(answer["drained"], true);
    let first = if surface == "x" { 1 } else { 0 };
    for reader in readers {
        let frames = reader.await.unwrap();
        let sequences: Vec<u64> = frames
            .iter()
            .map(|f| f["sequence"].as_u64().unwrap())
            .collect();
        assert_eq!(sequences, (first..first + 5).collect::<Vec<_>>());
    }
    running.shutdown().await;
}

#[tokio::test]
async fn every_subscriber_of_an_execution_reads_all_n_frames() {
    publishes_to_every_subscriber("x").await;
}

#[tokio::test]
async fn every_subscriber_of_a_run_reads_all_n_frames() {
    publishes_to_every_subscriber("w").await;
}
