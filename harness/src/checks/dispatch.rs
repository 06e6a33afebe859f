//! The dispatch: [`evaluate`] judges one check by the exhaustive match over [`CheckKind`],
//! calling the check's function in the module of its concept.

use super::context::{EvalContext, Outcome};
use super::json_match::json_condition;
use super::provider_calls::provider_calls;
use super::{response, stream};
use crate::case::{Check, CheckKind, Premise};
use crate::template::TemplateError;
use crate::verdict::CheckOutcome;

/// Whether `premise` holds on the path the host took (each of a list); an error when the case
/// reads what it cannot (a step not judged yet).
fn premise_holds(premise: &Premise, ctx: &EvalContext<'_>) -> Result<bool, TemplateError> {
    let (body, condition) = match premise {
        Premise::All(all) => {
            for premise in &all.all {
                if !premise_holds(premise, ctx)? {
                    return Ok(false);
                }
            }
            return Ok(true);
        }
        Premise::Body(condition) => (
            ctx.step
                .exchanges
                .last()
                .and_then(|e| e.response.as_ref())
                .and_then(|r| r.json.as_ref()),
            condition,
        ),
        Premise::Occurs(occurs) => {
            let selector = ctx.scope.interpolate(&occurs.occurs)?;
            let selector = crate::event_selector::EventSelector::parse(&selector);
            let response = ctx.step.exchanges.last().and_then(|e| e.response.as_ref());
            return Ok(response.is_some_and(|response| {
                super::events::observe(response)
                    .events
                    .iter()
                    .any(|event| selector.matches(event))
            }));
        }
        Premise::OfStep(of) => match ctx.scope.steps.get(&of.step) {
            Some(view) => (Some(view), &of.json),
            // A premise on a step not judged yet (a later one) cannot be read: the case is
            // wrong, not the host.
            None => {
                return Err(TemplateError::Syntax(
                    format!("steps.{}", of.step),
                    "the premise (`when`) reads a step not judged before this check".into(),
                ));
            }
        },
    };
    Ok(json_condition(body, condition, ctx.scope)?.is_ok())
}

/// Judges one check against a step's record. The match is over the closed vocabulary
/// [`CheckKind`]: a new kind is a variant there and an arm here.
pub(crate) fn evaluate(check: &Check, ctx: &EvalContext<'_>) -> Vec<CheckOutcome> {
    let out = Outcome {
        kind: check.name(),
        level: check.level.unwrap_or(ctx.case_level),
        requirements: check
            .requirements
            .clone()
            .unwrap_or_else(|| ctx.case_requirements.to_vec()),
        ctx,
    };
    let step = ctx.step;
    if let Some(premise) = &check.when {
        match premise_holds(premise, ctx) {
            Ok(true) => {}
            // The premise did not happen on the path the host took: nothing to judge there.
            Ok(false) => return Vec::new(),
            Err(error) => return vec![out.template(&error)],
        }
    }
    let one = |outcome: CheckOutcome| vec![outcome];
    let outcomes = match &check.kind {
        CheckKind::Status(status) => {
            one(response::status(&out, step, std::slice::from_ref(status)))
        }
        CheckKind::StatusIn(statuses) => one(response::status(&out, step, statuses)),
        CheckKind::Header(header) => one(response::header(&out, step, header)),
        CheckKind::Json(json) => one(response::json(&out, step, json)),
        CheckKind::Error(error) => one(response::error_envelope(&out, step, error)),
        CheckKind::Schema(schema) => one(response::schema(&out, step, schema.0)),
        CheckKind::Same(values) => one(response::same(&out, values, true)),
        CheckKind::Distinct(values) => one(response::same(&out, values, false)),
        CheckKind::TextAbsent(needles) => one(response::text_absent(&out, step, needles)),
        CheckKind::Each(checks) => response::each(&out, step, checks, ctx, evaluate),
        CheckKind::Responses(expect) => one(response::responses(&out, step, expect)),
        CheckKind::EachWithStatus(expect) => {
            response::each_with_status(&out, step, expect, ctx, evaluate)
        }
        CheckKind::EventGaps(expect) => one(stream::event_gaps(&out, step, expect)),
        CheckKind::ProviderCalls(expect) => one(provider_calls(&out, step, expect)),
        CheckKind::EventsValid(_) => one(stream::events_valid(&out, step)),
        CheckKind::Sequence(expect) => one(stream::sequence(&out, step, expect)),
        CheckKind::ExclusiveAfter(expect) => one(stream::exclusive_after(&out, step, expect)),
        CheckKind::LastSequence(expect) => one(stream::last_sequence(&out, step, expect)),
        CheckKind::Terminal(expect) => stream::terminal(&out, step, expect),
        CheckKind::Order(expect) => one(stream::order(&out, step, expect)),
        CheckKind::ClosedByServer(want) => one(stream::closed_by_server(&out, step, *want)),
        CheckKind::Frames(expect) => one(stream::frames(&out, step, expect)),
        CheckKind::Keepalive(expect) => one(stream::keepalive(&out, step, expect)),
        CheckKind::FoldEquals(result) => one(stream::fold_equals(&out, step, result)),
        CheckKind::EventsInclude(types) => one(stream::events_include(&out, step, types, true)),
        CheckKind::EventsExclude(types) => one(stream::events_include(&out, step, types, false)),
        CheckKind::EveryEvent(expect) => one(stream::every_event(&out, step, expect)),
        CheckKind::EventsEqual(other) => one(stream::events_equal(&out, step, other)),
        CheckKind::ListedTypesObserved(expect) => {
            one(stream::listed_types_observed(&out, step, expect))
        }
    };
    // A stream the harness did not keep whole: the fold completes the judgement, or the check
    // is not judged on a prefix.
    stream::whole_stream(&check.kind, &out, step, outcomes)
}
