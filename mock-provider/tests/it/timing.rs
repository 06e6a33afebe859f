//! Timing faults. Assertions are causal lower bounds only (a frame cannot arrive before the
//! server waited for it); no test asserts an upper bound on elapsed time.

use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::json;

use crate::sse;
use crate::support::{anthropic_body, behaviour, openai_body, register, send, start};

#[tokio::test]
async fn the_status_line_waits_for_the_header_delay_on_both_backends() {
    let providers = start().await;
    for (instance, call) in [
        (
            "openai-primary",
            json!({"kind": "http_error", "error": "server_error",
                   "timing": {"delay_before_headers_ms": 150}}),
        ),
        (
            "openai-timing",
            json!({"kind": "completion", "chunks": [{"kind": "text", "delta": "x"}],
                   "timing": {"delay_before_headers_ms": 150}}),
        ),
    ] {
        let id = register(&providers, instance, vec![behaviour(call)]);
        let started = Instant::now();
        let response = send(&providers, instance, &openai_body(&id, true, false))
            .await
            .unwrap();
        assert!(
            started.elapsed() >= Duration::from_millis(150),
            "{instance}: headers came early"
        );
        drop(response);
    }
}

#[tokio::test]
async fn headers_are_sent_before_a_delayed_body() {
    let providers = start().await;
    let id = register(
        &providers,
        "openai-timing",
        vec![behaviour(json!({
            "kind": "completion",
            "chunks": [{"kind": "text", "delta": "late"}],
            "timing": {"delay_before_first_frame_ms": 600_000}
        }))],
    );
    // `send` returns once the headers are in; the body is ten minutes away.
    let response = send(&providers, "openai-timing", &openai_body(&id, true, false))
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let mut body = response.bytes_stream();
    let waited = tokio::time::timeout(Duration::from_millis(200), body.next()).await;
    assert!(waited.is_err(), "no body byte before the delay");
}

#[tokio::test]
async fn each_frame_waits_for_the_delay_between_frames() {
    let providers = start().await;
    const GAP_MS: u64 = 40;
    let id = register(
        &providers,
        "anthropic-timing",
        vec![behaviour(json!({
            "kind": "completion",
            "chunks": [{"kind": "text", "delta": "a"}, {"kind": "text", "delta": "b"},
                       {"kind": "text", "delta": "c"}],
            "timing": {"delay_before_first_frame_ms": GAP_MS, "delay_between_frames_ms": GAP_MS}
        }))],
    );
    let started = Instant::now();
    let response = send(&providers, "anthropic-timing", &anthropic_body(&id, true))
        .await
        .unwrap();
    let mut stream = response.bytes_stream();
    let mut bytes = Vec::new();
    let mut arrivals: Vec<(String, Duration)> = Vec::new();
    while let Some(chunk) = stream.next().await {
        bytes.extend_from_slice(&chunk.unwrap());
        let events = sse::parse(&bytes).events;
        for event in &events[arrivals.len()..] {
            arrivals.push((event.event.clone().unwrap_or_default(), started.elapsed()));
        }
    }
    let names: Vec<&str> = arrivals.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(
        names,
        [
            "message_start",
            "ping",
            "content_block_start",
            "content_block_delta",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop"
        ]
    );
    for (position, (name, arrived)) in arrivals.iter().enumerate() {
        // Frame k (0-based) is written after the first-frame delay and k gaps.
        let earliest = Duration::from_millis(GAP_MS * (position as u64 + 1));
        assert!(
            *arrived >= earliest,
            "{name} (frame {position}) arrived at {arrived:?}"
        );
    }
}

#[tokio::test]
async fn a_reset_can_wait_before_closing() {
    let providers = start().await;
    let id = register(
        &providers,
        "openai-timing",
        vec![behaviour(
            json!({"kind": "connection_reset", "delay_before_reset_ms": 120}),
        )],
    );
    let started = Instant::now();
    let outcome = send(&providers, "openai-timing", &openai_body(&id, false, false)).await;
    assert!(outcome.is_err());
    assert!(started.elapsed() >= Duration::from_millis(120));
}
