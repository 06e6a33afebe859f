//! The script JSON shape case authors write: the documented example parses, unknown fields are
//! refused, and the JSON Schema is generated.

use mock_provider::{CallBehaviour, Chunk, Script, StreamFault};

const DOCUMENTED_EXAMPLE: &str = r#"{
  "id": "case-017-x9k2",
  "calls": {
    "openai-primary": [
      {"kind": "http_error", "error": "rate_limited", "retry_after_seconds": 1, "retry_after_ms": 800},
      {"kind": "http_error", "error": "service_unavailable"},
      {"kind": "completion",
       "chunks": [
         {"kind": "text", "delta": "Let me look"},
         {"kind": "tool_call_start", "call_id": "call_a", "name": "read_file"},
         {"kind": "tool_call_start", "call_id": "call_b", "name": "list_dir"},
         {"kind": "tool_call_arguments", "call_id": "call_a", "delta": "{\"path\":"},
         {"kind": "tool_call_arguments", "call_id": "call_b", "delta": "{}"},
         {"kind": "tool_call_arguments", "call_id": "call_a", "delta": "\"a.txt\"}"}
       ],
       "finish_reason": "tool_calls",
       "usage": {"input_tokens": 120, "output_tokens": 30, "cache_read_tokens": 100}}
    ],
    "openai-timing": [
      {"kind": "completion",
       "chunks": [{"kind": "text", "delta": "one "}, {"kind": "text", "delta": "two"}],
       "timing": {"delay_before_headers_ms": 200, "delay_between_frames_ms": 50},
       "stream_fault": {"kind": "cut", "after_chunks": 1, "partial_bytes": 10}}
    ],
    "anthropic-secondary": [
      {"kind": "completion",
       "chunks": [{"kind": "text", "delta": "partial"}],
       "stream_fault": {"kind": "in_band_error", "after_chunks": 1, "error": "overloaded"}},
      {"kind": "connection_reset"}
    ],
    "media": [
      {"kind": "async_job",
       "phases": [{"status": "in_queue", "queue_position": 1},
                  {"status": "in_progress", "logs": ["denoising"]}],
       "result": {"seed": 42},
       "artifacts": [{"uri": "https://cdn.example/a.png", "media_type": "image/png"}]}
    ]
  }
}"#;

#[tokio::test]
async fn the_documented_example_parses_and_registers() {
    let script: Script = serde_json::from_str(DOCUMENTED_EXAMPLE).expect("example parses");
    assert_eq!(script.calls.len(), 4);
    let CallBehaviour::Completion(completion) = &script.calls["openai-timing"][0] else {
        panic!("a completion");
    };
    assert_eq!(
        completion.stream_fault,
        Some(StreamFault::Cut {
            after_chunks: 1,
            partial_bytes: 10
        })
    );
    assert!(matches!(
        &completion.chunks[0],
        Chunk::Text { output_index: 0, delta } if delta == "one "
    ));
    let providers = crate::support::start().await;
    providers.register(script.clone()).expect("registers");
    let again: Script =
        serde_json::from_value(serde_json::to_value(&script).unwrap()).expect("round trip");
    assert_eq!(again, script);
}

#[test]
fn unknown_fields_and_kinds_are_refused() {
    for bad in [
        r#"{"id": "x", "calls": {}, "extra": true}"#,
        r#"{"id": "x", "calls": {"a": [{"kind": "completion", "chunk": []}]}}"#,
        r#"{"id": "x", "calls": {"a": [{"kind": "completion", "chunks": [{"kind": "text", "delta": "", "index": 1}]}]}}"#,
        r#"{"id": "x", "calls": {"a": [{"kind": "teleport"}]}}"#,
        r#"{"id": "x", "calls": {"a": [{"kind": "http_error", "error": "rate_limited", "retry": 1}]}}"#,
        r#"{"id": "x", "calls": {"a": [{"kind": "async_job", "phases": [{"status": "done"}]}]}}"#,
    ] {
        assert!(
            serde_json::from_str::<Script>(bad).is_err(),
            "accepted: {bad}"
        );
    }
}

#[test]
fn the_json_schema_names_the_tags() {
    let schema = serde_json::to_string(&schemars::schema_for!(Script)).expect("schema");
    for needle in [
        "\"kind\"",
        "tool_call_arguments",
        "in_band_error",
        "async_job",
        "in_queue",
    ] {
        assert!(schema.contains(needle), "schema lacks {needle}");
    }
}
