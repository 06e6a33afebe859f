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
mod merge;
mod open_points;
mod run;
mod try_case;

use std::process::ExitCode;

use clap::Parser;

pub use args::Cli;

/// A failure with a known exit code.
#[derive(Debug)]
pub enum ExpectedError {
    /// Usage or configuration: exit 2.
    Usage(String),
    /// Harness or environment: exit 3.
    Environment(String),
}

impl std::fmt::Display for ExpectedError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExpectedError::Usage(m) | ExpectedError::Environment(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for ExpectedError {}

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

/// Prints a line to stdout; a closed pipe (`conformance … | head`) ends the process quietly
/// instead of panicking.
pub fn emit(line: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    if let Err(error) = stdout
        .write_fmt(line)
        .and_then(|()| stdout.write_all(b"\n"))
    {
        if error.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: failed to write to stdout: {error}");
        std::process::exit(3);
    }
}

/// `println!` through [`emit`].
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => { $crate::cli::emit(format_args!($($arg)*)) };
}

/// A usage error (exit 2).
pub fn usage(message: impl Into<String>) -> anyhow::Error {
    ExpectedError::Usage(message.into()).into()
}

/// An environment error (exit 3).
pub fn environment(message: impl Into<String>) -> anyhow::Error {
    ExpectedError::Environment(message.into()).into()
}
