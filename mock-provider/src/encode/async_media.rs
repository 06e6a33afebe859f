//! The fal-style async media queue: submit, status polls, result and cancel of one job.

use serde_json::{Value, json};

use crate::plan::PlannedResponse;
use crate::script::{AsyncJob, JobPhase};

/// The state the last answer reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JobStatus {
    InQueue,
    InProgress,
    Completed,
    Cancelled,
}

/// One submitted job.
#[derive(Debug, Clone)]
pub(crate) struct JobState {
    /// The script that created the job.
    pub script_id: String,
    /// The instance the job belongs to.
    pub instance: String,
    /// The submit's call index.
    pub call_index: u32,
    /// The script key the submit played (see `Script::calls`).
    pub script_key: Option<String>,
    job: AsyncJob,
    polls: usize,
    status: JobStatus,
    /// `http://<host>/<instance>/requests/<id>`.
    request_url: String,
}

impl JobState {
    /// A job just submitted; `request_url` is where its lifecycle URLs live.
    pub fn new(
        script_id: String,
        instance: String,
        call_index: u32,
        job: AsyncJob,
        request_url: String,
    ) -> Self {
        JobState {
            script_id,
            instance,
            call_index,
            script_key: None,
            job,
            polls: 0,
            status: JobStatus::InQueue,
            request_url,
        }
    }

    /// The submit answer: the request id and the URLs to use from now on.
    pub fn submit_response(&self, request_id: &str) -> PlannedResponse {
        let queue_position = match self.job.phases.first() {
            Some(JobPhase::InQueue { queue_position }) => *queue_position,
            _ => 0,
        };
        PlannedResponse::json(
            200,
            Vec::new(),
            &json!({
                "status": "IN_QUEUE",
                "request_id": request_id,
                "response_url": self.request_url,
                "status_url": format!("{}/status", self.request_url),
                "cancel_url": format!("{}/cancel", self.request_url),
                "logs": null,
                "metrics": {},
                "queue_position": queue_position,
            }),
        )
    }

    /// A status poll: the next phase (202), then `COMPLETED` (200).
    pub fn poll_status(&mut self, with_logs: bool) -> PlannedResponse {
        let logs = |lines: &[String]| -> Value {
            if with_logs {
                lines
                    .iter()
                    .map(|line| json!({"message": line, "level": "INFO", "source": "user"}))
                    .collect()
            } else {
                Value::Null
            }
        };
        if self.status == JobStatus::Cancelled {
            return PlannedResponse::json(
                200,
                Vec::new(),
                &json!({
                    "status": "COMPLETED",
                    "logs": logs(&[]),
                    "response_url": self.request_url,
                    "error": "Request was cancelled",
                    "error_type": "request_cancelled",
                }),
            );
        }
        self.polls += 1;
        match self.job.phases.get(self.polls - 1) {
            Some(JobPhase::InQueue { queue_position }) => {
                self.status = JobStatus::InQueue;
                PlannedResponse::json(
                    202,
                    Vec::new(),
                    &json!({
                        "status": "IN_QUEUE",
                        "queue_position": queue_position,
                        "response_url": self.request_url,
                    }),
                )
            }
            Some(JobPhase::InProgress { logs: lines }) => {
                self.status = JobStatus::InProgress;
                PlannedResponse::json(
                    202,
                    Vec::new(),
                    &json!({
                        "status": "IN_PROGRESS",
                        "logs": logs(lines),
                        "response_url": self.request_url,
                    }),
                )
            }
            None => {
                self.status = JobStatus::Completed;
                let mut body = json!({
                    "status": "COMPLETED",
                    "logs": logs(&[]),
                    "metrics": {"inference_time": 0.5},
                    "response_url": self.request_url,
                });
                if let Some(failure) = &self.job.failure {
                    body["error"] = json!(failure.message);
                    body["error_type"] = json!(failure.error_type);
                }
                PlannedResponse::json(200, Vec::new(), &body)
            }
        }
    }

    /// The result: the model output once `COMPLETED` was reported.
    pub fn result(&self) -> PlannedResponse {
        match (self.status, &self.job.failure) {
            (JobStatus::Completed, None) => {
                PlannedResponse::json(200, Vec::new(), &result_body(&self.job))
            }
            (JobStatus::Completed, Some(failure)) => PlannedResponse::json(
                500,
                vec![("x-fal-error-type".into(), failure.error_type.clone())],
                &json!({"detail": failure.message, "error_type": failure.error_type}),
            ),
            (JobStatus::Cancelled, _) => {
                PlannedResponse::json(400, Vec::new(), &json!({"detail": "Request was cancelled"}))
            }
            (JobStatus::InQueue | JobStatus::InProgress, _) => PlannedResponse::json(
                400,
                Vec::new(),
                &json!({"detail": "Request is still in progress"}),
            ),
        }
    }

    /// A cancel: effective only while the job is reported `IN_QUEUE`.
    pub fn cancel(&mut self) -> PlannedResponse {
        match self.status {
            JobStatus::InQueue => {
                self.status = JobStatus::Cancelled;
                PlannedResponse::json(
                    202,
                    Vec::new(),
                    &json!({"status": "CANCELLATION_REQUESTED"}),
                )
            }
            JobStatus::InProgress => PlannedResponse::json(
                202,
                Vec::new(),
                &json!({"status": "CANCELLATION_REQUESTED"}),
            ),
            JobStatus::Completed | JobStatus::Cancelled => {
                PlannedResponse::json(400, Vec::new(), &json!({"status": "ALREADY_COMPLETED"}))
            }
        }
    }
}

/// The scripted result object with the artifacts as `images`.
fn result_body(job: &AsyncJob) -> Value {
    let mut body = job.result.clone();
    if !job.artifacts.is_empty()
        && let Some(fields) = body.as_object_mut()
    {
        let images: Vec<Value> = job
            .artifacts
            .iter()
            .map(|artifact| {
                let mut image = json!({"url": artifact.uri});
                if let Some(media_type) = &artifact.media_type {
                    image["content_type"] = json!(media_type);
                }
                image
            })
            .collect();
        fields.insert("images".into(), Value::Array(images));
    }
    body
}
