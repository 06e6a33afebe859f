//! `conformance try FILE.json`: one case against the standard runtime, every profile and every
//! known-bad runtime.

use super::args::{TableOrJson, TryArgs};
use super::{environment, usage};

/// Lints the file, runs it everywhere, prints what it found; exit 0 when it is tolerated.
pub async fn try_file(args: TryArgs) -> anyhow::Result<u8> {
    let bytes = std::fs::read(&args.file)
        .map_err(|e| usage(format!("failed to read {}: {e}", args.file.display())))?;
    let name = args
        .file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let case = harness::case::lint_case(&name, &bytes).map_err(|problems| {
        let listing: Vec<String> = problems.iter().map(ToString::to_string).collect();
        usage(format!(
            "{} problem(s) in {}:\n{}",
            problems.len(),
            args.file.display(),
            listing.join("\n")
        ))
    })?;
    let report = conformance_cli::try_case::try_case(&case, args.time_scale)
        .await
        .map_err(|e| environment(format!("{e:#}")))?;
    match args.format {
        TableOrJson::Json => crate::outln!("{}", serde_json::to_string_pretty(&report)?),
        TableOrJson::Table => {
            crate::outln!(
                "{}",
                conformance_cli::try_case::render_text(&report).trim_end()
            )
        }
    }
    Ok(if report.tolerated() { 0 } else { 1 })
}
