//! Running one case: register its fake-provider scripts, execute its steps against the target
//! within the case's time, record everything, and judge each step with its checks.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures::future::{BoxFuture, join_all};
use serde_json::{Value, json};
use tokio::time::Instant;

pub(crate) use crate::case::DEFAULT_CASE_TIMEOUT_MS;

use super::case_state::CaseState;
use super::http::HttpDriver;
use super::step::{self, ComeBack, StepContext};
use crate::case::needs::Need;
use crate::case::{Case, CaseSurface, ConcurrentCopy, RepeatSpec, Step, StepAction};
use crate::checks::events::observe;
use crate::checks::{self, EvalContext};
use crate::event_selector::EventSelector;
use crate::host::{NeedStatus, Target};
use crate::report::{Counterexample, ServedScript};
use crate::template::{Scope, TemplateError};
use crate::transcript::{Exchange, ProviderCallCount, ResponseRecord, StepRecord};
use crate::verdict::{CheckOutcome, Level, Verdict};

/// What running a case produced (before the baseline and report assembly).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CaseExecution {
    /// Every check's outcome, including the harness's implicit ones.
    pub checks: Vec<CheckOutcome>,
    /// The transcript.
    pub transcript: Vec<StepRecord>,
    /// Why the case could not be judged (harness or environment trouble), when so.
    pub error: Option<String>,
    /// A shrunk failing input of a `generate` step.
    pub counterexample: Option<Counterexample>,
    /// The fake-provider scripts the case served.
    pub provider_scripts: Vec<ServedScript>,
}

/// Runs cases against one target.
#[derive(Clone)]
pub struct CaseRunner {
    /// The HTTP driver.
    pub driver: HttpDriver,
    /// The target.
    pub target: Arc<Target>,
    /// Every wait is multiplied by this.
    pub time_scale: f64,
    /// The seed of property-based generation.
    pub proptest_seed: u64,
    /// Where committed counterexamples of `generate` steps live (`cases/regressions`).
    pub regressions_dir: Option<std::path::PathBuf>,
}

impl CaseRunner {
    /// Runs one case.
    pub async fn run(&self, case: &Case) -> CaseExecution {
        let started = Instant::now();
        // The case's own time, extended by the waits it takes from the target's facts (a
        // keep-alive window, a heartbeat interval): those are the host's, not the case's.
        let fact_waits = crate::case::robustness::fact_waits_ms(
            &case.steps,
            &Scope {
                target: self.target.facts.clone(),
                ..Scope::default()
            },
        );
        let budget = Duration::from_millis(
            case.timeout_ms
                .unwrap_or(DEFAULT_CASE_TIMEOUT_MS)
                .saturating_add(fact_waits),
        )
        .mul_f64(self.time_scale.max(0.01));
        let mut state = CaseState {
            case,
            driver: self.driver.with_own_connections(),
            scope: Scope {
                defs: case.defs.clone().into_iter().collect(),
                providers: (self.target.providers.iter())
                    .map(|(role, id)| (role.to_string(), id.clone()))
                    .collect(),
                target: self.target.facts.clone(),
                fixtures: self.target.chosen_fixtures(&case.needs),
                uuid_seed: uuid::Uuid::new_v4().to_string(),
                ..Scope::default()
            },
            transcript: Vec::new(),
            by_id: BTreeMap::new(),
            checks: Vec::new(),
            error: None,
            stopped: false,
            scripts: BTreeMap::new(),
            deadline: started + budget,
            started,
            counterexample: None,
            served: Vec::new(),
            canary_leak: None,
            rule_outcomes: 0,
            generating: false,
            run_ends: Default::default(),
        };
        if let Err(error) = self.register_scripts(case, &mut state) {
            return CaseExecution {
                error: Some(error),
                ..CaseExecution::default()
            };
        }
        self.run_steps(&case.steps, "/steps".to_string(), &mut state)
            .await;
        self.implicit_checks(&mut state);
        not_provoked(&mut state);
        CaseExecution {
            checks: state.checks,
            transcript: state.transcript,
            error: state.error,
            counterexample: state.counterexample,
            provider_scripts: state.served,
        }
    }

    pub(crate) fn register_scripts(
        &self,
        case: &Case,
        state: &mut CaseState<'_>,
    ) -> Result<(), String> {
        if case.scripts.is_empty() {
            return Ok(());
        }
        let upstream = self.target.upstream.as_ref().ok_or_else(|| {
            "the case scripts fake providers, but no fake providers are running for this target"
                .to_string()
        })?;
        let suffix = &state.scope.uuid_seed[..8];
        // Scripts that refer to a loop variable are registered by their `generate` step, once
        // per generated value.
        for (name, script) in case
            .scripts
            .iter()
            .filter(|(_, s)| !s.to_string().contains("${var."))
        {
            let id: String = format!("{}.{}.{}", case.id, name, suffix)
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || "._~-".contains(c) {
                        c
                    } else {
                        '-'
                    }
                })
                .collect();
            let mut script = script.clone();
            if let Value::Object(object) = &mut script {
                object.insert("id".into(), Value::String(id.clone()));
            }
            let (marker, served) = upstream
                .register(&id, &script)
                .map_err(|e| format!("the fake providers refused script `{name}`: {e}"))?;
            state.scope.scripts.insert(name.clone(), marker);
            state.served.push(ServedScript {
                name: name.clone(),
                id: id.clone(),
                script: served,
            });
            state.scripts.insert(name.clone(), id);
        }
        Ok(())
    }

    /// Re-registers the scripts whose JSON refers to a loop variable (`${var.…}`), expanded with
    /// the current bindings, under fresh ids (generated fault sequences).
    pub(crate) fn reregister_generated_scripts(
        &self,
        state: &mut CaseState<'_>,
    ) -> Result<(), String> {
        let templated: Vec<(&String, &Value)> = state
            .case
            .scripts
            .iter()
            .filter(|(_, script)| script.to_string().contains("${var."))
            .collect();
        if templated.is_empty() {
            return Ok(());
        }
        let upstream = self
            .target
            .upstream
            .as_ref()
            .ok_or("no fake providers are running for this target")?;
        for (name, script) in templated {
            let mut expanded = state.scope.expand(script).map_err(|e| e.to_string())?;
            let id = format!(
                "{}.g{}",
                state.scripts.get(name).cloned().unwrap_or_default(),
                uuid::Uuid::new_v4().simple()
            );
            let id: String = id.chars().take(200).collect();
            if let Value::Object(object) = &mut expanded {
                object.insert("id".into(), Value::String(id.clone()));
            }
            let (marker, served) = upstream
                .register(&id, &expanded)
                .map_err(|e| format!("the fake providers refused script `{name}`: {e}"))?;
            state.scope.scripts.insert(name.clone(), marker);
            state.served.push(ServedScript {
                name: name.clone(),
                id: id.clone(),
                script: served,
            });
            state.scripts.insert(name.clone(), id);
        }
        Ok(())
    }

    pub(crate) fn run_steps<'a>(
        &'a self,
        steps: &'a [Step],
        base: String,
        state: &'a mut CaseState<'_>,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            for (index, step) in steps.iter().enumerate() {
                if state.stopped {
                    return;
                }
                let location = format!("{base}/{index}");
                if let Some(why) = self.not_served(step) {
                    self.not_taken(step, step_name(step, &location), location, why, state);
                    continue;
                }
                self.run_step(step, location, state).await;
            }
        })
    }

    async fn run_step(&self, step: &Step, location: String, state: &mut CaseState<'_>) {
        let name = step_name(step, &location);
        match &step.action {
            StepAction::Repeat(repeat) => self.run_repeat(repeat, &location, state).await,
            StepAction::Generate(generate) => {
                crate::generate::run_generate(self, generate, &name, &location, state).await;
            }
            StepAction::Parallel(parallel) => {
                self.run_parallel(parallel, &name, &location, state).await;
            }
            StepAction::Request(_)
            | StepAction::Stream(_)
            | StepAction::PollUntil(_)
            | StepAction::WaitTerminal(_)
            | StepAction::Concurrent(_) => {
                let cx = self.step_context(name, location.clone(), state);
                // The host's close of a stream on a run that ended is owed within one
                // keep-alive interval: the time it takes, up to one close window, is the host's
                // (granted by the rule), not the case's budget. Not in a `generate`, whose inputs
                // are as many as the budget allows.
                let close_credit = match &step.action {
                    StepAction::Stream(stream) if stream.run_ended && !state.generating => {
                        Some(cx.close_window())
                    }
                    _ => None,
                };
                let sent = Instant::now();
                let performed = Self::perform(step, cx).await;
                if let Some(window) = close_credit.filter(|_| sent < state.deadline) {
                    state.deadline += sent.elapsed().min(window);
                }
                match performed {
                    (location, Ok(record)) => self.judge(step, &location, record, state),
                    (location, Err(e)) => self.template_failure(&e, &location, state),
                }
            }
        }
    }

    /// Runs a repeat's steps once per integer of its inclusive range.
    async fn run_repeat(&self, repeat: &RepeatSpec, location: &str, state: &mut CaseState<'_>) {
        let bounds = (
            state.scope.expand(&repeat.from),
            state.scope.expand(&repeat.to),
        );
        let (from, to) = match bounds {
            (Ok(from), Ok(to)) => (from.as_i64(), to.as_i64()),
            (Err(e), _) | (_, Err(e)) => return self.template_failure(&e, location, state),
        };
        let (Some(from), Some(to)) = (from, to) else {
            state.error = Some(format!("{location}: repeat bounds are not integers"));
            state.stopped = true;
            return;
        };
        for n in from..=to {
            state.scope.vars.insert(repeat.var.clone(), json!(n));
            self.run_steps(&repeat.steps, format!("{location}/repeat/steps"), state)
                .await;
            if state.stopped {
                break;
            }
        }
        state.scope.vars.remove(&repeat.var);
    }

    /// Performs the steps of a `parallel` at once, then judges each.
    async fn run_parallel(
        &self,
        parallel: &[Step],
        name: &str,
        location: &str,
        state: &mut CaseState<'_>,
    ) {
        let inner_at = |i: usize, inner: &Step| {
            let inner_name = inner.id.clone().unwrap_or_else(|| format!("{name}.{i}"));
            (inner_name, format!("{location}/parallel/{i}"))
        };
        let mut taken = Vec::new();
        for (i, inner) in parallel.iter().enumerate() {
            match self.not_served(inner) {
                Some(why) => {
                    let (inner_name, inner_location) = inner_at(i, inner);
                    self.not_taken(inner, inner_name, inner_location, why, state);
                }
                None => taken.push((i, inner)),
            }
        }
        let mut futures = Vec::new();
        for &(i, inner) in &taken {
            let (inner_name, inner_location) = inner_at(i, inner);
            futures.push(Self::perform(
                inner,
                self.step_context(inner_name, inner_location, state),
            ));
        }
        let mut records = Vec::new();
        for (location, record) in join_all(futures).await {
            match record {
                Ok(record) => records.push((location, record)),
                Err(e) => return self.template_failure(&e, &location, state),
            }
        }
        // The host refused a step meant to run together with the others (a subscription, its
        // capacity, its rate limit): they ran without it (a stream waiting for an approval that
        // never came, a resumed stream compared with a full one never read), so only the
        // refusals are reported; the others are recorded, not judged.
        let refused: Vec<bool> = taken
            .iter()
            .map(|(_, inner)| inner)
            .zip(&records)
            .map(|(inner, (_, record))| refusal(inner, record, state.case.surface).is_some())
            .collect();
        let any_refused = refused.contains(&true);
        let taken = taken.into_iter().map(|(_, inner)| inner);
        for ((inner, (location, record)), refused) in taken.zip(records).zip(refused) {
            match refused {
                false if any_refused => {
                    if let Some(id) = &inner.id {
                        state.scope.steps.insert(id.clone(), step_view(&record));
                        state.by_id.insert(id.clone(), record.clone());
                    }
                    state.transcript.push(record);
                    self.bound_transcript(state);
                }
                _ => self.judge(inner, &location, record, state),
            }
        }
    }

    /// Why the host does not serve what `step` needs (an optional stream mode), when it does not.
    fn not_served(&self, step: &Step) -> Option<String> {
        step.needs
            .iter()
            .find_map(|need| match self.target.need_status(need) {
                NeedStatus::Met => None,
                NeedStatus::Lacking(why) | NeedStatus::Unjudgeable(why) => Some(why),
            })
    }

    /// Records that `step` (named `name`) was not taken, because the host does not serve a
    /// stream mode it reads, an optional one: it sent nothing, and its checks are not judged;
    /// the case is judged on its other steps (lint keeps every step that reads this one as
    /// optional as it is).
    fn not_taken(
        &self,
        step: &Step,
        name: String,
        location: String,
        why: String,
        state: &mut CaseState<'_>,
    ) {
        let mut record =
            self.step_context(name, location, state)
                .record(step.action.name(), Vec::new(), false);
        record.not_taken = Some(format!("not taken: {why}"));
        state.transcript.push(record);
    }

    fn template_failure(&self, error: &TemplateError, location: &str, state: &mut CaseState<'_>) {
        state.stopped = true;
        match error {
            TemplateError::Syntax(..) => state.error = Some(format!("{location}: {error}")),
            // A value a later step needs is not there: the case cannot be set up further, so
            // it is not judged (whatever the host broke to cause it, the case that is about it
            // judges it).
            TemplateError::Missing(expression, _) => state.checks.push(CheckOutcome {
                check: "implicit:value-available".into(),
                location: location.to_string(),
                step: None,
                level: state.case.level,
                requirements: state.case.requirements.clone(),
                verdict: Verdict::Blocked,
                message: format!(
                    "the case cannot go on, so it was not judged: {error}{}",
                    refused_source(expression, state)
                        .map(|answer| format!(" ({answer})"))
                        .unwrap_or_default()
                ),
                expected: Some("the value from an earlier response".into()),
                actual: Some("missing".into()),
            }),
        }
    }

    /// Records the provider calls, exposes the step's view, and evaluates its checks.
    fn judge(
        &self,
        step: &Step,
        location: &str,
        mut record: StepRecord,
        state: &mut CaseState<'_>,
    ) {
        if let Some(upstream) = &self.target.upstream {
            for (local, id) in &state.scripts {
                for calls in upstream.calls(id) {
                    record.provider_calls.push(ProviderCallCount {
                        script: local.clone(),
                        instance: calls.instance,
                        role: calls.role,
                        count: calls.count,
                    });
                }
            }
        }
        if record
            .exchanges
            .iter()
            .any(|e| e.transport_error.as_ref().is_some_and(|t| t.unreachable))
        {
            state.error = Some(format!("{location}: the target could not be reached"));
            state.stopped = true;
        }
        // The step's checks depend on a provider behaviour the host never consumed: they would
        // judge a path the host did not take (or one it could not reach), so none of them is
        // evaluated and the case is BLOCKED with the cause.
        let unjudged = (!state.stopped)
            .then(|| self.missing_evidence(step, location, &record, state))
            .flatten()
            // The host refused the step and asked to be asked again later (a subscriber limit,
            // its capacity, its rate limit: see `Refusal`): what the case wanted from it cannot
            // be judged. Every refused step of a `parallel` is one, whether or not an earlier
            // one stopped the case.
            .or_else(|| not_answered(step, location, &record, state));
        if let Some(outcome) = unjudged {
            state.checks.push(outcome);
            state.stopped = true;
            if let Some(id) = &step.id {
                state.scope.steps.insert(id.clone(), step_view(&record));
                state.by_id.insert(id.clone(), record.clone());
            }
            state.transcript.push(record);
            return;
        }
        let precondition = step.precondition.as_deref();
        if let Some(what) = precondition
            && !state.stopped
            && let Some(why) = unmet_precondition(step, &record, &state.scope)
        {
            state.checks.push(CheckOutcome {
                check: "implicit:precondition".into(),
                location: location.to_string(),
                step: Some(record.step.clone()),
                level: state.case.level,
                requirements: state.case.requirements.clone(),
                verdict: Verdict::Blocked,
                message: format!(
                    "the precondition `{what}` did not hold, so the case was not judged: {why}"
                ),
                expected: Some(what.to_string()),
                actual: Some(why),
            });
            state.stopped = true;
        }
        if !record.completed && !state.stopped {
            let pending = super::budget_cut::pending(&record);
            state.checks.push(CheckOutcome {
                check: STEP_COMPLETED.into(),
                location: location.to_string(),
                step: Some(record.step.clone()),
                level: state.case.level,
                requirements: state.case.requirements.clone(),
                // The harness's own budget ran out: it could not judge, the host broke no bound.
                verdict: Verdict::Error,
                message: format!(
                    "step `{}` did not complete within the case's budget: {pending}; later steps did not run (the budget is timeout_ms plus the waits it takes from facts; a longer --time-scale gives more)",
                    record.step
                ),
                expected: Some("the step to complete within the case's budget".into()),
                actual: Some(format!("the case's budget ran out: {pending}")),
            });
            state.stopped = true;
        }
        let view = step_view(&record);
        if let Some(id) = &step.id {
            state.scope.steps.insert(id.clone(), view);
            state.by_id.insert(id.clone(), record.clone());
        }
        for (i, check) in step.expect.iter().enumerate() {
            let ctx = EvalContext {
                surface: state.case.surface,
                case_level: state.case.level,
                case_requirements: &state.case.requirements,
                step: &record,
                steps: &state.by_id,
                scope: &state.scope,
                location: format!("{location}/expect/{i}"),
            };
            let mut outcomes = checks::evaluate(check, &ctx);
            if !record.completed {
                // The step was cut by the case's budget: what its checks saw is not the whole
                // answer, so none of them is charged to the host.
                for outcome in &mut outcomes {
                    if !outcome.passed() {
                        outcome.verdict = Verdict::Error;
                        outcome.message = format!(
                            "not judged: the case's budget cut the step short ({})",
                            outcome.message
                        );
                    }
                }
            }
            if check.precondition == Some(true) || precondition.is_some() {
                state.checks.extend(outcomes.into_iter().map(|mut outcome| {
                    if !outcome.passed() && outcome.verdict != Verdict::Error {
                        outcome.verdict = Verdict::Blocked;
                        // A step's precondition text, or the precondition check's note, says
                        // what the case needed (and what to fix); without either there is only
                        // the check's message.
                        outcome.message = match precondition.or(check.note.as_deref()) {
                            Some(what) => format!(
                                "the precondition `{what}` did not hold, so the case was not judged: {}",
                                outcome.message
                            ),
                            None => format!(
                                "a precondition did not hold, so the case was not judged: {}",
                                outcome.message
                            ),
                        };
                        state.stopped = true;
                    }
                    outcome
                }));
            } else {
                // A CONTRACT or MAY check on the way (a create's status, say) is no evidence
                // that a MUST or SHOULD case exercised its rule.
                state.rule_outcomes += outcomes
                    .iter()
                    .filter(|o| {
                        matches!(o.level, Level::Must | Level::Should)
                            || o.level == state.case.level
                    })
                    .count();
                state.checks.extend(outcomes);
            }
        }
        state.transcript.push(record);
        self.bound_transcript(state);
    }

    /// Keeps what the case's transcript holds for its report within
    /// [`crate::excerpt::CASE_RETAINED_BYTES`]: past it, the judged records are cut to excerpts
    /// (secrets scrubbed first, the canary looked for first). Records later checks compare
    /// (`steps.<id>`) are kept whole apart, in `by_id`.
    fn bound_transcript(&self, state: &mut CaseState<'_>) {
        use crate::excerpt::{CASE_RETAINED_BYTES, ExcerptBounds, excerpt_step, retained_bytes};
        let total: usize = state.transcript.iter().map(retained_bytes).sum();
        if total <= CASE_RETAINED_BYTES {
            return;
        }
        let secrets = self.target.secrets();
        for record in &mut state.transcript {
            if state.canary_leak.is_none() {
                state.canary_leak = self.canary_in(record);
            }
            crate::excerpt::scrub_record(record, &secrets);
            excerpt_step(record, ExcerptBounds::LEVELS[1]);
        }
    }

    /// Where the canary credential appears in a step's responses, when it does.
    fn canary_in(&self, record: &StepRecord) -> Option<String> {
        let canary = self.target.canary.as_deref()?;
        record
            .exchanges
            .iter()
            .enumerate()
            .find_map(|(i, exchange)| {
                let response = exchange.response.as_ref()?;
                crate::checks::find_text(response, canary)
                    .map(|place| format!("step `{}`, response {i}, {place}", record.step))
                    .or_else(|| {
                        // Frames read past the kept ones were searched as they arrived.
                        let frame = response.folded.as_ref()?.canary_frame?;
                        Some(format!(
                            "step `{}`, response {i}, stream (frame {} read past the kept ones)",
                            record.step,
                            response.frames.len() as u64 + frame
                        ))
                    })
            })
    }

    /// The BLOCKED outcome of a step whose `evidence` the fake providers did not see consumed,
    /// with the cause: which fake the host never called (or called too few times), where it
    /// listens, and the requests that reached the providers listener and matched no fake (this
    /// case's first, else any). `None` when every behaviour was consumed.
    fn missing_evidence(
        &self,
        step: &Step,
        location: &str,
        record: &StepRecord,
        state: &CaseState<'_>,
    ) -> Option<CheckOutcome> {
        let upstream = self.target.upstream.as_ref()?;
        let mut causes = Vec::new();
        let mut stray = Vec::new();
        for evidence in &step.evidence {
            let wanted = evidence.calls.unwrap_or(1);
            let seen: u32 = record
                .provider_calls
                .iter()
                .filter(|c| {
                    c.script == evidence.script && c.role.as_deref() == Some(evidence.role.as_str())
                })
                .map(|c| c.count)
                .sum();
            if seen >= wanted {
                continue;
            }
            let endpoint = upstream.role_endpoint(&evidence.role);
            let who = endpoint.as_ref().map_or_else(
                || format!("role `{}`", evidence.role),
                |e| format!("`{}` (role `{}`)", e.instance, evidence.role),
            );
            let what = if seen == 0 {
                format!(
                    "the host never called {who} for script `{}`",
                    evidence.script
                )
            } else {
                format!(
                    "the host called {who} {seen} time(s) for script `{}`, and the step's checks depend on call {wanted}",
                    evidence.script
                )
            };
            let where_ = endpoint.map_or_else(String::new, |e| {
                format!("; it listens at {} ({})", e.base_url, e.paths.join(", "))
            });
            causes.push(format!("{what}{where_}"));
            if let Some(id) = state.scripts.get(&evidence.script) {
                stray.extend(upstream.stray_requests(id));
            }
        }
        if causes.is_empty() {
            return None;
        }
        stray.dedup();
        let unmatched = if stray.is_empty() {
            let mut any = upstream.unmatched_requests();
            let more = any.len().saturating_sub(5);
            any.truncate(5);
            match (any.is_empty(), more) {
                (true, _) => "none".to_string(),
                (false, 0) => any.join(", "),
                (false, more) => format!("{}, and {more} more", any.join(", ")),
            }
        } else {
            stray.join(", ")
        };
        let message = format!(
            "not judged: the step's checks depend on a scripted provider behaviour the host did not consume: {}; requests that reached the providers listener and matched no fake: {unmatched}",
            causes.join("; ")
        );
        Some(CheckOutcome {
            check: EVIDENCE.into(),
            location: format!("{location}/evidence"),
            step: Some(record.step.clone()),
            level: state.case.level,
            requirements: state.case.requirements.clone(),
            verdict: Verdict::Blocked,
            message,
            expected: Some("the fake providers saw the host consume the scripted behaviour".into()),
            actual: Some(causes.join("; ")),
        })
    }

    /// The context a step of `state`'s case runs in.
    fn step_context<'a>(
        &'a self,
        name: String,
        location: String,
        state: &'a CaseState<'_>,
    ) -> StepContext<'a> {
        StepContext {
            driver: &state.driver,
            target: &self.target,
            time_scale: self.time_scale,
            name,
            location,
            surface: state.case.surface,
            scope: &state.scope,
            deadline: state.deadline,
            started: state.started,
            run_ends: &state.run_ends,
        }
    }

    /// Performs one non-structural action (request, stream, poll, wait, concurrent) by its
    /// executor.
    fn perform<'a>(
        step: &'a Step,
        cx: StepContext<'a>,
    ) -> BoxFuture<'a, (String, Result<StepRecord, TemplateError>)> {
        Box::pin(async move {
            let result = match &step.action {
                StepAction::Request(request) => step::request(&cx, request).await,
                StepAction::Stream(stream) => step::stream(&cx, stream).await,
                StepAction::PollUntil(poll) => step::poll_until(&cx, poll).await,
                StepAction::WaitTerminal(wait) => step::wait_terminal(&cx, wait).await,
                StepAction::Concurrent(concurrent) => step::concurrent(&cx, concurrent).await,
                // Structural actions run their own steps (see `run_step`); nested in a
                // `parallel` they record nothing.
                StepAction::Parallel(_) | StepAction::Repeat(_) | StepAction::Generate(_) => {
                    Ok(cx.record("none", Vec::new(), true))
                }
            };
            (cx.location, result)
        })
    }

    /// The harness's own checks over the whole case: the canary credential never comes back.
    fn implicit_checks(&self, state: &mut CaseState<'_>) {
        if self.target.canary.is_none() {
            return;
        }
        let mut requirements: Vec<String> = match state.case.surface {
            CaseSurface::Execution => vec![
                "exec.credentials.never-in-events".into(),
                "exec.credentials.never-in-error-content".into(),
            ],
            CaseSurface::Openwop => vec!["events.provider-usage.no-credential-refs".into()],
        };
        if state.case.judged_by_canary {
            requirements.extend(state.case.requirements.iter().cloned());
        }
        let leak = state
            .canary_leak
            .clone()
            .or_else(|| state.transcript.iter().find_map(|r| self.canary_in(r)));
        let mut outcome = CheckOutcome {
            check: "implicit:canary-absent".into(),
            location: "implicit:canary-absent".into(),
            step: None,
            level: Level::Must,
            requirements,
            verdict: Verdict::Pass,
            message: "the canary credential appears in no response".into(),
            expected: None,
            actual: None,
        };
        if let Some(place) = leak {
            outcome.verdict = Verdict::Fail;
            outcome.message = "the host sent back the provider credential (the canary)".into();
            outcome.expected = Some("the canary credential nowhere in what the host sends".into());
            outcome.actual = Some(format!("found in {place}"));
        }
        if state.case.judged_by_canary {
            state.rule_outcomes += 1;
        }
        state.checks.push(outcome);
    }
}

/// A case whose every check at its level (or at MUST or SHOULD) was conditional on a premise
/// the host's path did not take (a `when` that did not hold) exercised none of its rules: SKIP with that reason, never a PASS
/// on preconditions alone. A case stopped early already has its verdict (BLOCKED, ERROR).
fn not_provoked(state: &mut CaseState<'_>) {
    if state.rule_outcomes > 0 || state.stopped || state.error.is_some() {
        return;
    }
    state.checks.push(CheckOutcome {
        check: NOT_PROVOKED.into(),
        location: NOT_PROVOKED.into(),
        step: None,
        level: state.case.level,
        requirements: state.case.requirements.clone(),
        verdict: Verdict::Skip,
        message: "not provoked: the premise (`when`) of every check failed on the path the host took, so no rule of the case was exercised".into(),
        expected: None,
        actual: None,
    });
}

/// A step's name in the transcript: its id, or `#<index path>` when the case gave none.
fn step_name(step: &Step, location: &str) -> String {
    step.id
        .clone()
        .unwrap_or_else(|| format!("#{}", location.trim_start_matches("/steps/")))
}

/// The implicit outcome of a case none of whose checks applied.
const NOT_PROVOKED: &str = "implicit:not-provoked";

/// What later steps can refer to as `${steps.<id>.…}`.
pub(crate) fn step_view(record: &StepRecord) -> Value {
    let views: Vec<Value> = record.exchanges.iter().map(exchange_view).collect();
    let mut view = views.last().cloned().unwrap_or_else(|| json!({}));
    if let Value::Object(object) = &mut view {
        object.insert("responses".into(), Value::Array(views));
        object.insert("completed".into(), Value::Bool(record.completed));
    }
    view
}

fn exchange_view(exchange: &Exchange) -> Value {
    let Some(response) = &exchange.response else {
        return json!({"status": null, "error": exchange.transport_error.as_ref().map(|t| t.message.clone())});
    };
    let observed = observe(response);
    let sequences = observed.sequences();
    let headers: serde_json::Map<String, Value> = response
        .headers
        .iter()
        .map(|h| (h.name.clone(), Value::String(h.value.clone())))
        .collect();
    let frames: Vec<Value> = response
        .events()
        .map(|(_, id, event, _, _)| json!({"id": id, "event": event}))
        .collect();
    json!({
        "status": response.status,
        // When the answer ended, in milliseconds since its request was sent: how long the host
        // took, at least (a premise that something ran that long, never a timing verdict).
        "answered_in_ms": response.end_at_ms,
        "headers": headers,
        "body": response.json.clone().unwrap_or_else(|| Value::String(response.body.clone())),
        "events": observed.events.iter().map(|e| e.doc.clone()).collect::<Vec<_>>(),
        "sequences": sequences,
        "first_sequence": sequences.first(),
        "last_sequence": sequences.last(),
        "count": observed.events.len(),
        "frames": frames,
        "frame_ids": frames.iter().filter_map(|f| f.get("id").cloned()).collect::<Vec<_>>(),
    })
}

/// Why the host did not answer a step but asked to be asked again later (`Retry-After`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refusal {
    /// A `stream` step answered 429: a subscriber limit for resource protection, which the seed
    /// allows ("MUST NOT limit subscribers per run except for resource protection, and then
    /// MUST answer 429 rate_limited with Retry-After"), or the host's request rate limit (they
    /// answer alike). The case needs more subscribers of one run than the host serves at once,
    /// an optional capacity it lacks: SKIP. So too a `concurrent` step of streams every one of
    /// which was refused so: no subscriber of the run was served. (`w.subscribers.*` judge the
    /// limit with `concurrent` steps of which some are served, never here.)
    Subscription,
    /// Surface W, `503`: the host at capacity, host-wide, no rule of the run events chapter.
    /// BLOCKED. A `concurrent` step is refused so by any such answer among its answers (a
    /// host-wide cap refusing a fourth subscriber is not a per-run subscriber limit, and which
    /// request it meets depends on what else runs at once).
    AtCapacity,
    /// Surface W, `429 rate_limited` to a request or a poll, still after the waits it took: the
    /// operator's set-up. BLOCKED. So too any copy of a `concurrent` step of requests. (A
    /// `concurrent` step of streams judges its 429s: the subscriber cases.)
    RateLimited,
}

/// Which [`Refusal`] the step met, if any, and the `Retry-After` it came with.
fn refusal<'r>(
    step: &Step,
    record: &'r StepRecord,
    surface: CaseSurface,
) -> Option<(Refusal, &'r str)> {
    let answers = || record.exchanges.iter().filter_map(|e| e.response.as_ref());
    let last = record.exchanges.last().and_then(|e| e.response.as_ref());
    let come_back = |response: &'r ResponseRecord| {
        step::come_back(surface, response).map(|(why, retry_after)| (why.into(), retry_after))
    };
    let at_capacity = |response: &'r ResponseRecord| {
        come_back(response).filter(|(why, _)| *why == Refusal::AtCapacity)
    };
    let subscription = |response: &'r ResponseRecord| {
        subscription_refused(response).map(|retry_after| (Refusal::Subscription, retry_after))
    };
    match &step.action {
        StepAction::Stream(_) => {
            let response = last?;
            subscription(response).or_else(|| at_capacity(response))
        }
        StepAction::Concurrent(concurrent) => {
            if let Some(refused) = answers().find_map(at_capacity) {
                return Some(refused);
            }
            match concurrent.copy {
                // Every subscription refused: no subscriber of the run was served, so nothing
                // about several subscribers of one run can be judged.
                ConcurrentCopy::Stream(_) => {
                    let first = subscription(answers().next()?)?;
                    answers()
                        .all(|response| subscription_refused(response).is_some())
                        .then_some(first)
                }
                // A copy the request rate limit refused has not met the rule the case judges
                // (one at capacity was found above).
                ConcurrentCopy::Request(_) => answers().find_map(come_back),
            }
        }
        _ => come_back(last?),
    }
}

/// A subscription's refusal, `429` with `Retry-After` (the subscriber limit the seed allows, or
/// the request rate limit: they answer alike): its `Retry-After`.
fn subscription_refused(response: &ResponseRecord) -> Option<&str> {
    (response.status == 429)
        .then(|| response.header("retry-after"))
        .flatten()
}

impl From<ComeBack> for Refusal {
    fn from(why: ComeBack) -> Refusal {
        match why {
            ComeBack::AtCapacity => Refusal::AtCapacity,
            ComeBack::RateLimited => Refusal::RateLimited,
        }
    }
}

/// The outcome of a step the host refused (see [`Refusal`]): nothing the case asks was
/// exercised, so it is not judged, saying why and what the operator can change.
fn not_answered(
    step: &Step,
    location: &str,
    record: &StepRecord,
    state: &CaseState<'_>,
) -> Option<CheckOutcome> {
    let (refusal, retry_after) = refusal(step, record, state.case.surface)?;
    let name = &record.step;
    let (check, verdict, status, message, expected) = match refusal {
        Refusal::Subscription => (
            "implicit:subscriber-limit",
            Verdict::Skip,
            429,
            format!(
                "not judged: the host refused the subscription of step `{name}` with 429 and Retry-After: {retry_after} (a subscriber limit for resource protection, which the seed allows, or its request rate limit: they answer alike; w.subscribers.several-per-run reports the limit), so the case met fewer subscribers of one run at once than it needs"
            ),
            "the subscription served",
        ),
        Refusal::AtCapacity => {
            let waited = if matches!(
                step.action,
                StepAction::Stream(_) | StepAction::Concurrent(_)
            ) {
                ""
            } else {
                ", also after the waits it asked for"
            };
            (
                "implicit:host-capacity",
                Verdict::Blocked,
                503,
                format!(
                    "not judged: the host answered step `{name}` 503 with Retry-After: {retry_after} (at capacity){waited}; run with fewer --jobs or give the host more capacity"
                ),
                "an answer from a host with room for the request",
            )
        }
        Refusal::RateLimited => (
            "implicit:host-rate-limit",
            Verdict::Blocked,
            429,
            format!(
                "not judged: the host answered step `{name}` 429 with Retry-After: {retry_after} (its request rate limit), also after the waits it asked for; pace the run under the host's limit (--max-requests-per-minute N), run with fewer --jobs, or raise the host's rate limit for the run"
            ),
            "an answer from a host with room for the request",
        ),
    };
    Some(CheckOutcome {
        check: check.into(),
        location: location.to_string(),
        step: Some(name.clone()),
        level: state.case.level,
        requirements: state.case.requirements.clone(),
        verdict,
        message,
        expected: Some(expected.into()),
        actual: Some(format!("{status}, Retry-After: {retry_after}")),
    })
}

/// Why a step marked `precondition` did not set the case up, from what it recorded: it did not
/// complete (a poll whose condition never held, a window cut short), or a stream ended without
/// the event it waited for. `None` when it did (its checks say the rest).
fn unmet_precondition(step: &Step, record: &StepRecord, scope: &Scope) -> Option<String> {
    if !record.completed {
        return Some(format!(
            "step `{}` did not complete within the case's budget: {}",
            record.step,
            super::budget_cut::pending(record)
        ));
    }
    let StepAction::Stream(stream) = &step.action else {
        return None;
    };
    let awaited = stream.until.as_ref()?.event.as_deref()?;
    let awaited = scope
        .interpolate(awaited)
        .unwrap_or_else(|_| awaited.to_string());
    let selector = EventSelector::parse(&awaited);
    let seen = record
        .exchanges
        .iter()
        .filter_map(|e| e.response.as_ref())
        .any(|response| observe(response).events.iter().any(|e| selector.matches(e)));
    (!seen).then(|| format!("the stream ended without a `{awaited}` event"))
}

impl crate::generate::GenerateRunner for CaseRunner {
    fn proptest_seed(&self) -> u64 {
        self.proptest_seed
    }

    fn regressions_dir(&self) -> &Option<std::path::PathBuf> {
        &self.regressions_dir
    }

    fn served_stream_modes(&self) -> Vec<spec::openwop::StreamMode> {
        spec::openwop::StreamMode::ALL
            .into_iter()
            .filter(|mode| self.target.has_need(&Need::StreamMode(*mode)))
            .collect()
    }

    fn reregister_generated_scripts(&self, state: &mut CaseState<'_>) -> Result<(), String> {
        CaseRunner::reregister_generated_scripts(self, state)
    }

    fn run_steps<'a>(
        &'a self,
        steps: &'a [Step],
        base: String,
        state: &'a mut CaseState<'_>,
    ) -> BoxFuture<'a, ()> {
        CaseRunner::run_steps(self, steps, base, state)
    }
}

/// The implicit check a step with `evidence` fails (BLOCKED) when the fake providers did not see
/// the host consume the scripted behaviour its checks depend on.
pub(crate) const EVIDENCE: &str = "implicit:evidence";

/// The implicit check a step the case's budget cut short fails (ERROR); the checks of that step
/// are not judged (ERROR too, at `<its location>/expect/<n>`).
pub const STEP_COMPLETED: &str = "implicit:step-completed";

/// What the step a missing `${steps.<id>…}` value comes from was answered, when that answer
/// was not a success: the reason a case set-up stopped is then the host's refusal (a body it
/// does not take, a fixture it does not run), which the operator needs more than the path.
fn refused_source(expression: &str, state: &CaseState<'_>) -> Option<String> {
    let step = expression
        .trim()
        .strip_prefix("steps.")?
        .split(['.', '|', ' '])
        .next()?;
    let exchange = state.by_id.get(step)?.exchanges.last()?;
    let Some(response) = &exchange.response else {
        return Some(format!(
            "step `{step}` got no answer: {}",
            exchange
                .transport_error
                .as_ref()
                .map_or("no response", |t| t.message.as_str())
        ));
    };
    if (200..300).contains(&response.status) {
        return None;
    }
    let error = response.json.as_ref().map(|body| {
        let code = body.get("error").and_then(Value::as_str);
        let message = body.get("message").and_then(Value::as_str);
        match (code, message) {
            (Some(code), Some(message)) => format!(" {code}: {message}"),
            (Some(code), None) => format!(" {code}"),
            (None, Some(message)) => format!(" {message}"),
            (None, None) => String::new(),
        }
    });
    let error = error
        .filter(|e| !e.is_empty())
        .map(|e| crate::checks::preview(&e))
        .unwrap_or_default();
    Some(format!(
        "step `{step}` was answered {}{error}",
        response.status
    ))
}
