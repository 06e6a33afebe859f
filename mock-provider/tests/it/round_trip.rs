//! Property: arbitrary scripts, served over HTTP by both backends and decoded by the
//! independent parsers, come back as the script they came from (within what each wire format
//! can express).

use std::collections::{HashMap, VecDeque};

use mock_provider::{
    Artifact, AsyncJob, CallBehaviour, Chunk, Completion, FakeProviders, FinishReason, JobFailure,
    JobPhase, Script, Usage,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::Value;

use crate::decode::{self, Materialized};
use crate::sse;
use crate::support::{
    self, CANARY, anthropic_body, client, openai_body, responses_body, send, unique_id,
};

fn fragment() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9 \\n\\t\"\\\\{}\\[\\]:,é😀<>/]{0,10}"
}

fn json_scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i32>().prop_map(Value::from),
        any::<bool>().prop_map(Value::from),
        "[a-z é\"\\\\]{0,6}".prop_map(Value::from),
    ]
}

fn arguments() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::collection::btree_map("[a-z]{1,5}", json_scalar(), 0..4)
            .prop_map(|object| serde_json::to_string(&object).unwrap_or_default()),
        fragment(),
    ]
}

/// Splits `text` at the given char offsets.
fn split(text: &str, mut cuts: Vec<usize>) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    cuts.retain(|cut| *cut > 0 && *cut < chars.len());
    cuts.sort_unstable();
    cuts.dedup();
    let mut parts = Vec::new();
    let mut start = 0;
    for cut in cuts.into_iter().chain([chars.len()]) {
        parts.push(chars[start..cut].iter().collect());
        start = cut;
    }
    parts
}

fn finish_reason() -> impl Strategy<Value = FinishReason> {
    prop_oneof![
        Just(FinishReason::Stop),
        Just(FinishReason::Length),
        Just(FinishReason::ToolCalls),
        Just(FinishReason::ContentFilter),
    ]
}

fn usage() -> impl Strategy<Value = Usage> {
    (
        0u64..5000,
        0u64..5000,
        any::<u64>(),
        any::<u64>(),
        0u64..500,
    )
        .prop_map(|(input, output, read, write, reasoning)| {
            let cache_read = read % (input + 1);
            let cache_write = write % (input - cache_read + 1);
            Usage {
                input_tokens: input,
                output_tokens: output,
                cache_read_tokens: cache_read,
                cache_write_tokens: cache_write,
                reasoning_tokens: reasoning,
            }
        })
}

/// Interleaves text chunks and tool calls (each call's start before its fragments), then
/// numbers text outputs in order of first appearance.
fn build_chunks(
    texts: Vec<(u32, String)>,
    calls: Vec<(String, String, Vec<usize>)>,
    picks: Vec<u8>,
) -> Vec<Chunk> {
    let mut sequences: Vec<VecDeque<Chunk>> = vec![
        texts
            .into_iter()
            .map(|(output_index, delta)| Chunk::Text {
                output_index,
                delta,
            })
            .collect(),
    ];
    for (position, (name, arguments, cuts)) in calls.into_iter().enumerate() {
        let call_id = format!("call_{position}");
        let mut sequence = VecDeque::from([Chunk::ToolCallStart {
            call_id: call_id.clone(),
            name,
        }]);
        if !arguments.is_empty() {
            sequence.extend(split(&arguments, cuts).into_iter().map(|delta| {
                Chunk::ToolCallArguments {
                    call_id: call_id.clone(),
                    delta,
                }
            }));
        }
        sequences.push(sequence);
    }
    let mut picks = picks.into_iter();
    let mut chunks = Vec::new();
    loop {
        let open: Vec<usize> = (0..sequences.len())
            .filter(|index| !sequences[*index].is_empty())
            .collect();
        if open.is_empty() {
            break;
        }
        let pick = open[usize::from(picks.next().unwrap_or(0)) % open.len()];
        if let Some(chunk) = sequences[pick].pop_front() {
            chunks.push(chunk);
        }
    }
    let mut numbering: HashMap<u32, u32> = HashMap::new();
    for chunk in &mut chunks {
        if let Chunk::Text { output_index, .. } = chunk {
            let next = numbering.len() as u32;
            *output_index = *numbering.entry(*output_index).or_insert(next);
        }
    }
    chunks
}

fn completion() -> impl Strategy<Value = Completion> {
    (
        prop::collection::vec((0u32..3, fragment()), 0..6),
        prop::collection::vec(
            (
                "[a-z_]{1,8}",
                arguments(),
                prop::collection::vec(0usize..40, 0..4),
            ),
            0..3,
        ),
        prop::collection::vec(any::<u8>(), 0..40),
        finish_reason(),
        prop::option::of(usage()),
    )
        .prop_map(|(texts, calls, picks, finish_reason, usage)| Completion {
            chunks: build_chunks(texts, calls, picks),
            finish_reason,
            usage,
            model: None,
            timing: Default::default(),
            stream_fault: None,
        })
}

fn async_job() -> impl Strategy<Value = AsyncJob> {
    let phase = prop_oneof![
        (0u32..5).prop_map(|queue_position| JobPhase::InQueue { queue_position }),
        prop::collection::vec("[a-z 0-9%]{0,12}", 0..3)
            .prop_map(|logs| JobPhase::InProgress { logs }),
    ];
    let artifact =
        ("[a-z0-9]{1,8}", prop::option::of("image/(png|jpeg)")).prop_map(|(name, media_type)| {
            Artifact {
                uri: format!("https://cdn.example/{name}.png"),
                media_type,
            }
        });
    let failure =
        ("[A-Za-z ]{1,20}", "[a-z_]{1,12}").prop_map(|(message, error_type)| JobFailure {
            message,
            error_type,
        });
    (
        prop::collection::vec(phase, 0..4),
        prop::collection::btree_map("[a-h][a-z]{0,4}", json_scalar(), 0..4),
        prop::collection::vec(artifact, 0..3),
        prop::option::of(failure),
    )
        .prop_map(|(phases, result, artifacts, failure)| AsyncJob {
            phases,
            result: Value::Object(result.into_iter().collect()),
            artifacts,
            failure,
            timing: Default::default(),
        })
}

fn openai_usage_projection(usage: Option<Usage>) -> Option<Usage> {
    usage.map(|usage| Usage {
        cache_write_tokens: 0,
        ..usage
    })
}

fn anthropic_usage_projection(usage: Option<Usage>) -> Option<Usage> {
    Some(Usage {
        reasoning_tokens: 0,
        ..usage.unwrap_or_default()
    })
}

/// Responses has one `completed` state: it reads as `tool_calls` when a call was made.
fn responses_finish_projection(completion: &Completion) -> FinishReason {
    match completion.finish_reason {
        FinishReason::Stop | FinishReason::ToolCalls => {
            let called = completion
                .chunks
                .iter()
                .any(|chunk| matches!(chunk, Chunk::ToolCallStart { .. }));
            if called {
                FinishReason::ToolCalls
            } else {
                FinishReason::Stop
            }
        }
        other => other,
    }
}

fn expected_stream(completion: &Completion, usage: Option<Usage>) -> Completion {
    Completion {
        usage,
        ..completion.clone()
    }
}

async fn body_of(response: reqwest::Response) -> Result<Vec<u8>, TestCaseError> {
    prop_assert_eq!(response.status(), 200);
    let bytes = response
        .bytes()
        .await
        .map_err(|error| TestCaseError::fail(format!("body read failed: {error}")))?;
    Ok(bytes.to_vec())
}

async fn check_completion(
    providers: &FakeProviders,
    completion: &Completion,
) -> Result<(), TestCaseError> {
    let id = unique_id("round-trip");
    let three = vec![CallBehaviour::Completion(completion.clone()); 3];
    let two = vec![CallBehaviour::Completion(completion.clone()); 2];
    let script = Script {
        id: id.clone(),
        calls: [
            ("openai-primary".to_owned(), three.clone()),
            ("openai-timing".to_owned(), three),
            ("anthropic-secondary".to_owned(), two.clone()),
            ("anthropic-timing".to_owned(), two.clone()),
            ("openai-responses".to_owned(), two.clone()),
            ("responses-timing".to_owned(), two),
        ]
        .into_iter()
        .collect(),
    };
    providers
        .register(script)
        .map_err(|error| TestCaseError::fail(error.to_string()))?;
    for instance in ["openai-primary", "openai-timing"] {
        let with_usage = body_of(
            send(providers, instance, &openai_body(&id, true, true))
                .await
                .map_err(fail)?,
        )
        .await?;
        let decoded = decode::openai_stream(&sse::parse(&with_usage));
        prop_assert!(decoded.terminated && decoded.error.is_none() && decoded.malformed == 0);
        prop_assert_eq!(
            decoded.completion,
            expected_stream(completion, openai_usage_projection(completion.usage))
        );

        let without_usage = body_of(
            send(providers, instance, &openai_body(&id, true, false))
                .await
                .map_err(fail)?,
        )
        .await?;
        let decoded = decode::openai_stream(&sse::parse(&without_usage));
        prop_assert!(decoded.terminated);
        prop_assert_eq!(decoded.completion, expected_stream(completion, None));

        let json = body_of(
            send(providers, instance, &openai_body(&id, false, false))
                .await
                .map_err(fail)?,
        )
        .await?;
        let body: Value = serde_json::from_slice(&json).map_err(fail)?;
        prop_assert_eq!(
            decode::openai_json(&body),
            Materialized {
                usage: openai_usage_projection(completion.usage),
                ..decode::materialize(completion, false)
            }
        );
    }
    for instance in ["anthropic-secondary", "anthropic-timing"] {
        let stream = body_of(
            send(providers, instance, &anthropic_body(&id, true))
                .await
                .map_err(fail)?,
        )
        .await?;
        let decoded = decode::anthropic_stream(&sse::parse(&stream));
        prop_assert!(decoded.terminated && decoded.error.is_none() && decoded.malformed == 0);
        prop_assert_eq!(
            decoded.completion,
            expected_stream(completion, anthropic_usage_projection(completion.usage))
        );

        let json = body_of(
            send(providers, instance, &anthropic_body(&id, false))
                .await
                .map_err(fail)?,
        )
        .await?;
        let body: Value = serde_json::from_slice(&json).map_err(fail)?;
        prop_assert_eq!(
            decode::anthropic_json(&body),
            Materialized {
                usage: anthropic_usage_projection(completion.usage),
                ..decode::materialize(completion, true)
            }
        );
    }
    for instance in ["openai-responses", "responses-timing"] {
        let stream = body_of(
            send(providers, instance, &responses_body(&id, true))
                .await
                .map_err(fail)?,
        )
        .await?;
        let decoded = decode::responses_stream(&sse::parse(&stream));
        prop_assert!(decoded.terminated && decoded.error.is_none() && decoded.malformed == 0);
        prop_assert_eq!(
            decoded.completion,
            Completion {
                finish_reason: responses_finish_projection(completion),
                ..expected_stream(completion, openai_usage_projection(completion.usage))
            }
        );

        let json = body_of(
            send(providers, instance, &responses_body(&id, false))
                .await
                .map_err(fail)?,
        )
        .await?;
        let body: Value = serde_json::from_slice(&json).map_err(fail)?;
        prop_assert_eq!(
            decode::responses_json(&body),
            Materialized {
                usage: openai_usage_projection(completion.usage),
                finish: responses_finish_projection(completion),
                ..decode::materialize(completion, false)
            }
        );
    }
    providers.forget(&id);
    Ok(())
}

fn fail(error: impl std::fmt::Display) -> TestCaseError {
    TestCaseError::fail(error.to_string())
}

/// Submits the job, polls until `COMPLETED`, fetches the result, and rebuilds the job.
async fn served_job(
    providers: &FakeProviders,
    instance: &str,
    id: &str,
) -> Result<AsyncJob, TestCaseError> {
    let body = support::body_for(providers, instance, id, false);
    let submitted: Value = send(providers, instance, &body)
        .await
        .map_err(fail)?
        .json()
        .await
        .map_err(fail)?;
    let status_url = submitted["status_url"].as_str().unwrap_or("").to_owned();
    let response_url = submitted["response_url"].as_str().unwrap_or("").to_owned();
    let auth = format!("Key {CANARY}");
    let mut phases = Vec::new();
    let failure = loop {
        let response = client()
            .get(format!("{status_url}?logs=1"))
            .header("authorization", &auth)
            .send()
            .await
            .map_err(fail)?;
        let status = response.status().as_u16();
        let body: Value = response.json().await.map_err(fail)?;
        match decode::job_status(status, &body) {
            (Some(phase), _) => phases.push(phase),
            (None, failure) => break failure,
        }
        prop_assert!(phases.len() < 20, "the job never completes");
    };
    let result = client()
        .get(&response_url)
        .header("authorization", &auth)
        .send()
        .await
        .map_err(fail)?;
    let status = result.status().as_u16();
    let body: Value = result.json().await.map_err(fail)?;
    if let Some(failure) = &failure {
        prop_assert_eq!(status, 500);
        prop_assert_eq!(&body["detail"], &Value::from(failure.message.clone()));
        return Ok(decode::job(
            phases,
            Value::Null,
            Vec::new(),
            Some(failure.clone()),
        ));
    }
    prop_assert_eq!(status, 200);
    let (result, artifacts) = decode::job_result(&body);
    Ok(decode::job(phases, result, artifacts, None))
}

#[test]
fn arbitrary_completions_round_trip_through_every_encoder() {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let providers = runtime.block_on(support::start());
    let mut runner = TestRunner::new(Config {
        cases: 64,
        failure_persistence: None,
        ..Config::default()
    });
    let outcome = runner.run(&completion(), |completion| {
        runtime.block_on(check_completion(&providers, &completion))
    });
    if let Err(error) = outcome {
        panic!("{error}");
    }
}

#[test]
fn arbitrary_async_jobs_round_trip_through_the_queue() {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let providers = runtime.block_on(support::start());
    let mut runner = TestRunner::new(Config {
        cases: 48,
        failure_persistence: None,
        ..Config::default()
    });
    let outcome = runner.run(&async_job(), |job| {
        runtime.block_on(async {
            for instance in ["media", "media-timing"] {
                let id = unique_id("job-round-trip");
                providers
                    .register(Script {
                        id: id.clone(),
                        calls: [(
                            instance.to_owned(),
                            vec![CallBehaviour::AsyncJob(job.clone())],
                        )]
                        .into_iter()
                        .collect(),
                    })
                    .map_err(fail)?;
                let served = served_job(&providers, instance, &id).await?;
                let expected = if job.failure.is_some() {
                    decode::job(
                        job.phases.clone(),
                        Value::Null,
                        Vec::new(),
                        job.failure.clone(),
                    )
                } else {
                    job.clone()
                };
                prop_assert_eq!(served, expected);
            }
            Ok::<(), TestCaseError>(())
        })
    });
    if let Err(error) = outcome {
        panic!("{error}");
    }
}
