//! The conformance harness: data-driven cases drive any host over HTTP and report verdicts.
//!
//! - [`case`]: the case file format and loading.
//! - [`verdict`]: levels and verdicts.
//! - [`transcript`]: what the driver records (requests, responses, SSE frames with timings).
//! - [`report`]: the report model and its renderings.
//! - [`template`]: `${…}` expressions in case files.
//! - [`sse`]: the strict SSE tokenizer.
//! - [`driver`]: HTTP exchanges and case execution; [`checks`]: pure judgement.
//! - [`runner`]: selection, skipping, parallel runs, the report model.
//! - [`target`], [`probe`], [`upstream`], [`launch`]: the host under test and its fake upstream.
//! - [`baseline`]: expected failures (XFAIL, STALE).
//! - [`coverage`]: requirement coverage of a case corpus.

pub mod baseline;
pub mod case;
pub mod checks;
pub mod coverage;
pub mod driver;
pub mod generate;
pub mod launch;
pub mod probe;
pub mod report;
pub mod runner;
pub mod selftest;
pub mod sse;
pub mod target;
pub mod template;
pub mod tolerance;
pub mod transcript;
pub mod try_case;
pub mod upstream;
pub mod verdict;
