//! The `conformance` command's integration tests, one binary: the kill matrix (the self-test),
//! the tolerance matrix, an external target's verdicts, unjudged runs, the transcript
//! snapshots, the simpler provider setups, `conformance plan`, the same verdicts through a
//! re-chunking proxy and what a CI pipeline does with the binary (`ci_pipeline`). The case
//! corpus itself runs in its own binary (`tests/conformance.rs`, libtest-mimic).

mod authoring;
mod bounded_run;
mod certify_example;
mod ci_pipeline;
mod docs;
mod external_target;
mod forwarding_proxy;
mod kill_matrix;
mod load;
mod mock_ai_seam;
mod mock_provider_seat;
mod plan;
mod plan_equals_run;
mod probed_runner;
mod provider_setups;
mod rechunking_proxy;
mod resubscribing_proxy;
mod serve_store;
mod tolerance_matrix;
mod transcript_snapshots;
mod unjudged_runs;
