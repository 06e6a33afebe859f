//! Reports: one model ([`model::RunReport`]), rendered as JSON ([`json`]), JUnit XML
//! ([`junit`]), one self-contained HTML page ([`html`]), a Markdown summary ([`markdown`]),
//! `repro/<case>.sh` curl scripts ([`repro`]) and console output ([`console`]); [`write_all`]
//! writes every file format into a report directory (`directory.rs`).

pub mod claim;
pub mod console;
pub mod differential;
mod directory;
pub mod html;
pub mod json;
pub mod junit;
pub mod markdown;
pub mod merge;
pub mod model;
mod outcome;
pub mod repro;
pub mod streaming;

pub use directory::{WriteReportError, WrittenReports, write_all};
pub use json::report_schema;
pub use model::*;
pub use outcome::{NOT_JUDGED_EXIT_CODE, exit_code, exit_code_meaning, first_failing_check};
