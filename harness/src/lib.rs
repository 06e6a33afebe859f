//! The conformance harness: data-driven cases drive any host over HTTP and report verdicts.
//!
//! - [`case`]: the case file format and loading.
//! - [`verdict`]: levels and verdicts.
//! - [`transcript`]: what the driver records (requests, responses, SSE frames with timings).
//! - [`report`]: the report model and its renderings; [`excerpt`]: the bounded evidence a
//!   report keeps of a judged transcript.
//! - [`template`]: `${…}` expressions in case files.
//! - [`sse`]: the strict SSE tokenizer; [`stream_fold`]: a stream judged as it arrives past the
//!   frames the driver keeps.
//! - [`driver`]: HTTP exchanges and case execution; [`checks`]: pure judgement.
//! - [`runner`]: selection, skipping, parallel runs, the report model.
//! - [`target`], [`probe`], [`upstream`]: the host under test and its fake upstream.
//! - [`baseline`]: expected failures (XFAIL, STALE).
//! - [`partition`]: `--partition k/n`, stable slices of a run for merging.
//! - [`coverage`]: requirement coverage of a case corpus.
//! - [`load`]: load mode (many subscribers per log, every sequence judged).
//! - [`suggest`]: "did you mean" for misspelled names.
//!
//! The library judges any host over HTTP and does not link the reference runtime: the built-in
//! target (the runtime started in-process), the kill matrix and the `conformance` command are
//! the `conformance-cli` crate (`harness/cli/`).

pub mod baseline;
pub mod case;
pub mod checks;
pub mod coverage;
pub mod driver;
pub mod excerpt;
pub mod generate;
pub mod load;
pub mod partition;
pub mod plan;
pub mod probe;
pub mod report;
pub mod runner;
pub mod sse;
pub mod stream_fold;
pub mod suggest;
pub mod target;
pub mod template;
pub mod transcript;
pub mod upstream;
pub mod verdict;
