//! `conformance open-points` (the registry of what the seeds leave open) and `conformance
//! tolerance` (the corpus against every non-standard built-in profile).

use std::path::PathBuf;

use super::args::{TableOrJson, ToleranceArgs};
use super::corpus::load;
use super::exit::environment;

/// Lists the open points.
pub fn list(format: TableOrJson) -> anyhow::Result<u8> {
    let registry = spec::open_points::open_points();
    match format {
        TableOrJson::Json => crate::outln!("{}", serde_json::to_string_pretty(registry)?),
        TableOrJson::Table => {
            for point in &registry.points {
                crate::outln!(
                    "{}  [{}, {}]\n  {}",
                    point.id,
                    point.surface,
                    point.source.kind.as_str(),
                    point.question
                );
                for option in &point.options {
                    let taken = if option.profiles.is_empty() {
                        "no built-in profile".to_string()
                    } else {
                        option.profiles.join(", ")
                    };
                    crate::outln!("    - {}: {} ({taken})", option.id, option.description);
                }
                crate::outln!("  borders: {}", point.borders.join(", "));
                if let Some(reason) = &point.exercised_otherwise {
                    crate::outln!("  no profile takes another option: {reason}");
                }
            }
            let exercised = registry
                .points
                .iter()
                .filter(|p| !p.divergent_profiles().is_empty())
                .count();
            let otherwise = registry
                .points
                .iter()
                .filter(|p| p.exercised_otherwise.is_some())
                .count();
            crate::outln!(
                "{} open point(s); {exercised} taken differently by a non-standard profile, {otherwise} exercised on made-up transcripts",
                registry.points.len()
            );
        }
    }
    Ok(0)
}

/// Runs the tolerance matrix and writes `tolerance-matrix.{md,json,html}`.
pub async fn tolerance(args: ToleranceArgs) -> anyhow::Result<u8> {
    let corpus = load(&args.corpus)?;
    let dir = args
        .report_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from("reports").join("tolerance"));
    // Every case of every profile's run is progress: none for longer than the longest case
    // budget (and a margin) ends the command with a diagnostic rather than a hang.
    let watchdog = conformance_cli::watchdog::Watchdog::start(
        "tolerance",
        conformance_cli::watchdog::limit_for(&corpus.cases, args.time_scale),
    );
    let matrix = conformance_cli::tolerance::tolerance_matrix_observed(
        &corpus.cases,
        &conformance_cli::tolerance::matrix_profiles(),
        args.jobs,
        args.time_scale,
        &watchdog,
    )
    .await
    .map_err(|e| environment(format!("{e:#}")))?;
    drop(watchdog);
    conformance_cli::tolerance::write_matrix(&matrix, &dir)
        .map_err(|e| environment(format!("{e:#}")))?;
    eprintln!("{}", conformance_cli::tolerance::render_markdown(&matrix));
    Ok(if matrix.intolerances.is_empty() { 0 } else { 1 })
}
