//! `reference-runtime`: serves the reference host.
//!
//! ```text
//! reference-runtime [--config FILE] [--listen ADDR] [--store memory|sqlite:PATH]
//!                   [--keep-alive-ms MS] [--header-read-timeout-ms MS]
//!                   [--body-read-timeout-ms MS] [--max-connections N]
//!                   [--defect NAME]... [--list-defects] [--bench-publisher]
//! ```
//!
//! `--store memory` (the default) keeps nothing past the process; `--store sqlite:PATH` keeps
//! every log in the SQLite file `PATH` (created if absent, with its `-wal`/`-shm` companions
//! beside it), which a later start on the same `PATH` recovers. The runtime never removes it.
//!
//! The first stdout line is `listening on http://ADDR`; logs go to stderr (filter with
//! `RUST_LOG`), with every configured credential scrubbed.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context;
use clap::Parser;
use reference_runtime::config::{Config, StoreKind};
use reference_runtime::defects::{Defect, Defects};
use reference_runtime::redact::{CredentialSource, Redactor};
use reference_runtime::runtime::{RuntimeOptions, start};

/// The reference host of the execution protocol and the OpenWOP run events chapter.
#[derive(Debug, Parser)]
#[command(name = "reference-runtime", version)]
struct Args {
    /// TOML configuration file.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Address to listen on (port 0 picks a free port); overrides `server.listen`.
    #[arg(long, value_name = "ADDR")]
    listen: Option<SocketAddr>,
    /// Event store: `memory` (nothing survives the process) or `sqlite:PATH` (a durable
    /// SQLite file, kept and recovered by the next start); overrides `store.kind`.
    #[arg(long, value_name = "KIND")]
    store: Option<StoreKind>,
    /// SSE keep-alive interval in ms (1–30000); overrides `server.keep_alive_ms`.
    #[arg(long, value_name = "MS")]
    keep_alive_ms: Option<u64>,
    /// Longest time a connection may take to send a request's head, the wait for it on a
    /// kept-alive connection included, in ms; overrides `server.header_read_timeout_ms`
    /// (default 40000).
    #[arg(long, value_name = "MS")]
    header_read_timeout_ms: Option<u64>,
    /// Longest time a request's whole body may take to arrive, in ms; overrides
    /// `server.body_read_timeout_ms` (default 60000).
    #[arg(long, value_name = "MS")]
    body_read_timeout_ms: Option<u64>,
    /// Connections served at once (more wait in the listen backlog); overrides
    /// `server.max_connections` (default 4096).
    #[arg(long, value_name = "N")]
    max_connections: Option<usize>,
    /// Longest time a connection's writes may stay blocked (its reader, e.g. an SSE subscriber,
    /// taking no byte) before it is closed, in ms (0: never); overrides
    /// `server.write_stall_timeout_ms` (default 30000).
    #[arg(long, value_name = "MS")]
    write_stall_timeout_ms: Option<u64>,
    /// Switches a defect on (repeatable; see --list-defects).
    #[arg(long = "defect", value_name = "NAME")]
    defects: Vec<Defect>,
    /// Prints the defect catalogue and exits.
    #[arg(long)]
    list_defects: bool,
    /// Serves the bench publisher's routes (`/bench/logs`), for the side-by-side SSE bench
    /// only: never in normal serving.
    #[arg(long)]
    bench_publisher: bool,
}

/// A log writer that scrubs credentials from every line.
#[derive(Clone)]
struct RedactingStderr(Redactor);

impl Write for RedactingStderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        std::io::stderr().write_all(self.0.scrub(&text).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    if args.list_defects {
        for defect in Defect::ALL {
            println!(
                "{}\t{}\t{}\t{}\t{}",
                defect.name(),
                defect.surface(),
                defect.area().as_str(),
                defect.requirement(),
                defect.description()
            );
        }
        return Ok(());
    }
    let mut config = match &args.config {
        Some(path) => Config::from_file(path)?,
        None => Config::default(),
    };
    if let Some(store) = args.store {
        config.store.kind = store;
    }
    if let Some(ms) = args.keep_alive_ms {
        config.server.keep_alive_ms = ms;
    }
    if let Some(ms) = args.header_read_timeout_ms {
        config.server.header_read_timeout_ms = ms;
    }
    if let Some(ms) = args.body_read_timeout_ms {
        config.server.body_read_timeout_ms = ms;
    }
    if let Some(n) = args.max_connections {
        config.server.max_connections = n;
    }
    if let Some(ms) = args.write_stall_timeout_ms {
        config.server.write_stall_timeout_ms = ms;
    }
    config.bench_publisher = args.bench_publisher;
    let listen = args.listen.unwrap_or(config.server.listen);
    config.validate()?;

    let redactor = Redactor::new();
    let credentials = CredentialSource::Environment;
    for provider in &config.providers {
        if let Some(secret) = credentials.resolve(&provider.credential_env) {
            redactor.learn(&secret);
        }
    }
    let writer = RedactingStderr(redactor);
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .init();

    let options = RuntimeOptions {
        config,
        defects: Defects::of(args.defects),
        clock: std::sync::Arc::new(reference_runtime::clock::SystemClock),
        credentials,
    };
    let running = start(listen, options)
        .await
        .context("failed to start the runtime")?;
    {
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "listening on {}", running.base_url())?;
        stdout.flush()?;
    }
    tokio::signal::ctrl_c()
        .await
        .context("failed to wait for ctrl-c")?;
    tracing::info!("shutting down");
    running.shutdown().await;
    Ok(())
}
