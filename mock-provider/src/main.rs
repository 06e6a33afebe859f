//! `mock-provider`: serve fake model providers from script files.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::{Parser, Subcommand};
use mock_provider::{ServeOptions, parse_instance_flag, serve_from_files};

#[derive(Parser)]
#[command(
    name = "mock-provider",
    version,
    about = "Fake model providers for conformance tests"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve every DIR/*.json script until interrupted.
    Serve {
        /// Address of the wiremock server (printed as `listening on http://ADDR`).
        #[arg(long)]
        listen: SocketAddr,
        /// Address of the streaming backend (default: a free port on the same IP).
        #[arg(long)]
        streaming_listen: Option<SocketAddr>,
        /// Directory of script files, one script per `*.json` file.
        #[arg(long)]
        scripts: PathBuf,
        /// Name of the environment variable holding the canary credential.
        #[arg(long)]
        canary_env: String,
        /// An instance as NAME=KIND[@streaming]; repeat it; default: the standard set.
        #[arg(long = "instance")]
        instances: Vec<String>,
    },
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let Command::Serve {
        listen,
        streaming_listen,
        scripts,
        canary_env,
        instances,
    } = Cli::parse().command;
    let canary = std::env::var(&canary_env)
        .with_context(|| format!("environment variable `{canary_env}` is not set"))?;
    if canary.is_empty() {
        bail!("environment variable `{canary_env}` is empty");
    }
    let instances = instances
        .iter()
        .map(|flag| parse_instance_flag(flag))
        .collect::<Result<Vec<_>, _>>()
        .map_err(anyhow::Error::msg)?;
    let providers = serve_from_files(ServeOptions {
        listen,
        streaming_listen,
        scripts_dir: scripts,
        canary,
        instances,
    })
    .await?;
    println!("{}", providers.startup_report());
    tokio::signal::ctrl_c()
        .await
        .context("failed to wait for Ctrl-C")?;
    providers.shutdown().await;
    Ok(())
}
