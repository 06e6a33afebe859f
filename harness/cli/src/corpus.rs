//! The corpus embedded in the binary (see `build.rs`): the cases directory and the spec data,
//! versioned with the harness, so `conformance run` works from any directory. `--cases DIR`
//! replaces the embedded cases; the spec data is always the embedded one.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use harness::case::{CorpusFiles, LoadCasesError, digest_files};

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/embedded_corpus.rs"));
}

/// The corpus version: the corpus is versioned with the harness, so it is the harness's.
pub const CORPUS_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Where a run's cases come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CorpusSource {
    /// The cases embedded in this binary.
    Embedded,
    /// A cases directory (`--cases DIR`).
    Directory(PathBuf),
}

impl CorpusSource {
    /// `--cases DIR` when given, else the embedded corpus.
    pub fn from_flag(dir: Option<&Path>) -> CorpusSource {
        dir.map_or(CorpusSource::Embedded, |d| {
            CorpusSource::Directory(d.to_path_buf())
        })
    }

    /// The files of the cases directory.
    ///
    /// # Errors
    ///
    /// A directory that could not be read.
    pub fn files(&self) -> Result<CorpusFiles, LoadCasesError> {
        match self {
            CorpusSource::Embedded => Ok(embedded_cases().clone()),
            CorpusSource::Directory(dir) => CorpusFiles::read_dir(dir),
        }
    }

    /// For messages: `the embedded corpus` or the directory.
    pub fn describe(&self) -> String {
        match self {
            CorpusSource::Embedded => format!("the embedded corpus {CORPUS_VERSION}"),
            CorpusSource::Directory(dir) => dir.display().to_string(),
        }
    }
}

/// The embedded cases directory.
pub fn embedded_cases() -> &'static CorpusFiles {
    static FILES: LazyLock<CorpusFiles> =
        LazyLock::new(|| CorpusFiles::from_files(embedded::CASE_FILES.iter().copied()));
    &FILES
}

/// The spec data the harness judges by (requirement registry, open points, fixtures, schemas,
/// registries), by path from the repository root: the bytes this binary embeds.
pub fn spec_files() -> &'static [(&'static str, &'static [u8])] {
    embedded::SPEC_FILES
}

/// The SHA-256 of a corpus: every file of its cases directory (as `cases/<path>`) and the
/// embedded spec data, in path order (see [`digest_files`]).
pub fn corpus_digest(cases: &CorpusFiles) -> String {
    let prefixed: Vec<(String, &[u8])> = cases
        .iter()
        .map(|(path, bytes)| (format!("cases/{path}"), bytes))
        .collect();
    let mut all: Vec<(&str, &[u8])> = prefixed.iter().map(|(p, b)| (p.as_str(), *b)).collect();
    all.extend(spec_files().iter().copied());
    all.sort_by(|a, b| a.0.cmp(b.0));
    digest_files(all)
}

/// The embedded corpus's digest.
pub fn embedded_digest() -> &'static str {
    static DIGEST: LazyLock<String> = LazyLock::new(|| corpus_digest(embedded_cases()));
    &DIGEST
}

/// The version line: harness version, corpus version and digest.
pub fn version_line() -> &'static str {
    static LINE: LazyLock<String> = LazyLock::new(|| {
        format!(
            "{} (corpus {CORPUS_VERSION}, sha256 {}, {} case files)",
            env!("CARGO_PKG_VERSION"),
            embedded_digest(),
            embedded_cases()
                .iter()
                .filter(|(p, _)| harness::case::is_case_file(p))
                .count()
        )
    });
    &LINE
}

/// The property-based regressions of a corpus as a directory the runner reads: the cases
/// directory itself, or, for the embedded corpus, a temporary copy that lives as long as the
/// returned guard.
///
/// # Errors
///
/// The temporary directory could not be written.
pub fn regressions_dir(
    source: &CorpusSource,
    files: &CorpusFiles,
) -> std::io::Result<(PathBuf, Option<tempfile::TempDir>)> {
    match source {
        CorpusSource::Directory(dir) => Ok((dir.join("regressions"), None)),
        CorpusSource::Embedded => {
            let temp = tempfile::Builder::new()
                .prefix("conformance-regressions-")
                .tempdir()?;
            for (name, bytes) in files.regressions() {
                std::fs::write(temp.path().join(name), bytes)?;
            }
            Ok((temp.path().to_path_buf(), Some(temp)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_corpus_is_the_repository_cases_directory() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../cases");
        let on_disk = CorpusFiles::read_dir(&dir).unwrap();
        assert_eq!(embedded_cases(), &on_disk);
        assert_eq!(corpus_digest(&on_disk), embedded_digest());
        assert!(embedded_cases().lint().problems.is_empty());
    }

    #[test]
    fn the_digest_covers_the_spec_data() {
        let names: Vec<&str> = spec_files().iter().map(|(p, _)| *p).collect();
        assert!(names.contains(&"spec/requirements.json"), "{names:?}");
        assert!(names.contains(&"spec/open-points.json"), "{names:?}");
        assert!(names.iter().any(|n| n.starts_with("spec/fixtures/")));
        assert!(names.iter().any(|n| n.starts_with("spec/schema/")));
        let registry = spec_files()
            .iter()
            .find(|(p, _)| *p == "spec/requirements.json")
            .unwrap();
        assert_eq!(
            registry.1,
            spec::requirements::EMBEDDED_REGISTRY_JSON.as_bytes()
        );
    }
}
