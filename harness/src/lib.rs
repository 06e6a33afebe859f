//! The conformance harness: data-driven cases drive any host over HTTP and report verdicts.
//!
//! The public API is a facade of eight modules (what is versioned is in STABILITY.md):
//!
//! - [`target`]: the host under test; a target from a URL and options
//!   ([`target::external`], [`target::TargetOptions`]), the probe of its discovery, role
//!   bindings and the fake upstream.
//! - [`run`]: run options, [`run::Session`] (probe, then run the cases), the selection, the
//!   baseline (XFAIL, STALE), partitions and the plan; the lower-level runner the kill matrix
//!   uses.
//! - [`case`]: the case file format, loading and lint.
//! - [`report`]: the report model and its renderings (console, JSON, JUnit, Markdown, HTML,
//!   repro scripts, claims, merges).
//! - [`transcript`]: what the driver records (requests, responses, SSE frames with timings).
//! - [`verdict`]: levels and verdicts.
//! - [`load`]: load mode (many subscribers per log, every sequence judged).
//! - [`coverage`]: requirement coverage of a case corpus.
//!
//! Everything else is the engine, private to the crate: the driver and case execution
//! (`driver`), pure judgement (`checks`), `${…}` templates, the strict SSE tokenizer, excerpts,
//! generated values, the runner itself, the probe and the fake upstream.
//!
//! The library judges any host over HTTP and does not link the reference runtime: the built-in
//! target (the runtime started in-process), the kill matrix and the `conformance` command are
//! the `conformance-cli` crate (`harness/cli/`).

pub mod case;
pub mod coverage;
pub mod load;
pub mod report;
pub mod run;
pub mod target;
pub mod transcript;
pub mod verdict;

mod baseline;
mod capability;
mod checks;
mod driver;
mod event_selector;
mod excerpt;
mod external;
mod feedback_anchor;
mod feedback_signal;
mod frame_kind;
mod generate;
mod host;
mod mock_provider_seat;
mod partition;
mod plan;
mod probe;
mod runner;
mod sse;
mod stream_fold;
mod suggest;
mod template;
mod upstream;
