//! The project's overlays (`spec::overlay`) reach the published schemas' validators: what a
//! tightening refuses is refused by `spec::schema::validate`, on every branch it applies to.

use serde_json::{Value, json};
use spec::schema::{Published, validate};

fn usage_event(unit: &str, quantity: f64) -> Value {
    json!({"execution_id": "e", "sequence": 2, "time": "2026-01-01T00:00:00Z",
           "type": "usage.reported", "status": "running",
           "facts": [{"unit": unit, "quantity": quantity, "source": "provider"}]})
}

#[test]
fn the_usage_overlays_reach_the_published_event_schema() {
    assert!(validate(Published::ExecutionEvent, &usage_event("input_token", 3.0)).is_ok());
    assert!(
        validate(
            Published::ExecutionEvent,
            &usage_event("acme.gpu_second", 1.0)
        )
        .is_ok()
    );
    assert!(validate(Published::ExecutionEvent, &usage_event("tokens", 1.0)).is_err());
    assert!(validate(Published::ExecutionEvent, &usage_event("input_token", -1.0)).is_err());
    let mut empty = usage_event("input_token", 1.0);
    empty["facts"] = json!([]);
    assert!(validate(Published::ExecutionEvent, &empty).is_err());
}

#[test]
fn the_envelope_overlays_reach_every_event_branch() {
    let event = |id: &str, sequence: Value, time: &str| {
        json!({"execution_id": id, "sequence": sequence, "time": time,
               "type": "execution.accepted", "status": "accepted"})
    };
    let at = "2026-01-01T00:00:00Z";
    assert!(validate(Published::ExecutionEvent, &event("e", json!(0), at)).is_ok());
    assert!(validate(Published::ExecutionEvent, &event("", json!(1), at)).is_err());
    assert!(validate(Published::ExecutionEvent, &event("e", json!(1.5), at)).is_err());
    assert!(validate(Published::ExecutionEvent, &event("e", json!(-1), at)).is_err());
    assert!(
        validate(
            Published::ExecutionEvent,
            &event("e", json!(1), "yesterday")
        )
        .is_err()
    );
}
