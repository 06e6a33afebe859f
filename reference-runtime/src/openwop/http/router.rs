//! The surface-W router: which handler serves which method and path, the middleware every
//! response passes (version header, error annotation, SSE header timing), and the fallback for
//! the surface's own paths no route serves. The composition root calls [`router`].

use std::sync::Arc;

use axum::Router;
use axum::routing::{get, post};

use crate::known_bad::KnownBad;
use crate::log::LogHub;
use crate::openwop::engine::ai::provider::ConfiguredProviders;
use crate::openwop::engine::envelopes::catalog::KindCatalog;
use crate::openwop::engine::{live, node_context, workflow};
use crate::openwop::http::error_response;
use crate::openwop::http::{
    discovery, era2_seam, feedback, host_events, journal, poll, run_routes, stream, version,
    workflow_routes,
};
use crate::openwop::infra::config::{self, OpenWopConfig};
use crate::openwop::infra::error::ApiError;
use crate::openwop::infra::{auth, era2};
use crate::openwop::services::{heartbeat, host_bus, scheduling, state, subscribers};

/// What surface W needs from the composition root.
#[derive(Clone)]
pub struct Dependencies {
    /// The shared log hub (both surfaces).
    pub hub: Arc<LogHub>,
    /// Switched-on defects.
    pub defects: Arc<KnownBad>,
    /// Surface W's configuration, built and checked once at start
    /// ([`crate::config::Config::validate`]); the shared state, the node kinds and the services
    /// read this one value.
    pub config: Arc<OpenWopConfig>,
    /// The providers configured in the runtime (`configurable.ai.provider`); `None` when the
    /// AI node may use mock providers only.
    pub providers: Option<ConfiguredProviders>,
}

/// The path prefixes of surface W: its routes and every unknown path under them are its own
/// (answered with its flat envelope and `OpenWOP-Version`); every other path is surface X's.
pub const PATH_PREFIXES: [&str; 4] = ["/.well-known/openwop", "/runs", "/host", "/conformance"];

/// Whether `path` is surface W's (see [`PATH_PREFIXES`]): a prefix followed by nothing or
/// by a `/` (`/runs/x`, but not `/runsx`).
pub fn claims_path(path: &str) -> bool {
    PATH_PREFIXES.iter().any(|prefix| {
        path.strip_prefix(prefix)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    })
}

/// What surface W answers on a path of its own that no route serves: 404 `not_found` in the
/// flat envelope, with `OpenWOP-Version` and the configured error details, as its routes do.
pub fn fallback(config: &OpenWopConfig) -> Router {
    let router = Router::new()
        .fallback(|| async { axum::response::IntoResponse::into_response(ApiError::not_found()) })
        // Discovery is routed, so no fallback path is the one a dual-stack host serves in v1.
        .layer(axum::middleware::from_fn(|request, next| {
            version::protocol_version(false, request, next)
        }));
    if config.choices.error_details == crate::openwop::infra::choices::ErrorDetails::Annotated {
        router.layer(axum::middleware::map_response(
            error_response::annotate_error,
        ))
    } else {
        router
    }
}

/// The surface-W routes. Starts the configured heartbeats and schedules on the current tokio
/// runtime (they stop once the router is dropped). The configuration is read as given: it was
/// built and checked once, at start ([`crate::config::Config::validate`], which
/// `AppState::build` runs).
pub fn router(deps: Dependencies) -> Router {
    let config = deps.config;
    let workflows = workflow::Workflows::seed_fixtures(
        config.fixtures.as_deref(),
        config.choices.fixture_node_ids.edition(),
    );
    let catalog = Arc::new(KindCatalog::build(&config.envelopes, &deps.defects));
    let discovery = Arc::new(discovery::DiscoveryDocument::build(
        &config,
        workflows.ids(),
        &catalog,
    ));
    let live = Arc::new(live::LiveRuns::default());
    let nodes = Arc::new(node_context::NodeEnv {
        hub: Arc::clone(&deps.hub),
        defects: Arc::clone(&deps.defects),
        live: Arc::clone(&live),
        catalog: Arc::clone(&catalog),
        config: Arc::clone(&config),
        mock_programs: Arc::default(),
    });
    let state = Arc::new(state::WState {
        keys: auth::KeyTable::new(&config.api_keys, &config.test_key_prefix),
        nodes,
        annotations_lock: std::sync::Mutex::new(()),
        requested_ticks: Default::default(),
        era2_reader: deps
            .defects
            .era2_reader(era2::reader(config.choices.unprojectable_property)),
        workflows,
        hub: deps.hub,
        defects: deps.defects,
        config,
        live,
        subscribers: subscribers::SubscriberSlots::default(),
        host_events: host_bus::HostEventBus::default(),
        providers: deps.providers,
        create_lock: tokio::sync::Mutex::new(()),
    });
    heartbeat::start(&state);
    scheduling::start(&state);
    // The host channel's address is the one discovery declares (`heartbeat.deliveryChannel`).
    let host_events_path = state.config.choices.host_channel.path();
    let annotated = state.config.choices.error_details
        == crate::openwop::infra::choices::ErrorDetails::Annotated;
    let serves_v1 = state.config.choices.version_default
        == crate::openwop::infra::choices::VersionDefault::V1UnlessAsked;
    let router = Router::new()
        .route(
            "/.well-known/openwop",
            get(move |headers: axum::http::HeaderMap| async move {
                discovery::respond(&discovery, &headers)
            }),
        )
        .route("/workflows/{workflow_id}", get(workflow_routes::get))
        .route("/runs", post(run_routes::create))
        .route("/runs/{run_id}", get(run_routes::get))
        .route("/runs/{run_id}/cancel", post(run_routes::cancel))
        .route(
            "/runs/{run_id}/interrupts/{node_id}",
            post(run_routes::resolve_interrupt),
        )
        .route("/runs/{run_id}/events", get(stream::events))
        .route("/runs/{run_id}/events/poll", get(poll::poll))
        .route(host_events_path, get(host_events::host_events))
        .route(
            "/runs/{run_id}/annotations",
            post(feedback::create).get(feedback::list),
        )
        .route(
            "/conformance/seams/mock-ai/runs/{run_id}/calls",
            get(journal::calls),
        )
        .route(
            "/conformance/seams/sample/test/mock-ai/program",
            post(super::seam_program::program),
        )
        .route(
            "/conformance/seams/sample/test/mock-ai/last-dispatch-budget",
            get(super::seam_program::last_dispatch_budget),
        );
    // The sample seams (upstream's seams-v2 profile) exist only on a host that mounts them:
    // elsewhere their paths are unrouted and answer the fallback's 404.
    let router = if state.config.seams_enabled {
        router
            .route(
                "/conformance/seams/sample/event-log/seed",
                post(era2_seam::seed),
            )
            .route(
                "/conformance/seams/sample/heartbeat/tick",
                post(super::heartbeat_seam::tick),
            )
    } else {
        router
    };
    let router = crate::known_bad::wire::wire(router, &state.defects)
        .layer(axum::extract::DefaultBodyLimit::max(
            config::MAX_BODY_BYTES + 1,
        ))
        .layer(axum::middleware::from_fn(move |request, next| {
            version::protocol_version(serves_v1, request, next)
        }));
    let router = if annotated {
        router.layer(axum::middleware::map_response(
            error_response::annotate_error,
        ))
    } else {
        router
    };
    let router = match state.config.choices.sse_headers {
        crate::openwop::infra::choices::SseHeaderTiming::Immediate => router,
        crate::openwop::infra::choices::SseHeaderTiming::WithFirstByte => router.layer(
            axum::middleware::map_response(crate::sse::headers_with_first_byte),
        ),
    };
    let defects = Arc::clone(&state.defects);
    let not_found = fallback(&state.config);
    crate::known_bad::wire::addressed(
        router.with_state(state),
        &defects,
        host_events_path,
        not_found,
    )
}
