//! `conformance merge`: the partitions' JSON reports joined into one run, in every format.

use std::path::PathBuf;

use conformance_cli::corpus::corpus_digest;
use harness::report::merge::merge_partitions;
use harness::report::{RunReport, exit_code, write_all};

use super::args::MergeArgs;
use super::corpus::{files, load_files, source};
use super::exit::{environment, usage};

/// Merges, writes every format, and exits with the merged run's exit code.
pub fn merge(args: &MergeArgs) -> anyhow::Result<u8> {
    let mut named: Vec<(String, RunReport)> = Vec::new();
    for path in &args.reports {
        let file = if path.is_dir() {
            path.join("report.json")
        } else {
            path.clone()
        };
        let text = std::fs::read_to_string(&file)
            .map_err(|e| usage(format!("failed to read {}: {e}", file.display())))?;
        let report: RunReport = serde_json::from_str(&text).map_err(|e| {
            usage(format!(
                "{} is not a conformance report: {e}",
                file.display()
            ))
        })?;
        named.push((file.display().to_string(), report));
    }
    let source = source(&args.corpus);
    let corpus_files = files(&source)?;
    let corpus = load_files(&source, &corpus_files)?;
    let merged = merge_partitions(&named, &corpus.cases, &corpus_digest(&corpus_files))
        .map_err(|e| usage(e.to_string()))?;
    let dir = args
        .report_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from("reports").join(&merged.run_id));
    let written = write_all(&merged, &dir).map_err(|e| environment(format!("{e:#}")))?;
    eprintln!(
        "merged {} partition report(s) into one run of {} case(s)",
        named.len(),
        merged.cases.len()
    );
    crate::outln!(
        "{}",
        harness::report::console::summary_text(&merged, Some(&written))
            .trim_start_matches('\n')
            .trim_end()
    );
    Ok(exit_code(merged.verdict))
}
