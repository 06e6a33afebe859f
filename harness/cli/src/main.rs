//! `conformance`: certify a host of the execution protocol and the OpenWOP v2 run events
//! chapter with data-driven cases. See `conformance --help` and README.md.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
