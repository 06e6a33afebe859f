//! SDK compatibility: the official OpenAI (Chat Completions and Responses clients) and Anthropic
//! Python SDKs parse the fake streams.
//!
//! Runs only when `MOCK_PROVIDER_SDK_TESTS=1` (then a missing Python or SDK fails the test).
//! CI installs the SDKs with `python3 -m pip install openai anthropic`; the interpreter can be
//! chosen with `MOCK_PROVIDER_PYTHON` (default `python3`).

use mock_provider::{Script, marker};
use serde_json::{Value, json};

use crate::support::{CANARY, start, unique_id};

fn sdk_script(id: &str) -> Script {
    let tool_completion = json!({
        "kind": "completion",
        "chunks": [
            {"kind": "text", "delta": "Hello"},
            {"kind": "text", "delta": " world"},
            {"kind": "tool_call_start", "call_id": "call_a", "name": "read_file"},
            {"kind": "tool_call_start", "call_id": "call_b", "name": "list_dir"},
            {"kind": "tool_call_arguments", "call_id": "call_a", "delta": "{\"pa"},
            {"kind": "tool_call_arguments", "call_id": "call_b", "delta": "{}"},
            {"kind": "tool_call_arguments", "call_id": "call_a", "delta": "th\": \"a.txt\"}"}
        ],
        "finish_reason": "tool_calls",
        "usage": {"input_tokens": 120, "output_tokens": 30, "cache_read_tokens": 100}
    });
    let sequential = json!({
        "kind": "completion",
        "chunks": [
            {"kind": "text", "delta": "Hello"},
            {"kind": "text", "delta": " world"},
            {"kind": "tool_call_start", "call_id": "toolu_a", "name": "read_file"},
            {"kind": "tool_call_arguments", "call_id": "toolu_a", "delta": "{\"pa"},
            {"kind": "tool_call_arguments", "call_id": "toolu_a", "delta": "th\": \"a.txt\"}"}
        ],
        "finish_reason": "tool_calls",
        "usage": {"input_tokens": 120, "output_tokens": 30, "cache_read_tokens": 100}
    });
    let in_band = json!({
        "kind": "completion",
        "chunks": [{"kind": "text", "delta": "partial"}, {"kind": "text", "delta": " more"}],
        "stream_fault": {"kind": "in_band_error", "after_chunks": 1}
    });
    let incomplete = json!({
        "kind": "completion",
        "chunks": [{"kind": "text", "delta": "cut sh"}],
        "finish_reason": "length",
        "usage": {"input_tokens": 9, "output_tokens": 16}
    });
    let responses_completion = json!({
        "kind": "completion",
        "chunks": [
            {"kind": "text", "delta": "Hello"},
            {"kind": "text", "delta": " world"},
            {"kind": "tool_call_start", "call_id": "call_a", "name": "read_file"},
            {"kind": "tool_call_start", "call_id": "call_b", "name": "list_dir"},
            {"kind": "tool_call_arguments", "call_id": "call_a", "delta": "{\"pa"},
            {"kind": "tool_call_arguments", "call_id": "call_b", "delta": "{}"},
            {"kind": "tool_call_arguments", "call_id": "call_a", "delta": "th\": \"a.txt\"}"}
        ],
        "finish_reason": "tool_calls",
        "usage": {"input_tokens": 120, "output_tokens": 30, "cache_read_tokens": 100,
                  "reasoning_tokens": 7}
    });
    serde_json::from_value(json!({
        "id": id,
        "calls": {
            "openai-primary": [
                tool_completion, tool_completion, in_band,
                {"kind": "http_error", "error": "rate_limited", "retry_after_ms": 10}
            ],
            "anthropic-secondary": [sequential, sequential, in_band],
            "openai-responses": [
                responses_completion, responses_completion, responses_completion, in_band,
                incomplete,
                {"kind": "http_error", "error": "rate_limited", "retry_after_ms": 10},
                {"kind": "http_error", "error": "service_unavailable"}
            ]
        }
    }))
    .expect("script parses")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn official_sdks_parse_the_fake_streams() {
    if std::env::var("MOCK_PROVIDER_SDK_TESTS").as_deref() != Ok("1") {
        eprintln!("skipped: set MOCK_PROVIDER_SDK_TESTS=1 to run the Python SDK checks");
        return;
    }
    let providers = start().await;
    let id = unique_id("sdk");
    providers.register(sdk_script(&id)).expect("registers");
    let python = std::env::var("MOCK_PROVIDER_PYTHON").unwrap_or_else(|_| "python3".into());
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/sdk/sdk_compat.py");
    let output = tokio::process::Command::new(&python)
        .arg(script)
        .env(
            "MOCK_OPENAI_BASE_URL",
            format!("{}/v1", providers.base_url("openai-primary").unwrap()),
        )
        .env(
            "MOCK_RESPONSES_BASE_URL",
            format!("{}/v1", providers.base_url("openai-responses").unwrap()),
        )
        .env(
            "MOCK_ANTHROPIC_BASE_URL",
            providers.base_url("anthropic-secondary").unwrap(),
        )
        .env("MOCK_CANARY", CANARY)
        .env("MOCK_MARKER", marker(&id))
        .output()
        .await
        .unwrap_or_else(|error| panic!("failed to run {python}: {error}"));
    assert!(
        output.status.success(),
        "SDK script failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let parsed: Value = serde_json::from_slice(&output.stdout).expect("SDK script prints JSON");
    eprintln!(
        "openai {} / anthropic {}",
        parsed["openai_version"], parsed["anthropic_version"]
    );
    assert_eq!(
        parsed["openai_stream"],
        json!({
            "text": "Hello world",
            "tools": [
                {"id": "call_a", "name": "read_file", "arguments": "{\"path\": \"a.txt\"}"},
                {"id": "call_b", "name": "list_dir", "arguments": "{}"}
            ],
            "usage": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150,
                      "cached_tokens": 100},
            "finish": "tool_calls"
        })
    );
    assert_eq!(
        parsed["openai_json"],
        json!({
            "text": "Hello world",
            "tools": [
                {"id": "call_a", "name": "read_file", "arguments": "{\"path\": \"a.txt\"}"},
                {"id": "call_b", "name": "list_dir", "arguments": "{}"}
            ],
            "total_tokens": 150,
            "finish": "tool_calls"
        })
    );
    assert_eq!(parsed["openai_in_band_error"], "APIError");
    assert_eq!(parsed["openai_rate_limited"], 429);
    let content = json!([
        {"type": "text", "text": "Hello world"},
        {"type": "tool_use", "id": "toolu_a", "name": "read_file", "input": {"path": "a.txt"}}
    ]);
    assert_eq!(
        parsed["anthropic_stream"],
        json!({
            "text": "Hello world",
            "content": content,
            "input_tokens": 20,
            "cache_read_input_tokens": 100,
            "output_tokens": 30,
            "stop_reason": "tool_use"
        })
    );
    assert_eq!(
        parsed["anthropic_json"],
        json!({"content": content, "stop_reason": "tool_use"})
    );
    assert_ne!(parsed["anthropic_in_band_error"], "no error");
    let responses_tools = json!([
        {"call_id": "call_a", "name": "read_file", "arguments": "{\"path\": \"a.txt\"}"},
        {"call_id": "call_b", "name": "list_dir", "arguments": "{}"}
    ]);
    let responses_usage = json!({"input_tokens": 120, "cached_tokens": 100, "output_tokens": 30,
                                 "reasoning_tokens": 7, "total_tokens": 150});
    assert_eq!(
        parsed["responses_stream"],
        json!({
            "text": "Hello world",
            "tools": responses_tools,
            "usage": responses_usage,
            "status": "completed",
            "sequence_numbers_count_from_0": true
        })
    );
    for parsed in [&parsed["responses_json"], &parsed["responses_helper"]] {
        assert_eq!(
            parsed,
            &json!({
                "text": "Hello world",
                "tools": responses_tools,
                "usage": responses_usage,
                "status": "completed"
            })
        );
    }
    assert_eq!(
        parsed["responses_failed"],
        json!({
            "text": "partial",
            "last": ["error", "response.failed"],
            "error_code": "server_error",
            "failed_code": "server_error",
            "status": "failed"
        })
    );
    assert_eq!(
        parsed["responses_incomplete"],
        json!({"type": "response.incomplete", "status": "incomplete",
               "reason": "max_output_tokens", "output_tokens": 16})
    );
    assert_eq!(
        parsed["responses_rate_limited"],
        json!({"status": 429, "code": "rate_limit_exceeded"})
    );
    assert_eq!(
        parsed["responses_unavailable"],
        json!({"status": 503, "type": "server_error"})
    );
    assert_eq!(providers.call_count(&id, "openai-responses"), 7);
    assert_eq!(providers.call_count(&id, "openai-primary"), 4);
    assert_eq!(providers.call_count(&id, "anthropic-secondary"), 3);
}
