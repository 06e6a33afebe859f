//! Property-based steps: generated inputs against the target, with shrinking.
//!
//! A `generate` step runs its steps once per generated value (bound to `${var.<name>}`). When an
//! input makes a check fail, proptest shrinks it to a minimal failing value; the steps are run
//! once more with that value so its transcript lands in the report, and the report records the
//! seed that replays the generation (`--proptest-seed`). Committed counterexamples in
//! `cases/regressions/<case-id>.json` (`{"values": [...]}`) are replayed first, every run.

use proptest::prelude::*;
use proptest::strategy::{BoxedStrategy, Strategy as _};
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};
use serde_json::{Value, json};

use crate::case::{GenerateSpec, Strategy};
use futures::future::BoxFuture;
use spec::openwop::{StreamMode, StreamModeSelection};

use crate::case::Step;
use crate::driver::case_state::CaseState;
use crate::report::Counterexample;
use crate::verdict::{CheckOutcome, Verdict};

/// Default number of generated inputs per step.
pub(crate) const DEFAULT_CASES: u32 = 16;

/// The proptest strategy of a generator; `served` are the stream modes the host serves, which
/// a valid `streamMode` draws from (a host serving all four gets every valid value).
pub(crate) fn strategy(kind: Strategy, served: &[StreamMode]) -> BoxedStrategy<Value> {
    match kind {
        Strategy::InvalidStreamMode => invalid_stream_mode().prop_map(Value::String).boxed(),
        Strategy::ValidStreamMode => valid_stream_mode(served).prop_map(Value::String).boxed(),
        Strategy::MalformedCursor => malformed_cursor().prop_map(Value::String).boxed(),
        Strategy::WellFormedCursor => well_formed_cursor().prop_map(Value::String).boxed(),
        Strategy::SafeWellFormedCursor => safe_well_formed_cursor().prop_map(Value::String).boxed(),
        Strategy::InvalidExecutionRequest => invalid_execution_request().boxed(),
        Strategy::FaultSequence => fault_sequence().boxed(),
    }
}

fn invalid_stream_mode() -> impl proptest::strategy::Strategy<Value = String> {
    let mode = prop_oneof![
        Just("updates"),
        Just("messages"),
        Just("debug"),
        Just("values")
    ];
    prop_oneof![
        // Combinations with `values`, which never combines.
        (proptest::collection::vec(mode.clone(), 1..3)).prop_map(|mut modes| {
            modes.insert(0, "values");
            modes.join(",")
        }),
        // Unknown names and near misses.
        "[a-zA-Z]{1,12}",
        Just("Updates".to_string()),
        Just("UPDATES".to_string()),
        Just("update".to_string()),
        // Bad separators and empty members.
        (
            mode.clone(),
            mode.clone(),
            prop_oneof![
                Just(";"),
                Just(" ,"),
                Just(", "),
                Just(",,"),
                Just("+"),
                Just("|")
            ]
        )
            .prop_map(|(a, b, sep)| format!("{a}{sep}{b}")),
        mode.clone().prop_map(|m| format!("{m},")),
        mode.prop_map(|m| format!(",{m}")),
        Just(String::new()),
    ]
    .prop_filter("must be outside the streamMode pattern", |s| {
        spec::openwop::StreamModeSelection::parse(s).is_err()
    })
}

/// `values`, or one or more of the other three joined by commas (repeats included: the pattern
/// allows them), each a mode of `served`. A host serving none of the modes listed gets
/// `updates`, which every host must serve.
fn valid_stream_mode(served: &[StreamMode]) -> BoxedStrategy<String> {
    let combinable: Vec<&'static str> =
        [StreamMode::Updates, StreamMode::Messages, StreamMode::Debug]
            .into_iter()
            .filter(|mode| served.contains(mode))
            .map(StreamMode::as_str)
            .collect();
    let values = served
        .contains(&StreamMode::Values)
        .then(|| Just("values".to_string()));
    let mixed = (!combinable.is_empty()).then(|| {
        proptest::collection::vec(proptest::sample::select(combinable), 1..4)
            .prop_map(|modes| modes.join(","))
    });
    match (values, mixed) {
        (Some(values), Some(mixed)) => prop_oneof![values, mixed].boxed(),
        (Some(values), None) => values.boxed(),
        (None, Some(mixed)) => mixed.boxed(),
        (None, None) => Just(StreamMode::Updates.as_str().to_string()).boxed(),
    }
}

/// Whether a valid `streamMode` value names only modes of `served`.
fn names_only(value: &str, served: &[StreamMode]) -> bool {
    StreamModeSelection::parse(value)
        .is_ok_and(|selection| selection.modes().iter().all(|mode| served.contains(mode)))
}

fn malformed_cursor() -> impl proptest::strategy::Strategy<Value = String> {
    prop_oneof![
        "-[1-9][0-9]{0,4}",
        "[0-9]{1,3}\\.[0-9]{1,2}",
        "[a-z]{1,8}",
        "\\+[0-9]{1,3}",
        "0x[0-9a-f]{1,4}",
        "[0-9]{1,2}e[0-9]",
        "[0-9]{1,3}[a-z]{1,2}",
        Just("NaN".to_string()),
    ]
}

fn well_formed_cursor() -> impl proptest::strategy::Strategy<Value = String> {
    prop_oneof![
        (0u64..64).prop_map(|n| n.to_string()),
        (1000u64..u32::MAX as u64).prop_map(|n| n.to_string()),
        Just(u64::MAX.to_string()),
        "[1-9][0-9]{20,30}",
    ]
}

fn safe_well_formed_cursor() -> impl proptest::strategy::Strategy<Value = String> {
    prop_oneof![
        (0u64..64).prop_map(|n| n.to_string()),
        (1000u64..u32::MAX as u64).prop_map(|n| n.to_string()),
        (u32::MAX as u64..=spec::openwop::MAX_FIFTEEN_DIGIT_CURSOR).prop_map(|n| n.to_string()),
        Just(spec::openwop::MAX_FIFTEEN_DIGIT_CURSOR.to_string()),
    ]
}

fn invalid_execution_request() -> impl proptest::strategy::Strategy<Value = Value> {
    let base =
        || json!({"ability": "text-generation", "input": [{"type": "text", "text": "hello"}]});
    prop_oneof![
        Just(json!({"input": [{"type": "text", "text": "x"}]})),
        Just(json!({"ability": "text-generation"})),
        Just(json!({"ability": "", "input": [{"type": "text", "text": "x"}]})),
        (257usize..400).prop_map(|n| json!({"ability": "a".repeat(n), "input": [{"type": "text", "text": "x"}]})),
        Just(json!({"ability": "text-generation", "input": []})),
        "[a-z_]{1,10}".prop_filter("not a known member", |k| ![
            "ability", "input", "requirements", "routing", "deadline_ms", "metadata", "extensions"
        ].contains(&k.as_str())).prop_map(move |k| {
            let mut v = base();
            v[k] = json!(1);
            v
        }),
        prop_oneof![Just(0i64), Just(-1), (86_400_001i64..100_000_000)].prop_map(move |d| {
            let mut v = base();
            v["deadline_ms"] = json!(d);
            v
        }),
        "[a-z]{1,8}".prop_filter("not a part type", |t| !["text", "json", "image", "audio", "video", "file"].contains(&t.as_str())).prop_map(
            |t| json!({"ability": "text-generation", "input": [{"type": t, "text": "x"}]})
        ),
        Just(json!({"ability": "text-generation", "input": [{"type": "image"}]})),
        Just(json!({"ability": "text-generation", "input": [{"type": "text", "text": "x"}], "metadata": {"k": {"nested": true}}})),
        (65usize..80).prop_map(|n| {
            let metadata: serde_json::Map<String, Value> = (0..n).map(|i| (format!("k{i}"), json!(i))).collect();
            json!({"ability": "text-generation", "input": [{"type": "text", "text": "x"}], "metadata": metadata})
        }),
        prop_oneof![Just(0u32), (33u32..100)].prop_map(|m| json!({"ability": "text-generation", "input": [{"type": "text", "text": "x"}], "routing": {"allow_fallback": true, "max_attempts": m}})),
        Just(json!({"ability": "text-generation", "input": [{"type": "text", "text": "x"}], "requirements": {"input_modalities": ["smell"]}})),
        Just(json!(["not", "an", "object"])),
        Just(json!("a string")),
    ]
    .prop_filter("must violate the published request schema", |v| {
        spec::schema::validate(spec::schema::Published::ExecutionRequest, v).is_err()
    })
}

fn fault_sequence() -> impl proptest::strategy::Strategy<Value = Value> {
    let fault = prop_oneof![
        Just(json!({"kind": "http_error", "error": "rate_limited", "retry_after_ms": 10})),
        Just(json!({"kind": "http_error", "error": "service_unavailable"})),
        Just(json!({"kind": "http_error", "error": "server_error"})),
        Just(json!({"kind": "http_error", "error": "overloaded"})),
        Just(json!({"kind": "connection_reset"})),
    ];
    // The faults, then one success: the whole call list of a provider role.
    proptest::collection::vec(fault, 0..4).prop_map(|mut calls| {
        calls.push(json!({"kind": "completion", "chunks": [{"kind": "text", "delta": "ok"}]}));
        Value::Array(calls)
    })
}

/// The outcome of running a `generate` step's steps for one value.
struct Attempt {
    failed: Vec<CheckOutcome>,
    error: Option<String>,
    /// Why its checks did not judge the host, if they did not: the first ERROR outcome (a step
    /// the case's budget cut, say), which leaves the input unjudged.
    unjudged: Option<String>,
}

impl Attempt {
    /// Why the input failed, if it did: the harness error, or the first failing check.
    fn why_failed(&self) -> Option<String> {
        self.error
            .as_ref()
            .map(|e| format!("harness error: {e}"))
            .or_else(|| self.failed.first().map(|c| c.message.clone()))
    }
}

fn seed_bytes(seed: u64, case_id: &str, step: &str) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    Sha256::digest(format!("{seed}/{case_id}/{step}").as_bytes()).into()
}

/// What a `generate` step needs from the runner of its case (the driver's `CaseRunner`
/// implements it; this module does not know the runner).
pub(crate) trait GenerateRunner: Sync {
    /// The seed of property-based generation.
    fn proptest_seed(&self) -> u64;
    /// Where committed counterexamples live (`cases/regressions`).
    fn regressions_dir(&self) -> &Option<std::path::PathBuf>;
    /// The stream modes the target serves (what a `valid_stream_mode` input may name).
    fn served_stream_modes(&self) -> Vec<StreamMode>;
    /// Re-registers the case's scripts that refer to a loop variable, under the current bindings.
    fn reregister_generated_scripts(&self, state: &mut CaseState<'_>) -> Result<(), String>;
    /// Runs `steps`, located under `base`.
    fn run_steps<'a>(
        &'a self,
        steps: &'a [Step],
        base: String,
        state: &'a mut CaseState<'_>,
    ) -> BoxFuture<'a, ()>;
}

/// Runs a `generate` step.
pub(crate) async fn run_generate(
    runner: &dyn GenerateRunner,
    spec: &GenerateSpec,
    name: &str,
    location: &str,
    state: &mut CaseState<'_>,
) {
    let served = runner.served_stream_modes();
    // A committed counterexample naming a mode the host does not serve is not one for it (a
    // valid `streamMode` the host does not serve is refused, as it must be).
    let regressions: Vec<Value> = load_regressions(runner.regressions_dir(), &state.case.id)
        .into_iter()
        .filter(|value| {
            spec.strategy != Strategy::ValidStreamMode
                || value.as_str().is_some_and(|v| names_only(v, &served))
        })
        .collect();
    let cases = spec.cases.unwrap_or(DEFAULT_CASES);
    let handle = tokio::runtime::Handle::current();
    let config = Config {
        cases,
        failure_persistence: None,
        max_shrink_iters: 64,
        ..Config::default()
    };
    let rng_seed = seed_bytes(runner.proptest_seed(), &state.case.id, name);
    state.generating = true;
    let mut tested = Tested::default();
    let mut minimal: Option<Failed> = None;
    // Committed counterexamples first.
    for value in regressions {
        let attempt = attempt(runner, spec, &value, location, state, false).await;
        if let Some(why) = attempt.why_failed() {
            minimal = Some(Failed { value, why });
            break;
        }
        if attempt.unjudged.is_some() {
            tested.stopped_by = attempt.unjudged;
            break;
        }
        tested.judged += 1;
    }
    if minimal.is_none() && !state.stopped && tested.stopped_by.is_none() {
        let shared = std::sync::Mutex::new((state, tested));
        // proptest drives the inputs synchronously: each input's HTTP steps run to completion
        // on this runtime (which must be multi-threaded) before the next one is generated.
        let outcome = tokio::task::block_in_place(|| {
            let strategy = strategy(spec.strategy, &served);
            let mut test_runner = TestRunner::new_with_rng(
                config,
                TestRng::from_seed(RngAlgorithm::ChaCha, &rng_seed),
            );
            test_runner.run(&strategy, |value| {
                let mut guard = shared.lock().unwrap_or_else(|p| p.into_inner());
                let (state, tested) = &mut *guard;
                // Once an input was not judged (the case's budget ran out), the rest are not
                // run: none would be.
                if tested.stopped_by.is_some() {
                    return Ok(());
                }
                let attempt =
                    handle.block_on(attempt(runner, spec, &value, location, state, false));
                if let Some(why) = attempt.why_failed() {
                    return Err(TestCaseError::fail(why));
                }
                match attempt.unjudged {
                    None => tested.judged += 1,
                    why => tested.stopped_by = why,
                }
                Ok(())
            })
        });
        let (state_back, tested) = shared.into_inner().unwrap_or_else(|p| p.into_inner());
        if let Err(TestError::Fail(why, value)) = outcome {
            minimal = Some(Failed {
                value,
                why: why.message().to_string(),
            });
        }
        return finish(runner, spec, name, location, state_back, minimal, tested).await;
    }
    finish(runner, spec, name, location, state, minimal, tested).await;
}

#[allow(clippy::too_many_arguments)]
async fn finish(
    runner: &dyn GenerateRunner,
    spec: &GenerateSpec,
    name: &str,
    location: &str,
    state: &mut CaseState<'_>,
    minimal: Option<Failed>,
    tested: Tested,
) {
    // The inputs are run; the replay below records one of them.
    state.generating = false;
    match minimal {
        // No input judged: nothing shows the property holds.
        None if tested.judged == 0 => state.checks.push(CheckOutcome {
            check: "generate".into(),
            location: location.to_string(),
            step: Some(name.to_string()),
            level: state.case.level,
            requirements: state.case.requirements.clone(),
            verdict: Verdict::Error,
            message: format!(
                "no generated input ({:?}) was judged: {}",
                spec.strategy,
                tested.stopped_by.as_deref().unwrap_or("none was generated")
            ),
            expected: Some("at least one generated input judged".into()),
            actual: tested.stopped_by.clone(),
        }),
        None => state.checks.push(CheckOutcome {
            check: "generate".into(),
            location: location.to_string(),
            step: Some(name.to_string()),
            level: state.case.level,
            requirements: state.case.requirements.clone(),
            verdict: Verdict::Pass,
            message: format!(
                "{} generated input(s) ({:?}) held every check{}",
                tested.judged,
                spec.strategy,
                match &tested.stopped_by {
                    Some(why) => format!("; the next was not judged and the rest not run ({why})"),
                    None => String::new(),
                }
            ),
            expected: None,
            actual: None,
        }),
        Some(Failed { value, why }) => {
            // Run the minimal input once more, recording its transcript and checks.
            let before = state.checks.len();
            let replay = attempt(runner, spec, &value, location, state, true).await;
            state.counterexample = Some(Counterexample {
                step: name.to_string(),
                strategy: format!("{:?}", spec.strategy),
                seed: runner.proptest_seed(),
                value: value.clone(),
            });
            if replay.failed.is_empty() && replay.error.is_none() {
                // A replay the case's budget (or anything else) kept from being judged did not
                // pass: the failure the search met stands, said as it was met.
                let unjudged = state.checks[before..]
                    .iter()
                    .any(|c| matches!(c.verdict, Verdict::Error | Verdict::Blocked));
                let message = if unjudged {
                    format!(
                        "the input {value} failed ({why}); its replay, recorded here, was not judged"
                    )
                } else {
                    format!(
                        "the input {value} failed once ({why}) but passed on replay (flaky host behaviour)"
                    )
                };
                state.checks.push(CheckOutcome {
                    check: "generate".into(),
                    location: location.to_string(),
                    step: Some(name.to_string()),
                    level: state.case.level,
                    requirements: state.case.requirements.clone(),
                    verdict: state.case.level.failure_verdict(),
                    message,
                    expected: Some("a deterministic verdict".into()),
                    actual: Some(value.to_string()),
                });
            }
        }
    }
}

/// How many of a `generate` step's inputs were judged, and why one was not, if one was not (the
/// inputs after it are not run).
#[derive(Debug, Default, Clone)]
struct Tested {
    judged: u32,
    /// Why an input was not judged, which stopped the generation (the case's budget ran out).
    stopped_by: Option<String>,
}

/// An input that failed, with why (the first failing check's message, or the harness error).
struct Failed {
    value: Value,
    why: String,
}

/// Runs the step's steps for one value in a scratch copy of the state; when `record` is set,
/// the transcript and outcomes are kept in the case's state.
async fn attempt(
    runner: &dyn GenerateRunner,
    spec: &GenerateSpec,
    value: &Value,
    location: &str,
    state: &mut CaseState<'_>,
    record: bool,
) -> Attempt {
    let saved_checks = state.checks.len();
    let saved_transcript = state.transcript.len();
    let saved_error = state.error.clone();
    state.scope.vars.insert(spec.var.clone(), value.clone());
    if let Err(error) = runner.reregister_generated_scripts(state) {
        state.scope.vars.remove(&spec.var);
        return Attempt {
            failed: Vec::new(),
            error: Some(error),
            unjudged: None,
        };
    }
    runner
        .run_steps(&spec.steps, format!("{location}/generate/steps"), state)
        .await;
    state.scope.vars.remove(&spec.var);
    let failed: Vec<CheckOutcome> = state.checks[saved_checks..]
        .iter()
        // INFO counts too: against the reference runtime a contract finding is a finding, and
        // the replay of the minimal input reports each outcome at its own level.
        .filter(|c| matches!(c.verdict, Verdict::Fail | Verdict::Warn | Verdict::Info))
        .cloned()
        .collect();
    let error = state.error.clone().filter(|_| state.error != saved_error);
    let unjudged = state.checks[saved_checks..]
        .iter()
        .find(|c| c.verdict == Verdict::Error)
        .map(|c| c.message.clone());
    if !record {
        state.checks.truncate(saved_checks);
        // Keep the first few inputs' transcripts for the report, not hundreds.
        if saved_transcript >= 6 {
            state.transcript.truncate(saved_transcript);
        }
        state.error = saved_error;
        state.stopped = false;
    }
    Attempt {
        failed,
        error,
        unjudged,
    }
}

fn load_regressions(dir: &Option<std::path::PathBuf>, case_id: &str) -> Vec<Value> {
    let Some(dir) = dir else { return Vec::new() };
    let path = dir.join(format!("{case_id}.json"));
    std::fs::read(&path)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
        .and_then(|doc| doc.get("values").and_then(Value::as_array).cloned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::strategy::ValueTree;

    fn sample(kind: Strategy, n: usize) -> Vec<Value> {
        let mut runner = TestRunner::new_with_rng(
            Config::default(),
            TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]),
        );
        let strategy = strategy(kind, &StreamMode::ALL);
        (0..n)
            .map(|_| strategy.new_tree(&mut runner).unwrap().current())
            .collect()
    }

    #[test]
    fn invalid_stream_modes_are_outside_the_pattern() {
        for value in sample(Strategy::InvalidStreamMode, 200) {
            assert!(
                spec::openwop::StreamModeSelection::parse(value.as_str().unwrap()).is_err(),
                "{value}"
            );
        }
    }

    #[test]
    fn valid_stream_modes_are_inside_the_pattern() {
        for value in sample(Strategy::ValidStreamMode, 200) {
            assert!(
                spec::openwop::StreamModeSelection::parse(value.as_str().unwrap()).is_ok(),
                "{value}"
            );
        }
    }

    #[test]
    fn valid_stream_modes_name_only_the_modes_the_host_serves() {
        let mut runner = TestRunner::new_with_rng(
            Config::default(),
            TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]),
        );
        let served = [StreamMode::Updates, StreamMode::Debug];
        let strategy = strategy(Strategy::ValidStreamMode, &served);
        let drawn: Vec<String> = (0..200)
            .map(|_| {
                let value = strategy.new_tree(&mut runner).unwrap().current();
                value.as_str().unwrap().to_string()
            })
            .collect();
        for value in &drawn {
            assert!(names_only(value, &served), "{value}");
        }
        // Both served modes are drawn, alone and mixed.
        assert!(drawn.iter().any(|v| v == "updates"));
        assert!(
            drawn
                .iter()
                .any(|v| v.contains("debug") && v.contains("updates"))
        );
        // A host listing `values` alone is asked for `values`: a missing `updates` is
        // w.stream-mode.updates-implemented's to judge, not this generator's.
        let values_only = super::strategy(Strategy::ValidStreamMode, &[StreamMode::Values]);
        for _ in 0..20 {
            let value = values_only.new_tree(&mut runner).unwrap().current();
            assert_eq!(value, "values");
        }
        // A host serving all four gets every kind of value, `values` and `messages` included.
        let every = sample(Strategy::ValidStreamMode, 200);
        assert!(every.iter().any(|v| v == "values"));
        assert!(
            every
                .iter()
                .any(|v| v.as_str().unwrap().contains("messages"))
        );
    }

    #[test]
    fn cursors() {
        for value in sample(Strategy::MalformedCursor, 200) {
            let text = value.as_str().unwrap();
            assert!(
                !text.is_empty() && !text.bytes().all(|b| b.is_ascii_digit()),
                "{text}"
            );
        }
        for value in sample(Strategy::WellFormedCursor, 200) {
            let text = value.as_str().unwrap();
            assert!(
                text.bytes().all(|b| b.is_ascii_digit()) && (text == "0" || !text.starts_with('0')),
                "{text}"
            );
        }
        for value in sample(Strategy::SafeWellFormedCursor, 200) {
            let cursor: u64 = value.as_str().unwrap().parse().unwrap();
            assert!(
                cursor <= spec::openwop::MAX_FIFTEEN_DIGIT_CURSOR,
                "{cursor}"
            );
        }
    }

    #[test]
    fn invalid_requests_violate_the_schema() {
        for value in sample(Strategy::InvalidExecutionRequest, 100) {
            assert!(
                spec::schema::validate(spec::schema::Published::ExecutionRequest, &value).is_err(),
                "{value}"
            );
        }
    }
}
