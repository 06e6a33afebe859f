//! The I/O side: sending requests and reading responses and streams ([`http`]), and running a
//! case's steps ([`case_run`]), one executor per step action (`step`).

mod budget_cut;
pub(crate) mod case_run;
pub(crate) mod case_state;
pub(crate) mod http;
mod run_ends;
mod step;

pub use case_run::{CaseExecution, CaseRunner, STEP_COMPLETED};
pub use http::{ClientOptions, HttpDriver, Limits};
pub(crate) use http::{PreparedRequest, ReadMode, StopCondition};
