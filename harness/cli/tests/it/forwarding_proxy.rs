//! [`start`]: an HTTP proxy in front of a host that forwards every request as it came (answers
//! streamed back), except where the test's intercept answers in the host's place or rewrites
//! the body: a host that differs from the built-in runtime in one way a test names.

use std::net::SocketAddr;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::request::Parts;
use axum::response::Response;

/// What the intercept makes of a request.
pub(crate) enum Intercepted {
    /// Forward it with this body (as it came, or rewritten).
    Forward(Bytes),
    /// Answer this in the host's place.
    Answer(Response),
}

/// Starts the proxy in front of `upstream` (`http://host:port`); its address.
pub(crate) async fn start<F>(upstream: String, intercept: F) -> SocketAddr
where
    F: Fn(&Parts, Bytes) -> Intercepted + Clone + Send + Sync + 'static,
{
    let client = reqwest::Client::new();
    let forward = move |request: Request| {
        let client = client.clone();
        let upstream = upstream.clone();
        let intercept = intercept.clone();
        async move {
            let (parts, body) = request.into_parts();
            let body = axum::body::to_bytes(body, usize::MAX).await.unwrap();
            let body = match intercept(&parts, body) {
                Intercepted::Forward(body) => body,
                Intercepted::Answer(answer) => return answer,
            };
            let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
            let mut forwarded = client
                .request(parts.method.clone(), format!("{upstream}{path}"))
                .body(body);
            // The length is the forwarded body's (an intercept may have rewritten it).
            for (name, value) in &parts.headers {
                if name != axum::http::header::HOST && name != axum::http::header::CONTENT_LENGTH {
                    forwarded = forwarded.header(name, value);
                }
            }
            let answer = forwarded.send().await.unwrap();
            let mut response = Response::builder().status(answer.status());
            for (name, value) in answer.headers() {
                response = response.header(name, value);
            }
            response
                .body(Body::from_stream(answer.bytes_stream()))
                .unwrap()
        }
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        axum::serve(listener, axum::Router::new().fallback(forward))
            .await
            .unwrap();
    });
    addr
}
