//! Surface X's configuration: the one value its service, handlers and drivers read, built once
//! at start from the runtime's [`Config`] (the `[execution]` choices, the `[limits]` and the SSE
//! keep-alive of `[server]`). The configured providers are the provider-call service's
//! (`crate::providers::calls`), which surface X reads them from.

use std::time::Duration;

use crate::config::{Config, LimitsConfig};
use crate::execution::choices::ExecutionChoices;

/// Surface X's configuration (see the module documentation).
#[derive(Debug, Clone)]
pub struct ExecutionConfig {
    /// `[execution]`: what the execution protocol leaves to the host.
    pub choices: ExecutionChoices,
    /// `[limits]`: body size, admission, log capacity, provider waits.
    pub limits: LimitsConfig,
    /// `[server] keep_alive_ms`: the idle interval between SSE `:` keep-alive comments.
    pub keep_alive: Duration,
}

impl ExecutionConfig {
    /// Surface X's part of the runtime's configuration.
    pub fn from_config(config: &Config) -> Self {
        ExecutionConfig {
            choices: config.execution.clone(),
            limits: config.limits.clone(),
            keep_alive: config.server.keep_alive(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_takes_the_execution_table_the_limits_and_the_keep_alive() {
        let config = Config::from_toml(
            "[server]\nkeep_alive_ms = 2000\n[execution]\nid_form = \"prefixed\"\n[limits]\nmax_active_executions = 3\n",
        )
        .unwrap();
        let x = ExecutionConfig::from_config(&config);
        assert_eq!(x.keep_alive, Duration::from_secs(2));
        assert_eq!(
            x.choices.id_form,
            crate::execution::choices::ExecutionIdForm::Prefixed
        );
        assert_eq!(x.limits.max_active_executions, 3);
    }
}
