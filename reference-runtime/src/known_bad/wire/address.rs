//! [`addressed`]: the known-bad address of surface W's host channel, a rewrite of the request's
//! path before the router picks a route (the wire layer itself runs after routing).

use axum::Router;
use axum::extract::{Request, State};
use axum::http::Uri;
use axum::http::uri::PathAndQuery;
use axum::middleware::Next;
use axum::response::Response;
use tower::ServiceExt;

use super::super::policy::KnownBad;
use super::rewrites::WireRewrites;

/// Where a host with the defect serves the host channel, whatever discovery declares.
const MISADDRESSED_HOST_CHANNEL: &str = "/host/stream";

/// What the layer answers the declared address with.
#[derive(Clone)]
struct Refusal {
    /// The address discovery declares (`heartbeat.deliveryChannel`).
    declared: &'static str,
    /// What answers a path no route serves.
    not_found: Router,
}

/// `router` (surface W's, state applied) with the host channel moved from `declared` to
/// `/host/stream` when `policy` switches the defect on: `/host/stream` is forwarded to the
/// router as a request for `declared`, and `declared` itself is answered by `not_found` like
/// any unknown path. `router` itself otherwise.
pub fn addressed(
    router: Router,
    policy: &KnownBad,
    declared: &'static str,
    not_found: Router,
) -> Router {
    let misaddressed = WireRewrites::of(policy).is_some_and(|r| r.host_channel_misaddressed());
    if !misaddressed || declared == MISADDRESSED_HOST_CHANNEL {
        return router;
    }
    let served = router.clone();
    let forward = tower::service_fn(move |mut request: Request| {
        *request.uri_mut() = with_path(request.uri(), declared);
        served.clone().oneshot(request)
    });
    router
        .route_service(MISADDRESSED_HOST_CHANNEL, forward)
        .layer(axum::middleware::from_fn_with_state(
            Refusal {
                declared,
                not_found,
            },
            refuse_declared,
        ))
}

/// The layer's body: the declared address is refused like an unknown path.
async fn refuse_declared(State(refusal): State<Refusal>, request: Request, next: Next) -> Response {
    if request.uri().path() != refusal.declared {
        return next.run(request).await;
    }
    match refusal.not_found.oneshot(request).await {
        Ok(response) => response,
        Err(infallible) => match infallible {},
    }
}

/// `uri` with its path replaced by `path` (the query kept).
fn with_path(uri: &Uri, path: &str) -> Uri {
    let path_and_query = match uri.query() {
        Some(query) => format!("{path}?{query}"),
        None => path.to_string(),
    };
    let mut parts = uri.clone().into_parts();
    parts.path_and_query = PathAndQuery::try_from(path_and_query).ok();
    Uri::from_parts(parts).unwrap_or_else(|_| uri.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::defects::Defect;
    use axum::body::Body;
    use axum::routing::get;

    fn app() -> Router {
        Router::new()
            .route("/host/channel", get(|| async { "channel" }))
            .route("/other", get(|| async { "other" }))
    }

    fn not_found() -> Router {
        Router::new().fallback(|| async { (axum::http::StatusCode::GONE, "unknown") })
    }

    async fn status(app: &Router, path: &str) -> u16 {
        let request = Request::get(path).body(Body::empty()).unwrap();
        app.clone()
            .oneshot(request)
            .await
            .unwrap()
            .status()
            .as_u16()
    }

    #[tokio::test]
    async fn the_defect_moves_the_channel_and_leaves_every_other_path() {
        let bad = addressed(
            app(),
            &KnownBad::of([Defect::WHostEventsWrongAddress]),
            "/host/channel",
            not_found(),
        );
        assert_eq!(status(&bad, "/host/stream?x=1").await, 200);
        assert_eq!(status(&bad, "/host/channel").await, 410);
        assert_eq!(status(&bad, "/other").await, 200);
        let clean = addressed(app(), &KnownBad::clean(), "/host/channel", not_found());
        assert_eq!(status(&clean, "/host/channel").await, 200);
        assert_eq!(status(&clean, "/host/stream").await, 404);
    }
}
