//! How a known-bad host reads an AI emission: the envelope members a defect lets it do without
//! (`correlationId`, `meta.source`) filled in before the clean reader sees the emission, so the
//! envelope reader (`openwop/engine/envelopes/envelope.rs`) has no defect branch.

use std::borrow::Cow;

use serde_json::{Value, json};

use super::policy::KnownBad;

impl KnownBad {
    /// `emission` (a whole envelope or one chunk) as this host reads it: a missing
    /// `correlationId` minted or taken from `envelopeId`, a missing `meta.source` assumed, as
    /// the policy's decisions say; the emission itself when none of them is taken.
    pub(crate) fn emission_as_read<'a>(&self, emission: &'a Value) -> Cow<'a, Value> {
        let lax = self.correlation_id_minted()
            || self.envelope_id_as_correlation_id()
            || self.meta_source_assumed();
        let Some(members) = emission.as_object().filter(|_| lax) else {
            return Cow::Borrowed(emission);
        };
        let mut read = members.clone();
        let has_correlation = members
            .get("correlationId")
            .and_then(Value::as_str)
            .is_some_and(|id| !id.is_empty());
        if !has_correlation {
            if self.correlation_id_minted() {
                let minted = format!("corr-{}", uuid::Uuid::new_v4().simple());
                read.insert("correlationId".into(), json!(minted));
            } else if self.envelope_id_as_correlation_id()
                && let Some(id) = members.get("envelopeId").and_then(Value::as_str)
            {
                read.insert("correlationId".into(), json!(id));
            }
        }
        let has_source = emission
            .pointer("/meta/source")
            .and_then(Value::as_str)
            .is_some();
        if self.meta_source_assumed() && !has_source {
            let mut meta = members
                .get("meta")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            meta.insert("source".into(), json!("ai-generation"));
            read.insert("meta".into(), Value::Object(meta));
        }
        Cow::Owned(Value::Object(read))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::defects::Defect;

    #[test]
    fn a_clean_host_reads_the_emission_as_it_came() {
        let emission = json!({"type": "answer", "payload": {}});
        assert!(matches!(
            KnownBad::clean().emission_as_read(&emission),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn only_the_missing_members_are_filled_in() {
        let by_envelope = KnownBad::of([Defect::WEnvelopeIdAsCorrelationId]);
        let emission = json!({"envelopeId": "env-0123456789abcdef"});
        let read = by_envelope.emission_as_read(&emission);
        assert_eq!(read["correlationId"], "env-0123456789abcdef");
        let kept = json!({"correlationId": "corr-kept-0123456789", "envelopeId": "x"});
        assert_eq!(
            by_envelope.emission_as_read(&kept)["correlationId"],
            "corr-kept-0123456789"
        );
        let assumed = KnownBad::of([Defect::WEnvelopeMetaSourceSynthesized]);
        let without_source = json!({"meta": {"ts": "x"}});
        let read = assumed.emission_as_read(&without_source);
        assert_eq!(read["meta"], json!({"ts": "x", "source": "ai-generation"}));
        assert!(read.get("correlationId").is_none());
    }
}
