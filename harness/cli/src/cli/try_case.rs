//! `conformance try FILE.json`: one case against the standard runtime, every profile and every
//! known-bad runtime.

use std::time::Duration;

use conformance_cli::watchdog::Watchdog;
use harness::case::DEFAULT_CASE_TIMEOUT_MS;

use super::args::{TableOrJson, TryArgs};
use super::corpus::{files, first_line, source};
use super::exit::{environment, usage};

/// Lints the file, runs it everywhere, prints what it found: exit 0 when the case is ready
/// (judged, tolerant, killing a defect or exempted), 1 when it does not tolerate a profile or
/// kills no defect, 4 when no built-in runtime judges it at all.
pub async fn try_file(args: TryArgs) -> anyhow::Result<u8> {
    if !(args.time_scale > 0.0 && args.time_scale.is_finite()) {
        return Err(usage("--time-scale must be a positive number"));
    }
    let source = source(&args.corpus);
    eprintln!("{}", first_line(&args.corpus, &source));
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
    let exemption = files(&source)?
        .get("selftest-exemptions.json")
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(b).ok())
        .and_then(|doc| {
            doc.pointer(&format!("/exemptions/{}", case.case.id))
                .and_then(|v| v.as_str())
                .map(String::from)
        });
    // No runtime may take longer than the case's budget plus starting and probing a runtime:
    // past that, `try` ends with a diagnostic instead of hanging.
    let budget = case.case.timeout_ms.unwrap_or(DEFAULT_CASE_TIMEOUT_MS);
    let limit = Duration::from_millis(budget).mul_f64(args.time_scale) + Duration::from_secs(300);
    let watchdog = Watchdog::start("try", limit);
    eprintln!(
        "trying {} ({}) against the built-in runtime under every profile and every defect of its surface",
        case.case.id,
        args.file.display()
    );
    let progress = |line: &str| {
        watchdog.progress(line);
        eprintln!("  {line}");
    };
    let report = conformance_cli::try_case::try_case(&case, args.time_scale, exemption, &progress)
        .await
        .map_err(|e| environment(format!("{e:#}")))?;
    drop(watchdog);
    match args.format {
        TableOrJson::Json => crate::outln!("{}", serde_json::to_string_pretty(&report)?),
        TableOrJson::Table => {
            crate::outln!(
                "{}",
                conformance_cli::try_case::render_text(&report).trim_end()
            )
        }
    }
    let problems = report.problems();
    if report.judged_by().next().is_none() {
        Ok(4)
    } else if problems.is_empty() {
        Ok(0)
    } else {
        Ok(1)
    }
}
