//! The composition root: builds the store, the one [`LogHub`], surface X's service and surface
//! W's router from [`RuntimeOptions`], and serves them.
//!
//! ```no_run
//! # async fn demo() -> Result<(), reference_runtime::runtime::StartError> {
//! use reference_runtime::config::Config;
//! use reference_runtime::runtime::{RuntimeOptions, start};
//!
//! let running = start("127.0.0.1:0".parse().unwrap(), RuntimeOptions::new(Config::default())).await?;
//! println!("listening on {}", running.base_url());
//! running.shutdown().await;
//! # Ok(()) }
//! ```

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::response::IntoResponse;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::clock::{Clock, SystemClock};
use crate::config::{Config, ConfigError, StoreKind};
use crate::defects::Defects;
use crate::execution::{self, ApiError, Executions};
use crate::known_bad::KnownBad;
use crate::log::LogHub;
use crate::openwop;
use crate::providers::AdapterError;
use crate::providers::calls::ProviderCalls;
use crate::redact::CredentialSource;
use crate::store::{EventStore, MemoryEventStore, SqliteEventStore, StoreError};

/// How long shutdown waits for open connections before it stops waiting.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Everything needed to start a runtime.
#[derive(Clone)]
pub struct RuntimeOptions {
    /// The configuration.
    pub config: Config,
    /// Switched-on defects (none for a clean runtime).
    pub defects: Defects,
    /// The clock (event times, idempotency retention).
    pub clock: Arc<dyn Clock>,
    /// Where credential variable names are resolved.
    pub credentials: CredentialSource,
}

impl RuntimeOptions {
    /// A clean runtime with the system clock and credentials from the process environment.
    pub fn new(config: Config) -> Self {
        RuntimeOptions {
            config,
            defects: Defects::none(),
            clock: Arc::new(SystemClock),
            credentials: CredentialSource::Environment,
        }
    }
}

impl std::fmt::Debug for RuntimeOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeOptions")
            .field("config", &self.config)
            .field("defects", &self.defects)
            .finish_non_exhaustive()
    }
}

/// Why the runtime could not start. Messages never carry credentials or base URLs.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The configuration is unusable.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The event store could not be opened or recovered.
    #[error("event store: {0}")]
    Store(#[from] StoreError),
    /// A provider adapter could not be built.
    #[error(transparent)]
    Adapter(#[from] AdapterError),
    /// The listener could not be bound.
    #[error("failed to listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
}

/// The state the routers are built from.
#[derive(Clone)]
pub struct AppState {
    /// The configuration.
    pub config: Arc<Config>,
    /// The shared log hub (both surfaces).
    pub hub: Arc<LogHub>,
    /// The known-bad policy built from the switched-on defects (clean by default).
    pub defects: Arc<KnownBad>,
    /// Surface X's service.
    pub executions: Arc<Executions>,
    /// The provider-call service both surfaces call providers through.
    pub calls: Arc<ProviderCalls>,
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState")
            .field("defects", &self.defects)
            .finish_non_exhaustive()
    }
}

impl AppState {
    /// Opens the configured store, builds the hub and the services, and ends the executions
    /// and runs a previous process left in flight (durable stores only; ARCHITECTURE.md,
    /// "Restarts"), before anything is served.
    pub fn build(options: RuntimeOptions) -> Result<AppState, StartError> {
        options.config.validate()?;
        let store: Arc<dyn EventStore> = match &options.config.store.kind {
            StoreKind::Memory => Arc::new(MemoryEventStore::new()),
            StoreKind::Sqlite(path) => {
                SqliteEventStore::open_shared_with(path, options.config.store.sync)?
            }
        };
        let key_retention = chrono::Duration::hours(
            i64::try_from(options.config.limits.idempotency_retention_hours)
                .unwrap_or(crate::log::DEFAULT_KEY_RETENTION_HOURS),
        );
        let defects = Arc::new(KnownBad::from(options.defects));
        let hub = Arc::new(
            LogHub::new(store, options.clock)
                .with_wire_offset(options.config.server.timestamp_offset())
                .with_delivery(defects.delivery())
                .with_key_retention(key_retention),
        );
        let config = Arc::new(options.config);
        let calls = ProviderCalls::new(&config, defects.provider_exchange(), options.credentials)?;
        let executions = Executions::new(
            &config,
            Arc::clone(&hub),
            Arc::clone(&defects),
            Arc::clone(&calls),
        );
        let ended = executions.recover()?;
        if ended > 0 {
            tracing::warn!(
                ended,
                "ended executions left in flight by a previous process"
            );
        }
        let ended = openwop::recover_runs(&hub, &defects, &config.openwop.choices)?;
        if ended > 0 {
            tracing::warn!(ended, "ended runs left unfinished by a previous process");
        }
        Ok(AppState {
            config,
            hub,
            defects,
            executions,
            calls,
        })
    }
}

/// The whole HTTP surface: surface X, surface W, and a `not_found` envelope for anything else
/// (W's under W's paths, X's elsewhere).
pub fn app(state: AppState) -> Router {
    // Surface W's one configuration value, read by its state, services, node kinds and fallback.
    let openwop_config = Arc::new(state.config.openwop.clone());
    let openwop = openwop::router(openwop::Dependencies {
        hub: Arc::clone(&state.hub),
        defects: Arc::clone(&state.defects),
        config: Arc::clone(&openwop_config),
        providers: Some(openwop::ConfiguredProviders::new(Arc::clone(&state.calls))),
    });
    // An unknown path is answered by the surface whose paths it is under (W's prefixes,
    // `openwop::claims_path`), in that surface's envelope; any other path by surface X.
    let w_fallback = openwop::fallback(&openwop_config);
    let executions = Arc::clone(&state.executions);
    let fallback = tower::service_fn(move |request: axum::extract::Request| {
        let w_fallback = w_fallback.clone();
        let executions = Arc::clone(&executions);
        async move {
            if openwop::claims_path(request.uri().path()) {
                return tower::ServiceExt::oneshot(w_fallback, request).await;
            }
            let not_found = ApiError::new(
                spec::execution::ErrorCode::NotFound,
                "Route not found",
                false,
            );
            Ok(executions.refusal(not_found).into_response())
        }
    });
    let router = execution::router(Arc::clone(&state.executions))
        .merge(openwop)
        .fallback_service(fallback);
    let router = if state.config.bench_publisher {
        crate::bench_publisher::install(router, Arc::clone(&state.hub), Arc::clone(&state.config))
    } else {
        router
    };
    if state.config.server.json_charset {
        router.layer(axum::middleware::map_response(with_json_charset))
    } else {
        router
    }
}

/// `application/json` → `application/json; charset=utf-8` (`[server] json_charset`): the same
/// UTF-8 bytes, with the parameter HTTP admits on a media type.
async fn with_json_charset(mut response: axum::response::Response) -> axum::response::Response {
    let headers = response.headers_mut();
    if headers
        .get(axum::http::header::CONTENT_TYPE)
        .is_some_and(|value| value.as_bytes().eq_ignore_ascii_case(b"application/json"))
    {
        headers.insert(
            axum::http::header::CONTENT_TYPE,
            axum::http::HeaderValue::from_static("application/json; charset=utf-8"),
        );
    }
    response
}

/// A runtime serving on a socket.
#[derive(Debug)]
pub struct RunningRuntime {
    addr: SocketAddr,
    state: AppState,
    stop: oneshot::Sender<()>,
    server: JoinHandle<()>,
}

impl RunningRuntime {
    /// The bound address (the real port when started on port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://ADDR`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The state the runtime serves.
    pub fn state(&self) -> &AppState {
        &self.state
    }

    /// Stops serving: new executions are refused, SSE streams end, in-flight drivers are
    /// aborted without appending (a durable store ends them at the next start), and the
    /// listener closes.
    pub async fn shutdown(self) {
        self.state.executions.shutdown().await;
        let _ = self.stop.send(());
        let mut server = self.server;
        if tokio::time::timeout(SHUTDOWN_GRACE, &mut server)
            .await
            .is_err()
        {
            server.abort();
        }
    }
}

/// Builds the runtime and serves it on `listen` (port 0 picks a free port), under the
/// connection limits of `[server]` (`crate::server`).
pub async fn start(
    listen: SocketAddr,
    options: RuntimeOptions,
) -> Result<RunningRuntime, StartError> {
    let limits = options.config.server.connection_limits();
    let state = AppState::build(options)?;
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|source| StartError::Bind {
            addr: listen,
            source,
        })?;
    let addr = listener.local_addr().map_err(|source| StartError::Bind {
        addr: listen,
        source,
    })?;
    // Routes become services once, here (each connection clones the finished router; a bare
    // `Router` given to a server rebuilds its route table for every connection, about 10 KB per
    // open event stream on this router).
    let router = app(state.clone()).with_state(());
    let (stop, stopped) = oneshot::channel::<()>();
    let server = tokio::spawn(crate::server::serve(listener, router, limits, stopped));
    tracing::info!(%addr, "runtime listening");
    Ok(RunningRuntime {
        addr,
        state,
        stop,
        server,
    })
}
