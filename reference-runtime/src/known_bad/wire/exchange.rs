//! [`Exchange`]: what a request is, as far as the wire rewrites care.

use axum::extract::Request;
use axum::http::Method;

/// The exchanges the wire layer rewrites.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Exchange {
    /// `POST /v1/executions` (surface X).
    Submission,
    /// `GET /v1/executions/{id}/events` (surface X).
    ExecutionEvents,
    /// `GET …/runs/{runId}/events/poll` (surface W).
    Poll,
    /// `GET …/runs/{runId}/events` (surface W).
    Stream,
    /// `GET …/host/…`: the host channel (surface W).
    HostChannel,
    /// `GET /.well-known/openwop` (surface W).
    Discovery,
    /// `POST /conformance/seams/sample/event-log/seed`: the era-2 seed seam (surface W).
    Era2Seed,
    /// Anything else: not rewritten.
    Other,
}

impl Exchange {
    /// The exchange `request` opens.
    pub(super) fn of(request: &Request) -> Self {
        let path = request.uri().path();
        match *request.method() {
            Method::POST if path == "/v1/executions" => Exchange::Submission,
            Method::GET if path.starts_with("/v1/executions/") && path.ends_with("/events") => {
                Exchange::ExecutionEvents
            }
            Method::GET if path.ends_with("/events/poll") => Exchange::Poll,
            Method::GET if path.ends_with("/events") && path.contains("/runs/") => Exchange::Stream,
            Method::GET if path.contains("/host/") => Exchange::HostChannel,
            Method::GET if path.ends_with("/.well-known/openwop") => Exchange::Discovery,
            Method::POST if path == "/conformance/seams/sample/event-log/seed" => {
                Exchange::Era2Seed
            }
            _ => Exchange::Other,
        }
    }
}
