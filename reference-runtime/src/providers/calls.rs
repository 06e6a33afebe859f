//! The provider-call service both surfaces call providers through: the configured providers,
//! one adapter each, where their credentials come from and the redactor that learns every
//! credential sent. Surface X's executions and surface W's AI node hold the same one; neither
//! surface reaches providers through the other.

use std::sync::Arc;

use crate::config::{Config, ProviderConfig};
use crate::redact::{CredentialSource, Redactor};

use super::{Adapter, AdapterError, ProviderExchange};

/// The configured providers and what calling them takes.
pub struct ProviderCalls {
    /// The configured providers, in configuration order (an index names one).
    pub(crate) providers: Vec<ProviderConfig>,
    /// Where provider credentials come from.
    pub(crate) credentials: CredentialSource,
    /// The redactor that learns every credential it sends.
    pub(crate) redactor: Redactor,
    /// One adapter per configured provider, in the same order.
    pub(crate) adapters: Vec<Adapter>,
}

impl std::fmt::Debug for ProviderCalls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderCalls").finish_non_exhaustive()
    }
}

impl ProviderCalls {
    /// The configured providers' adapters (each rewriting its exchange with `exchange`, a
    /// known-bad runtime's); the redactor learns every credential already set.
    pub fn new(
        config: &Config,
        exchange: Option<Arc<dyn ProviderExchange>>,
        credentials: CredentialSource,
    ) -> Result<Arc<ProviderCalls>, AdapterError> {
        let redactor = Redactor::new();
        for provider in &config.providers {
            if let Some(secret) = credentials.resolve(&provider.credential_env) {
                redactor.learn(&secret);
            }
        }
        let adapters = config
            .providers
            .iter()
            .map(|p| Adapter::new(p, &config.limits, exchange.clone(), redactor.clone()))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Arc::new(ProviderCalls {
            providers: config.providers.clone(),
            credentials,
            redactor,
            adapters,
        }))
    }
}
