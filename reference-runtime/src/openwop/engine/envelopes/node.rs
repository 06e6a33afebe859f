//! The `core.ai.structuredOutput` node: collects `turns` AI envelopes from the run's
//! `envelope-program` mock (or, on a node of upstream's envelope fixtures, `config.provider:
//! "mock"`, from the program posted to upstream's mock-AI program seam, `seam_program`), each through the catalog flow and the reliability loop, and records
//! each accepted envelope as `output.chunk` events.
//!
//! Its settings are read by `node_settings`.
//!
//! Recording (E1, E2): an accepted envelope is recorded as one `output.chunk` per chunk (one for
//! a whole envelope, its text the payload's JSON; one per fragment of a partial emission, in
//! order, `isLast` only on the final one, which is when the emission is complete), with
//! `channel: "envelope:<kind>"` and `causationId` = the envelope's `correlationId`; every
//! `envelope.*` event an attempt causes carries no causation (the attempt may have no envelope).
//! A re-emission of a `correlationId` the run already recorded returns the recorded outcome (read
//! back from the log) and records nothing; the same `correlationId` with another `type` fails
//! `envelope_correlation_conflict`. An envelope missing `correlationId` or `meta.source` fails
//! the node `envelope_invalid` (`details.check: "envelope"`) without a retry.
//!
//! E5: a refusal records `envelope.refusal` and is never retried; the node is re-dispatched
//! (`node.retried`) only while the run has recorded fewer than `configurable.ai.maxRefusals`
//! refusals (default 1) and the node has dispatches left; otherwise it fails `envelope_refusal`.
//!
//! Upstream's envelope fixtures declare a plain `config.outputSchema`: there the mock's content
//! is the structured value itself (lenient parse, then validated against that schema; a
//! violation or no JSON is retried like an envelope's), no envelope and no catalog flow.
//!
//! Outputs: `{envelopes: [{kind, correlationId, schemaVersion, payload, cached}]}`, one per
//! turn, payloads redacted; on a node with a plain `outputSchema`, `{output: value}`. Every text derived from the model (chunk texts, payloads,
//! `refusalText`, errors) passes through the run's [`SecretRedactor`] (secret shapes and the
//! values of the workflow's `sensitive` variables).

use serde_json::{Map, Value, json};
use spec::openwop::RunEventDoc;
use spec::openwop::payloads::{
    ChunkMeta, EnvelopeRecoveryApplied, EnvelopeRefusal, EnvelopeTruncated, ErrorObject,
    NodeRetried, OutputChunk, ProviderUsage,
};

use crate::known_bad::KnownBad;

use super::super::ai::call::CallTarget;
use super::super::node_context::{NodeError, NodeSuccess, RunContext};
use super::super::secrets::SecretRedactor;
use super::super::workflow::NodeDef;
use super::catalog::{KindCatalog, KindSchema};
use super::envelope::{Envelope, Fault, lenient_parse, read_whole, reassemble};
use super::journal::{self, CallRecord};
use super::node_settings::{NodeSettings, error, read_settings};
use super::program::{Attempt, EnvelopePlan, Output};
use super::reliability::{self, Failure, NextRequest, Reason};
use crate::openwop::engine::ai::node::usage_payload;
use crate::openwop::engine::ai::plan::AiPlan;
use crate::openwop::infra::projection::parse_event;

/// The channel prefix of envelope chunks.
const CHANNEL_PREFIX: &str = "envelope:";

/// Why a turn ended without an envelope.
enum TurnError {
    /// A refusal (E5 decides whether the node is re-dispatched).
    Refused(Box<ErrorObject>),
    /// The node fails.
    Failed(Box<ErrorObject>),
    /// The run stopped.
    Node(NodeError),
}

impl From<NodeError> for TurnError {
    fn from(error: NodeError) -> Self {
        TurnError::Node(error)
    }
}

/// One accepted (or cached) envelope.
struct Accepted {
    kind: String,
    correlation_id: String,
    schema_version: u32,
    payload: Value,
    cached: bool,
}

/// What every turn of one node shares.
struct Turns<'a> {
    ctx: &'a RunContext,
    node: &'a NodeDef,
    plan: &'a EnvelopePlan,
    /// A node of upstream's envelope fixtures: its plain `config.outputSchema`, which the
    /// output itself must validate against (no envelope, no catalog flow).
    plain: Option<KindSchema>,
    /// The node calls upstream's conformance mock, programmed through the mock-AI program
    /// seam: each call's budget is reported by the last-dispatch-budget seam.
    seam_mock: bool,
    catalog: &'a KindCatalog,
    settings: NodeSettings,
    redactor: SecretRedactor,
    usage: Vec<ProviderUsage>,
}

/// Runs one `core.ai.structuredOutput` node.
pub(crate) async fn run_node(ctx: &RunContext, node: &NodeDef) -> Result<NodeSuccess, NodeError> {
    let seam_plan;
    let mut plain = None;
    let mut seam_mock = false;
    let plan = match ctx.ai_plan() {
        AiPlan::Envelope(plan) => plan,
        _ if node.config.get("provider").and_then(Value::as_str) == Some("mock") => {
            // Upstream's envelope fixtures: the program posted to the mock-AI program seam (an
            // empty one when none was: the node then fails, no attempt left).
            let program = ctx
                .env
                .mock_programs
                .take(&ctx.tenant, &node.id)
                .unwrap_or_default();
            seam_mock = true;
            let model = node.config.get("model").and_then(Value::as_str);
            seam_plan = EnvelopePlan::from_upstream_program(&program, model, &Default::default())
                .map_err(|message| {
                NodeError::failed(*error("validation_error", message, None), Vec::new())
            })?;
            // Upstream's mock answers the structured value itself, validated against the
            // node's plain outputSchema (no envelope around it).
            if let Some(schema) = node.config.get("outputSchema") {
                plain = Some(KindSchema::output_schema(schema).ok_or_else(|| {
                    NodeError::failed(
                        *error(
                            "validation_error",
                            "config.outputSchema is not a JSON Schema this host compiles",
                            None,
                        ),
                        Vec::new(),
                    )
                })?);
            }
            &seam_plan
        }
        _ => {
            return Err(NodeError::failed(
                *error(
                    "capability_not_provided",
                    "core.ai.structuredOutput runs on configurable.ai.mockProvider envelope-program or the mock provider programmed through the mock-AI program seam only",
                    None,
                ),
                Vec::new(),
            ));
        }
    };
    let settings = read_settings(ctx, node, plan).map_err(|e| NodeError::failed(*e, Vec::new()))?;
    let known = if ctx.env.defects.secrets_unredacted_in_derived_events() {
        Vec::new()
    } else {
        ctx.workflow.sensitive_values(&ctx.variables)
    };
    let mut turns = Turns {
        ctx,
        node,
        plan,
        plain,
        seam_mock,
        catalog: &ctx.env.catalog,
        settings,
        redactor: SecretRedactor::with_known(known),
        usage: Vec::new(),
    };
    let mut dispatch = 1;
    loop {
        match turns.dispatch(dispatch) {
            Ok(outputs) => {
                return Ok(NodeSuccess {
                    outputs,
                    usage: turns.usage,
                });
            }
            Err(TurnError::Refused(refusal)) => {
                let recorded = turns.recorded("envelope.refusal").len() as u32;
                let below_ceiling =
                    recorded < plan.max_refusals || ctx.env.defects.max_refusals_ignored();
                if below_ceiling && dispatch < turns.settings.dispatches {
                    let retried = NodeRetried {
                        node_id: node.id.clone(),
                        attempt: dispatch,
                        delay_ms: Some(0),
                        last_error: Some(*refusal),
                    };
                    ctx.record("node.retried", Some(&node.id), json!(retried))?;
                    dispatch += 1;
                    continue;
                }
                return Err(NodeError::failed_after(*refusal, turns.usage, dispatch));
            }
            Err(TurnError::Failed(failure)) => {
                return Err(NodeError::failed_after(*failure, turns.usage, dispatch));
            }
            Err(TurnError::Node(stop)) => return Err(stop),
        }
    }
}

impl Turns<'_> {
    fn dispatch(&mut self, dispatch: u32) -> Result<Map<String, Value>, TurnError> {
        let mut envelopes = Vec::new();
        for turn in 1..=self.settings.turns {
            let accepted = self.turn(dispatch, turn)?;
            envelopes.push(json!({
                "kind": accepted.kind,
                "correlationId": accepted.correlation_id,
                "schemaVersion": accepted.schema_version,
                "payload": self.redacted_payload(&accepted.payload),
                "cached": accepted.cached,
            }));
        }
        let mut outputs = Map::new();
        if self.plain.is_some() {
            // A plain structured output: the validated value itself.
            let value = envelopes.pop().map(|mut e| e["payload"].take());
            outputs.insert("output".into(), value.unwrap_or(Value::Null));
        } else {
            outputs.insert("envelopes".into(), Value::Array(envelopes));
        }
        Ok(outputs)
    }

    fn defects(&self) -> &KnownBad {
        &self.ctx.env.defects
    }

    /// A payload with the run's secrets scrubbed; a defective host spares `reasoning`.
    fn redacted_payload(&self, payload: &Value) -> Value {
        let mut scrubbed = self.redactor.scrub_value(payload);
        if self.defects().reasoning_unredacted()
            && let (Some(object), Some(reasoning)) =
                (scrubbed.as_object_mut(), payload.get("reasoning"))
        {
            object.insert("reasoning".into(), reasoning.clone());
        }
        scrubbed
    }

    fn node_id(&self) -> &str {
        &self.node.id
    }

    /// Announces the retry of attempt `next` after `failure` (`envelope.retry-attempted`).
    fn announce(&self, next: u32, failure: &Failure) -> Result<(), NodeError> {
        reliability::announce_retry(self.ctx, self.node_id(), next, failure, &self.redactor)
    }

    /// The run's events of one type, read back from the log (the log is the run's state).
    fn recorded(&self, event_type: &str) -> Vec<RunEventDoc> {
        self.ctx
            .env
            .hub
            .read_after(self.ctx.run_id(), None)
            .unwrap_or_default()
            .iter()
            .filter(|e| &*e.event_type == event_type)
            .filter_map(|e| parse_event(&e.json))
            .collect()
    }

    fn instructions(&self) -> Vec<String> {
        let expects = &self.settings.expects;
        let mut out = vec![format!(
            "Emit exactly one AI envelope of type {expects} as a JSON object with correlationId, payload and meta.source."
        )];
        let permits = self
            .catalog
            .schema(expects)
            .is_some_and(|s| s.permits_reasoning);
        if permits && !self.defects().reasoning_instruction_omitted() {
            out.push(
                "Populate the optional payload field `reasoning` first, before the other fields."
                    .to_string(),
            );
        }
        out
    }

    /// One turn: attempts until an envelope is accepted, refused, or the rounds run out.
    fn turn(&mut self, dispatch: u32, turn: u32) -> Result<Accepted, TurnError> {
        let schema_rounds = self.ctx.env.config.envelopes.schema_rounds;
        let rounds = if self.defects().schema_rounds_exceeded() {
            schema_rounds + 1
        } else {
            schema_rounds
        };
        let multiplier = self.ctx.env.config.envelopes.truncation_budget_multiplier;
        let mut request = NextRequest {
            max_output_tokens: self.settings.first_budget,
            fragment: None,
        };
        let mut attempt = 1u32;
        let announce_late = self.defects().retry_announced_late();
        let mut unannounced: Option<Failure> = None;
        loop {
            journal::record(
                self.ctx.env.hub.store(),
                self.ctx.run_id(),
                &CallRecord {
                    node_id: self.node.id.clone(),
                    dispatch,
                    turn,
                    attempt,
                    max_output_tokens: request.max_output_tokens,
                    corrective_fragment: request.fragment.clone(),
                    instructions: self.instructions(),
                },
            );
            let Some(call) = self.plan.next_attempt() else {
                return Err(TurnError::Failed(error(
                    "internal_error",
                    "the envelope-program mock has no attempt left",
                    None,
                )));
            };
            if self.seam_mock {
                self.ctx.env.mock_programs.record_budget(
                    &self.ctx.tenant,
                    &self.node.id,
                    request.max_output_tokens,
                );
            }
            let target = CallTarget {
                provider: self.plan.provider.clone(),
                model: self.plan.model.clone(),
            };
            self.usage
                .push(usage_payload(&target, self.node, call.usage));
            let evaluated = self.evaluate(&call, &mut attempt);
            if let Some(previous) = unannounced.take() {
                self.announce(attempt, &previous)?;
            }
            let failure = match evaluated? {
                Evaluated::Accepted(accepted) => return Ok(accepted),
                Evaluated::Retry(failure) => failure,
            };
            if attempt > rounds {
                let refusal = reliability::exhaust(
                    self.ctx,
                    self.node_id(),
                    attempt,
                    schema_rounds,
                    &failure,
                    &self.redactor,
                )?;
                return Err(TurnError::Failed(Box::new(refusal)));
            }
            attempt += 1;
            // Each retry is announced before it is made; a defective host announces it once
            // the retry has returned.
            if announce_late {
                unannounced = Some(failure.clone());
            } else {
                self.announce(attempt, &failure)?;
            }
            request = reliability::next_request(
                &failure,
                request.max_output_tokens,
                multiplier,
                &self.settings.expects,
                self.defects(),
            );
        }
    }

    /// What one call's output leads to.
    fn evaluate(&self, call: &Attempt, attempt: &mut u32) -> Result<Evaluated, TurnError> {
        let output_text = match &call.output {
            Output::Text(text) => text.clone(),
            Output::Chunks(chunks) => chunks.iter().map(Value::to_string).collect(),
            Output::Refusal { text, category } => {
                return self
                    .refuse(text.as_deref(), category.clone())
                    .map(Evaluated::Retry);
            }
        };
        if let Some(stop_reason) = &call.truncated {
            let payload = EnvelopeTruncated {
                node_id: self.node.id.clone(),
                provider: self.plan.provider.clone(),
                model: self.plan.model.clone(),
                stop_reason: stop_reason.clone(),
                partial_payload_available: Some(lenient_parse(&output_text).is_some()),
                output_token_count: Some(call.usage.output),
            };
            self.ctx
                .record("envelope.truncated", Some(self.node_id()), json!(payload))?;
            if !self.defects().truncated_accepted() {
                return Ok(Evaluated::Retry(Failure::truncation(
                    stop_reason,
                    &output_text,
                )));
            }
        }
        let read = match &call.output {
            Output::Chunks(chunks) => {
                let chunks: Vec<_> = chunks
                    .iter()
                    .map(|chunk| self.defects().emission_as_read(chunk))
                    .collect();
                reassemble(&chunks)
            }
            _ => match lenient_parse(&output_text) {
                None => Err(Fault::Unparsable("the output holds no JSON document")),
                Some((value, recovery)) => {
                    if let Some((path, offset)) = recovery.applied() {
                        self.recovered(path, offset, &output_text, attempt)?;
                    }
                    if let Some(schema) = &self.plain {
                        return Ok(accept_plain(schema, value, &output_text));
                    }
                    read_whole(&self.defects().emission_as_read(&value))
                }
            },
        };
        let envelope = match read {
            Ok(envelope) => envelope,
            Err(fault @ Fault::Unparsable(_)) => {
                return Ok(Evaluated::Retry(Failure::malformed(
                    Reason::ParseError,
                    fault.describe(),
                    &output_text,
                )));
            }
            Err(fault @ Fault::Malformed(_)) => {
                return Ok(Evaluated::Retry(Failure::malformed(
                    Reason::SchemaViolation,
                    fault.describe(),
                    &output_text,
                )));
            }
            Err(fault) => {
                return Err(TurnError::Failed(error(
                    "envelope_invalid",
                    fault.describe(),
                    Some("envelope"),
                )));
            }
        };
        self.accept(envelope, &output_text)
    }

    fn refuse(&self, text: Option<&str>, category: Option<String>) -> Result<Failure, TurnError> {
        let defects = self.defects();
        let refusal_text = text.map(|t| {
            if defects.refusal_text_unredacted() {
                t.to_string()
            } else {
                self.redactor.scrub(t)
            }
        });
        let payload = EnvelopeRefusal {
            node_id: self.node.id.clone(),
            provider: self.plan.provider.clone(),
            model: self.plan.model.clone(),
            refusal_text,
            safety_category: category,
        };
        self.ctx
            .record("envelope.refusal", Some(self.node_id()), json!(payload))?;
        if defects.refusal_retried() {
            return Ok(Failure::malformed(
                Reason::Refusal,
                "the provider refused",
                "",
            ));
        }
        let code = if defects.refusal_fails_as_invalid() {
            "envelope_invalid"
        } else {
            "envelope_refusal"
        };
        Err(TurnError::Refused(error(
            code,
            "the provider refused the emission",
            None,
        )))
    }

    fn recovered(
        &self,
        path: &str,
        offset: usize,
        text: &str,
        attempt: &mut u32,
    ) -> Result<(), TurnError> {
        let defects = self.defects();
        let mut payload = json!(EnvelopeRecoveryApplied {
            node_id: self.node.id.clone(),
            path: path.to_string(),
            byte_offset: Some(offset as u64),
        });
        if defects.recovery_carries_content() {
            payload["recovered"] = json!(self.redactor.scrub(text));
        }
        self.ctx
            .record("envelope.recovery-applied", Some(self.node_id()), payload)?;
        if defects.recovery_consumes_retry() {
            *attempt += 1;
            let failure =
                Failure::malformed(Reason::ParseError, "the output needed a lenient parse", "");
            self.announce(*attempt, &failure)?;
        }
        Ok(())
    }

    /// The recorded outcome of a `correlationId`, when the run recorded one: its kind and
    /// payload, read back from its chunks.
    fn recorded_outcome(&self, correlation_id: &str) -> Option<(String, Value)> {
        let chunks: Vec<OutputChunk> = self
            .recorded("output.chunk")
            .into_iter()
            .filter(|e| e.causation_id.as_deref() == Some(correlation_id))
            .filter_map(|e| serde_json::from_value(e.payload).ok())
            .collect();
        let last = chunks.iter().find(|c| c.is_last)?;
        let kind = last
            .channel
            .as_deref()?
            .strip_prefix(CHANNEL_PREFIX)?
            .to_string();
        let text: String = chunks.iter().map(|c| c.chunk.as_str()).collect();
        Some((kind, serde_json::from_str(&text).ok()?))
    }

    fn accept(&self, envelope: Envelope, output: &str) -> Result<Evaluated, TurnError> {
        let defects = self.defects();
        if !defects.re_emission_reprocessed()
            && let Some((kind, payload)) = self.recorded_outcome(&envelope.correlation_id)
        {
            if kind != envelope.kind {
                return Err(TurnError::Failed(error(
                    "envelope_correlation_conflict",
                    "a recorded correlationId was re-emitted with another type",
                    Some("envelope"),
                )));
            }
            let payload = if defects.re_emission_answered_uncached() {
                envelope.payload
            } else {
                payload
            };
            return Ok(Evaluated::Accepted(Accepted {
                kind,
                correlation_id: envelope.correlation_id,
                schema_version: envelope.schema_version,
                payload,
                cached: true,
            }));
        }
        let contract = self.settings.contract.as_deref();
        let admission = self
            .catalog
            .admit(&envelope.kind, envelope.schema_version, contract, defects)
            .map_err(|r| TurnError::Failed(error(r.code, r.message, Some(r.check))))?;
        if defects.anthropic_tier_one_refused() && self.plan.provider.contains("anthropic") {
            return Err(TurnError::Failed(error(
                "unknown_envelope_kind",
                "this provider's structured output is not supported",
                Some("supportedEnvelopes"),
            )));
        }
        // A defective host holds OpenAI output to OpenAI strict mode (every property required),
        // a rule outside the Tier 1 subset.
        if defects.openai_strict_mode_refusal()
            && self.plan.provider.contains("openai")
            && admission
                .schema
                .properties
                .iter()
                .any(|p| envelope.payload.get(p).is_none())
        {
            return Err(TurnError::Failed(error(
                "envelope_invalid",
                "OpenAI strict structured output requires every property of the payload",
                Some("payload"),
            )));
        }
        let unchecked = admission.drift && defects.drift_unchecked();
        let found = if unchecked {
            Vec::new()
        } else {
            admission.schema.violations(&envelope.payload)
        };
        if !found.is_empty() {
            return Ok(Evaluated::Retry(Failure::violation(
                admission.schema,
                &found,
                &envelope.payload,
                output,
            )));
        }
        let reasoning = envelope.payload.get("reasoning").and_then(Value::as_str);
        if defects.reasoning_required() && admission.schema.permits_reasoning && reasoning.is_none()
        {
            return Err(TurnError::Failed(error(
                "envelope_invalid",
                "the payload has no reasoning",
                Some("reasoning"),
            )));
        }
        if defects.routes_on_reasoning() && reasoning.is_some_and(|r| r.contains("uncertain")) {
            return Err(TurnError::Failed(error(
                "envelope_invalid",
                "the reasoning is uncertain",
                Some("reasoning"),
            )));
        }
        self.record_chunks(&envelope)?;
        Ok(Evaluated::Accepted(Accepted {
            kind: envelope.kind,
            correlation_id: envelope.correlation_id,
            schema_version: envelope.schema_version,
            payload: envelope.payload,
            cached: false,
        }))
    }

    /// Records an accepted envelope (E1: one `output.chunk` per chunk, in order).
    fn record_chunks(&self, envelope: &Envelope) -> Result<(), TurnError> {
        let defects = self.defects();
        if defects.acceptance_unrecorded() {
            return Ok(());
        }
        let count = envelope.chunks.len();
        let mut chunks: Vec<(usize, &String)> = envelope.chunks.iter().enumerate().collect();
        if defects.chunks_reversed() {
            chunks.reverse();
        }
        let causation = (!defects.causation_omitted()).then_some(envelope.correlation_id.as_str());
        let whole = count == 1 && defects.reasoning_unredacted();
        for (index, text) in chunks {
            let is_last = index + 1 == count;
            let chunk = if whole {
                self.redacted_payload(&envelope.payload).to_string()
            } else {
                self.redactor.scrub(text)
            };
            let payload = OutputChunk {
                node_id: self.node.id.clone(),
                run_id: self.ctx.run_id().to_string(),
                chunk,
                is_last,
                channel: Some(format!("{CHANNEL_PREFIX}{}", envelope.kind)),
                meta: Some(ChunkMeta {
                    model: Some(self.plan.model.clone()),
                    finish_reason: is_last.then(|| "stop".to_string()),
                    ..ChunkMeta::default()
                }),
            };
            self.ctx.record_caused(
                "output.chunk",
                Some(self.node_id()),
                json!(payload),
                causation,
            )?;
        }
        Ok(())
    }
}

/// A plain structured output (upstream's envelope fixtures): accepted when it validates
/// against the node's `outputSchema`, otherwise a schema violation to retry. Nothing is
/// recorded for it but the node's outputs.
fn accept_plain(schema: &KindSchema, value: Value, output: &str) -> Evaluated {
    let found = schema.violations(&value);
    if !found.is_empty() {
        return Evaluated::Retry(Failure::violation(schema, &found, &value, output));
    }
    Evaluated::Accepted(Accepted {
        kind: schema.kind.clone(),
        correlation_id: String::new(),
        schema_version: 0,
        payload: value,
        cached: false,
    })
}

/// What one call led to.
enum Evaluated {
    Accepted(Accepted),
    Retry(Failure),
}
