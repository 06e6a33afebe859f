//! The subcommands other than `run`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context;

use super::args::{Cli, Command, CorpusArgs, MarkdownOrJson, SchemasAction, TableOrJson};
use super::corpus::{files, first_line, load, source};
use super::exit::{environment, usage};

/// Runs a parsed command; returns the exit code.
pub async fn dispatch(cli: Cli) -> anyhow::Result<u8> {
    match cli.command {
        Command::Run(args) => super::run::run(*args).await,
        Command::Plan { json, args } => super::run::plan(*args, json).await,
        Command::Lint { files, corpus } => lint(&files, &corpus),
        Command::Explain { case, corpus } => explain(&case, &corpus),
        Command::Requirements { format } => requirements(format),
        Command::Coverage { format, corpus } => coverage(format, &corpus),
        Command::Serve(args) => super::run::serve(args).await,
        Command::MockProvider(args) => super::run::mock_provider(args).await,
        Command::Schemas { action } => schemas(action),
        Command::Selftest(args) => super::run::selftest(args).await,
        Command::OpenPoints { format } => super::open_points::list(format),
        Command::Tolerance(args) => super::open_points::tolerance(args).await,
        Command::Try(args) => super::try_case::try_file(args).await,
        Command::Load(args) => super::load::load(*args).await,
        Command::Merge(args) => super::merge::merge(&args),
        Command::VerifyClaim(args) => super::claim::verify(&args),
        Command::ClaimKey(args) => super::claim::make_key(&args),
    }
}

fn lint(paths: &[PathBuf], corpus: &CorpusArgs) -> anyhow::Result<u8> {
    let source = source(corpus);
    crate::outln!("{}", first_line(corpus, &source));
    if !paths.is_empty() {
        return lint_files(paths, &source);
    }
    let loaded = files(&source)?.lint();
    for problem in &loaded.problems {
        crate::outln!("{problem}");
    }
    let files = loaded.cases.len()
        + loaded
            .problems
            .iter()
            .map(|p| &p.file)
            .collect::<std::collections::BTreeSet<_>>()
            .len();
    if loaded.problems.is_empty() {
        crate::outln!(
            "{} case file(s) in {}: no problems",
            loaded.cases.len(),
            source.describe()
        );
        Ok(0)
    } else {
        crate::outln!(
            "{} problem(s) in {} file(s) in {}",
            loaded.problems.len(),
            files,
            source.describe()
        );
        Ok(2)
    }
}

/// `conformance lint FILE…`: each file read and linted (a file that cannot be read, or is no
/// case file, is a problem, never clean), and its id checked against the corpus's others.
fn lint_files(
    paths: &[PathBuf],
    source: &conformance_cli::corpus::CorpusSource,
) -> anyhow::Result<u8> {
    use harness::case::{LintProblem, is_case_file, lint_case};
    let problem = |file: &str, message: String| LintProblem {
        file: file.to_string(),
        pointer: String::new(),
        message,
    };
    // The corpus's valid cases by id, for ids a given file must not reuse.
    let corpus_cases: Vec<harness::case::LoadedCase> =
        files(source).map(|f| f.lint().cases).unwrap_or_default();
    let mut problems = Vec::new();
    let mut clean = 0;
    let mut ids: BTreeMap<String, String> = BTreeMap::new();
    for path in paths {
        let name = path.display().to_string();
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(e) => {
                problems.push(problem(
                    &name,
                    format!("not linted: failed to read it: {e}"),
                ));
                continue;
            }
        };
        if !is_case_file(&name.replace('\\', "/")) {
            problems.push(problem(
                &name,
                "not linted: not a case file (a case is a `*.json` file outside `regressions/`, other than `selftest-exemptions.json`)".into(),
            ));
            continue;
        }
        let case = match lint_case(&name, &bytes) {
            Ok(case) => case,
            Err(mut found) => {
                problems.append(&mut found);
                continue;
            }
        };
        let id = case.case.id.clone();
        if let Some(other) = ids.insert(id.clone(), name.clone()) {
            problems.push(LintProblem {
                file: name,
                pointer: "/id".into(),
                message: format!("case id `{id}` is also used by {other}"),
            });
            continue;
        }
        let same_file = |c: &harness::case::LoadedCase| match source {
            conformance_cli::corpus::CorpusSource::Directory(dir) => {
                let a = std::fs::canonicalize(dir.join(&c.file)).ok();
                a.is_some() && a == std::fs::canonicalize(path).ok()
            }
            conformance_cli::corpus::CorpusSource::Embedded => c.digest == case.digest,
        };
        if let Some(other) = corpus_cases
            .iter()
            .find(|c| c.case.id == id && !same_file(c))
        {
            problems.push(LintProblem {
                file: name,
                pointer: "/id".into(),
                message: format!(
                    "case id `{id}` is also used by {} in {}",
                    other.file,
                    source.describe()
                ),
            });
            continue;
        }
        clean += 1;
    }
    problems.sort();
    for p in &problems {
        crate::outln!("{p}");
    }
    if problems.is_empty() {
        crate::outln!("{clean} case file(s) linted: no problems");
        Ok(0)
    } else {
        let with_problems = problems
            .iter()
            .map(|p| &p.file)
            .collect::<std::collections::BTreeSet<_>>()
            .len();
        crate::outln!(
            "{} problem(s) in {with_problems} of {} file(s) given; {clean} clean",
            problems.len(),
            paths.len()
        );
        Ok(2)
    }
}

fn explain(id: &str, corpus: &CorpusArgs) -> anyhow::Result<u8> {
    let source = source(corpus);
    crate::outln!("{}", first_line(corpus, &source));
    let loaded = load(corpus)?;
    let Some(found) = loaded.cases.iter().find(|c| c.case.id == id) else {
        let ids = loaded.cases.iter().map(|c| c.case.id.as_str());
        let closest = harness::run::ranked(id, ids, 5);
        return Err(usage(format!(
            "no case `{id}` in {}; the closest ids: {}",
            source.describe(),
            closest.join(", ")
        )));
    };
    let case = &found.case;
    let registry = spec::requirements::registry();
    crate::outln!(
        "{}  [{}]  ({:?})",
        case.id,
        case.level.as_str(),
        case.surface
    );
    crate::outln!("{}", case.title);
    crate::outln!("file: {}", found.file);
    if let Some(description) = &case.description {
        crate::outln!("\n{description}");
    }
    crate::outln!("\nrequirements:");
    for id in &case.requirements {
        match registry.get(id) {
            Some(r) => crate::outln!(
                "  {id} — {} ({}, {})\n      \"{}\"",
                r.level.as_str(),
                r.document.as_str(),
                r.section,
                r.quote
            ),
            None => crate::outln!("  {id} — not in the registry"),
        }
    }
    if !case.needs.is_empty() {
        let needs: Vec<String> = case.needs.iter().map(ToString::to_string).collect();
        crate::outln!("\nneeds: {}", needs.join(", "));
    }
    crate::outln!("\nsteps:");
    for (i, step) in case.steps.iter().enumerate() {
        let name = step.id.clone().unwrap_or_else(|| format!("#{i}"));
        crate::outln!(
            "  {name}: {} — {} check(s){}",
            step.action.name(),
            step.expect.len(),
            step.note
                .as_ref()
                .map(|n| format!(" — {n}"))
                .unwrap_or_default()
        );
        for check in &step.expect {
            crate::outln!(
                "      - {}{}",
                check.name(),
                check
                    .level
                    .map(|l| format!(" [{}]", l.as_str()))
                    .unwrap_or_default()
            );
        }
    }
    crate::outln!(
        "\n{}",
        serde_json::to_string_pretty(case).context("render the case")?
    );
    Ok(0)
}

fn requirements(format: TableOrJson) -> anyhow::Result<u8> {
    let registry = spec::requirements::registry();
    match format {
        TableOrJson::Json => {
            let records: Vec<&spec::requirements::Requirement> = registry.iter().collect();
            crate::outln!("{}", serde_json::to_string_pretty(&records)?);
        }
        TableOrJson::Table => {
            crate::outln!("{:<62} {:<9} {:<28} QUOTE", "ID", "LEVEL", "TESTABILITY");
            for r in registry.iter() {
                let quote: String = r.quote.chars().take(90).collect();
                crate::outln!(
                    "{:<62} {:<9} {:<28} {quote}",
                    r.id,
                    r.level.as_str(),
                    r.testability.to_string()
                );
            }
            crate::outln!("{} requirement(s)", registry.len());
        }
    }
    Ok(0)
}

fn coverage(format: MarkdownOrJson, corpus: &CorpusArgs) -> anyhow::Result<u8> {
    let loaded = load(corpus)?;
    let cases: Vec<harness::case::Case> = loaded.cases.into_iter().map(|c| c.case).collect();
    let report = harness::coverage::CoverageReport::compute(&cases, spec::requirements::registry());
    match format {
        MarkdownOrJson::Markdown => crate::outln!("{}", report.to_markdown().trim_end()),
        MarkdownOrJson::Json => crate::outln!("{}", report.to_json()),
    }
    Ok(0)
}

/// Every published schema: the spec's, the case format's and the report format's.
pub fn all_schemas() -> Vec<(String, serde_json::Value)> {
    let mut out: Vec<(String, serde_json::Value)> = spec::schema::generate_all()
        .into_iter()
        .map(|g| (g.file_name.to_string(), g.schema))
        .collect();
    out.push(("case.schema.json".into(), harness::case::case_schema()));
    out.push((
        "report.schema.json".into(),
        harness::report::report_schema(),
    ));
    out.push((
        "load-result.schema.json".into(),
        harness::load::load_result_schema(),
    ));
    out.push((
        "claim.schema.json".into(),
        harness::report::claim::claim_schema(),
    ));
    out
}

fn schemas(action: SchemasAction) -> anyhow::Result<u8> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../spec/schema");
    let mut drifted = Vec::new();
    for (file, schema) in all_schemas() {
        let path = dir.join(&file);
        let text = spec::schema::to_file_text(&schema);
        match action {
            SchemasAction::Write => {
                std::fs::write(&path, text)
                    .map_err(|e| environment(format!("failed to write {}: {e}", path.display())))?;
                crate::outln!("wrote spec/schema/{file}");
            }
            SchemasAction::Check => {
                if std::fs::read_to_string(&path).unwrap_or_default() != text {
                    drifted.push(file);
                }
            }
        }
    }
    if drifted.is_empty() {
        Ok(0)
    } else {
        crate::outln!(
            "drifted: {} — run `{}`",
            drifted.join(", "),
            spec::schema::REGENERATE_COMMAND
        );
        Ok(1)
    }
}
