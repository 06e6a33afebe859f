//! A feedback signal the host accepts, for the cases that annotate a run to judge something
//! other than the signal (tenant isolation, the targets, a terminal run annotated). The
//! chapter: "feedback.signals lists the signal kinds a host accepts; absent means all four".
//! The kinds a host lists are its choice, so the probe reads one off discovery as the fact
//! [`FEEDBACK_SIGNAL_FACT`] (an operator's fact of the name wins) and those cases send
//! `${target.feedback_signal}`: no case annotates with a kind the host did not advertise.

use serde_json::{Value, json};

/// The fact holding a signal of a kind the host accepts (a `signal` object of an annotation).
pub(crate) const FEEDBACK_SIGNAL_FACT: &str = "feedback_signal";

/// A signal of each kind, in the order one is chosen: `flag` (no value), `rating`, `label`,
/// `correction` (upstream's annotation signal shapes, as the advertised-signal cases send them).
fn sample(kind: &str) -> Option<Value> {
    match kind {
        "flag" => Some(json!({"kind": "flag"})),
        "rating" => Some(json!({"kind": "rating", "rating": 3})),
        "label" => Some(json!({"kind": "label", "label": "off-brand"})),
        "correction" => Some(json!({"kind": "correction", "correction": "forty-three"})),
        _ => None,
    }
}

/// A signal of the first kind `feedback` (discovery's record) accepts: any when it lists no
/// `signals`; none when it lists only kinds outside the four.
pub(crate) fn accepted_signal(feedback: &Value) -> Option<Value> {
    let listed: Option<Vec<&str>> = feedback
        .get("signals")
        .and_then(Value::as_array)
        .map(|kinds| kinds.iter().filter_map(Value::as_str).collect());
    ["flag", "rating", "label", "correction"]
        .into_iter()
        .find(|kind| listed.as_ref().is_none_or(|listed| listed.contains(kind)))
        .and_then(sample)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signal_is_of_a_kind_the_host_lists() {
        assert_eq!(accepted_signal(&json!({})), Some(json!({"kind": "flag"})));
        let rating_and_correction = json!({"signals": ["correction", "rating"]});
        assert_eq!(
            accepted_signal(&rating_and_correction).unwrap()["kind"],
            "rating"
        );
        assert_eq!(
            accepted_signal(&json!({"signals": ["correction"]})).unwrap()["kind"],
            "correction"
        );
        assert_eq!(accepted_signal(&json!({"signals": ["acme.vote"]})), None);
    }
}
