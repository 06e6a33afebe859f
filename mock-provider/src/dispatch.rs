//! Shared state of both backends: routing, auth, script selection, call counting, recording.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;

use crate::config::{Backend, ProviderInstance, ProviderKind};
use crate::encode::async_media::JobState;
use crate::encode::errors::{
    ErrorContext, http_error_response, missing_anthropic_version, mock_error, unauthenticated,
};
use crate::encode::{RequestOptions, completion_plan, timed_whole};
use crate::marker::marked_script_ids;
use crate::plan::{PlanAction, PlannedResponse, ResponsePlan};
use crate::record::{Endpoint, RecordedCall};
use crate::script::{CallBehaviour, Script};
use crate::validate::{ScriptError, validate_script};

/// A request as both backends hand it over.
#[derive(Debug, Clone)]
pub(crate) struct IncomingRequest {
    pub method: String,
    /// Path without query.
    pub path: String,
    pub query: Option<String>,
    /// Header names lowercase.
    pub headers: Vec<(String, String)>,
    pub body: Bytes,
}

impl IncomingRequest {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    fn path_and_query(&self) -> String {
        match &self.query {
            Some(query) => format!("{}?{query}", self.path),
            None => self.path.clone(),
        }
    }

    fn query_flag(&self, name: &str) -> bool {
        self.query.as_deref().is_some_and(|query| {
            query
                .split('&')
                .any(|pair| pair == format!("{name}=1") || pair == format!("{name}=true"))
        })
    }
}

/// Why a script could not be registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RegisterError {
    /// A script with this id is already registered.
    #[error("a script with id `{script_id}` is already registered")]
    DuplicateId {
        /// The id.
        script_id: String,
    },
    /// The script is invalid for the served instances.
    #[error(transparent)]
    Invalid(#[from] ScriptError),
}

struct RegisteredScript {
    script: Script,
    calls_received: HashMap<String, u32>,
}

#[derive(Default)]
struct Inner {
    scripts: HashMap<String, RegisteredScript>,
    jobs: HashMap<String, JobState>,
    records: Vec<RecordedCall>,
    /// Requests received so far (records may be forgotten, the count never goes back).
    received: u64,
}

/// Everything both backends share.
pub(crate) struct ProviderState {
    canary: String,
    instances: HashMap<String, ProviderInstance>,
    inner: Mutex<Inner>,
}

/// The parts of a record known once the request is routed.
struct Attribution {
    instance: String,
    endpoint: Endpoint,
    script_id: Option<String>,
    script_key: Option<String>,
    call_index: Option<u32>,
    credential: Option<String>,
}

enum Route {
    Call(Endpoint),
    Job(Endpoint, String),
    Unknown,
}

/// The endpoint a request to an instance of `kind` reaches: `rest` is the path after the
/// instance. The text formats' paths are served with and without the `/v1` segment real SDK
/// base URLs carry (`<base>/v1/responses` and `<base>/responses` alike): a host whose adapter
/// appends the path to a base that already ends in `/v1` reaches the fake either way.
fn route(kind: ProviderKind, method: &str, rest: &str) -> Route {
    let text_path = rest.strip_prefix("v1/").unwrap_or(rest);
    match (kind, method, text_path) {
        (ProviderKind::OpenaiChat, "POST", "chat/completions") => {
            Route::Call(Endpoint::ChatCompletions)
        }
        (ProviderKind::OpenaiResponses, "POST", "responses") => Route::Call(Endpoint::Responses),
        (ProviderKind::AnthropicMessages, "POST", "messages") => Route::Call(Endpoint::Messages),
        (ProviderKind::AsyncMedia, _, _) => {
            let parts: Vec<&str> = rest.split('/').collect();
            match (method, parts.as_slice()) {
                ("GET", ["requests", id, "status"]) => {
                    Route::Job(Endpoint::QueueStatus, (*id).to_owned())
                }
                ("GET", ["requests", id]) => Route::Job(Endpoint::QueueResult, (*id).to_owned()),
                ("PUT", ["requests", id, "cancel"]) => {
                    Route::Job(Endpoint::QueueCancel, (*id).to_owned())
                }
                ("POST", [first, ..]) if *first != "requests" && !first.is_empty() => {
                    Route::Call(Endpoint::QueueSubmit)
                }
                _ => Route::Unknown,
            }
        }
        _ => Route::Unknown,
    }
}

/// The credential in the provider's own auth header, scheme stripped.
///
/// Anthropic: `x-api-key`, else `Authorization: Bearer` (what anthropic SDK 2.x sends).
fn presented_credential(kind: ProviderKind, request: &IncomingRequest) -> Option<String> {
    let (header, scheme) = match kind {
        ProviderKind::OpenaiChat | ProviderKind::OpenaiResponses => {
            ("authorization", Some("bearer "))
        }
        ProviderKind::AnthropicMessages if request.header("x-api-key").is_none() => {
            ("authorization", Some("bearer "))
        }
        ProviderKind::AnthropicMessages => ("x-api-key", None),
        ProviderKind::AsyncMedia => ("authorization", Some("key ")),
    };
    let value = request.header(header)?;
    Some(match scheme {
        Some(scheme)
            if value.len() >= scheme.len()
                && value.is_char_boundary(scheme.len())
                && value[..scheme.len()].eq_ignore_ascii_case(scheme) =>
        {
            value[scheme.len()..].to_owned()
        }
        _ => value.to_owned(),
    })
}

/// The model a call asks for: the JSON body's `model`, or for an async-media submit the path
/// after the instance (`fal-ai/flux`).
fn requested_model(kind: ProviderKind, request: &IncomingRequest) -> Option<String> {
    if kind == ProviderKind::AsyncMedia {
        let path = request.path.trim_start_matches('/');
        return path
            .split_once('/')
            .map(|(_, model)| model.to_owned())
            .filter(|model| !model.is_empty());
    }
    let body: serde_json::Value = serde_json::from_slice(&request.body).ok()?;
    body.get("model")?.as_str().map(str::to_owned)
}

/// The key of `script.calls` a call to `instance` plays: `<instance>@<model>` when the script
/// scopes the requested model, else the instance.
fn script_key(script: &Script, instance: &ProviderInstance, request: &IncomingRequest) -> String {
    requested_model(instance.kind, request)
        .map(|model| format!("{}@{model}", instance.name))
        .filter(|scoped| script.calls.contains_key(scoped))
        .unwrap_or_else(|| instance.name.clone())
}

/// The one script a request's body names, if exactly one.
fn single_marker(request: &IncomingRequest) -> Option<String> {
    match marked_script_ids(&request.body).as_slice() {
        [one] => Some(one.clone()),
        _ => None,
    }
}

fn new_request_id() -> String {
    format!("req_{}", uuid::Uuid::new_v4().simple())
}

impl ProviderState {
    pub fn new(canary: String, instances: &[ProviderInstance]) -> Self {
        ProviderState {
            canary,
            instances: instances
                .iter()
                .map(|instance| (instance.name.clone(), instance.clone()))
                .collect(),
            inner: Mutex::new(Inner::default()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn canary(&self) -> &str {
        &self.canary
    }

    pub fn register(&self, script: Script) -> Result<(), RegisterError> {
        validate_script(&script, |name| {
            self.instances
                .get(name)
                .map(|instance| (instance.kind, instance.backend))
        })?;
        let mut inner = self.lock();
        if inner.scripts.contains_key(&script.id) {
            return Err(RegisterError::DuplicateId {
                script_id: script.id,
            });
        }
        inner.scripts.insert(
            script.id.clone(),
            RegisteredScript {
                script,
                calls_received: HashMap::new(),
            },
        );
        Ok(())
    }

    /// Removes a script with its records and jobs; true if it was registered.
    pub fn forget(&self, script_id: &str) -> bool {
        let mut inner = self.lock();
        inner
            .records
            .retain(|record| record.script_id.as_deref() != Some(script_id));
        inner.jobs.retain(|_, job| job.script_id != script_id);
        inner.scripts.remove(script_id).is_some()
    }

    /// Records matching `keep`, in arrival order.
    pub fn records(&self, keep: impl Fn(&RecordedCall) -> bool) -> Vec<RecordedCall> {
        self.lock()
            .records
            .iter()
            .filter(|record| keep(record))
            .cloned()
            .collect()
    }

    /// Answers one request served by `served_by`, and records it.
    pub fn handle(&self, request: &IncomingRequest, served_by: Backend) -> ResponsePlan {
        let received_at = SystemTime::now();
        let received_instant = Instant::now();
        let request_id = new_request_id();
        let path = request.path.trim_start_matches('/');
        let (instance_name, rest) = path.split_once('/').unwrap_or((path, ""));
        let mut inner = self.lock();
        let (plan, attribution) = match self
            .instances
            .get(instance_name)
            .filter(|instance| instance.backend == served_by)
        {
            None => (
                ResponsePlan::respond(mock_error(
                    ProviderKind::OpenaiChat,
                    404,
                    "mock_provider_unknown_instance",
                    &format!("no provider instance `{instance_name}` is served at this address"),
                    &request_id,
                )),
                Attribution {
                    instance: instance_name.to_owned(),
                    endpoint: Endpoint::Unknown,
                    script_id: single_marker(request),
                    script_key: None,
                    call_index: None,
                    credential: None,
                },
            ),
            Some(instance) => {
                let credential = presented_credential(instance.kind, request);
                let mut attribution = Attribution {
                    instance: instance.name.clone(),
                    endpoint: Endpoint::Unknown,
                    script_id: None,
                    script_key: None,
                    call_index: None,
                    credential,
                };
                let plan = match route(instance.kind, &request.method, rest) {
                    Route::Call(endpoint) => {
                        attribution.endpoint = endpoint;
                        self.handle_call(
                            &mut inner,
                            instance,
                            request,
                            &request_id,
                            &mut attribution,
                        )
                    }
                    Route::Job(endpoint, job_id) => {
                        attribution.endpoint = endpoint;
                        self.handle_job(&mut inner, instance, request, &job_id, &mut attribution)
                    }
                    Route::Unknown => {
                        // Not a call, but whose request it was is worth knowing: a host
                        // configured with a wrong base path still sends the case's marker.
                        attribution.script_id = single_marker(request);
                        ResponsePlan::respond(mock_error(
                            instance.kind,
                            404,
                            "mock_provider_unknown_endpoint",
                            &format!(
                                "no endpoint {} /{rest} on a {} instance",
                                request.method, instance.kind
                            ),
                            &request_id,
                        ))
                    }
                };
                let plan = if served_by == Backend::Wiremock && plan.needs_streaming_backend() {
                    ResponsePlan::respond(mock_error(
                        instance.kind,
                        500,
                        "mock_provider_needs_streaming_backend",
                        "this behaviour needs the streaming backend",
                        &request_id,
                    ))
                } else {
                    plan
                };
                (plan, attribution)
            }
        };
        let credential_is_canary = attribution.credential.as_deref() == Some(self.canary.as_str());
        inner.received += 1;
        let sequence = inner.received;
        inner.records.push(RecordedCall {
            sequence,
            instance: attribution.instance,
            endpoint: attribution.endpoint,
            method: request.method.clone(),
            path: request.path_and_query(),
            script_id: attribution.script_id,
            script_key: attribution.script_key,
            call_index: attribution.call_index,
            credential: attribution.credential,
            credential_is_canary,
            headers: request.headers.clone(),
            body: request.body.to_vec(),
            received_at,
            received_instant,
            response_status: plan.status(),
        });
        tracing::debug!(
            sequence,
            instance = instance_name,
            status = ?plan.status(),
            "mock provider answered a request"
        );
        plan
    }

    fn authenticated(&self, attribution: &Attribution) -> bool {
        attribution.credential.as_deref() == Some(self.canary.as_str())
    }

    fn handle_call(
        &self,
        inner: &mut Inner,
        instance: &ProviderInstance,
        request: &IncomingRequest,
        request_id: &str,
        attribution: &mut Attribution,
    ) -> ResponsePlan {
        let kind = instance.kind;
        let marked = marked_script_ids(&request.body);
        if let [script_id] = marked.as_slice() {
            attribution.script_id = Some(script_id.clone());
            if let Some(registered) = inner.scripts.get_mut(script_id) {
                let key = script_key(&registered.script, instance, request);
                let counter = registered.calls_received.entry(key.clone()).or_insert(0);
                *counter += 1;
                attribution.call_index = Some(*counter);
                attribution.script_key = Some(key);
            }
        }
        let error = |status: u16, code: &str, message: &str| {
            ResponsePlan::respond(mock_error(kind, status, code, message, request_id))
        };
        if !self.authenticated(attribution) {
            return ResponsePlan::respond(unauthenticated(
                kind,
                attribution.credential.is_some(),
                request_id,
            ));
        }
        if kind == ProviderKind::AnthropicMessages && request.header("anthropic-version").is_none()
        {
            return ResponsePlan::respond(missing_anthropic_version(request_id));
        }
        let (script_id, call_index) = match (marked.as_slice(), attribution.call_index) {
            ([], _) => {
                return error(
                    400,
                    "mock_provider_no_script",
                    "no script marker [[script:<id>]] in the request body",
                );
            }
            ([_], Some(call_index)) => (marked[0].clone(), call_index),
            ([unknown], None) => {
                return error(
                    400,
                    "mock_provider_unknown_script",
                    &format!("no script with id `{unknown}` is registered"),
                );
            }
            (several, _) => {
                return error(
                    400,
                    "mock_provider_ambiguous_script",
                    &format!(
                        "several different script markers in the request body: {}",
                        several.join(", ")
                    ),
                );
            }
        };
        let key = attribution
            .script_key
            .clone()
            .unwrap_or_else(|| instance.name.clone());
        let behaviours = inner
            .scripts
            .get(&script_id)
            .and_then(|registered| registered.script.calls.get(&key));
        let Some(behaviour) = behaviours
            .and_then(|list| list.get(call_index as usize - 1))
            .cloned()
        else {
            let scripted = behaviours.map_or(0, Vec::len);
            return error(
                500,
                "mock_provider_script_exhausted",
                &format!(
                    "script `{script_id}` is exhausted: call {call_index} at `{key}` \
                     but only {scripted} call(s) are scripted there"
                ),
            );
        };
        let error_context = |echo: bool| ErrorContext {
            echo_credential: echo.then_some(self.canary.as_str()),
            request_id,
        };
        match behaviour {
            CallBehaviour::Completion(completion) => completion_plan(
                kind,
                &completion,
                &RequestOptions::parse(&request.body),
                request_id,
                &self.canary,
            ),
            CallBehaviour::HttpError(http_error) => timed_whole(
                http_error_response(
                    kind,
                    &http_error,
                    &error_context(http_error.echo_credential),
                ),
                &http_error.timing,
            ),
            CallBehaviour::ConnectionReset(reset) => ResponsePlan {
                delay_before_headers: Duration::from_millis(reset.delay_before_reset_ms),
                action: PlanAction::ResetConnection,
            },
            CallBehaviour::AsyncJob(job) => {
                let job_id = uuid::Uuid::new_v4().to_string();
                let host = request
                    .header("host")
                    .map(str::to_owned)
                    .unwrap_or_else(|| "127.0.0.1".into());
                let request_url = format!("http://{host}/{}/requests/{job_id}", instance.name);
                let timing = job.timing;
                let mut state = JobState::new(
                    script_id,
                    instance.name.clone(),
                    call_index,
                    job,
                    request_url,
                );
                state.script_key = attribution.script_key.clone();
                let response = state.submit_response(&job_id);
                inner.jobs.insert(job_id, state);
                timed_whole(response, &timing)
            }
        }
    }

    fn handle_job(
        &self,
        inner: &mut Inner,
        instance: &ProviderInstance,
        request: &IncomingRequest,
        job_id: &str,
        attribution: &mut Attribution,
    ) -> ResponsePlan {
        let job = inner
            .jobs
            .get_mut(job_id)
            .filter(|job| job.instance == instance.name);
        if let Some(job) = &job {
            attribution.script_id = Some(job.script_id.clone());
            attribution.script_key = job.script_key.clone();
            attribution.call_index = Some(job.call_index);
        }
        if !self.authenticated(attribution) {
            return ResponsePlan::respond(unauthenticated(
                instance.kind,
                attribution.credential.is_some(),
                "",
            ));
        }
        let Some(job) = job else {
            return ResponsePlan::respond(PlannedResponse::json(
                404,
                Vec::new(),
                &serde_json::json!({"detail": "Request not found"}),
            ));
        };
        let response = match attribution.endpoint {
            Endpoint::QueueStatus => job.poll_status(request.query_flag("logs")),
            Endpoint::QueueCancel => job.cancel(),
            _ => job.result(),
        };
        ResponsePlan::respond(response)
    }
}
