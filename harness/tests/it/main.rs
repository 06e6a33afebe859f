//! The harness library's integration tests, one binary: the reports (formats, console,
//! snapshots, over one hand-built sample report), the baseline, requirement coverage and its
//! gate, the heartbeat interval the probe reads off a host channel, a hostile host, streams on
//! a run that ended, a finished log that keeps growing, a poll answered in pages, a
//! rate-limited host, a host reading run ids only as `%2F`, cases not provoked, the published
//! case and report schemas, the rules of the codebase and the facade (few public modules, no
//! binary-only dependency).

mod baseline_rules;
mod case_isolation;
mod coverage_gate;
mod coverage_report;
mod ended_run_streams;
mod facade;
mod generate_replay;
mod heartbeat_probe;
mod host_at_capacity;
mod hostile_host;
mod hygiene;
mod lost_run_end;
mod not_provoked;
mod paged_poll;
mod percent_run_ids;
mod published_schemas;
mod rate_limited_host;
mod raw_host;
mod report_console;
mod report_formats;
mod report_snapshots;
mod sample_report;
mod settled_log;
