//! A fal-style asynchronous media queue (`Authorization: Key <credential>`).
//!
//! Submit `POST <base>/<model>` with the input (`prompt`: the text parts joined by newlines,
//! `input`: every part, plus the members of the request extension `async-media.input`) → a job
//! with `status_url`, `response_url` and `cancel_url`, which must stay on the base URL's origin.
//! Then poll the status every `async_poll_interval_ms`: `IN_QUEUE` → `execution.progress
//! {phase: queued}`, `IN_PROGRESS` → `{phase: processing}` (one event per phase change),
//! `COMPLETED` → fetch the result: `output.result{result: <the provider's JSON unchanged>,
//! artifacts}` with artifacts gathered from every `http(s)` `url`/`uri` string in the result (up
//! to depth 6, `content_type` as media type, deduplicated). A `COMPLETED` status carrying
//! `error` is a failure. Once a job was submitted every failure is non-retryable: the remote
//! work may go on. Polls exhausted → `deadline_exceeded`.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};
use spec::execution::{Artifact, ErrorCode, EventBody, InputPart, ProgressPhase};

use super::http::{read_json, send, status_failure};
use super::{Adapter, AttemptFailure, Emit, ProviderCall, RemoteJob, RemoteJobSlot};

const MAX_ARTIFACT_DEPTH: usize = 6;

fn auth(credential: &str) -> String {
    format!("Key {credential}")
}

fn submit_body(call: &ProviderCall<'_>) -> Value {
    let mut body = Map::new();
    if let Some(Value::Object(extra)) = call
        .request
        .extensions
        .as_ref()
        .and_then(|e| e.get("async-media.input"))
    {
        body.extend(extra.clone());
    }
    let prompt: Vec<&str> = call
        .request
        .input
        .iter()
        .filter_map(|part| match part {
            InputPart::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    body.insert("prompt".into(), json!(prompt.join("\n")));
    body.insert("input".into(), json!(call.request.input));
    Value::Object(body)
}

/// A lifecycle URL from the provider, accepted only on the configured origin.
fn same_origin_url(adapter: &Adapter, job: &Value, field: &str) -> Result<String, AttemptFailure> {
    let text = job
        .get(field)
        .and_then(Value::as_str)
        .ok_or_else(|| not_retryable_protocol("Provider job answer lacks a lifecycle URL"))?;
    let url = reqwest::Url::parse(text)
        .map_err(|_| not_retryable_protocol("Provider job answer has an invalid lifecycle URL"))?;
    if url.origin() != adapter.base_url.origin() {
        return Err(not_retryable_protocol(
            "Provider lifecycle URL leaves the configured origin",
        ));
    }
    Ok(url.to_string())
}

fn not_retryable_protocol(message: &str) -> AttemptFailure {
    AttemptFailure::protocol(message)
}

/// After submission nothing is retried: the remote work may continue.
fn final_failure(mut failure: AttemptFailure) -> AttemptFailure {
    failure.error.retryable = false;
    failure.retry_after = None;
    failure
}

/// Every `http(s)` URL under a `url` or `uri` key, depth-first, deduplicated.
fn gather_artifacts(
    value: &Value,
    depth: usize,
    seen: &mut BTreeSet<String>,
    out: &mut Vec<Artifact>,
) {
    if depth > MAX_ARTIFACT_DEPTH {
        return;
    }
    match value {
        Value::Object(map) => {
            for key in ["url", "uri"] {
                if let Some(uri) = map.get(key).and_then(Value::as_str)
                    && (uri.starts_with("https://") || uri.starts_with("http://"))
                    && seen.insert(uri.to_string())
                {
                    out.push(Artifact {
                        uri: uri.to_string(),
                        media_type: map
                            .get("content_type")
                            .or_else(|| map.get("media_type"))
                            .and_then(Value::as_str)
                            .map(str::to_string),
                        name: map
                            .get("file_name")
                            .or_else(|| map.get("name"))
                            .and_then(Value::as_str)
                            .map(str::to_string),
                        expires_at: map
                            .get("expires_at")
                            .and_then(Value::as_str)
                            .map(str::to_string),
                    });
                }
            }
            for child in map.values() {
                gather_artifacts(child, depth + 1, seen, out);
            }
        }
        Value::Array(items) => {
            for child in items {
                gather_artifacts(child, depth + 1, seen, out);
            }
        }
        _ => {}
    }
}

pub(super) async fn run(
    adapter: &Adapter,
    call: ProviderCall<'_>,
    out: &mut dyn Emit,
    remote: &RemoteJobSlot,
) -> Result<(), AttemptFailure> {
    let submit = adapter
        .client
        .post(adapter.endpoint(call.model))
        .header("authorization", auth(call.credential))
        .json(&submit_body(&call));
    let response = send(submit, &adapter.settings).await?;
    if !response.status().is_success() {
        return Err(status_failure(response, &adapter.settings).await);
    }
    // From here on the job may exist remotely.
    let job = read_json(response).await.map_err(final_failure)?;
    let status_url = same_origin_url(adapter, &job, "status_url")?;
    let response_url = same_origin_url(adapter, &job, "response_url")?;
    let cancel_url = same_origin_url(adapter, &job, "cancel_url")?;
    remote.set(Some(RemoteJob { cancel_url }));
    let outcome = follow(adapter, call, out, &status_url, &response_url).await;
    if outcome.is_ok() {
        // A completed job is never cancelled.
        remote.set(None);
    }
    outcome.map_err(final_failure)
}

async fn follow(
    adapter: &Adapter,
    call: ProviderCall<'_>,
    out: &mut dyn Emit,
    status_url: &str,
    response_url: &str,
) -> Result<(), AttemptFailure> {
    let settings = &adapter.settings;
    let mut phase = None;
    for poll in 0..settings.max_polls {
        if poll > 0 {
            tokio::time::sleep(settings.poll_interval).await;
        }
        let response = send(
            adapter
                .client
                .get(status_url)
                .header("authorization", auth(call.credential)),
            settings,
        )
        .await?;
        if !response.status().is_success() {
            return Err(status_failure(response, settings).await);
        }
        let status = read_json(response).await?;
        let next = match status.get("status").and_then(Value::as_str) {
            Some("IN_QUEUE") => ProgressPhase::Queued,
            Some("IN_PROGRESS") => ProgressPhase::Processing,
            Some("COMPLETED") => {
                if status.get("error").is_some_and(|e| !e.is_null()) {
                    return Err(AttemptFailure::new(
                        ErrorCode::ProviderUnavailable,
                        "Provider job failed",
                        false,
                    ));
                }
                return fetch_result(adapter, call, out, response_url).await;
            }
            _ => {
                return Err(AttemptFailure::protocol(
                    "Provider reported an unknown job status",
                ));
            }
        };
        if phase != Some(next) {
            phase = Some(next);
            out.emit(EventBody::Progress {
                phase: next,
                progress: None,
            })?;
        }
    }
    Err(AttemptFailure::new(
        ErrorCode::DeadlineExceeded,
        "Provider job did not complete within the polling limit",
        false,
    ))
}

async fn fetch_result(
    adapter: &Adapter,
    call: ProviderCall<'_>,
    out: &mut dyn Emit,
    response_url: &str,
) -> Result<(), AttemptFailure> {
    let response = send(
        adapter
            .client
            .get(response_url)
            .header("authorization", auth(call.credential)),
        &adapter.settings,
    )
    .await?;
    if !response.status().is_success() {
        return Err(status_failure(response, &adapter.settings).await);
    }
    let result = read_json(response).await?;
    let mut artifacts = Vec::new();
    gather_artifacts(&result, 0, &mut BTreeSet::new(), &mut artifacts);
    out.emit(EventBody::OutputResult {
        result,
        artifacts: (!artifacts.is_empty()).then_some(artifacts),
    })
}

/// Best-effort `PUT` to the job's cancel URL with its own timeout.
pub(super) async fn cancel(adapter: &Adapter, job: &RemoteJob, credential: &str) {
    let request = adapter
        .client
        .put(&job.cancel_url)
        .header("authorization", auth(credential))
        .timeout(adapter.settings.remote_cancel_timeout)
        .send();
    match request.await {
        Ok(response) => tracing::info!(
            provider = adapter.provider_id(),
            status = response.status().as_u16(),
            "remote cancel sent"
        ),
        Err(error) => tracing::info!(
            provider = adapter.provider_id(),
            timeout = error.is_timeout(),
            "remote cancel failed"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gathers_artifacts_by_url_deduplicated() {
        let result = json!({"images": [
            {"url": "https://cdn.example/a.png", "content_type": "image/png"},
            {"url": "https://cdn.example/a.png"},
            {"url": "ftp://nope"}
        ], "seed": 42});
        let mut artifacts = Vec::new();
        gather_artifacts(&result, 0, &mut BTreeSet::new(), &mut artifacts);
        assert_eq!(artifacts.len(), 1);
        assert_eq!(artifacts[0].media_type.as_deref(), Some("image/png"));
    }
}
