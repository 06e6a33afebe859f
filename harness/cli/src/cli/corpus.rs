//! Where the cases come from and loading them (every command that reads the corpus): `--cases
//! DIR`, else the `cases/` directory of the checkout the command runs in, else the corpus
//! embedded in the binary (`conformance_cli::corpus`).

use conformance_cli::corpus::CorpusSource;
use harness::case::{Corpus, CorpusFiles};

use super::args::CorpusArgs;
use super::exit::usage;

/// Where the cases come from: `--cases DIR`, else this checkout's `cases/` (when the command
/// runs inside a checkout of this project), else the corpus embedded in the binary.
pub fn source(corpus: &CorpusArgs) -> CorpusSource {
    let cwd = std::env::current_dir().unwrap_or_default();
    CorpusSource::detect(corpus.cases.as_deref(), &cwd)
}

/// The first line of a command reading the corpus: which one it uses.
pub fn first_line(corpus: &CorpusArgs, source: &CorpusSource) -> String {
    source.first_line(corpus.cases.is_some())
}

/// The files of the cases directory (a usage error when unreadable).
pub fn files(source: &CorpusSource) -> anyhow::Result<CorpusFiles> {
    source.files().map_err(|e| usage(format!("{e:#}")))
}

/// Loads the corpus; lint problems are a usage error listing every problem.
pub fn load(corpus: &CorpusArgs) -> anyhow::Result<Corpus> {
    let source = source(corpus);
    load_files(&source, &files(&source)?)
}

/// Lints loaded files; lint problems are a usage error listing every problem.
pub fn load_files(source: &CorpusSource, files: &CorpusFiles) -> anyhow::Result<Corpus> {
    let loaded = files.lint();
    if !loaded.problems.is_empty() {
        let listing: Vec<String> = loaded.problems.iter().map(ToString::to_string).collect();
        return Err(usage(format!(
            "{} problem(s) in the cases of {}:\n{}",
            loaded.problems.len(),
            source.describe(),
            listing.join("\n")
        )));
    }
    Ok(loaded)
}
