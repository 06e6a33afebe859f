//! A schema refusal that echoes the request (`x-request-echoed-in-error`): the clean refusal
//! of a submission that does not match the published request schema says so in a fixed
//! message; the defective one appends the validator's findings (paths and offending values),
//! computed here from the submitted body with the same validator.

use serde_json::{Value, json};
use spec::schema::{Published, validate};

use crate::execution::admission::SCHEMA_MESSAGE;

/// `envelope` (a refusal of `submitted`) with the validator's findings appended to its message
/// when it is the schema refusal; whether it changed.
pub(super) fn append_findings(envelope: &mut Value, submitted: &Value) -> bool {
    let Some(error) = envelope.get_mut("error") else {
        return false;
    };
    let schema_refusal = error.get("code").and_then(Value::as_str) == Some("invalid_request")
        && error.get("message").and_then(Value::as_str) == Some(SCHEMA_MESSAGE);
    if !schema_refusal {
        return false;
    }
    let Err(violations) = validate(Published::ExecutionRequest, submitted) else {
        return false;
    };
    let detail: Vec<String> = violations.iter().map(ToString::to_string).collect();
    error["message"] = json!(format!("{SCHEMA_MESSAGE}: {}", detail.join("; ")));
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(message: &str) -> Value {
        json!({"error": {"code": "invalid_request", "message": message, "retryable": false}})
    }

    #[test]
    fn the_schema_refusal_gains_the_findings_and_no_other_refusal_changes() {
        let submitted = json!({
            "ability": "text-generation",
            "input": [{"type": "text", "text": "x"}],
            "metadata": {"patient-name": {"secret": "v"}},
        });
        let mut envelope = refusal(SCHEMA_MESSAGE);
        assert!(append_findings(&mut envelope, &submitted));
        let message = envelope["error"]["message"].as_str().unwrap();
        assert!(
            message.starts_with(SCHEMA_MESSAGE) && message.contains("patient-name"),
            "{message}"
        );
        let mut other = refusal("Request body is not valid JSON");
        assert!(!append_findings(&mut other, &submitted));
        assert_eq!(other, refusal("Request body is not valid JSON"));
    }
}
