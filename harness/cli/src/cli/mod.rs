//! The `conformance` command line: argument parsing and one error-to-exit-code table.
//!
//! Exit codes (stable, documented in README.md):
//!
//! | code | meaning |
//! |---|---|
//! | 0 | the host conforms (no FAIL, no STALE baseline entry) |
//! | 1 | a conformance failure (a MUST case failed, or a baseline entry is stale) |
//! | 2 | usage or configuration error (bad flags, unreadable files, invalid cases) |
//! | 3 | harness or environment error (target unreachable, every request refused, a case ERROR) |
//! | 4 | not judged (a MUST case BLOCKED, or a served or requested surface with no judged case) |

mod args;
mod claim;
mod commands;
mod corpus;
mod exit;
mod load;
mod merge;
mod open_points;
mod run;
mod try_case;

use std::process::ExitCode;

use clap::Parser;

use args::Cli;
use exit::ExpectedError;

/// Runs the CLI and maps every outcome to its exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: failed to start the async runtime: {error}");
            return ExitCode::from(3);
        }
    };
    match runtime.block_on(commands::dispatch(cli)) {
        Ok(code) => ExitCode::from(code),
        Err(error) => {
            let code = match error.downcast_ref::<ExpectedError>() {
                Some(ExpectedError::Usage(_)) => 2,
                Some(ExpectedError::Environment(_)) | None => 3,
            };
            eprintln!("error: {error:#}");
            ExitCode::from(code)
        }
    }
}
