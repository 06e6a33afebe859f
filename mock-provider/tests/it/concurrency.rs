//! Many cases at once on one server: each call gets its own script.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::decode;
use crate::sse;
use crate::support::{behaviour, body_for, register, send, start};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_concurrent_calls_each_get_their_own_script() {
    let providers = Arc::new(start().await);
    let instances = [
        "openai-primary",
        "anthropic-secondary",
        "openai-timing",
        "anthropic-timing",
    ];
    let mut cases = Vec::new();
    for number in 0..200 {
        let instance = instances[number % instances.len()];
        let text = format!("answer number {number}");
        let id = register(
            &providers,
            instance,
            vec![behaviour(json!({
                "kind": "completion",
                "chunks": [{"kind": "text", "delta": text}]
            }))],
        );
        cases.push((instance, id, text, number % 2 == 0));
    }
    let mut tasks = tokio::task::JoinSet::new();
    for (instance, id, text, stream) in cases.clone() {
        let providers = providers.clone();
        tasks.spawn(async move {
            let body = body_for(&providers, instance, &id, stream);
            let bytes = send(&providers, instance, &body)
                .await
                .expect("response")
                .bytes()
                .await
                .expect("body");
            let received = match (instance.starts_with("anthropic"), stream) {
                (false, true) => {
                    let decoded = decode::openai_stream(&sse::parse(&bytes));
                    decode::materialize(&decoded.completion, false).texts
                }
                (true, true) => {
                    let decoded = decode::anthropic_stream(&sse::parse(&bytes));
                    decode::materialize(&decoded.completion, false).texts
                }
                (false, false) => {
                    decode::openai_json(&serde_json::from_slice::<Value>(&bytes).unwrap()).texts
                }
                (true, false) => {
                    decode::anthropic_json(&serde_json::from_slice::<Value>(&bytes).unwrap()).texts
                }
            };
            (id, text, received.get(&0).cloned())
        });
    }
    let mut answered = 0;
    while let Some(outcome) = tasks.join_next().await {
        let (id, text, received) = outcome.expect("task");
        assert_eq!(received.as_deref(), Some(text.as_str()), "script {id}");
        answered += 1;
    }
    assert_eq!(answered, 200);
    for (instance, id, _, _) in &cases {
        providers
            .assert_called_exactly(id, instance, 1)
            .expect("one call per script");
    }
    assert!(providers.unmatched_calls().is_empty());
}
