//! The reference runtime's integration tests, one binary: both surfaces over real HTTP, one
//! module per concept, the defect table (`defects`), and the hosts the tests share.
//!
//! Fake providers are started with `MockServer::builder().start()`, never `MockServer::start()`:
//! the latter lends a pooled server that an earlier test's runtime may still be calling (an
//! abandoned attempt, a retry), and a test counting the provider's requests then counts that
//! stranger's too (`x_max_attempts_ignored` once saw three calls for two attempts).

mod bench_publisher;
mod connections;
mod crash_sigkill;
mod defects;
mod error_envelopes;
mod restarts;
mod w_choices;
mod w_discovery;
mod w_engine;
mod w_envelopes;
mod w_era2;
mod w_feedback;
mod w_heartbeat;
mod w_heartbeat_instances;
mod w_host;
mod w_poll;
mod w_provider;
mod w_runs;
mod w_scheduling;
mod w_stream;
mod w_structured_runs;
mod x_binary;
mod x_choices;
mod x_host;
mod x_protocol;
mod x_providers;
mod x_responses;
