//! Feedback annotations (`feedback` capability): a per-run side-store of quality signals, never
//! entries of the replayable run event log.
//!
//! | Method, path | Success |
//! |---|---|
//! | `POST /runs/{runId}/annotations` | 201 the `Annotation` |
//! | `GET /runs/{runId}/annotations` | 200 `{runId, annotations: [Annotation]}` in recording order |
//!
//! Request body (closed): `{target?: {runId?, nodeId?, eventId?}, signal: {kind, rating?,
//! label?, correction?}, note?}`. The target is the run itself (no `nodeId`/`eventId`), a node
//! (`nodeId`, a node of the run's workflow) or an event (`eventId`); this host advertises
//! `feedback.targets: ["run", "node"]` (`targets = "run-and-event"`: `["run", "event"]`;
//! `"node-and-event"`: `["node", "event"]`), and
//! a target outside them is refused `422 capability_not_provided` with `details.targets`.
//! `signal.kind` is one of the four signal kinds (`rating` with `rating` 1–5, `label` with
//! `label`, `correction` with `correction`, `flag` with nothing else); anything else is `400
//! validation_error`. This host accepts all four (`signals = "rating-and-correction"`: those
//! two, the others refused `422 capability_not_provided` with `details.signals`). Discovery
//! lists them in `feedback.signals`, or, with [`FeedbackSettings::advertise_signals`] off,
//! omits `signals`, which means all four.
//!
//! | field of `[openwop.feedback]` | default | advertised as |
//! |---|---|---|
//! | `advertise_signals` | `true` (`false`: `feedback` without `signals`; all four are still accepted) | `feedback.signals` |
//! | `signals` | `"all-four"` (or `"rating-and-correction"`) | `feedback.signals` |
//! | `targets` | `"run-and-node"` (or `"run-and-event"`, `"node-and-event"`) | `feedback.targets` |
//!
//! `Annotation`: `{annotationId, target {runId, nodeId?, eventId?}, signal, actor {principalRef},
//! note?, createdAt}`; `principalRef` is the acting key's subject.
//!
//! Rules: a terminal run accepts annotations; a refused annotation writes nothing anywhere (not
//! the run log, not the side-store); annotations are readable only by the run's tenant (another
//! tenant gets the same 403/404 as for `GET /runs/{runId}`); `note`, `signal.correction` and
//! `signal.label` pass through the secret redaction before they are persisted, so the listing
//! (this host's only export of annotations) never holds the original; every recording is written
//! to the audit log (the store's `openwop.audit` space and a `tracing` line on target
//! `openwop::audit`) with the acting tenant and subject.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::store::StoreView;

use super::state::WState;
use crate::openwop::engine::secrets::SecretRedactor;
use crate::openwop::infra::auth::Caller;
use crate::openwop::infra::config::SIGNALS;
use crate::openwop::infra::error::{ApiError, details};
use crate::openwop::infra::ids::mint_event_id;
use crate::openwop::infra::projection::RunMeta;

const NAMESPACE: &str = "openwop.annotations";
const AUDIT_NAMESPACE: &str = "openwop.audit";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Target {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    run_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    node_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    event_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Signal {
    kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    rating: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    label: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    correction: Option<String>,
}

/// The body of `POST /runs/{runId}/annotations`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct CreateAnnotation {
    #[serde(default)]
    target: Option<Target>,
    signal: Signal,
    #[serde(default)]
    note: Option<String>,
}

/// A recorded annotation (the `Annotation` of the module documentation).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Annotation {
    annotation_id: String,
    target: Target,
    signal: Signal,
    actor: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    note: Option<String>,
    created_at: String,
}

fn check_signal(signal: &Signal) -> Result<(), ApiError> {
    let (rating, label, correction) = (
        signal.rating.is_some(),
        signal.label.is_some(),
        signal.correction.is_some(),
    );
    let fits = match signal.kind.as_str() {
        "rating" => {
            rating && !label && !correction && signal.rating.is_some_and(|r| (1..=5).contains(&r))
        }
        "label" => label && !rating && !correction,
        "correction" => correction && !rating && !label,
        "flag" => !rating && !label && !correction,
        _ => false,
    };
    if fits {
        Ok(())
    } else {
        Err(ApiError::validation(
            "signal must be {kind: rating, rating: 1..5}, {kind: label, label}, {kind: correction, correction} or {kind: flag}",
        )
        .with_details(details([("signals", json!(SIGNALS))])))
    }
}

/// The target's kind, after checking it names this run (and, for a node, one of its nodes).
fn target_kind(state: &WState, meta: &RunMeta, target: &Target) -> Result<&'static str, ApiError> {
    if target.run_id.as_deref().is_some_and(|r| r != meta.run_id) {
        return Err(ApiError::validation(
            "target.runId must be the run the path names",
        ));
    }
    match (&target.node_id, &target.event_id) {
        (None, None) => Ok("run"),
        (Some(node), None) => {
            let known = state
                .workflows
                .get(&meta.workflow_id)
                .is_some_and(|w| w.nodes.iter().any(|n| n.id == *node));
            if known {
                Ok("node")
            } else {
                Err(ApiError::validation(
                    "target.nodeId names no node of the run's workflow",
                ))
            }
        }
        (None, Some(_)) => Ok("event"),
        (Some(_), Some(_)) => Err(ApiError::validation(
            "target names a node or an event, not both",
        )),
    }
}

fn refuse_capability(what: &str, facet: &str, values: &[&str]) -> ApiError {
    ApiError::new(
        "capability_not_provided",
        format!("this host does not accept annotations of this {what} (see feedback.{facet})"),
    )
    .with_details(details([(facet, json!(values))]))
}

/// Validates an annotation; a refusal leaves no trace of it (only a defective host logs it).
fn validate(state: &WState, meta: &RunMeta, request: &CreateAnnotation) -> Result<(), ApiError> {
    let defects = &state.defects;
    let target = request.target.clone().unwrap_or_default();
    let kind = target_kind(state, meta, &target)?;
    let targets = state.config.feedback.targets.kinds();
    let advertised = (targets.contains(&kind)
        && !(kind == "node" && defects.annotation_on_node_refused()))
        || (kind == "run" && defects.run_annotation_outside_targets_accepted());
    if !advertised && !defects.annotation_outside_targets_accepted() {
        return Err(refuse_capability("target", "targets", targets));
    }
    check_signal(&request.signal)?;
    let signals = state.config.feedback.signals.kinds();
    if !signals.contains(&request.signal.kind.as_str()) {
        return Err(refuse_capability("signal kind", "signals", signals));
    }
    // A defective host reads an absent `signals` as an empty list.
    if !state.config.feedback.advertise_signals && defects.absent_signals_accept_none() {
        return Err(refuse_capability("signal kind", "signals", &[]));
    }
    if request.signal.kind == "flag" && defects.flag_signal_refused() {
        return Err(refuse_capability("signal kind", "signals", &SIGNALS[..3]));
    }
    if defects.annotation_on_terminal_refused()
        && state.hub.progress(&meta.run_id).is_ok_and(|p| p.terminal)
    {
        return Err(ApiError::new("run_terminal", "the run is already terminal"));
    }
    Ok(())
}

fn read_all(store: StoreView<'_>, run_id: &str) -> Result<Vec<Annotation>, ApiError> {
    match store.kv_get(NAMESPACE, run_id) {
        Ok(None) => Ok(Vec::new()),
        Ok(Some(value)) => serde_json::from_value(value).map_err(|_| ApiError::internal()),
        Err(error) => {
            tracing::error!(%error, "reading annotations failed");
            Err(ApiError::internal())
        }
    }
}

/// Records an annotation on a run the caller may read (`POST /runs/{runId}/annotations`) and
/// returns it.
pub(crate) fn create(
    state: &WState,
    caller: &Caller,
    meta: RunMeta,
    request: CreateAnnotation,
) -> Result<Annotation, ApiError> {
    if let Err(refusal) = validate(state, &meta, &request) {
        if state.defects.refused_annotation_logged() {
            let recorder = crate::openwop::infra::recorder::Recorder::new(
                Arc::clone(&state.hub),
                &meta.run_id,
                &state.defects,
                &state.config.choices,
            );
            let _ = recorder.record(
                "example.annotation-refused",
                None,
                json!({ "code": refusal.code() }),
            );
        }
        return Err(refusal);
    }
    let defects = &state.defects;
    let redactor = SecretRedactor::shapes_only();
    let scrub = |text: Option<String>, unredacted: bool| {
        text.map(|t| if unredacted { t } else { redactor.scrub(&t) })
    };
    let mut signal = request.signal;
    signal.correction = scrub(
        signal.correction,
        defects.annotation_correction_unredacted(),
    );
    signal.label = signal.label.map(|l| redactor.scrub(&l));
    let target = request.target.unwrap_or_default();
    let annotation = Annotation {
        annotation_id: format!("ann-{}", &mint_event_id()[4..]),
        target: Target {
            run_id: Some(meta.run_id.clone()),
            node_id: target.node_id,
            event_id: target.event_id,
        },
        signal,
        actor: json!({ "principalRef": caller.subject }),
        note: scrub(request.note, defects.annotation_note_unredacted()),
        created_at: state
            .hub
            .clock()
            .now()
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
    };
    let store = state.hub.store();
    {
        let _serialised = state
            .annotations_lock
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let mut all = read_all(store, &meta.run_id)?;
        all.push(annotation.clone());
        let value = serde_json::to_value(&all).map_err(|_| ApiError::internal())?;
        store
            .kv_put(NAMESPACE, &meta.run_id, &value)
            .map_err(|error| {
                tracing::error!(%error, "persisting an annotation failed");
                ApiError::internal()
            })?;
    }
    audit(
        store,
        caller,
        &meta.run_id,
        &annotation.annotation_id,
        &annotation.created_at,
    );
    Ok(annotation)
}

/// The audit record of one recording, with the acting principal.
fn audit(store: StoreView<'_>, caller: &Caller, run_id: &str, annotation_id: &str, at: &str) {
    tracing::info!(
        target: "openwop::audit",
        action = "annotation.recorded",
        run_id,
        annotation_id,
        tenant = %caller.tenant,
        subject = %caller.subject,
        "annotation recorded"
    );
    let record = json!({
        "action": "annotation.recorded",
        "runId": run_id,
        "annotationId": annotation_id,
        "principal": { "tenant": caller.tenant, "subject": caller.subject },
        "at": at,
    });
    if let Err(error) = store.kv_put(AUDIT_NAMESPACE, annotation_id, &record) {
        tracing::error!(%error, annotation_id, "writing the audit record failed");
    }
}

/// A run's annotations in recording order (`GET /runs/{runId}/annotations`): the run the
/// request path `path` names, if `caller` may read it, and its annotations.
pub(crate) fn list(
    state: &WState,
    caller: Caller,
    path: &str,
) -> Result<(RunMeta, Vec<Annotation>), ApiError> {
    let meta = if state.defects.annotations_cross_tenant() {
        let foreign = Caller {
            tenant: path
                .split('/')
                .nth(2)
                .and_then(spec::openwop::decode_run_id_path_segment)
                .and_then(|id| id.split('/').next().map(str::to_string))
                .unwrap_or_default(),
            ..caller
        };
        state.readable_run(&foreign, path)?
    } else {
        state.readable_run(&caller, path)?
    };
    let annotations = read_all(state.hub.store(), &meta.run_id)?;
    Ok((meta, annotations))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{EventStore, MemoryEventStore};

    #[test]
    fn signals_must_fit_their_kind() {
        let signal = |v: Value| serde_json::from_value::<Signal>(v).unwrap();
        assert!(check_signal(&signal(json!({"kind": "rating", "rating": 5}))).is_ok());
        assert!(check_signal(&signal(json!({"kind": "rating", "rating": 6}))).is_err());
        assert!(check_signal(&signal(json!({"kind": "flag"}))).is_ok());
        assert!(check_signal(&signal(json!({"kind": "flag", "label": "x"}))).is_err());
        assert!(check_signal(&signal(json!({"kind": "thumbs"}))).is_err());
    }

    #[test]
    fn the_audit_record_names_the_principal() {
        let store: Arc<dyn EventStore> = Arc::new(MemoryEventStore::new());
        let caller = Caller {
            tenant: "tenant-a".into(),
            subject: "reviewer".into(),
            is_test_key: true,
        };
        audit(
            StoreView::new(store.as_ref()),
            &caller,
            "tenant-a/run-1",
            "ann-1",
            "2026-01-01T00:00:00Z",
        );
        let record = store.kv_get(AUDIT_NAMESPACE, "ann-1").unwrap().unwrap();
        assert_eq!(
            record["principal"],
            json!({"tenant": "tenant-a", "subject": "reviewer"})
        );
        assert_eq!(record["runId"], "tenant-a/run-1");
    }
}
