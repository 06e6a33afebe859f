//! How a command ends and speaks: the failures with a known exit code ([`ExpectedError`]) and
//! stdout lines that survive a closed pipe ([`emit`], `outln!`).

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
    ($($arg:tt)*) => { $crate::cli::exit::emit(format_args!($($arg)*)) };
}

/// A usage error (exit 2).
pub fn usage(message: impl Into<String>) -> anyhow::Error {
    ExpectedError::Usage(message.into()).into()
}

/// An environment error (exit 3).
pub fn environment(message: impl Into<String>) -> anyhow::Error {
    ExpectedError::Environment(message.into()).into()
}
