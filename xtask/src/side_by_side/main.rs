//! `cargo bench-side-by-side`: the reference runtime near the machine's limit, measured in one
//! run with the same client against the bare tokio-broadcast + axum SSE server of
//! `../shared/bench/sse-anchor`, and against the same bare server writing the runtime's frame
//! (`framed-anchor`, this crate).
//!
//! ```text
//! cargo bench-side-by-side [--subscribers 1000] [--events 10000] [--paced-events 1000]
//!                          [--rate 100] [--repeats 1] [--out FILE] [--anchor-dir DIR]
//! ```
//!
//! It builds the anchor (`CARGO_TARGET_DIR=${TMPDIR:-/tmp}/sse-anchor-target cargo build
//! --release` in the anchor's own directory, never copied into this workspace) and the runtime
//! (`cargo build --release -p reference-runtime`) and `framed-anchor` (`cargo build --release -p
//! xtask --bin framed-anchor`), then for each load (a burst of N events as fast as possible; N
//! events paced at R events/s) and each side (the anchor; the bare server with X's frame; the
//! runtime's bench publisher on one live execution; the bare server with W's frame; the runtime
//! on one live run) starts a fresh server, runs `sse-load` against it with S subscribers, and
//! kills the server by its PID. It prints each side's figures and the runtime's ratios to both
//! bare servers, and appends every `sse-load` JSON line to `--out`.

mod report;
mod servers;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, bail};
use report::{Mode, Runs};
use servers::{Binaries, Load, Side};

const USAGE: &str = "usage: cargo bench-side-by-side [--subscribers 1000] [--events 10000] \
[--paced-events 1000] [--rate 100] [--repeats 1] [--out FILE] [--anchor-dir DIR]";

/// The runtime's configuration for the bench: one run takes every subscriber (the default
/// limit is 64 streams per run).
const RUNTIME_CONFIG: &str = "[openwop]\nmax_subscribers_per_run = 0\n";

struct Args {
    subscribers: u64,
    events: u64,
    paced_events: u64,
    rate: f64,
    repeats: usize,
    out: PathBuf,
    anchor_dir: PathBuf,
}

fn parse_args(workspace: &Path) -> anyhow::Result<Args> {
    let mut args = Args {
        subscribers: 1000,
        events: 10_000,
        paced_events: 1000,
        rate: 100.0,
        repeats: 1,
        out: std::env::temp_dir().join("bench-side-by-side.jsonl"),
        anchor_dir: workspace.join("../shared/bench/sse-anchor"),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "-h" || flag == "--help" {
            println!("{USAGE}");
            std::process::exit(0);
        }
        let value = it.next().with_context(|| format!("{flag} needs a value"))?;
        let bad = || format!("bad value for {flag}: {value}");
        match flag.as_str() {
            "--subscribers" => args.subscribers = value.parse().with_context(bad)?,
            "--events" => args.events = value.parse().with_context(bad)?,
            "--paced-events" => args.paced_events = value.parse().with_context(bad)?,
            "--rate" => args.rate = value.parse().with_context(bad)?,
            "--repeats" => args.repeats = value.parse().with_context(bad)?,
            "--out" => args.out = PathBuf::from(value),
            "--anchor-dir" => args.anchor_dir = PathBuf::from(value),
            _ => bail!("unknown flag {flag}\n{USAGE}"),
        }
    }
    if args.subscribers == 0 || args.events < 2 || args.paced_events < 2 || args.repeats == 0 {
        bail!("subscribers ≥ 1, events ≥ 2, paced events ≥ 2, repeats ≥ 1\n{USAGE}");
    }
    if args.rate.is_nan() || args.rate <= 0.0 {
        bail!("--rate must be positive");
    }
    Ok(args)
}

fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

fn run(mut command: Command, what: &str) -> anyhow::Result<()> {
    let status = command
        .status()
        .with_context(|| format!("running {what}"))?;
    if !status.success() {
        bail!("{what} failed ({status})");
    }
    Ok(())
}

/// `cargo build --release -p PACKAGE --bin BIN` in this workspace.
fn release_build(workspace: &Path, package: &str, bin: &str) -> anyhow::Result<()> {
    eprintln!("# building {bin} (release)");
    let mut build = cargo();
    build
        .args(["build", "--release", "--quiet", "-p", package, "--bin", bin])
        .current_dir(workspace);
    run(build, &format!("{bin}'s build"))
}

/// Builds the servers in release and says where the binaries are.
fn build(workspace: &Path, anchor_dir: &Path, scratch: &Path) -> anyhow::Result<Binaries> {
    let anchor_target = std::env::temp_dir().join("sse-anchor-target");
    eprintln!("# building the anchor in {anchor_dir:?} (target {anchor_target:?})");
    let mut anchor = cargo();
    anchor
        .args(["build", "--release", "--quiet"])
        .current_dir(anchor_dir)
        .env("CARGO_TARGET_DIR", &anchor_target);
    run(anchor, "the anchor's build")?;
    release_build(workspace, "reference-runtime", "reference-runtime")?;
    release_build(workspace, "xtask", "framed-anchor")?;
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|t| {
            if t.is_absolute() {
                t
            } else {
                workspace.join(t)
            }
        })
        .unwrap_or_else(|| workspace.join("target"));
    let runtime_config = scratch.join("runtime.toml");
    std::fs::write(&runtime_config, RUNTIME_CONFIG).context("writing the runtime's config")?;
    Ok(Binaries {
        anchor_server: anchor_target.join("release/anchor-server"),
        framed_anchor: target.join("release/framed-anchor"),
        sse_load: anchor_target.join("release/sse-load"),
        runtime: target.join("release/reference-runtime"),
        runtime_config,
    })
}

fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines().find_map(|l| {
                l.strip_prefix("model name")?
                    .split_once(':')
                    .map(|(_, m)| m.trim().to_string())
            })
        })
        .unwrap_or_else(|| "unknown CPU".into());
    format!("{cores} cores ({cpu})")
}

fn main() -> anyhow::Result<()> {
    let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .context("the workspace directory")?;
    let args = parse_args(&workspace)?;
    let scratch = std::env::temp_dir().join(format!("bench-side-by-side-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).context("a scratch directory")?;
    let bins = build(&workspace, &args.anchor_dir, &scratch)?;
    let loads = [
        (
            Mode::Burst,
            Load {
                subscribers: args.subscribers,
                events: args.events,
                rate: None,
            },
        ),
        (
            Mode::Paced,
            Load {
                subscribers: args.subscribers,
                events: args.paced_events,
                rate: Some(args.rate),
            },
        ),
    ];
    let mut out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&args.out)
        .with_context(|| format!("opening {:?}", args.out))?;
    let mut all: Vec<Runs> = Vec::new();
    for (mode, load) in loads {
        for side in Side::ALL {
            all.push(Runs {
                mode,
                load,
                side,
                lines: Vec::new(),
            });
        }
        // Runs alternate between the sides, so a slow minute of the machine hits each of them.
        for repeat in 1..=args.repeats {
            for side in Side::ALL {
                eprintln!("# {mode:?} {} run {repeat}", side.label());
                let line = servers::run_once(side, load, &bins, &scratch)
                    .with_context(|| format!("{mode:?} run of {}", side.label()))?;
                let mut tagged =
                    serde_json::json!({ "side": format!("{side:?}"), "mode": format!("{mode:?}") });
                if let (Some(tag), Some(fields)) = (tagged.as_object_mut(), line.as_object()) {
                    tag.extend(fields.clone());
                }
                writeln!(out, "{tagged}")?;
                println!("{tagged}");
                if let Some(runs) = all.iter_mut().find(|r| r.mode == mode && r.side == side) {
                    runs.lines.push(line);
                }
                std::thread::sleep(Duration::from_secs(1));
            }
        }
    }
    println!();
    println!(
        "## Side by side: {}, loopback, one fresh server per run",
        machine()
    );
    println!();
    for mode in [Mode::Burst, Mode::Paced] {
        let runs: Vec<&Runs> = all.iter().filter(|r| r.mode == mode).collect();
        println!("{}", report::side_table(&runs));
    }
    println!("{}", report::ratio_table(&all, report::Baseline::Anchor));
    println!("{}", report::ratio_table(&all, report::Baseline::Framed));
    println!("raw lines appended to {:?}", args.out);
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(())
}
