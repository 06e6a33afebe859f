//! [`Exchange`]: what a request of surface X is, as far as the execution layer cares.

use axum::extract::Request;
use axum::http::Method;

/// The exchanges the execution layer rewrites.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Exchange {
    /// `GET /v1/providers`.
    Providers,
    /// `POST /v1/executions`.
    Submission,
    /// `GET /v1/executions/{id}`: the snapshot of the named execution.
    Snapshot(String),
    /// `GET /v1/executions/{id}/result`: the result of the named execution.
    Result(String),
    /// Anything else: not rewritten.
    Other,
}

impl Exchange {
    /// The exchange `request` opens.
    pub(super) fn of(request: &Request) -> Self {
        let path = request.uri().path();
        let execution = path.strip_prefix("/v1/executions/");
        match (request.method(), execution) {
            (&Method::GET, _) if path == "/v1/providers" => Exchange::Providers,
            (&Method::POST, _) if path == "/v1/executions" => Exchange::Submission,
            (&Method::GET, Some(rest)) => match rest.split_once('/') {
                None if !rest.is_empty() => Exchange::Snapshot(rest.to_string()),
                Some((id, "result")) if !id.is_empty() => Exchange::Result(id.to_string()),
                _ => Exchange::Other,
            },
            _ => Exchange::Other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(method: Method, uri: &str) -> Exchange {
        let request = Request::builder()
            .method(method)
            .uri(uri)
            .body(axum::body::Body::empty())
            .expect("a request");
        Exchange::of(&request)
    }

    #[test]
    fn each_route_is_told_apart() {
        assert_eq!(of(Method::GET, "/v1/providers"), Exchange::Providers);
        assert_eq!(of(Method::POST, "/v1/executions"), Exchange::Submission);
        assert_eq!(
            of(Method::GET, "/v1/executions/e1"),
            Exchange::Snapshot("e1".into())
        );
        assert_eq!(
            of(Method::GET, "/v1/executions/e1/result"),
            Exchange::Result("e1".into())
        );
        assert_eq!(of(Method::GET, "/v1/executions/e1/events"), Exchange::Other);
        assert_eq!(
            of(Method::POST, "/v1/executions/e1/cancel"),
            Exchange::Other
        );
    }
}
