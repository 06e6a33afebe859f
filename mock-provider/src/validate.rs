//! Checks a [`Script`] against the instances it names before it is served.

use std::collections::HashSet;

use crate::config::{Backend, ProviderKind};
use crate::script::{AsyncJob, CallBehaviour, Chunk, Completion, Script};

/// Why a script cannot be served.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ScriptError {
    /// The id has characters outside `A-Z a-z 0-9 . _ ~ -` or a bad length.
    #[error("script id `{id}` must be 1-200 characters from A-Z a-z 0-9 . _ ~ -")]
    InvalidId {
        /// The offending id.
        id: String,
    },
    /// The script names an instance the server does not serve.
    #[error("script `{script_id}` names unknown provider instance `{instance}`")]
    UnknownInstance {
        /// Script id.
        script_id: String,
        /// The unknown instance name.
        instance: String,
    },
    /// One call behaviour is invalid.
    #[error("script `{script_id}`, instance `{instance}`, call {call}: {problem}")]
    InvalidCall {
        /// Script id.
        script_id: String,
        /// Instance name.
        instance: String,
        /// 1-based call number.
        call: usize,
        /// What is wrong, as a lowercase sentence fragment.
        problem: String,
    },
}

/// Returns true when `id` may be used as a script id.
pub(crate) fn script_id_is_valid(id: &str) -> bool {
    (1..=200).contains(&id.len())
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '~' | '-'))
}

/// Validates `script`; `instance` looks up the kind and backend of an instance name.
pub(crate) fn validate_script(
    script: &Script,
    instance: impl Fn(&str) -> Option<(ProviderKind, Backend)>,
) -> Result<(), ScriptError> {
    if !script_id_is_valid(&script.id) {
        return Err(ScriptError::InvalidId {
            id: script.id.clone(),
        });
    }
    for (key, behaviours) in &script.calls {
        let (instance_name, model) = crate::script::split_call_key(key);
        if model == Some("") {
            return Err(ScriptError::UnknownInstance {
                script_id: script.id.clone(),
                instance: key.clone(),
            });
        }
        let Some((kind, backend)) = instance(instance_name) else {
            return Err(ScriptError::UnknownInstance {
                script_id: script.id.clone(),
                instance: key.clone(),
            });
        };
        for (position, behaviour) in behaviours.iter().enumerate() {
            if let Err(problem) = check_behaviour(behaviour, kind, backend) {
                return Err(ScriptError::InvalidCall {
                    script_id: script.id.clone(),
                    instance: key.clone(),
                    call: position + 1,
                    problem,
                });
            }
        }
    }
    Ok(())
}

fn check_behaviour(
    behaviour: &CallBehaviour,
    kind: ProviderKind,
    backend: Backend,
) -> Result<(), String> {
    let streaming = backend == Backend::Streaming;
    match behaviour {
        CallBehaviour::Completion(completion) => {
            if kind == ProviderKind::AsyncMedia {
                return Err(
                    "a `completion` needs an openai-chat, openai-responses or anthropic-messages instance, \
                            not async-media"
                        .into(),
                );
            }
            check_completion(completion, streaming)
        }
        CallBehaviour::AsyncJob(job) => {
            if kind != ProviderKind::AsyncMedia {
                return Err(format!(
                    "an `async_job` needs an async-media instance, not {kind}"
                ));
            }
            check_async_job(job, streaming)
        }
        CallBehaviour::HttpError(error) => {
            if error.timing.delay_between_frames_ms > 0 {
                return Err(
                    "`delay_between_frames_ms` is not allowed on an `http_error` \
                            (its body is one frame)"
                        .into(),
                );
            }
            require_streaming(error.timing.needs_streaming_backend(), streaming, "timing")
        }
        CallBehaviour::ConnectionReset(reset) => require_streaming(
            reset.delay_before_reset_ms > 0,
            streaming,
            "`delay_before_reset_ms`",
        ),
    }
}

fn require_streaming(needed: bool, streaming: bool, what: &str) -> Result<(), String> {
    if needed && !streaming {
        Err(format!(
            "{what} needs an instance served by the streaming backend (this one is on wiremock)"
        ))
    } else {
        Ok(())
    }
}

fn check_completion(completion: &Completion, streaming: bool) -> Result<(), String> {
    require_streaming(
        completion.timing.needs_streaming_backend(),
        streaming,
        "timing",
    )?;
    if let Some(fault) = &completion.stream_fault {
        require_streaming(
            fault.needs_streaming_backend(),
            streaming,
            "a `cut` or `stall` stream fault",
        )?;
    }
    let mut started = HashSet::new();
    for (position, chunk) in completion.chunks.iter().enumerate() {
        match chunk {
            Chunk::Text { output_index, .. } => {
                if *output_index > 63 {
                    return Err(format!("chunk {position}: output_index above 63"));
                }
            }
            Chunk::ToolCallStart { call_id, name } => {
                if call_id.is_empty() || name.is_empty() {
                    return Err(format!(
                        "chunk {position}: tool call id and name must not be empty"
                    ));
                }
                if !started.insert(call_id.as_str()) {
                    return Err(format!(
                        "chunk {position}: tool call `{call_id}` is started twice"
                    ));
                }
            }
            Chunk::ToolCallArguments { call_id, .. } => {
                if !started.contains(call_id.as_str()) {
                    return Err(format!(
                        "chunk {position}: arguments for tool call `{call_id}` before its \
                         `tool_call_start`"
                    ));
                }
            }
        }
    }
    if let Some(usage) = completion.usage {
        let cached = usage
            .cache_read_tokens
            .checked_add(usage.cache_write_tokens);
        if cached.is_none_or(|cached| cached > usage.input_tokens) {
            return Err(
                "usage: cache_read_tokens + cache_write_tokens exceed input_tokens \
                        (input_tokens includes cached input)"
                    .into(),
            );
        }
    }
    Ok(())
}

fn check_async_job(job: &AsyncJob, streaming: bool) -> Result<(), String> {
    if job.timing.delay_between_frames_ms > 0 {
        return Err("`delay_between_frames_ms` is not allowed on an `async_job`".into());
    }
    require_streaming(job.timing.needs_streaming_backend(), streaming, "timing")?;
    let Some(result) = job.result.as_object() else {
        return Err("`result` must be a JSON object".into());
    };
    if !job.artifacts.is_empty() && result.contains_key("images") {
        return Err(
            "`result` already has `images`; list the files either there or in `artifacts`".into(),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_ids_follow_the_documented_alphabet() {
        assert!(script_id_is_valid("case-7_a.b~c"));
        assert!(!script_id_is_valid(""));
        assert!(!script_id_is_valid("a]]b"));
        assert!(!script_id_is_valid("a/b"));
        assert!(!script_id_is_valid(&"x".repeat(201)));
    }
}
