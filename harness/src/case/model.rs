//! The case file format: serde types, from which `spec/schema/case.schema.json` is generated.
//!
//! A case is data: what to send, in which order, and which checks (from a closed vocabulary)
//! judge what came back. Strings may contain `${…}` expressions (see [`crate::template`]).
//! Steps, checks and concurrent actions are objects with exactly one key of a closed set: in
//! Rust they are enums ([`StepAction`], [`CheckKind`], [`ConcurrentCopy`]), read through a raw
//! form with one optional field per alternative (see [`super::exactly_one`]); the published
//! schema states "exactly one" with `oneOf`, and `conformance lint` reports any violation with
//! its JSON path.

use std::collections::{BTreeMap, BTreeSet};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::exactly_one::{NotExactlyOne, exactly_one_of, schema_of_raw_form};
use super::surface::CaseSurface;
use crate::verdict::Level;

/// The default time budget of a case (its `timeout_ms`), before `--time-scale`.
pub const DEFAULT_CASE_TIMEOUT_MS: u64 = 15_000;

/// One conformance case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "ConformanceCase")]
pub struct Case {
    /// The JSON Schema of this format, for editor completion.
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// Stable id, dotted kebab-case, unique across the corpus; starts with `x.` (execution
    /// protocol) or `w.` (run events).
    #[schemars(regex(pattern = r"^(x|w)(\.[a-z0-9]+(-[a-z0-9]+)*)+$"))]
    pub id: String,
    /// One line saying what the case proves.
    #[schemars(length(min = 1))]
    pub title: String,
    /// Why, and how the case reads the requirement (the place to record a decision).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The requirement ids (from `spec/requirements.json`) the case proves.
    #[schemars(length(min = 1))]
    pub requirements: Vec<String>,
    /// The level of the case's checks unless a check says otherwise.
    pub level: Level,
    /// Which surface the case drives.
    pub surface: CaseSurface,
    /// Free-form tags for filtering (`ordering`, `cursor`, `idempotency`, …).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Capabilities the target must have, else the case is SKIP with the reason. Forms:
    /// `fixture:<id>` (`fixture:<a>|<b>`: alternatives, the first listed is `${fixture.<a>}`),
    /// `mock-provider:<id>`, `stream-mode:<mode>`, `capability:<family>` (and
    /// `capability:<family>.<facet>`, `capability:<family>.<facet>=<string value>`),
    /// `provider:<role>`, `fact:<name>` (the target has the fact `${target.<name>}` reads),
    /// `tenant-b`, `subscriber-limit`; `!<need>` for cases about hosts without it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "Vec<String>")]
    pub needs: Vec<super::needs::CaseNeed>,
    /// What other cases judge this case's rules through (e.g. `seam:heartbeat-tick`: the cases
    /// driving upstream's heartbeat tick seam): on a host meeting one of these needs, an
    /// operator fact the case needs and was not given makes it SKIP (the rules are judged
    /// there), not BLOCKED. Written as needs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "Vec<String>")]
    pub judged_through: Vec<super::needs::CaseNeed>,
    /// The harness's own canary check (`implicit:canary-absent`) is the case's evidence: the
    /// case provokes an answer that could carry the deployed credential (the provider
    /// manifests) and has no check of its own at its level. Without it a case judged only by
    /// checks below its level is not provoked.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub judged_by_canary: bool,
    /// Global host state the case writes (a test seam keyed by something other than the
    /// case's own runs): cases naming the same seam run one at a time against a target, others
    /// in parallel. `mock-ai-program`: upstream's mock-AI program seam (keyed by node id);
    /// `heartbeat-tick`: upstream's heartbeat tick seam (its ticks may show on the host channel).
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub exclusive: BTreeSet<super::shared_seam::SharedSeam>,
    /// The case's time budget in milliseconds, before `--time-scale` (default 15 000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 100, max = 600_000))]
    pub timeout_ms: Option<u64>,
    /// Reusable JSON values, referenced as `${defs.<name>}`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub defs: BTreeMap<String, Value>,
    /// Fake-provider scripts by local name (`${script.<name>}` expands to the marker that
    /// selects it). The value is a mock-provider script without its `id`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub scripts: BTreeMap<String, Value>,
    /// The steps, run in order.
    #[schemars(length(min = 1))]
    pub steps: Vec<Step>,
}

/// One step of a case: an optional name and note, exactly one action, and checks on what the
/// action recorded. Read and written through its raw form (the published schema's `Step`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawStep", into = "RawStep")]
pub struct Step {
    /// A name for references: `${steps.<id>.…}`.
    pub id: Option<String>,
    /// What the step is for.
    pub note: Option<String>,
    /// The step sets the case up rather than judging the host: what must hold for the case to
    /// go on. When it does not (a check of the step fails, the step does not complete, a stream
    /// ends without its `until.event`), the case is BLOCKED with this text, and no later step
    /// runs.
    pub precondition: Option<String>,
    /// The scripted provider behaviours the step's checks depend on: the checks are judged only
    /// when the fake providers saw the host consume them; otherwise the case is BLOCKED with the
    /// cause (the host never called the fake; where it listens; the requests that reached the
    /// providers listener and matched no fake), and no later step runs.
    pub evidence: Vec<EvidenceExpect>,
    /// The optional stream modes the step reads (`stream-mode:<mode>`) and the capabilities it
    /// is for (`capability:…`, or `!capability:…` for hosts without one): on a host that does
    /// not meet one, the step is not taken (its checks are not judged, the transcript says why)
    /// and the case is judged on its other steps.
    pub needs: Vec<super::needs::CaseNeed>,
    /// What the step does.
    pub action: StepAction,
    /// Checks on what this step recorded.
    pub expect: Vec<Check>,
}

exactly_one_of! {
    what = "a step", key = "action";
    /// One step: exactly one action, then checks on what it recorded.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[schemars(rename = "Step")]
    raw RawStep {
        /// A name for references: `${steps.<id>.…}`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(regex(pattern = r"^[a-z][a-z0-9_]*$"))]
        id: Option<String>,
        /// What the step is for.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
        /// The step sets the case up: what must hold for the case to go on. When it does not
        /// (a check of the step fails, the step does not complete, a stream ends without its
        /// `until.event`), the case is BLOCKED with this text, never judged against the host.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        precondition: Option<String>,
        /// The scripted provider behaviours (an output, an error, a fault, a second attempt,
        /// an echoed canary) the step's checks depend on: judged only when the fake providers
        /// saw the host consume them, otherwise the case is BLOCKED with the cause.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        evidence: Vec<EvidenceExpect>,
        /// The optional stream modes the step reads (`stream-mode:<mode>`) and the capabilities
        /// it is for (`capability:…`, or `!capability:…` for hosts without one): on a host that
        /// does not meet one, the step is not taken (its checks are not judged) and the case is
        /// judged on its other steps. Only a step needing as much may read this one.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        #[schemars(with = "Vec<String>")]
        needs: Vec<super::needs::CaseNeed>,
    }
    /// The closed set of step actions; the key of each in a case file is its snake_case name.
    // Case data is read once and held by reference: variant sizes do not matter.
    #[allow(clippy::large_enum_variant)]
    #[derive(Debug, Clone, PartialEq)]
    one_of StepAction {
        /// Send one HTTP request and read the whole response.
        request(RequestSpec) => Request,
        /// Open an SSE subscription and read frames until a stop condition.
        stream(StreamSpec) => Stream,
        /// Repeat a request until a condition on its JSON body holds.
        poll_until(PollUntilSpec) => PollUntil,
        /// Wait until an execution or run is terminal (polling its snapshot).
        wait_terminal(WaitTerminalSpec) => WaitTerminal,
        /// Send the same request N times at once.
        concurrent(ConcurrentSpec) => Concurrent,
        /// Run several steps at once (races).
        parallel(Vec<Step>) => Parallel,
        /// Run steps once per integer in a range, with a loop variable.
        repeat(RepeatSpec) => Repeat,
        /// Run steps for generated inputs (property-based, with shrinking).
        generate(GenerateSpec) => Generate,
    }
    then {
        /// Checks on what this step recorded.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        expect: Vec<Check>,
    }
}

schema_of_raw_form!(Step => RawStep);

impl StepAction {
    /// The steps this action runs inside it (`parallel`, `repeat`, `generate`); none for the
    /// actions that talk to the host themselves.
    pub fn nested_steps(&self) -> &[Step] {
        match self {
            StepAction::Parallel(steps) => steps,
            StepAction::Repeat(repeat) => &repeat.steps,
            StepAction::Generate(generate) => &generate.steps,
            StepAction::Request(_)
            | StepAction::Stream(_)
            | StepAction::PollUntil(_)
            | StepAction::WaitTerminal(_)
            | StepAction::Concurrent(_) => &[],
        }
    }
}

impl TryFrom<RawStep> for Step {
    type Error = NotExactlyOne;

    fn try_from(mut raw: RawStep) -> Result<Self, Self::Error> {
        let action = raw.take_one()?;
        Ok(Step {
            id: raw.id,
            note: raw.note,
            precondition: raw.precondition,
            evidence: raw.evidence,
            needs: raw.needs,
            action,
            expect: raw.expect,
        })
    }
}

impl From<Step> for RawStep {
    fn from(step: Step) -> Self {
        RawStep::with_one(
            step.id,
            step.note,
            step.precondition,
            step.evidence,
            step.needs,
            step.action,
            step.expect,
        )
    }
}

/// Who a request acts as.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Principal {
    /// The target's first principal (the default on the run events surface).
    A,
    /// A principal of another tenant (needs `tenant-b`).
    B,
    /// No credentials at all.
    None,
    /// A credential the host cannot know.
    Invalid,
}

/// An HTTP request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RequestSpec {
    /// Method (default `GET`).
    #[serde(default = "default_method")]
    pub method: String,
    /// Path and optional query, relative to the target's base URL.
    pub path: String,
    /// Query parameters (values are expanded; appended to `path`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub query: BTreeMap<String, String>,
    /// Headers (values are expanded).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Who the request acts as (default: `a` on the run events surface, `none` otherwise; the
    /// target's global `--header`s are always sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<Principal>,
    /// A JSON body (expanded), sent with `Content-Type: application/json` unless `headers`
    /// set one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json: Option<Value>,
    /// A raw body (expanded), sent as is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// A raw body of this many bytes of filler (for size bounds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_filler_bytes: Option<u64>,
}

fn default_method() -> String {
    "GET".to_string()
}

/// An SSE subscription (a `GET`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StreamSpec {
    /// Path and optional query, relative to the target's base URL.
    pub path: String,
    /// Query parameters (values are expanded; appended to `path`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub query: BTreeMap<String, String>,
    /// Headers (values are expanded), e.g. `Last-Event-ID`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Who the request acts as (same default as [`RequestSpec::auth`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<Principal>,
    /// When to stop reading (default: when the server closes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<StreamUntil>,
    /// The run reached its terminal event before this subscription (the case waited for it):
    /// the host owes the stream's close within one keep-alive interval of the request (the
    /// events chapter: "MUST close the connection after the run's terminal event"). The read
    /// stops at the close or, at the latest, one keep-alive interval after the request (the
    /// target's `keepalive_interval_ms`, or the chapter's 30 s bound when not given, plus a
    /// second), even past the case's budget when it was opened within it, so a stream held open
    /// is judged (`closed_by_server` fails) rather than cut by the budget; the time the read
    /// took, one such window at most, is added to the case's budget (the host's close is its
    /// time, not the case's). Not with `until.duration_ms`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub run_ended: bool,
}

/// When a stream step stops reading.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StreamUntil {
    /// Stop after this many event frames (then disconnect).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frames: Option<u64>,
    /// Stop after the first frame carrying the event this selector names (expanded): `type`,
    /// or `type@member=value` as in `order`. The type is the `type` in `data`, else `event:`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    /// Stop after reading for this long (expanded; milliseconds before `--time-scale`): for
    /// hold-open and keep-alive observations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<Value>,
}

/// Repeat a request until a condition holds (bounded by the case time). A run-events poll is
/// read to its end at each attempt, as a `request` step reads it: the condition is on the
/// pages joined.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PollUntilSpec {
    /// The request to repeat.
    pub request: RequestSpec,
    /// The condition on the response's JSON body.
    pub until: JsonExpect,
    /// Pause between attempts in milliseconds (default 25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_ms: Option<u64>,
}

/// Wait until an execution (surface X) or run (surface W) is terminal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitTerminalSpec {
    /// The execution id or run id (expanded).
    pub id: String,
    /// Then wait for the run's log to settle (surface W): read it (poll) until two readings
    /// in a row end at the same sequence, then read the snapshot again. Events may follow the
    /// terminal event at any time, so a case comparing the log before and after an action of
    /// its own waits for this first; the step does not complete when the log never settles
    /// before the case's deadline. A reading without `lastSequence` ends the wait (the case's
    /// own steps judge the poll). An execution's log ends at its terminal event (surface X):
    /// there it is settled at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settled: Option<bool>,
}

/// The same request, N times at once. Read and written through its raw form (the published
/// schema's `ConcurrentSpec`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawConcurrentSpec", into = "RawConcurrentSpec")]
pub struct ConcurrentSpec {
    /// How many copies, 2..=256 (an integer or an expression such as
    /// `${target.subscriber_limit + 1}`).
    pub count: Value,
    /// What each copy sends.
    pub copy: ConcurrentCopy,
}

exactly_one_of! {
    what = "a concurrent step", key = "of `request` or `stream`";
    /// The same request, N times at once.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[schemars(rename = "ConcurrentSpec")]
    raw RawConcurrentSpec {
        /// How many copies, 2..=256 (an integer or an expression such as
        /// `${target.subscriber_limit + 1}`).
        count: Value,
    }
    /// What each copy of a concurrent step sends.
    #[derive(Debug, Clone, PartialEq)]
    one_of ConcurrentCopy {
        /// The request (read whole).
        request(RequestSpec) => Request,
        /// Or an SSE subscription, each read as a stream until its stop condition.
        stream(StreamSpec) => Stream,
    }
    then {}
}

schema_of_raw_form!(ConcurrentSpec => RawConcurrentSpec);

impl TryFrom<RawConcurrentSpec> for ConcurrentSpec {
    type Error = NotExactlyOne;

    fn try_from(mut raw: RawConcurrentSpec) -> Result<Self, Self::Error> {
        let copy = raw.take_one()?;
        Ok(ConcurrentSpec {
            count: raw.count,
            copy,
        })
    }
}

impl From<ConcurrentSpec> for RawConcurrentSpec {
    fn from(spec: ConcurrentSpec) -> Self {
        RawConcurrentSpec::with_one(spec.count, spec.copy)
    }
}

/// A loop over an inclusive integer range.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RepeatSpec {
    /// The loop variable, read as `${var.<name>}`.
    #[schemars(regex(pattern = r"^[a-z][a-z0-9_]*$"))]
    pub var: String,
    /// First value (integer or expression).
    pub from: Value,
    /// Last value, inclusive (integer or expression).
    pub to: Value,
    /// The steps of each iteration.
    #[schemars(length(min = 1))]
    pub steps: Vec<Step>,
}

/// Property-based generation: run `steps` for generated values, shrink a failure to a minimal
/// input, and report the seed that replays it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GenerateSpec {
    /// The generator (a closed set, see [`Strategy`]).
    pub strategy: Strategy,
    /// The variable the value is bound to: `${var.<name>}`.
    #[schemars(regex(pattern = r"^[a-z][a-z0-9_]*$"))]
    pub var: String,
    /// How many inputs (default 16).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 512))]
    pub cases: Option<u32>,
    /// The steps run for each input; a failing check fails the input.
    #[schemars(length(min = 1))]
    pub steps: Vec<Step>,
}

/// The closed set of generators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// Strings outside the `streamMode` pattern (unknown names, bad separators, case, spaces,
    /// `values` combined, empty).
    InvalidStreamMode,
    /// Strings inside the `streamMode` pattern naming only the modes the host serves.
    ValidStreamMode,
    /// Malformed cursor values (negative, non-integer, empty, spaces, signs, hex, huge).
    MalformedCursor,
    /// Well-formed non-negative integer cursors, including past the end.
    WellFormedCursor,
    /// Well-formed non-negative integer cursors every host reads (at most 15 digits, which a
    /// double always holds; open point `w.cursor.range`), including past the end and the bound
    /// itself.
    SafeWellFormedCursor,
    /// Execution request bodies that violate the closed request schema.
    InvalidExecutionRequest,
    /// A provider role's whole call list: zero to three retryable faults (429, 503, 500, 529,
    /// connection reset), then one successful completion. Use it as a script's calls, e.g.
    /// `"calls": {"text-primary": "${var.calls}"}`; the script is registered per value.
    FaultSequence,
}

/// One check: exactly one kind from the closed vocabulary [`CheckKind`], plus an optional
/// level, requirements and note. Read and written through its raw form (the published schema's
/// `Check`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawCheck", into = "RawCheck")]
pub struct Check {
    /// The level of this check when it differs from the case's.
    pub level: Option<Level>,
    /// The requirement ids this check proves, when narrower than the case's.
    pub requirements: Option<Vec<String>>,
    /// Why this check reads the requirement the way it does.
    pub note: Option<String>,
    /// A precondition, not an assertion: when it does not hold the case cannot be set up, so it
    /// is not judged (BLOCKED with this check's message), and no later step runs.
    pub precondition: Option<bool>,
    /// The premise of the check: when it does not hold (the execution did not fail, no
    /// fallback occurred, the run ended inside the window) the check does not apply to the
    /// path the host took and is not judged (no outcome).
    pub when: Option<Premise>,
    /// What the check asserts.
    pub kind: CheckKind,
}

exactly_one_of! {
    what = "a check", key = "check key";
    /// One check: exactly one check key, plus optional level, requirement and note.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[schemars(rename = "Check")]
    raw RawCheck {
        /// The level of this check when it differs from the case's.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        level: Option<Level>,
        /// The requirement ids this check proves, when narrower than the case's.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        requirements: Option<Vec<String>>,
        /// Why this check reads the requirement the way it does.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
        /// A precondition, not an assertion: when it does not hold the case cannot be set up,
        /// so it is not judged (BLOCKED with this check's message), and no later step runs.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        precondition: Option<bool>,
        /// The premise of the check (a condition on the step's last JSON body, or on the view
        /// of a step judged before it): when it does not hold, the check does not apply to the
        /// path the host took and is not judged.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        when: Option<Premise>,
    }
    /// The closed vocabulary of check kinds; the key of each in a case file is its snake_case
    /// name. A new kind is one line here and one arm in [`crate::checks::evaluate`].
    // Case data is read once and held by reference: variant sizes do not matter.
    #[allow(clippy::large_enum_variant)]
    #[derive(Debug, Clone, PartialEq)]
    one_of CheckKind {
        /// The response status is exactly this.
        status(u16) => Status,
        /// The response status is one of these.
        status_in(Vec<u16>) => StatusIn,
        /// A response header.
        header(HeaderExpect) => Header,
        /// A value in the JSON body, by JSON pointer.
        json(JsonExpect) => Json,
        /// The body is the surface's error envelope (schema-valid) with this code.
        error(ErrorExpect) => Error,
        /// The JSON body validates against this published schema (`execution-submission`, …).
        schema(PublishedSchema) => Schema,
        /// Every event of the stream (or poll body) validates: envelope schema, registered or
        /// vendor type, payload definition.
        events_valid(bool) => EventsValid,
        /// Sequence rules over the step's events.
        sequence(SequenceExpect) => Sequence,
        /// The step's events are exactly those of another step's full log with a sequence greater
        /// than the cursor, in the same order: the exclusive-cursor rule.
        exclusive_after(ExclusiveAfterExpect) => ExclusiveAfter,
        /// Poll's `lastSequence` is the highest sequence of the log at the time of the
        /// response: the last event's when the poll returned events, otherwise at least what an
        /// earlier reading of the log held and at most the cursor.
        last_sequence(LastSequenceExpect) => LastSequence,
        /// Terminal-event rules over the step's events.
        terminal(TerminalExpect) => Terminal,
        /// Ordering constraints over the step's events.
        order(OrderExpect) => Order,
        /// The server closed the stream (not the harness, not a timeout).
        closed_by_server(bool) => ClosedByServer,
        /// Frame-level expectations (counts, `event:` names, first frame).
        frames(FramesExpect) => Frames,
        /// Keep-alive comments were observed and no silence exceeded the bound.
        keepalive(KeepaliveExpect) => Keepalive,
        /// Fake-provider call counts for a script.
        provider_calls(ProviderCallsExpect) => ProviderCalls,
        /// All these expanded values are equal.
        same(Vec<Value>) => Same,
        /// All these expanded values are pairwise different.
        distinct(Vec<Value>) => Distinct,
        /// Folding the stream's deltas gives exactly the given materialised result.
        fold_equals(Value) => FoldEquals,
        /// These event types occur in the step's events.
        events_include(Vec<String>) => EventsInclude,
        /// None of these event types (or vendor events, with `"vendor"`) occur.
        events_exclude(Vec<String>) => EventsExclude,
        /// A condition every matching event satisfies.
        every_event(EveryEventExpect) => EveryEvent,
        /// The step's events equal another step's (sequence and document), batching flattened.
        events_equal(String) => EventsEqual,
        /// None of these expanded strings occurs anywhere in what the step received.
        text_absent(Vec<String>) => TextAbsent,
        /// Every response of a concurrent step satisfies these checks.
        each(Vec<Check>) => Each,
        /// Counts over the responses of a concurrent step.
        responses(ResponsesExpect) => Responses,
        /// Checks on the responses of a concurrent step that have a given status.
        each_with_status(EachWithStatus) => EachWithStatus,
        /// Events of a type arrive at least this far apart.
        event_gaps(EventGapsExpect) => EventGaps,
        /// Every event type a list in this step's JSON body names occurs among the events of the
        /// given earlier steps (a host lists only what it emits).
        listed_types_observed(ListedTypesObservedExpect) => ListedTypesObserved,
    }
    then {}
}

schema_of_raw_form!(Check => RawCheck);

impl TryFrom<RawCheck> for Check {
    type Error = NotExactlyOne;

    fn try_from(mut raw: RawCheck) -> Result<Self, Self::Error> {
        let kind = raw.take_one()?;
        Ok(Check {
            level: raw.level,
            requirements: raw.requirements,
            note: raw.note,
            precondition: raw.precondition,
            when: raw.when,
            kind,
        })
    }
}

impl From<Check> for RawCheck {
    fn from(check: Check) -> Self {
        RawCheck::with_one(
            check.level,
            check.requirements,
            check.note,
            check.precondition,
            check.when,
            check.kind,
        )
    }
}

/// The published schema a `schema` check names: one of the closed set
/// [`spec::schema::Published`], written in a case file by its name (`execution-submission`,
/// `run-event`, …; [`spec::schema::Published::name`]). The case schema describes it as a
/// string: lint reports a name outside the set with the closest known one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct PublishedSchema(pub spec::schema::Published);

impl PublishedSchema {
    /// Every name a `schema` check may use: every published schema's.
    pub fn names() -> Vec<&'static str> {
        spec::schema::Published::ALL
            .iter()
            .map(|p| p.name())
            .collect()
    }

    /// The schema named `name`, or lint's message naming the closest known one.
    pub fn from_name(name: &str) -> Result<PublishedSchema, String> {
        spec::schema::Published::from_name(name)
            .map(PublishedSchema)
            .ok_or_else(|| {
                let known = PublishedSchema::names();
                format!(
                    "unknown schema `{name}`{}; one of {}",
                    crate::suggest::did_you_mean(name, known.iter().copied()),
                    known.join(", ")
                )
            })
    }
}

impl TryFrom<String> for PublishedSchema {
    type Error = String;
    fn try_from(name: String) -> Result<Self, Self::Error> {
        PublishedSchema::from_name(&name)
    }
}

impl From<PublishedSchema> for String {
    fn from(schema: PublishedSchema) -> String {
        schema.0.name().to_string()
    }
}

/// A string in the case schema (as the format always had it): the set is checked by lint.
impl JsonSchema for PublishedSchema {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        <String as JsonSchema>::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        <String as JsonSchema>::json_schema(generator)
    }
}

/// A list of event types in a JSON body, each of which must have been observed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListedTypesObservedExpect {
    /// JSON pointer to the list (an array of event type names) in this step's body.
    pub pointer: String,
    /// The earlier steps (ids) whose events, together, must include every listed type.
    #[schemars(length(min = 1))]
    pub steps: Vec<String>,
    /// Listed types the case provokes no scenario for (a fallback that is a MAY, say): never
    /// required among the events, since their absence is no evidence of a false listing; the
    /// message names the ones listed and not observed as not exercised.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_provoked: Vec<String>,
}

/// A response header expectation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HeaderExpect {
    /// The header name (case-insensitive).
    pub name: String,
    /// Present (default) or absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub present: Option<bool>,
    /// Exact value (expanded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub equals: Option<String>,
    /// Regular expression the value matches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matches: Option<String>,
}

/// The premise of a check (`when`): what must have happened on the path the host took for the
/// check to apply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Premise {
    /// A condition on the view of a step (`{"step": "disc", "json": {…}}`), as `${steps.<id>}`
    /// reads it: `/status`, `/headers/…`, `/body/…`, `/events/…`, `/frames/…`, `/count`,
    /// `/answered_in_ms` (when the answer ended, since its request was sent). The
    /// step is an earlier one, one listed before it in the same `parallel`, or the check's own
    /// (a stream's premise on what it read: `/events/*/type` with `text_absent`).
    OfStep(StepPremise),
    /// A condition on the step's own last JSON body (`{"pointer": "/status", "equals": …}`).
    Body(JsonExpect),
    /// Every premise of a list (`{"all": [{…}, {…}]}`): the check applies when each holds.
    All(AllPremises),
    /// An event of the step's own events matches this selector (`{"occurs":
    /// "heartbeat.stateChanged@from={}"}`, the grammar of `order`'s selectors): what a read
    /// must have seen for the check to be about it, where a pointer's `*` (every element)
    /// cannot say "some event".
    Occurs(OccursPremise),
}

/// A premise that an event matching a selector is among the step's own events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OccursPremise {
    /// The selector (`type` or `type@field=value`; templates expanded).
    pub occurs: String,
}

/// Premises that must all hold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AllPremises {
    /// The premises, each a step's view or the step's own body.
    #[schemars(length(min = 1))]
    pub all: Vec<Premise>,
}

impl Premise {
    /// The step premises among this one (itself, or those of its list), depth first.
    pub fn of_steps(&self) -> Vec<&StepPremise> {
        match self {
            Premise::OfStep(of) => vec![of],
            Premise::Body(_) | Premise::Occurs(_) => Vec::new(),
            Premise::All(all) => all.all.iter().flat_map(Premise::of_steps).collect(),
        }
    }
}

/// A premise on the view of a named step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StepPremise {
    /// The step's id.
    pub step: String,
    /// The condition on its view.
    pub json: JsonExpect,
}

/// A condition on a JSON value found by pointer.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JsonExpect {
    /// JSON pointer (`""` is the whole document).
    pub pointer: String,
    /// The member may be absent; when present it must satisfy the other conditions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optional: Option<bool>,
    /// Present (default when another condition is given) or absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub present: Option<bool>,
    /// Equal to this (expanded) value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub equals: Option<Value>,
    /// Not equal to this (expanded) value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_equals: Option<Value>,
    /// One of these (expanded) values.
    #[serde(default, skip_serializing_if = "Option::is_none", rename = "in")]
    pub one_of: Option<Vec<Value>>,
    /// A string matching this regular expression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matches: Option<String>,
    /// Of this JSON type.
    #[serde(default, skip_serializing_if = "Option::is_none", rename = "type")]
    pub json_type: Option<JsonType>,
    /// A number ≥ this (a number, or an expression expanding to one, e.g. a value the host
    /// sent in an earlier step).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<Value>,
    /// A number ≤ this (a number, or an expression expanding to one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<Value>,
    /// An array, string or object of exactly this length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub length: Option<u64>,
    /// An array, string or object of at least this length (a number, or an expression
    /// expanding to one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_length: Option<Value>,
    /// An array, string or object of at most this length (a number, or an expression
    /// expanding to one, e.g. a limit the host advertised).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<Value>,
    /// An array containing this (expanded) value, or a string containing this substring.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contains: Option<Value>,
    /// An object with exactly these keys (closedness).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keys: Option<Vec<String>>,
    /// A member of a registry the `spec` crate owns (read from it, never copied into cases).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_registry: Option<SpecRegistry>,
    /// None of these (expanded) texts occurs in the value: in any string or member name within
    /// it, or in a number's text. Scopes a content rule to what the requirement names (e.g. one
    /// event's payload), so the verdict never depends on what else a read happened to hold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_absent: Option<Vec<String>>,
    /// Each of these (expanded) texts occurs in the value: in a string or member name within it,
    /// or in a number's text (a property carried under a name of the host's choosing, e.g. one
    /// prefixed for an extension hatch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_present: Option<Vec<String>>,
}

/// Registries of the `spec` crate a JSON value can be checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SpecRegistry {
    /// Surface X's portable error codes (`spec::execution::ErrorCode`): the origin's nine
    /// `RuntimeErrorCode`s plus the two resource codes the harness tolerates (`not_found`,
    /// `conflict`). A provider-native code is not among them.
    ExecutionPortableCodes,
}

impl SpecRegistry {
    /// Whether `value` is a member.
    pub fn admits(self, value: &Value) -> bool {
        match self {
            Self::ExecutionPortableCodes => value
                .as_str()
                .is_some_and(|code| spec::execution::ErrorCode::from_name(code).is_some()),
        }
    }

    /// The members, for a readable mismatch.
    pub fn members(self) -> Vec<&'static str> {
        match self {
            Self::ExecutionPortableCodes => spec::execution::ErrorCode::ALL
                .iter()
                .map(|c| c.as_str())
                .collect(),
        }
    }
}

/// JSON types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum JsonType {
    /// `null`.
    Null,
    /// `true`/`false`.
    Boolean,
    /// A number.
    Number,
    /// An integer-valued number.
    Integer,
    /// A string.
    String,
    /// An array.
    Array,
    /// An object.
    Object,
}

/// An error-envelope expectation.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ErrorExpect {
    /// The code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// One of these codes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_in: Option<Vec<String>>,
}

/// Sequence rules.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SequenceExpect {
    /// The first event's sequence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first: Option<u64>,
    /// Strictly increasing (default true unless `non_decreasing` is set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strictly_increasing: Option<bool>,
    /// Never decreasing (an event admitted by two modes of a mixed stream may repeat).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub non_decreasing: Option<bool>,
    /// +1 each, no gaps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contiguous: Option<bool>,
    /// Every frame's `id:` equals its event's sequence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ids_match: Option<bool>,
}

/// The exclusive-cursor expectation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExclusiveAfterExpect {
    /// The cursor (integer or expression).
    pub cursor: Value,
    /// The step id whose events are the full log.
    pub full: String,
}

/// What poll's `lastSequence` is judged against (both bounds are expanded integers).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LastSequenceExpect {
    /// The poll's `afterSequence`, when it sent one: a poll that returned no event says the
    /// log ends at or before it. Without it, a poll with no event says the log is empty (-1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<Value>,
    /// The highest sequence an earlier reading of the same log held: the log is append-only,
    /// and events may follow the terminal event, so its highest sequence is at least this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_least: Option<Value>,
}

/// Terminal-event rules.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TerminalExpect {
    /// Exactly one terminal event, and it is the last event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exactly_one_last: Option<bool>,
    /// The terminal event's type is one of these.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub type_in: Option<Vec<String>>,
    /// Nothing the protocol forbids follows the terminal event (surface W: per the registry;
    /// types the chapter leaves unconstrained are reported as INFO).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nothing_forbidden_after: Option<bool>,
    /// No terminal event at all (e.g. a live run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub none: Option<bool>,
}

/// Ordering constraints.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OrderExpect {
    /// The first event's type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first: Option<String>,
    /// `[A, B]`: every B is preceded by an A (with the same `per` field value when given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<[String; 2]>,
    /// The field (top-level in the event, or in `payload`) that pairs A and B, e.g. `call_id`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per: Option<String>,
    /// These types occur in this relative order (each `type` or `type@field=value`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subsequence: Option<Vec<String>>,
}

/// Frame-level expectations.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FramesExpect {
    /// Exactly this many event frames (expanded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<Value>,
    /// At least this many event frames.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<u64>,
    /// Every frame's `event:` is one of these.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_in: Option<Vec<String>>,
    /// The first frame's `event:`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_event: Option<String>,
    /// Every event frame has a non-negative integer `id:`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ids_numeric: Option<bool>,
    /// Every `batch` frame's `id:` is the highest sequence in its array.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_id_highest: Option<bool>,
    /// At least one `batch` frame whose data is an array.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_batch: Option<bool>,
    /// `event:` of each frame names a mode of this list that admits the event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_names_admitting_mode: Option<Vec<String>>,
    /// No frame was truncated (a final frame without its blank line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_truncated_frame: Option<bool>,
    /// In a single-mode stream, every plain frame's `event:` equals its document's `type`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_is_type: Option<bool>,
}

/// Keep-alive expectations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KeepaliveExpect {
    /// At least this many `:` comments.
    pub min_comments: u32,
    /// No silence (no frame and no comment) longer than this, in milliseconds.
    pub max_gap_ms: u64,
}

/// Fake-provider call-count expectations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProviderCallsExpect {
    /// The case's local script name.
    pub script: String,
    /// Only calls to this provider role (all instances when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Exactly this many calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
    /// At most this many calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<u32>,
}

/// A scripted provider behaviour a step's checks depend on: at least `calls` calls of the
/// case's script `script` played by role `role` (what the fake providers saw the host consume).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EvidenceExpect {
    /// The case's local script name.
    pub script: String,
    /// The provider role whose calls the checks depend on.
    pub role: String,
    /// At least this many calls (default 1: the first scripted behaviour was consumed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub calls: Option<u32>,
}

/// A condition on every event that matches a filter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EveryEventExpect {
    /// Only events of this type (all when absent).
    #[serde(default, skip_serializing_if = "Option::is_none", rename = "type")]
    pub event_type: Option<String>,
    /// Only events for which this condition holds (a filter, not an assertion).
    #[serde(default, skip_serializing_if = "Option::is_none", rename = "where")]
    pub filter: Option<JsonExpect>,
    /// The condition, with the pointer into the event document.
    pub json: JsonExpect,
}

/// Minimum spacing of events of one type, by arrival time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EventGapsExpect {
    /// The event type (the document's `type`).
    #[serde(rename = "type")]
    pub event_type: String,
    /// Consecutive events of that type arrive at least this many milliseconds apart: a number
    /// or an expression such as `"${target.heartbeat_busy_gap_ms * 0.8}"` (not time-scaled:
    /// it is a property of the host, not a wait).
    pub min_ms: Value,
    /// Gaps only between events carrying the same value at this member (of the event or its
    /// payload), e.g. `heartbeatId`: the spacing of each heartbeat on a channel carrying
    /// several. At least two events must share a value, else the check is not judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per: Option<String>,
}

fn at_least_one() -> bool {
    true
}

fn is_true(value: &bool) -> bool {
    *value
}

/// Checks applied to the responses of a concurrent step that have one status.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EachWithStatus {
    /// The status selecting the responses (at least one must have it, unless `at_least_one`
    /// is false).
    pub status: u16,
    /// Whether a response must have the status (default true). False for a status the host
    /// may answer or not (a refusal it is allowed to make): when none has it, the checks do
    /// not apply to the path the host took.
    #[serde(default = "at_least_one", skip_serializing_if = "is_true")]
    pub at_least_one: bool,
    /// The checks each of those responses must pass.
    pub expect: Vec<Check>,
}

/// Counts over the responses of a concurrent step.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResponsesExpect {
    /// Exactly this many responses have this status: `{"202": 1, "200": 15}` (counts may be
    /// expressions such as `${target.subscriber_limit}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_counts: Option<BTreeMap<String, Value>>,
    /// All responses agree on the value at this pointer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub same_at: Option<String>,
}

impl StreamSpec {
    /// The `GET` request that opens the stream.
    pub fn to_request(&self) -> RequestSpec {
        RequestSpec {
            method: "GET".into(),
            path: self.path.clone(),
            query: self.query.clone(),
            headers: self.headers.clone(),
            auth: self.auth,
            json: None,
            body: None,
            body_filler_bytes: None,
        }
    }
}

impl Check {
    /// The check's kind name, as in the case file (`status`, `frames`, …).
    pub fn name(&self) -> &'static str {
        self.kind.name()
    }
}

/// The JSON Schema of the case format (`spec/schema/case.schema.json`).
pub fn case_schema() -> Value {
    let mut schema = spec::schema::root_schema::<Case>();
    if let Value::Object(object) = &mut schema {
        object.insert(
            "$id".into(),
            Value::String(
                "https://conformance-harness.invalid/spec/schema/case.schema.json".into(),
            ),
        );
    }
    // Every "exactly one of" object carries exactly one key of its set.
    for (definition, names) in [
        ("Step", StepAction::NAMES),
        ("ConcurrentSpec", ConcurrentCopy::NAMES),
        ("Check", CheckKind::NAMES),
    ] {
        if let Some(object) = schema
            .pointer_mut(&format!("/$defs/{definition}"))
            .and_then(Value::as_object_mut)
        {
            let one_of: Vec<Value> = names
                .iter()
                .map(|k| serde_json::json!({"required": [k]}))
                .collect();
            object.insert("oneOf".into(), Value::Array(one_of));
        }
    }
    schema
}
