//! Fan-out benchmark of surface X: one execution, its events appended through the `LogHub`
//! while 1, 100 and 1,000 SSE subscribers read `GET /v1/executions/{id}/events` over real HTTP
//! on 127.0.0.1. Reports events appended per second, frames delivered per second (all
//! subscribers together) and the process's peak resident memory (VmHWM).
//!
//! `cargo bench -p reference-runtime --bench x_fanout`

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use reference_runtime::config::Config;
use reference_runtime::log::AppendKind;
use reference_runtime::runtime::{RuntimeOptions, start};
use reference_runtime::store::Surface;
use spec::execution::{EventBody, ExecutionEvent};

fn render(id: &str, sequence: u64, time: chrono::DateTime<chrono::Utc>, body: EventBody) -> String {
    serde_json::to_string(&ExecutionEvent {
        execution_id: id.to_string(),
        sequence,
        time,
        body,
    })
    .expect("events serialise")
}

fn peak_memory_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// Reads one SSE response to its end; returns the number of frames with an `id:`.
async fn subscriber(response: reqwest::Response) -> u64 {
    let mut frames = 0;
    let mut carry = String::new();
    let mut body = response.bytes_stream();
    while let Some(Ok(chunk)) = body.next().await {
        carry.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = carry.find("\n\n") {
            if carry[..end].lines().any(|l| l.starts_with("id:")) {
                frames += 1;
            }
            carry.drain(..end + 2);
        }
    }
    frames
}

async fn scenario(subscribers: usize, events: u64) {
    let running = start(
        "127.0.0.1:0".parse().unwrap(),
        RuntimeOptions::new(Config::default()),
    )
    .await
    .expect("runtime starts");
    let hub = Arc::clone(&running.state().hub);
    let id = format!("bench-{subscribers}");
    hub.create(&id, Surface::Execution, serde_json::json!({}))
        .expect("log");
    hub.append(&id, "execution.accepted", AppendKind::Forward, |s, t| {
        render(&id, s, t, EventBody::Accepted {})
    })
    .expect("append");
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .expect("client");
    let url = format!("{}/v1/executions/{id}/events?after=1", running.base_url());
    // Connect everyone first (the response headers prove the subscription exists).
    let responses =
        futures::future::join_all((0..subscribers).map(|_| client.get(&url).send())).await;
    let readers: Vec<_> = responses
        .into_iter()
        .map(|r| tokio::spawn(subscriber(r.expect("subscribed"))))
        .collect();

    let started = Instant::now();
    for i in 0..events {
        hub.append(&id, "output.delta", AppendKind::Forward, |s, t| {
            render(
                &id,
                s,
                t,
                EventBody::OutputDelta {
                    output_index: 0,
                    delta: format!("token {i} "),
                },
            )
        })
        .expect("append");
        if i % 16 == 0 {
            tokio::task::yield_now().await;
        }
    }
    hub.append(&id, "execution.completed", AppendKind::Terminal, |s, t| {
        render(
            &id,
            s,
            t,
            EventBody::Completed {
                target: spec::execution::Target {
                    provider: "bench".into(),
                    model: "m".into(),
                },
            },
        )
    })
    .expect("append");
    let appended_in = started.elapsed();
    let mut delivered = 0;
    for reader in readers {
        delivered += reader.await.expect("reader");
    }
    let delivered_in = started.elapsed();
    assert_eq!(
        delivered,
        (events + 1) * subscribers as u64,
        "every subscriber got every event"
    );
    println!(
        "subscribers={subscribers:>5} events={events:>6} appended/s={:>10.0} delivered/s={:>11.0} \
         (all delivered in {:>7.1} ms) peak_rss={} KiB",
        (events + 1) as f64 / appended_in.as_secs_f64(),
        delivered as f64 / delivered_in.as_secs_f64(),
        delivered_in.as_secs_f64() * 1000.0,
        peak_memory_kib().map_or("?".to_string(), |k| k.to_string()),
    );
    tokio::time::timeout(Duration::from_secs(10), running.shutdown())
        .await
        .ok();
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` passes nothing we need.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    runtime.block_on(async {
        println!("x_fanout: one execution, SSE subscribers over 127.0.0.1 (peak_rss is VmHWM, cumulative)");
        scenario(1, 20_000).await;
        scenario(100, 5_000).await;
        scenario(1_000, 1_000).await;
    });
}
