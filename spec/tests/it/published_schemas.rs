//! The committed schemas accept what the contract allows and refuse what it forbids.

use serde_json::{Value, json};
use spec::schema::{Published, validate, validate_run_event_payload};

fn valid(p: Published, v: Value) {
    if let Err(violations) = validate(p, &v) {
        panic!("{} should accept {v}: {violations:?}", p.name());
    }
}

fn invalid(p: Published, v: Value) {
    assert!(validate(p, &v).is_err(), "{} should refuse {v}", p.name());
}

#[test]
fn execution_request_bounds() {
    let base = json!({"ability": "text-generation", "input": [{"type": "text", "text": "hi"}]});
    valid(Published::ExecutionRequest, base.clone());
    valid(
        Published::ExecutionRequest,
        json!({"ability": "a", "input": [{"type": "json", "value": null}, {"type": "image", "uri": "https://x/y.png", "media_type": "image/png"}],
               "requirements": {"input_modalities": ["text"], "stream": true, "async": false},
               "routing": {"strategy": "ordered", "provider_order": ["p"], "allow_fallback": true, "max_attempts": 32, "retry_budget_ms": 1},
               "deadline_ms": 86_400_000, "metadata": {"k": "v", "n": 1, "b": true}, "extensions": {"openai.request": {"x": 1}}}),
    );
    for bad in [
        json!({"ability": "", "input": [{"type": "text", "text": "hi"}]}),
        json!({"ability": "a", "input": []}),
        json!({"ability": "a", "input": [{"type": "text", "text": "hi"}], "extra": 1}),
        json!({"ability": "a", "input": [{"type": "text"}]}),
        json!({"ability": "a", "input": [{"type": "image", "uri": ""}]}),
        json!({"ability": "a", "input": [{"type": "sound", "uri": "x"}]}),
        json!({"ability": "a", "input": [{"type": "text", "text": "hi"}], "deadline_ms": 0}),
        json!({"ability": "a", "input": [{"type": "text", "text": "hi"}], "deadline_ms": 86_400_001}),
        json!({"ability": "a", "input": [{"type": "text", "text": "hi"}], "metadata": {"k": {"nested": 1}}}),
        json!({"ability": "a", "input": [{"type": "text", "text": "hi"}], "routing": {"max_attempts": 33}}),
        json!({"ability": "a", "input": [{"type": "text", "text": "hi"}], "routing": {"provider_order": ["p", "p"]}}),
        json!({"ability": "a", "input": [{"type": "text", "text": "hi"}], "requirements": {"input_modalities": ["smell"]}}),
    ] {
        invalid(Published::ExecutionRequest, bad);
    }
}

#[test]
fn execution_events_pair_type_and_status() {
    let envelope = |body: Value| {
        let mut event =
            json!({"execution_id": "e", "sequence": 1, "time": "2026-11-29T10:00:00.000Z"});
        event
            .as_object_mut()
            .unwrap()
            .extend(body.as_object().unwrap().clone());
        event
    };
    valid(
        Published::ExecutionEvent,
        envelope(json!({"type": "execution.accepted", "status": "accepted"})),
    );
    valid(
        Published::ExecutionEvent,
        envelope(json!({"type": "execution.failed", "status": "cancelled",
                        "error": {"code": "cancelled", "message": "m", "retryable": false}})),
    );
    valid(
        Published::ExecutionEvent,
        envelope(json!({"type": "usage.reported", "status": "running",
                        "facts": [{"unit": "input_token", "quantity": 3, "source": "provider"}, {"unit": "acme.gpu_second", "quantity": 0.5, "source": "runtime", "complete": true}]})),
    );
    invalid(
        Published::ExecutionEvent,
        envelope(json!({"type": "execution.accepted", "status": "running"})),
    );
    // The origin's TypeScript event types state no closedness, and its runtime passes
    // adapter-added fields through: an extra member is admitted (the core fields still bind).
    valid(
        Published::ExecutionEvent,
        envelope(json!({"type": "execution.accepted", "status": "accepted", "extra": 1})),
    );
    invalid(
        Published::ExecutionEvent,
        envelope(
            json!({"type": "usage.reported", "status": "running", "facts": [{"unit": "input_token", "quantity": -1, "source": "provider"}]}),
        ),
    );
    invalid(
        Published::ExecutionEvent,
        envelope(
            json!({"type": "usage.reported", "status": "running", "facts": [{"unit": "tokens", "quantity": 1, "source": "provider"}]}),
        ),
    );
    // The overlay reads the seed's sequence as a non-negative integer; the origin's start at 1
    // is not a seed sentence, so 0 is admitted and a negative or fractional sequence is not.
    let mut zero = envelope(json!({"type": "execution.accepted", "status": "accepted"}));
    zero["sequence"] = json!(0);
    valid(Published::ExecutionEvent, zero);
    for bad in [json!(-1), json!(1.5)] {
        let mut event = envelope(json!({"type": "execution.accepted", "status": "accepted"}));
        event["sequence"] = bad;
        invalid(Published::ExecutionEvent, event);
    }
}

fn run_event(event_type: &str) -> Value {
    json!({"eventId": "evt_0123456789abcdef", "runId": "tenant-a/run_0123456789abcdef", "type": event_type,
           "payload": {}, "timestamp": "2026-11-29T10:00:00Z", "sequence": 0, "schemaVersion": 1})
}

#[test]
fn run_event_types_and_envelope() {
    valid(Published::RunEvent, run_event("run.started"));
    valid(Published::RunEvent, run_event("example.noise-emitted"));
    for bad in ["acme.thing", "openwop.x", "core.x", "Run.Started", "run"] {
        invalid(Published::RunEvent, run_event(bad));
    }
    let mut short_id = run_event("run.started");
    short_id["eventId"] = json!("short");
    invalid(Published::RunEvent, short_id);
    let mut extra = run_event("run.started");
    extra["extra"] = json!(1);
    invalid(Published::RunEvent, extra);
    let mut no_version = run_event("run.started");
    no_version.as_object_mut().unwrap().remove("schemaVersion");
    invalid(Published::RunEvent, no_version);
}

#[test]
fn payloads_validate_against_their_definitions() {
    assert_eq!(
        validate_run_event_payload("run.completed", &json!({"outputs": {}})),
        Ok(true)
    );
    assert!(
        validate_run_event_payload("run.completed", &json!({})).is_err(),
        "outputs is required"
    );
    assert!(validate_run_event_payload("run.completed", &json!({"outputs": []})).is_err());
    assert_eq!(
        validate_run_event_payload("run.completed", &json!({"outputs": {}, "x-trace": 1})),
        Ok(true)
    );
    assert!(
        validate_run_event_payload("run.completed", &json!({"outputs": {}, "surprise": 1}))
            .is_err()
    );
    let usage = json!({"provider": "openai", "model": "m", "inputTokens": 1, "outputTokens": 2});
    assert_eq!(
        validate_run_event_payload("provider.usage", &usage),
        Ok(true)
    );
    let mut leak = usage.clone();
    leak["credentialRef"] = json!("secret:x");
    assert!(validate_run_event_payload("provider.usage", &leak).is_err());
    let mut hatch = usage;
    hatch["x-note"] = json!(1);
    assert!(
        validate_run_event_payload("provider.usage", &hatch).is_err(),
        "providerUsage has no hatch"
    );
    assert_eq!(
        validate_run_event_payload("example.noise-emitted", &json!({"any": 1})),
        Ok(false)
    );
    let refusal = json!({"nodeId": "n", "provider": "p", "model": "m", "refusalText": null, "safetyCategory": null});
    assert_eq!(
        validate_run_event_payload("envelope.refusal", &refusal),
        Ok(true)
    );
}

#[test]
fn poll_and_errors() {
    valid(
        Published::PollResponse,
        json!({"runId": "t/r_0123456789abcdef", "events": [run_event("run.started")], "lastSequence": 0, "status": "running", "isTerminal": false}),
    );
    valid(
        Published::PollResponse,
        json!({"runId": "t/r_0123456789abcdef", "events": [], "lastSequence": -1, "status": "pending", "isTerminal": false}),
    );
    invalid(
        Published::PollResponse,
        json!({"runId": "t/r", "events": [], "lastSequence": -2, "status": "x", "isTerminal": false}),
    );
    invalid(
        Published::PollResponse,
        json!({"runId": "t/r", "events": [], "lastSequence": 0, "status": "x", "isTerminal": false, "cursor": 1}),
    );
    valid(
        Published::OpenWopError,
        json!({"error": "unsupported_stream_mode", "message": "m", "details": {"supported": ["updates"]}}),
    );
    invalid(
        Published::OpenWopError,
        json!({"error": {"code": "x"}, "message": "m"}),
    );
    invalid(
        Published::OpenWopError,
        json!({"error": "x", "message": ""}),
    );
    valid(
        Published::ExecutionError,
        json!({"error": {"code": "invalid_request", "message": "m", "retryable": false}}),
    );
    invalid(
        Published::ExecutionError,
        json!({"error": {"code": "bogus", "message": "m", "retryable": false}}),
    );
    invalid(
        Published::ExecutionError,
        json!({"error": {"code": "invalid_request", "message": "m"}}),
    );
}
