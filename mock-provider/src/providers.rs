//! [`FakeProviders`]: one process serving many named provider instances on two servers.

use std::collections::HashSet;
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

use wiremock::MockServer;

use crate::config::{Backend, FakeProvidersConfig, ProviderInstance};
use crate::dispatch::{ProviderState, RegisterError};
use crate::record::{RecordedCall, VerificationError, listing};
use crate::script::Script;
use crate::streaming_backend::StreamingServer;
use crate::wiremock_backend;

/// Why [`FakeProviders::start`] failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StartError {
    /// The canary credential is empty.
    #[error("the canary credential must not be empty")]
    EmptyCanary,
    /// An instance name is not a lowercase path segment.
    #[error("provider instance name `{name}` must be lowercase letters, digits and `-`")]
    InvalidInstanceName {
        /// The name.
        name: String,
    },
    /// Two instances share a name.
    #[error("provider instance `{name}` is declared twice")]
    DuplicateInstance {
        /// The name.
        name: String,
    },
    /// A listen address could not be bound.
    #[error("failed to listen on {address} for the {backend} backend")]
    Bind {
        /// `wiremock` or `streaming`.
        backend: &'static str,
        /// The address.
        address: SocketAddr,
        /// The cause.
        #[source]
        source: io::Error,
    },
}

/// Fake model providers: a wiremock `MockServer` and a streaming backend sharing one set of
/// scripts, call counters and records. See the crate docs for an example.
///
/// Dropping it stops both servers.
pub struct FakeProviders {
    state: Arc<ProviderState>,
    instances: Vec<ProviderInstance>,
    wiremock: WiremockServer,
    streaming: StreamingServer,
}

/// The wiremock server, dropped away from the async task that drops it. wiremock's
/// `MockServer` blocks in its `Drop` (`futures::executor::block_on` over a tokio lock); inside a
/// tokio task whose cooperative budget is spent, that lock answers "not yet" and wakes at once,
/// so the nested executor polls it forever: one core busy, no system call, a run that never
/// ends (seen as `conformance try` hanging). On a blocking-pool thread there is no budget.
struct WiremockServer {
    address: SocketAddr,
    server: Option<MockServer>,
}

impl WiremockServer {
    fn new(server: MockServer) -> Self {
        WiremockServer {
            address: *server.address(),
            server: Some(server),
        }
    }

    fn address(&self) -> &SocketAddr {
        &self.address
    }
}

impl Drop for WiremockServer {
    fn drop(&mut self) {
        let Some(server) = self.server.take() else {
            return;
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn_blocking(move || drop(server));
            }
            Err(_) => drop(server),
        }
    }
}

impl std::fmt::Debug for FakeProviders {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeProviders")
            .field("wiremock_address", &self.wiremock_address())
            .field("streaming_address", &self.streaming_address())
            .field("instances", &self.instances)
            .finish_non_exhaustive()
    }
}

fn bind(
    backend: &'static str,
    address: Option<SocketAddr>,
) -> Result<std::net::TcpListener, StartError> {
    let address = address.unwrap_or_else(|| SocketAddr::from((Ipv4Addr::LOCALHOST, 0)));
    std::net::TcpListener::bind(address).map_err(|source| StartError::Bind {
        backend,
        address,
        source,
    })
}

/// An address clients can dial: an unspecified bind address becomes loopback.
fn dialable(address: SocketAddr) -> SocketAddr {
    if address.ip().is_unspecified() {
        SocketAddr::from((Ipv4Addr::LOCALHOST, address.port()))
    } else {
        address
    }
}

impl FakeProviders {
    /// Binds both servers and starts serving the configured instances (no scripts yet).
    pub async fn start(config: FakeProvidersConfig) -> Result<FakeProviders, StartError> {
        if config.canary.is_empty() {
            return Err(StartError::EmptyCanary);
        }
        let mut names = HashSet::new();
        for instance in &config.instances {
            if !ProviderInstance::name_is_valid(&instance.name) {
                return Err(StartError::InvalidInstanceName {
                    name: instance.name.clone(),
                });
            }
            if !names.insert(instance.name.as_str()) {
                return Err(StartError::DuplicateInstance {
                    name: instance.name.clone(),
                });
            }
        }
        let wiremock_listener = bind("wiremock", config.wiremock_listen)?;
        let streaming_listener = bind("streaming", config.streaming_listen)?;
        let streaming_address =
            streaming_listener
                .local_addr()
                .map_err(|source| StartError::Bind {
                    backend: "streaming",
                    address: config
                        .streaming_listen
                        .unwrap_or_else(|| SocketAddr::from((Ipv4Addr::LOCALHOST, 0))),
                    source,
                })?;
        let state = Arc::new(ProviderState::new(config.canary, &config.instances));
        let streaming =
            StreamingServer::start(streaming_listener, state.clone()).map_err(|source| {
                StartError::Bind {
                    backend: "streaming",
                    address: streaming_address,
                    source,
                }
            })?;
        let wiremock =
            WiremockServer::new(wiremock_backend::start(wiremock_listener, state.clone()).await);
        Ok(FakeProviders {
            state,
            instances: config.instances,
            wiremock,
            streaming,
        })
    }

    /// Registers a script. Its id must be new; its instances must exist and support what it
    /// asks for (see [`ScriptError`](crate::ScriptError)).
    pub fn register(&self, script: Script) -> Result<(), RegisterError> {
        self.state.register(script)
    }

    /// Removes a script together with its records and jobs; true if it was registered.
    pub fn forget(&self, script_id: &str) -> bool {
        self.state.forget(script_id)
    }

    /// The served instances.
    pub fn instances(&self) -> &[ProviderInstance] {
        &self.instances
    }

    /// The base URL to configure a host with, `http://127.0.0.1:PORT/<instance>`, on the
    /// server that serves the instance (wiremock or streaming backend); `None` if unknown.
    pub fn base_url(&self, instance: &str) -> Option<String> {
        let declared = self.instances.iter().find(|known| known.name == instance)?;
        let address = match declared.backend {
            Backend::Wiremock => *self.wiremock.address(),
            Backend::Streaming => self.streaming.address(),
        };
        Some(format!("http://{}/{instance}", dialable(address)))
    }

    /// The wiremock server's address.
    pub fn wiremock_address(&self) -> SocketAddr {
        dialable(*self.wiremock.address())
    }

    /// The streaming backend's address.
    pub fn streaming_address(&self) -> SocketAddr {
        dialable(self.streaming.address())
    }

    /// Every request attributed to `script_id` (calls and async-job polls, any instance),
    /// in arrival order.
    pub fn calls(&self, script_id: &str) -> Vec<RecordedCall> {
        self.state
            .records(|record| record.script_id.as_deref() == Some(script_id))
    }

    /// How many calls (completions, messages, job submits) `script_id` received at
    /// `instance`, rejected ones (401) included.
    pub fn call_count(&self, script_id: &str, instance: &str) -> usize {
        self.state
            .records(|record| {
                record.script_id.as_deref() == Some(script_id)
                    && record.instance == instance
                    && record.endpoint.is_call()
                    && record.call_index.is_some()
            })
            .len()
    }

    /// Ok when `script_id` received exactly `expected` calls at `instance`.
    pub fn assert_called_exactly(
        &self,
        script_id: &str,
        instance: &str,
        expected: usize,
    ) -> Result<(), VerificationError> {
        let actual = self.call_count(script_id, instance);
        if actual == expected {
            return Ok(());
        }
        Err(VerificationError::CallCount {
            script_id: script_id.to_owned(),
            instance: instance.to_owned(),
            expected,
            actual,
            received: listing(&self.calls(script_id), self.state.canary()),
        })
    }

    /// Ok when no request at all (any instance, any endpoint) was attributed to `script_id`.
    pub fn assert_never_called(&self, script_id: &str) -> Result<(), VerificationError> {
        let calls = self.calls(script_id);
        if calls.is_empty() {
            return Ok(());
        }
        Err(VerificationError::Called {
            script_id: script_id.to_owned(),
            actual: calls.len(),
            received: listing(&calls, self.state.canary()),
        })
    }

    /// Requests that matched no registered script (no or unknown marker, unknown instance,
    /// unknown job), in arrival order.
    pub fn unmatched_calls(&self) -> Vec<RecordedCall> {
        self.state.records(|record| record.call_index.is_none())
    }

    /// Lines describing the servers; the first is `listening on http://<wiremock address>`.
    pub fn startup_report(&self) -> String {
        let mut lines = vec![
            format!("listening on http://{}", self.wiremock_address()),
            format!("streaming backend on http://{}", self.streaming_address()),
        ];
        for instance in &self.instances {
            lines.push(format!(
                "instance {} ({}, {}) at {}",
                instance.name,
                instance.kind,
                instance.backend.as_str(),
                self.base_url(&instance.name).unwrap_or_default()
            ));
        }
        lines.join("\n")
    }

    /// Stops both servers and waits until every connection task has ended.
    pub async fn shutdown(self) {
        let FakeProviders {
            wiremock,
            streaming,
            ..
        } = self;
        streaming.stop().await;
        drop(wiremock);
    }
}
