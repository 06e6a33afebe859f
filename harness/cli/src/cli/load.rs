//! `conformance load`: many subscribers on each of several runs or executions, every
//! subscriber's sequence judged against its log (see the harness's `load` module).

use std::path::PathBuf;
use std::time::Duration;

use conformance_cli::launch::{BuiltIn, BuiltInOptions, start_built_in};
use harness::load::{LoadPlan, LoadResult, LoadSurface, LoadVerdict, render, run_load};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::args::{LoadArgs, ProfileArg};
use super::exit::{environment, usage};
use super::run::external_target;

fn plan(args: &LoadArgs, surface: LoadSurface) -> LoadPlan {
    let mut plan = LoadPlan::new(surface);
    plan.logs = args.runs;
    plan.subscribers = args.subscribers;
    plan.events = args.events;
    plan.event_interval_ms = args.event_interval_ms;
    plan.stream_mode = match surface {
        LoadSurface::Openwop => Some(args.stream_mode.clone()),
        LoadSurface::Execution => None,
    };
    plan.buffer_ms = match surface {
        LoadSurface::Openwop => args.buffer_ms,
        LoadSurface::Execution => None,
    };
    plan.disconnect_every = args.disconnect_every;
    plan.max_connections = args.max_connections;
    plan.connect_concurrency = args.connect_concurrency;
    plan.time_limit_ms = args.time_limit_s.saturating_mul(1000);
    plan.keepalive_window_ms = args.keepalive_window_ms;
    plan.seed = args.seed.unwrap_or_else(rand::random);
    plan
}

/// `conformance load`.
pub async fn load(args: LoadArgs) -> anyhow::Result<u8> {
    let surfaces: Vec<LoadSurface> = if args.surfaces.is_empty() {
        vec![LoadSurface::Execution, LoadSurface::Openwop]
    } else {
        args.surfaces
            .iter()
            .map(|s| match s.as_str() {
                "execution" => Ok(LoadSurface::Execution),
                "openwop" => Ok(LoadSurface::Openwop),
                other => Err(usage(format!(
                    "unknown surface `{other}` (execution, openwop)"
                ))),
            })
            .collect::<anyhow::Result<_>>()?
    };
    for surface in &surfaces {
        plan(&args, *surface)
            .validate()
            .map_err(|e| usage(e.to_string()))?;
    }
    let mut built_in: Option<BuiltIn> = None;
    let mut target = match &args.target {
        Some(url) => {
            if !args.defects.is_empty() {
                return Err(usage("--defect applies to the built-in target only"));
            }
            if args.built_in_profile != ProfileArg::Standard {
                return Err(usage(
                    "--built-in-profile applies to the built-in target only",
                ));
            }
            external_target(&args.external, url, true).await?
        }
        None => {
            let running = start_built_in(&BuiltInOptions {
                defects: args.defects.clone(),
                profile: args.built_in_profile.into(),
                // A load run is many readers of one run: no subscriber limit.
                max_subscribers_per_run: Some(0),
                // Every subscriber of every log may hold a connection at once.
                max_connections: Some(
                    args.subscribers
                        .saturating_mul(args.runs)
                        .saturating_add(256)
                        .max(4096),
                ),
                ..BuiltInOptions::default()
            })
            .await
            .map_err(|e| environment(e.to_string()))?;
            let target = running.target.clone();
            built_in = Some(running);
            target
        }
    };
    // The load speaks to the host as the cases do: what the probe learns of it (the negotiated
    // OpenWOP-Version, the run-id path form, the mock provider's seat) goes on every request.
    if surfaces.contains(&LoadSurface::Openwop) {
        let told = super::run::facts_of(&args.host_facts)?;
        for note in harness::load::learn_the_host(&mut target, &told)
            .await
            .map_err(|e| environment(e.to_string()))?
        {
            eprintln!("note: {note}");
        }
    }
    let report_dir = args
        .report_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from("reports").join(format!("load-{}", chrono_free_stamp())));
    std::fs::create_dir_all(&report_dir)
        .map_err(|e| environment(format!("failed to create {}: {e}", report_dir.display())))?;
    let mut results: Vec<LoadResult> = Vec::new();
    // Each surface's run is bounded by --time-limit-s on the async runtime's clock; the
    // watchdog's own thread bounds it too (plus a margin for starting runs and judging), so a
    // spinning or deadlocked runtime ends with a diagnostic rather than a hang.
    let watchdog = conformance_cli::watchdog::Watchdog::start(
        "load",
        Duration::from_secs(args.time_limit_s.saturating_add(300)),
    );
    for surface in surfaces {
        watchdog.progress(&format!("load on {} started", surface.as_str()));
        let plan = plan(&args, surface);
        eprintln!(
            "load: {} subscriber(s) on each of {} {} log(s), {} item(s) each, against {} ({}); seed {}",
            plan.subscribers,
            plan.logs,
            surface.as_str(),
            plan.events,
            target.base_url,
            target.kind,
            plan.seed
        );
        let progress = if args.quiet {
            ProgressBar::hidden()
        } else {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            if let Ok(style) = ProgressStyle::with_template(
                "{spinner} {elapsed_precise} [{wide_bar}] {pos}/{len} deliveries ({per_sec})",
            ) {
                bar.set_style(style);
            }
            bar
        };
        let result = run_load(&target, &plan, &progress)
            .await
            .map_err(|e| environment(e.to_string()))?;
        progress.finish_and_clear();
        for line in render::summary_lines(&result) {
            crate::outln!("{}: {line}", surface.as_str());
        }
        for reason in &result.not_judged_reasons {
            crate::outln!("{}: not judged: {reason}", surface.as_str());
        }
        for anomaly in result.anomalies.iter().filter(|a| a.kind.fails()).take(10) {
            crate::outln!(
                "{}: {:?} on {} subscriber {}: {}",
                surface.as_str(),
                anomaly.kind,
                anomaly.log,
                anomaly.subscriber,
                anomaly.detail
            );
        }
        let json_path = report_dir.join(format!("load-{}.json", surface.as_str()));
        let text = serde_json::to_string_pretty(&result)?;
        std::fs::write(&json_path, text + "\n")
            .map_err(|e| environment(format!("failed to write {}: {e}", json_path.display())))?;
        results.push(result);
    }
    let html: String = results.iter().map(render::to_html_section).collect();
    let markdown: String = results
        .iter()
        .map(render::to_markdown)
        .collect::<Vec<_>>()
        .join("\n");
    let page = format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Load</title>\
         <style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:2px 6px}}</style>\
         </head><body><h1>Load: {}</h1>{html}</body></html>\n",
        target.base_url
    );
    for (name, text) in [("load.html", page), ("load.md", markdown)] {
        let path = report_dir.join(name);
        std::fs::write(&path, text)
            .map_err(|e| environment(format!("failed to write {}: {e}", path.display())))?;
    }
    crate::outln!("reports: {}", report_dir.display());
    watchdog.progress("reports written; stopping the built-in runtime");
    if let Some(running) = built_in {
        running.shutdown().await;
    }
    let verdicts: Vec<LoadVerdict> = results.iter().map(|r| r.verdict).collect();
    Ok(if verdicts.contains(&LoadVerdict::Fail) {
        LoadVerdict::Fail.exit_code()
    } else if verdicts.contains(&LoadVerdict::NotJudged) {
        LoadVerdict::NotJudged.exit_code()
    } else {
        0
    })
}

/// Seconds since the epoch, for a default report directory name.
fn chrono_free_stamp() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
