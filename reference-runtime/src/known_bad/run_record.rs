//! [`RunRecordRewrites`]: the record layer, rewrites of a run's events on their way into its log
//! (the `RUN_RECORDS` table).
//!
//! A defect that changes what a run's log holds, and that the event itself says enough to
//! apply (a member dropped or retyped, an event dropped, repeated or held back, an id cut
//! short), is no decision of the engine: the engine records the clean event and the recorder
//! hands it to this layer, which only a known-bad runtime has. The rewritten events are then
//! numbered and stored like any other, so every read path (SSE, poll, a snapshot, replay)
//! agrees and the numbering stays gapless. Defects that need what the event does not carry
//! (the prompt, the credential, the unredacted text) stay decisions of the policy.

use std::sync::Mutex;

use serde_json::{Value, json};

use super::decisions::decisions;
use super::policy::KnownBad;
use crate::defects::{Defect, Defects};
use crate::log::AppendKind;
use crate::openwop::infra::event_draft::EventDraft;

/// The record rewrites of a known-bad runtime: its record defects, and the events it holds
/// back (a node's `provider.usage` held until its `node.completed`).
#[derive(Debug, Default)]
pub(crate) struct RunRecordRewrites {
    defects: Defects,
    held: Mutex<Vec<EventDraft>>,
}

decisions! {
    RunRecordRewrites, RUN_RECORDS {
        event_ids_short => WShortEventId,
        owner_subject_as_string => WOwnerSubjectString,
        run_completed_without_outputs => WRunCompletedWithoutOutputs,
        run_second_terminal => WSecondTerminal,
        run_cancel_without_terminal => WNoTerminalOnCancel,
        node_started_without_type_id => WNodeStartedWithoutTypeId,
        node_failed_error_without_message => WNodeFailedErrorWithoutMessage,
        node_event_after_terminal => WEventAfterTerminal,
        interrupt_requested_without_key => WInterruptRequestedWithoutKey,
        resolved_by_as_string => WResolvedByString,
        usage_after_node_completed => WProviderUsageAfterNodeCompleted,
        cost_estimate_omitted => WCostEstimateMissing,
        usage_model_empty => WProviderUsageModelEmpty,
        usage_recorded_twice => WUsageRecordedTwice,
        refusal_event_omitted => WRefusalEventMissing,
        truncation_unreported => WTruncationNotReported,
        recovery_unreported => WRecoveryNotReported,
        retry_attempted_omitted => WRetryAttemptedMissing,
        retry_exhausted_omitted => WRetryExhaustedMissing,
        exhaustion_reason_fixed => WExhaustionReasonFixed,
        cap_breached_omitted => WCapBreachedMissing,
    }
}

impl KnownBad {
    /// The record layer of a run's recorder: its rewrites of the events on their way into the
    /// log, or `None` when no record defect is on.
    pub(crate) fn record_rewrites(&self) -> Option<RunRecordRewrites> {
        let defects = self.layered_in(RUN_RECORDS);
        (!defects.is_empty()).then(|| RunRecordRewrites::new(defects))
    }
}

impl RunRecordRewrites {
    /// The rewrites of `defects` (the policy's record defects), holding nothing back yet.
    pub(super) fn new(defects: Defects) -> Self {
        RunRecordRewrites {
            defects,
            held: Mutex::new(Vec::new()),
        }
    }

    /// What the log receives for `draft`: nothing, the draft rewritten, or several events, in
    /// order (with any events held back that it releases).
    pub(crate) fn rewrite(&self, mut draft: EventDraft) -> Vec<EventDraft> {
        if self.event_ids_short() {
            // The defect: event ids too short to be unique over a run's life.
            draft.event_id = uuid::Uuid::new_v4().simple().to_string()[..8].to_string();
        }
        if self.dropped(&draft) {
            return Vec::new();
        }
        self.rewrite_members(&mut draft);
        let mut drafts = vec![draft];
        if self.usage_recorded_twice() && drafts[0].is("provider.usage") {
            drafts.push(drafts[0].clone());
        }
        if self.run_second_terminal() && drafts[0].is("run.completed") {
            // Appended only when the first was: the recorder stops at the first refusal.
            let mut second = drafts[0].clone();
            second.kind = AppendKind::AfterTerminal;
            drafts.push(second);
        }
        if self.usage_after_node_completed() {
            return self.reorder_usage(drafts);
        }
        drafts
    }

    /// Whether the defects drop the event altogether.
    fn dropped(&self, draft: &EventDraft) -> bool {
        let schema_cap = || draft.payload.get("kind").and_then(Value::as_str) == Some("schema");
        (self.run_cancel_without_terminal() && draft.is("run.cancelled"))
            || (self.refusal_event_omitted() && draft.is("envelope.refusal"))
            || (self.truncation_unreported() && draft.is("envelope.truncated"))
            || (self.recovery_unreported() && draft.is("envelope.recovery-applied"))
            || (self.retry_attempted_omitted() && draft.is("envelope.retry-attempted"))
            || (self.retry_exhausted_omitted() && draft.is("envelope.retry-exhausted"))
            || (self.cap_breached_omitted() && draft.is("cap.breached") && schema_cap())
    }

    /// The defects that change an event's members or its kind.
    fn rewrite_members(&self, draft: &mut EventDraft) {
        let payload = &mut draft.payload;
        match draft.event_type.as_str() {
            "run.started" if self.owner_subject_as_string() => {
                // The defect: the owner's subject written as its bare id.
                if let Some(id) = payload.pointer("/owner/subject/subjectId").cloned() {
                    payload["owner"]["subject"] = id;
                }
            }
            "run.completed" if self.run_completed_without_outputs() => {
                remove(payload, "outputs");
            }
            "node.started" if self.node_started_without_type_id() => {
                remove(payload, "typeId");
            }
            "node.failed" if self.node_failed_error_without_message() => {
                if let Some(error) = payload.get_mut("error") {
                    remove(error, "message");
                }
            }
            "node.cancelled" if self.node_event_after_terminal() => {
                // The defect: a late worker's node event is let past the terminal rule.
                draft.kind = AppendKind::AfterTerminal;
            }
            "interrupt.requested" if self.interrupt_requested_without_key() => {
                remove(payload, "key");
            }
            "interrupt.resolved" if self.resolved_by_as_string() => {
                if let Some(id) = payload.pointer("/resolvedBy/subjectId").cloned() {
                    payload["resolvedBy"] = id;
                }
            }
            "provider.usage" => {
                if self.cost_estimate_omitted() {
                    remove(payload, "costEstimateUsd");
                    remove(payload, "currency");
                }
                if self.usage_model_empty() {
                    payload["model"] = json!("");
                }
            }
            "envelope.retry-exhausted" if self.exhaustion_reason_fixed() => {
                // The defect: the schema loop's reason whatever the final failure was.
                payload["finalReason"] = json!("schema-violation");
            }
            _ => {}
        }
    }

    /// `provider.usage` held back until its node's `node.completed`, which it then follows;
    /// released before a `node.failed` (the defect moves only a completed node's usage).
    fn reorder_usage(&self, drafts: Vec<EventDraft>) -> Vec<EventDraft> {
        let Ok(mut held) = self.held.lock() else {
            return drafts;
        };
        let mut out = Vec::new();
        for draft in drafts {
            if draft.is("provider.usage") {
                held.push(draft);
            } else if draft.is("node.completed") {
                out.push(draft);
                out.append(&mut held);
            } else {
                out.append(&mut held);
                out.push(draft);
            }
        }
        out
    }
}

fn remove(object: &mut Value, member: &str) {
    if let Some(members) = object.as_object_mut() {
        members.remove(member);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_record_defect_gives_the_recorder_a_layer() {
        assert!(KnownBad::clean().record_rewrites().is_none());
        assert!(
            KnownBad::of([Defect::WBatchIdLowest])
                .record_rewrites()
                .is_none()
        );
        assert!(
            KnownBad::of([Defect::XSequenceRepeated])
                .record_rewrites()
                .is_none()
        );
        let recorded = KnownBad::of([Defect::WShortEventId, Defect::WRefusalRetried]);
        assert!(
            recorded
                .record_rewrites()
                .is_some_and(|r| r.event_ids_short() && !r.usage_recorded_twice())
        );
    }

    fn layer(defects: impl IntoIterator<Item = Defect>) -> RunRecordRewrites {
        RunRecordRewrites::new(Defects::of(defects))
    }

    fn draft(event_type: &str, payload: Value) -> EventDraft {
        EventDraft {
            event_type: event_type.to_string(),
            event_id: "evt_0123456789abcdef".to_string(),
            node_id: Some("n".to_string()),
            payload,
            kind: AppendKind::Forward,
            causation_id: None,
        }
    }

    fn types(drafts: &[EventDraft]) -> Vec<&str> {
        drafts.iter().map(|d| d.event_type.as_str()).collect()
    }

    #[test]
    fn usage_is_held_until_its_node_completes_and_released_before_a_failure() {
        let layer = layer([Defect::WProviderUsageAfterNodeCompleted]);
        assert!(layer.rewrite(draft("provider.usage", json!({}))).is_empty());
        let completed = layer.rewrite(draft("node.completed", json!({})));
        assert_eq!(types(&completed), ["node.completed", "provider.usage"]);
        assert!(layer.rewrite(draft("provider.usage", json!({}))).is_empty());
        let failed = layer.rewrite(draft("node.failed", json!({})));
        assert_eq!(types(&failed), ["provider.usage", "node.failed"]);
    }

    #[test]
    fn a_second_terminal_follows_the_first_past_the_terminal_rule() {
        let layer = layer([Defect::WSecondTerminal, Defect::WRunCompletedWithoutOutputs]);
        let drafts = layer.rewrite(draft(
            "run.completed",
            json!({"outputs": {}, "durationMs": 1}),
        ));
        assert_eq!(types(&drafts), ["run.completed", "run.completed"]);
        assert_eq!(drafts[0].kind, AppendKind::Forward);
        assert_eq!(drafts[1].kind, AppendKind::AfterTerminal);
        assert!(drafts.iter().all(|d| d.payload == json!({"durationMs": 1})));
    }

    #[test]
    fn members_are_rewritten_only_on_their_event() {
        let layer = layer([
            Defect::WResolvedByString,
            Defect::WCapBreachedMissing,
            Defect::WShortEventId,
        ]);
        let resolved = layer.rewrite(draft(
            "interrupt.resolved",
            json!({"resolvedBy": {"subjectId": "alice"}}),
        ));
        assert_eq!(resolved[0].payload, json!({"resolvedBy": "alice"}));
        assert_eq!(resolved[0].event_id.len(), 8);
        let other = layer.rewrite(draft(
            "node.completed",
            json!({"resolvedBy": {"subjectId": "x"}}),
        ));
        assert_eq!(other[0].payload, json!({"resolvedBy": {"subjectId": "x"}}));
        assert!(
            layer
                .rewrite(draft("cap.breached", json!({"kind": "schema"})))
                .is_empty()
        );
        assert_eq!(
            layer
                .rewrite(draft("cap.breached", json!({"kind": "refusals"})))
                .len(),
            1
        );
    }
}
