//! The `envelope-program` mock provider: `configurable.ai.mockProvider = {id:
//! "envelope-program", config}`. Its program travels with the run (never global state keyed by
//! node id), so runs are independent and cases run in parallel. Every provider call of the
//! run's `core.ai.structuredOutput` nodes (every attempt, turn and dispatch, across nodes, in
//! execution order) plays the next attempt; a call past the end of the program fails the node
//! with `internal_error`.
//!
//! `config` (closed):
//!
//! | member | meaning |
//! |---|---|
//! | `attempts` | 1–64 attempts, in call order (below) |
//! | `provider` | the provider id reported in `provider.usage` and `envelope.*` (default `mock`; `^[a-z][a-z0-9._-]*$`) |
//! | `model` | the model reported (default `mock-envelope`) |
//!
//! An attempt (closed) has exactly one output member:
//!
//! | member | the model emitted |
//! |---|---|
//! | `envelope` | one AI envelope object (sent as its JSON text) |
//! | `chunks` | 1–256 envelope objects: the chunks of one partial emission (E1) |
//! | `text` | raw text: invalid JSON, prose around JSON, a Markdown fence (lenient recovery) |
//! | `refusal` | a refusal `{refusalText?: string\|null, safetyCategory?: string\|null}` |
//!
//! and optionally `stopReason` (`stop`, the default: a clean stop; `max_tokens` or `length`: the
//! output was truncated, whatever it holds) and `usage` `{inputTokens, outputTokens}` (defaults:
//! 0 and a quarter of the output's bytes, rounded up).
//!
//! Run options the mock honours: `configurable.ai.maxRefusals` (1–16, default 1: the ceiling on
//! `envelope.refusal` events per run) and `configurable.ai.maxTokens` (the first attempt's output
//! budget).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::Deserialize;
use serde_json::{Map, Value};
use spec::openwop::AiOptions;

use crate::openwop::engine::ai::call::TokenUsage;

/// The mock id.
pub(crate) const ENVELOPE_PROGRAM_ID: &str = "envelope-program";

/// The most attempts one program holds.
pub(crate) const MAX_ATTEMPTS: usize = 64;
const MAX_CHUNKS: usize = 256;
const MAX_REFUSALS: u32 = 16;

/// What one attempt emitted.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Output {
    /// Text (a whole envelope's JSON, or raw text).
    Text(String),
    /// The chunks of one partial emission.
    Chunks(Vec<Value>),
    /// A refusal.
    Refusal {
        text: Option<String>,
        category: Option<String>,
    },
}

/// One programmed provider call.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Attempt {
    /// What the model emitted.
    pub(crate) output: Output,
    /// `Some(stopReason)` when the output was truncated (no clean stop).
    pub(crate) truncated: Option<String>,
    /// The call's token counts.
    pub(crate) usage: TokenUsage,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProgramConfig {
    attempts: Vec<AttemptConfig>,
    #[serde(default)]
    provider: Option<String>,
    #[serde(default)]
    model: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct AttemptConfig {
    #[serde(default)]
    envelope: Option<Map<String, Value>>,
    #[serde(default)]
    chunks: Option<Vec<Map<String, Value>>>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    refusal: Option<RefusalConfig>,
    #[serde(default)]
    stop_reason: Option<String>,
    #[serde(default)]
    usage: Option<UsageConfig>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RefusalConfig {
    #[serde(default)]
    refusal_text: Option<String>,
    #[serde(default)]
    safety_category: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct UsageConfig {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
}

/// The run's envelope program and the run options it honours.
#[derive(Debug, Clone)]
pub(crate) struct EnvelopePlan {
    attempts: Arc<[Attempt]>,
    cursor: Arc<AtomicUsize>,
    /// What a call past the end of the program plays: nothing (the node fails
    /// `internal_error`), or, for upstream's mock, an empty completion with a clean stop.
    past_end: Option<Attempt>,
    /// `provider.usage.provider`.
    pub(crate) provider: String,
    /// `provider.usage.model`.
    pub(crate) model: String,
    /// `configurable.ai.maxRefusals` (default 1).
    pub(crate) max_refusals: u32,
    /// `configurable.ai.maxTokens`.
    pub(crate) max_tokens: Option<u32>,
}

fn is_provider_id(value: &str) -> bool {
    value.starts_with(|c: char| c.is_ascii_lowercase())
        && value
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b))
}

impl EnvelopePlan {
    /// Validates the mock's config and the run options. Errors name the member, never its
    /// value.
    pub(crate) fn parse(config: &Map<String, Value>, ai: &AiOptions) -> Result<Self, String> {
        let prefix = "configurable.ai.mockProvider.config";
        let parsed: ProgramConfig = serde_json::from_value(Value::Object(config.clone()))
            .map_err(|_| format!("{prefix} does not fit the envelope-program mock (closed: attempts, provider, model)"))?;
        if parsed.attempts.is_empty() || parsed.attempts.len() > MAX_ATTEMPTS {
            return Err(format!(
                "{prefix}.attempts must hold 1..={MAX_ATTEMPTS} attempts"
            ));
        }
        let provider = parsed.provider.unwrap_or_else(|| "mock".to_string());
        if !is_provider_id(&provider) {
            return Err(format!("{prefix}.provider must match ^[a-z][a-z0-9._-]*$"));
        }
        let model = parsed
            .model
            .filter(|m| !m.is_empty())
            .unwrap_or_else(|| "mock-envelope".to_string());
        let attempts = parsed
            .attempts
            .into_iter()
            .enumerate()
            .map(|(i, a)| attempt(a).map_err(|what| format!("{prefix}.attempts[{i}]: {what}")))
            .collect::<Result<Vec<_>, _>>()?;
        let max_refusals = ai.max_refusals.unwrap_or(1);
        if !(1..=MAX_REFUSALS).contains(&max_refusals) {
            return Err(format!(
                "configurable.ai.maxRefusals must be 1..={MAX_REFUSALS}"
            ));
        }
        if ai.max_tokens == Some(0) {
            return Err("configurable.ai.maxTokens must be at least 1".to_string());
        }
        Ok(EnvelopePlan {
            attempts: attempts.into(),
            cursor: Arc::new(AtomicUsize::new(0)),
            past_end: None,
            provider,
            model,
            max_refusals,
            max_tokens: ai.max_tokens,
        })
    }

    /// The plan of a node of upstream's envelope fixtures (`config.provider: "mock"`), from the
    /// program posted to upstream's mock-AI program seam (`seam_program`): each upstream
    /// `MockBehavior` is one attempt (`refusalText` or `stopReason: safety`: a refusal;
    /// otherwise `content`, empty by default, with `max_tokens`/`length` read as truncation),
    /// reported as provider `mock` and the node's model (default `mock-mini`). A call past the
    /// end of the program gets an empty completion with a clean stop, as upstream's mock answers
    /// it. An entry upstream's mock would not take fails with the index of the entry, never its
    /// value.
    pub(crate) fn from_upstream_program(
        program: &[Map<String, Value>],
        model: Option<&str>,
        ai: &AiOptions,
    ) -> Result<Self, String> {
        let attempts = program
            .iter()
            .enumerate()
            .map(|(i, entry)| {
                upstream_attempt(entry).map_err(|what| format!("mock-AI program entry {i}: {what}"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(EnvelopePlan {
            attempts: attempts.into(),
            cursor: Arc::new(AtomicUsize::new(0)),
            past_end: Some(upstream_attempt(&Map::new()).expect("an empty entry is upstream's")),
            provider: "mock".to_string(),
            model: model
                .filter(|m| !m.is_empty())
                .unwrap_or("mock-mini")
                .to_string(),
            max_refusals: ai.max_refusals.unwrap_or(1).clamp(1, MAX_REFUSALS),
            max_tokens: ai.max_tokens.filter(|t| *t > 0),
        })
    }

    /// The next programmed call; past the end of the program, `None` or upstream's empty
    /// completion.
    pub(crate) fn next_attempt(&self) -> Option<Attempt> {
        let index = self.cursor.fetch_add(1, Ordering::SeqCst);
        self.attempts.get(index).or(self.past_end.as_ref()).cloned()
    }
}

/// One upstream `MockBehavior` as an attempt.
fn upstream_attempt(entry: &Map<String, Value>) -> Result<Attempt, &'static str> {
    let text = |name: &str| -> Result<Option<String>, &'static str> {
        match entry.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err("content, refusalText and stopReason must be strings"),
        }
    };
    let tokens = |name: &str, default: u64| -> Result<u64, &'static str> {
        match entry.get(name) {
            None | Some(Value::Null) => Ok(default),
            Some(v) => v
                .as_u64()
                .ok_or("inputTokens and outputTokens must be integers >= 0"),
        }
    };
    let stop_reason = text("stopReason")?;
    let refusal_text = text("refusalText")?;
    let content = text("content")?;
    let refused = refusal_text.is_some() || stop_reason.as_deref() == Some("safety");
    let truncated = match stop_reason.as_deref() {
        None | Some("end_turn" | "stop_sequence" | "safety") => None,
        Some(reason @ ("max_tokens" | "length")) => Some(reason.to_string()),
        Some(_) => {
            return Err("stopReason must be end_turn, max_tokens, length, stop_sequence or safety");
        }
    };
    let output = if refused {
        Output::Refusal {
            text: refusal_text,
            category: None,
        }
    } else {
        Output::Text(content.unwrap_or_default())
    };
    let input = tokens("inputTokens", 100)?;
    let output_tokens = tokens("outputTokens", 50)?;
    Ok(Attempt {
        output,
        truncated: if refused { None } else { truncated },
        usage: TokenUsage {
            input,
            output: output_tokens,
            total: input.saturating_add(output_tokens),
        },
    })
}

fn attempt(config: AttemptConfig) -> Result<Attempt, &'static str> {
    let outputs = [
        config.envelope.is_some(),
        config.chunks.is_some(),
        config.text.is_some(),
        config.refusal.is_some(),
    ];
    if outputs.iter().filter(|set| **set).count() != 1 {
        return Err("exactly one of envelope, chunks, text, refusal");
    }
    let output = if let Some(envelope) = config.envelope {
        Output::Text(Value::Object(envelope).to_string())
    } else if let Some(chunks) = config.chunks {
        if chunks.is_empty() || chunks.len() > MAX_CHUNKS {
            return Err("chunks must hold 1..=256 envelope objects");
        }
        Output::Chunks(chunks.into_iter().map(Value::Object).collect())
    } else if let Some(text) = config.text {
        Output::Text(text)
    } else {
        let refusal = config.refusal.unwrap_or_default();
        Output::Refusal {
            text: refusal.refusal_text,
            category: refusal.safety_category,
        }
    };
    let truncated = match config.stop_reason.as_deref() {
        None | Some("stop") => None,
        Some(reason @ ("max_tokens" | "length")) => Some(reason.to_string()),
        Some(_) => return Err("stopReason must be stop, max_tokens or length"),
    };
    let emitted_bytes = match &output {
        Output::Text(text) => text.len(),
        Output::Chunks(chunks) => chunks.iter().map(|c| c.to_string().len()).sum(),
        Output::Refusal { text, .. } => text.as_ref().map_or(0, String::len),
    };
    let input = config
        .usage
        .as_ref()
        .and_then(|u| u.input_tokens)
        .unwrap_or(0);
    let output_tokens = config
        .usage
        .as_ref()
        .and_then(|u| u.output_tokens)
        .unwrap_or(emitted_bytes.div_ceil(4) as u64);
    Ok(Attempt {
        output,
        truncated,
        usage: TokenUsage {
            input,
            output: output_tokens,
            total: input.saturating_add(output_tokens),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn config(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap()
    }

    #[test]
    fn programs_are_validated_and_played_in_order() {
        let ai = AiOptions::default();
        let plan = EnvelopePlan::parse(
            &config(json!({"attempts": [
                {"text": "not json", "usage": {"outputTokens": 7}},
                {"refusal": {"refusalText": "no"}},
                {"envelope": {"type": "x"}, "stopReason": "max_tokens"}
            ]})),
            &ai,
        )
        .unwrap();
        assert_eq!(plan.max_refusals, 1);
        let first = plan.next_attempt().unwrap();
        assert_eq!(first.output, Output::Text("not json".into()));
        assert_eq!(first.usage.output, 7);
        assert!(matches!(
            plan.next_attempt().unwrap().output,
            Output::Refusal { .. }
        ));
        assert_eq!(
            plan.next_attempt().unwrap().truncated.as_deref(),
            Some("max_tokens")
        );
        assert!(plan.next_attempt().is_none());
        for bad in [
            json!({"attempts": []}),
            json!({"attempts": [{}]}),
            json!({"attempts": [{"text": "a", "envelope": {}}]}),
            json!({"attempts": [{"text": "a", "stopReason": "done"}]}),
            json!({"attempts": [{"text": "a"}], "provider": "Mock"}),
            json!({"attempts": [{"text": "a"}], "extra": 1}),
        ] {
            assert!(
                EnvelopePlan::parse(&config(bad.clone()), &ai).is_err(),
                "{bad}"
            );
        }
        let zero = AiOptions {
            max_refusals: Some(0),
            ..AiOptions::default()
        };
        assert!(EnvelopePlan::parse(&config(json!({"attempts": [{"text": "a"}]})), &zero).is_err());
    }

    #[test]
    fn upstream_programs_are_read_as_upstream_s_mock_plays_them() {
        let ai = AiOptions::default();
        let program: Vec<Map<String, Value>> = [
            json!({"stopReason": "safety", "refusalText": "no"}),
            json!({"content": "{\"valid\":true}", "stopReason": "max_tokens"}),
            json!({}),
        ]
        .into_iter()
        .map(config)
        .collect();
        let plan = EnvelopePlan::from_upstream_program(&program, None, &ai).unwrap();
        assert_eq!(
            (plan.provider.as_str(), plan.model.as_str()),
            ("mock", "mock-mini")
        );
        let refusal = plan.next_attempt().unwrap();
        assert_eq!(
            refusal.output,
            Output::Refusal {
                text: Some("no".into()),
                category: None
            }
        );
        assert_eq!((refusal.usage.input, refusal.usage.output), (100, 50));
        let truncated = plan.next_attempt().unwrap();
        assert_eq!(truncated.truncated.as_deref(), Some("max_tokens"));
        assert_eq!(
            plan.next_attempt().unwrap().output,
            Output::Text(String::new())
        );
        // Past the end, upstream's mock answers an empty completion with a clean stop.
        let past_end = plan.next_attempt().unwrap();
        assert_eq!(past_end.output, Output::Text(String::new()));
        assert_eq!(past_end.truncated, None);
        for bad in [
            json!({"stopReason": "done"}),
            json!({"content": 1}),
            json!({"outputTokens": -1}),
        ] {
            assert!(
                EnvelopePlan::from_upstream_program(&[config(bad.clone())], None, &ai).is_err(),
                "{bad}"
            );
        }
    }
}
