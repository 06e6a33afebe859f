//! Where the cases are and loading them (every command that reads the corpus).

use std::path::{Path, PathBuf};

use harness::case::{Corpus, load_corpus};

use super::args::CorpusArgs;
use super::usage;

/// The cases directory: the flag, else `cases` here, else the repository's.
pub fn cases_dir(corpus: &CorpusArgs) -> PathBuf {
    if let Some(dir) = &corpus.cases {
        return dir.clone();
    }
    let here = PathBuf::from("cases");
    if here.is_dir() {
        here
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../cases")
    }
}

/// Loads the corpus; lint problems are a usage error listing every problem.
pub fn load(corpus: &CorpusArgs) -> anyhow::Result<Corpus> {
    let dir = cases_dir(corpus);
    let loaded = load_corpus(&dir).map_err(|e| usage(format!("{e:#}")))?;
    if !loaded.problems.is_empty() {
        let listing: Vec<String> = loaded.problems.iter().map(ToString::to_string).collect();
        return Err(usage(format!(
            "{} problem(s) in the cases under {}:\n{}",
            loaded.problems.len(),
            dir.display(),
            listing.join("\n")
        )));
    }
    Ok(loaded)
}
