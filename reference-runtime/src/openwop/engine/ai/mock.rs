//! Per-run mock providers: `configurable.ai.mockProvider = {id, config}`. The program travels
//! with the run (never global state keyed by node id), so runs are independent and cases can
//! run in parallel. Delays run on the tokio clock.
//!
//! | id | config (all optional, camelCase, closed) |
//! |---|---|
//! | `stream-text` | `tokens[]` (default `["Hello", " ", "world", "!"]`), `delayMsPerToken` 0–5000, `finishReason` (stop \| length \| tool_calls \| content_filter; default stop), `usage {promptTokens, completionTokens, totalTokens}`, `model` |
//! | `tool-calls` | `toolCalls[] {id, name, arguments}` (arguments a JSON string or any JSON value, sent as its text; default one `lookup` call), `tokens[]` (default none), `delayMsPerToken`, `finishReason` (default tool_calls), `usage`, `model` |
//! | `error` | `code` (a registered or vendor code; default internal_error), `message`, `retryable` (default false), `failAfterMs` 0–60000, `usage`, `model` |
//! | `usage-only` | `usage`, `model`, `finishReason` — one empty chunk carrying `meta.usage` |
//!
//! Usage defaults: `promptTokens` 0, `completionTokens` the number of tokens, `totalTokens`
//! their sum. The provider id in `provider.usage` is `mock`; the model defaults to
//! `mock-<id>`.

use std::time::Duration;

use futures::StreamExt;
use futures::stream::BoxStream;
use serde::Deserialize;
use serde_json::{Map, Value};
use spec::openwop::payloads::{ChunkToolCall, ChunkUsage};

use super::call::{CallEnd, CallEvent, CallFailure, CallTarget, TokenUsage};

/// The mock ids this host serves (advertised as `testing.mockProviders`).
pub(crate) const MOCK_PROVIDER_IDS: [&str; 4] =
    ["stream-text", "tool-calls", "error", "usage-only"];

const FINISH_REASONS: [&str; 4] = ["stop", "length", "tool_calls", "content_filter"];
const MAX_DELAY_PER_TOKEN_MS: u64 = 5_000;
const MAX_FAIL_AFTER_MS: u64 = 60_000;
const MAX_TOKENS: usize = 10_000;

/// A validated mock program.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MockProgram {
    model: String,
    tokens: Vec<String>,
    delay_per_token: Duration,
    outcome: Outcome,
}

#[derive(Debug, Clone, PartialEq)]
enum Outcome {
    Done {
        finish_reason: String,
        usage: TokenUsage,
        tool_calls: Vec<ChunkToolCall>,
    },
    Fail {
        after: Duration,
        failure: CallFailure,
    },
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
struct MockConfig {
    tokens: Option<Vec<String>>,
    delay_ms_per_token: Option<u64>,
    finish_reason: Option<String>,
    usage: Option<ChunkUsage>,
    model: Option<String>,
    tool_calls: Option<Vec<ToolCallConfig>>,
    code: Option<String>,
    message: Option<String>,
    retryable: Option<bool>,
    fail_after_ms: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolCallConfig {
    id: String,
    name: String,
    #[serde(default)]
    arguments: Value,
}

/// Which config members each mock accepts.
fn allowed_members(id: &str) -> &'static [&'static str] {
    match id {
        "stream-text" => &[
            "tokens",
            "delayMsPerToken",
            "finishReason",
            "usage",
            "model",
        ],
        "tool-calls" => &[
            "tokens",
            "delayMsPerToken",
            "finishReason",
            "usage",
            "model",
            "toolCalls",
        ],
        "error" => &[
            "code",
            "message",
            "retryable",
            "failAfterMs",
            "usage",
            "model",
        ],
        _ => &["usage", "model", "finishReason"],
    }
}

impl MockProgram {
    /// Validates `{id, config}`. Errors name the offending member, never its value.
    pub(crate) fn parse(id: &str, config: &Map<String, Value>) -> Result<Self, String> {
        let id = MOCK_PROVIDER_IDS
            .into_iter()
            .find(|known| *known == id)
            .ok_or_else(|| {
                "configurable.ai.mockProvider.id is not a mock this host serves".to_string()
            })?;
        if let Some(member) = config
            .keys()
            .find(|k| !allowed_members(id).contains(&k.as_str()))
        {
            return Err(format!(
                "configurable.ai.mockProvider.config.{member} is not a member of the {id} mock"
            ));
        }
        let parsed: MockConfig =
            serde_json::from_value(Value::Object(config.clone())).map_err(|_| {
                format!("configurable.ai.mockProvider.config does not fit the {id} mock")
            })?;
        let delay = parsed.delay_ms_per_token.unwrap_or(0);
        if delay > MAX_DELAY_PER_TOKEN_MS {
            return Err(format!(
                "configurable.ai.mockProvider.config.delayMsPerToken must be 0..={MAX_DELAY_PER_TOKEN_MS}"
            ));
        }
        if let Some(reason) = &parsed.finish_reason
            && !FINISH_REASONS.contains(&reason.as_str())
        {
            return Err(
                "configurable.ai.mockProvider.config.finishReason must be stop, length, tool_calls or content_filter"
                    .to_string(),
            );
        }
        let tokens = match id {
            "stream-text" => parsed
                .tokens
                .unwrap_or_else(|| ["Hello", " ", "world", "!"].map(String::from).to_vec()),
            "tool-calls" => parsed.tokens.unwrap_or_default(),
            _ => Vec::new(),
        };
        if tokens.len() > MAX_TOKENS {
            return Err(format!(
                "configurable.ai.mockProvider.config.tokens has more than {MAX_TOKENS} entries"
            ));
        }
        let usage = usage_from(parsed.usage.as_ref(), tokens.len() as u64);
        let model = parsed.model.unwrap_or_else(|| format!("mock-{id}"));
        let outcome = match id {
            "error" => {
                let code = parsed.code.unwrap_or_else(|| "internal_error".to_string());
                if !is_error_code(&code) {
                    return Err(
                        "configurable.ai.mockProvider.config.code must be a registered or vendor error code"
                            .to_string(),
                    );
                }
                let after = parsed.fail_after_ms.unwrap_or(0);
                if after > MAX_FAIL_AFTER_MS {
                    return Err(format!(
                        "configurable.ai.mockProvider.config.failAfterMs must be 0..={MAX_FAIL_AFTER_MS}"
                    ));
                }
                Outcome::Fail {
                    after: Duration::from_millis(after),
                    failure: CallFailure {
                        code,
                        message: parsed.message.filter(|m| !m.is_empty()).unwrap_or_else(|| {
                            "the mock provider failed as programmed".to_string()
                        }),
                        retryable: parsed.retryable.unwrap_or(false),
                        usage,
                    },
                }
            }
            _ => {
                let tool_calls = if id == "tool-calls" {
                    parsed
                        .tool_calls
                        .unwrap_or_else(|| {
                            vec![ToolCallConfig {
                                id: "call-1".into(),
                                name: "lookup".into(),
                                arguments: serde_json::json!({"query": "conformance"}),
                            }]
                        })
                        .into_iter()
                        .map(|c| ChunkToolCall {
                            id: c.id,
                            name: c.name,
                            arguments: match c.arguments {
                                Value::String(text) => text,
                                Value::Null => "{}".to_string(),
                                other => other.to_string(),
                            },
                        })
                        .collect()
                } else {
                    Vec::new()
                };
                let default_reason = if id == "tool-calls" {
                    "tool_calls"
                } else {
                    "stop"
                };
                Outcome::Done {
                    finish_reason: parsed
                        .finish_reason
                        .unwrap_or_else(|| default_reason.to_string()),
                    usage,
                    tool_calls,
                }
            }
        };
        Ok(MockProgram {
            model,
            tokens,
            delay_per_token: Duration::from_millis(delay),
            outcome,
        })
    }

    /// Plays the program.
    pub(crate) fn start(&self) -> (CallTarget, BoxStream<'static, CallEvent>) {
        let target = CallTarget {
            provider: "mock".to_string(),
            model: self.model.clone(),
        };
        let program = self.clone();
        let events = async_stream::stream! {
            for token in program.tokens {
                if !program.delay_per_token.is_zero() {
                    tokio::time::sleep(program.delay_per_token).await;
                }
                yield CallEvent::Delta(token);
            }
            match program.outcome {
                Outcome::Done { finish_reason, usage, tool_calls } => {
                    yield CallEvent::Done(CallEnd { finish_reason, usage, tool_calls });
                }
                Outcome::Fail { after, failure } => {
                    if !after.is_zero() {
                        tokio::time::sleep(after).await;
                    }
                    yield CallEvent::Failed(failure);
                }
            }
        };
        (target, events.boxed())
    }
}

fn usage_from(usage: Option<&ChunkUsage>, tokens: u64) -> TokenUsage {
    let input = usage.and_then(|u| u.prompt_tokens).unwrap_or(0);
    let output = usage.and_then(|u| u.completion_tokens).unwrap_or(tokens);
    let total = usage
        .and_then(|u| u.total_tokens)
        .unwrap_or(input.saturating_add(output));
    TokenUsage {
        input,
        output,
        total,
    }
}

fn is_error_code(code: &str) -> bool {
    let registry = spec::registry::error_codes();
    registry.openwop_code(code).is_some() || is_vendor_code(code)
}

/// A vendor error code `<org>.<name>` (`^(?!openwop\.)[a-z][a-z0-9-]*\.[a-z][a-z0-9_]*$`)
/// whose org is registered.
fn is_vendor_code(code: &str) -> bool {
    let Some((org, name)) = code.split_once('.') else {
        return false;
    };
    let org_ok = !org.is_empty()
        && org != "openwop"
        && org.starts_with(|c: char| c.is_ascii_lowercase())
        && org
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    let name_ok = name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    org_ok && name_ok && spec::registry::orgs().is_registered(org)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn config(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap()
    }

    #[test]
    fn unknown_ids_members_and_ranges_are_refused() {
        assert!(MockProgram::parse("nope", &Map::new()).is_err());
        assert!(MockProgram::parse("stream-text", &config(json!({"bogus": 1}))).is_err());
        assert!(
            MockProgram::parse("stream-text", &config(json!({"delayMsPerToken": 5001}))).is_err()
        );
        assert!(
            MockProgram::parse("stream-text", &config(json!({"finishReason": "done"}))).is_err()
        );
        assert!(MockProgram::parse("error", &config(json!({"code": "not a code"}))).is_err());
        assert!(
            MockProgram::parse("error", &config(json!({"code": "example.mock_failed"}))).is_ok()
        );
        assert!(MockProgram::parse("error", &config(json!({"code": "acme.mock_failed"}))).is_err());
        for id in MOCK_PROVIDER_IDS {
            assert!(MockProgram::parse(id, &Map::new()).is_ok(), "{id}");
        }
    }

    #[tokio::test]
    async fn stream_text_plays_its_tokens_then_completes() {
        let program = MockProgram::parse(
            "stream-text",
            &config(json!({"tokens": ["a", "b"], "usage": {"promptTokens": 5}})),
        )
        .unwrap();
        let (target, events) = program.start();
        assert_eq!(target.provider, "mock");
        let events: Vec<CallEvent> = events.collect().await;
        assert_eq!(events[0], CallEvent::Delta("a".into()));
        assert_eq!(events[1], CallEvent::Delta("b".into()));
        let CallEvent::Done(end) = &events[2] else {
            panic!("not done: {events:?}")
        };
        assert_eq!(
            end.usage,
            TokenUsage {
                input: 5,
                output: 2,
                total: 7
            }
        );
    }
}
