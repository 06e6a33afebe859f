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

    /// Where a command's cases come from: `--cases DIR` when given; else, inside a checkout
    /// of this project (`start` or one of its ancestors holds this workspace's `Cargo.toml`
    /// and a `cases/` directory), that `cases/` directory, so a spec author's edits are what
    /// `lint`, `explain`, `run` and `try` read; else the embedded corpus.
    pub fn detect(flag: Option<&Path>, start: &Path) -> CorpusSource {
        if let Some(dir) = flag {
            return CorpusSource::Directory(dir.to_path_buf());
        }
        checkout_cases(start).map_or(CorpusSource::Embedded, CorpusSource::Directory)
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

    /// The line a command that reads the corpus prints first: which corpus, and how it was
    /// chosen (`from_flag`: `--cases` or `CONFORMANCE_CASES`; else detected, or embedded).
    pub fn first_line(&self, from_flag: bool) -> String {
        match (self, from_flag) {
            (CorpusSource::Embedded, _) => format!(
                "corpus: the embedded corpus {CORPUS_VERSION} (sha256 {}; --cases DIR for a cases directory)",
                embedded_digest()
            ),
            (CorpusSource::Directory(dir), true) => {
                format!("corpus: cases directory {} (--cases)", dir.display())
            }
            (CorpusSource::Directory(dir), false) => format!(
                "corpus: cases directory {} (this checkout's; --cases DIR for another)",
                dir.display()
            ),
        }
    }
}

/// The `cases/` directory of the checkout of this project that holds `start`, if any: the
/// nearest ancestor with a workspace `Cargo.toml` naming `harness/cli` (this project's), a
/// `harness/cli/Cargo.toml` of package `conformance-cli` and a `cases/` directory.
pub fn checkout_cases(start: &Path) -> Option<PathBuf> {
    start.ancestors().find_map(|dir| {
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).ok()?;
        let cli = std::fs::read_to_string(dir.join("harness/cli/Cargo.toml")).ok()?;
        let ours = manifest.contains("[workspace]")
            && manifest.contains("\"harness/cli\"")
            && cli.contains("name = \"conformance-cli\"");
        let cases = dir.join("cases");
        (ours && cases.is_dir()).then_some(cases)
    })
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
    use std::collections::BTreeMap;

    use super::*;

    #[test]
    fn the_embedded_corpus_is_the_repository_cases_directory() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../cases");
        let on_disk = CorpusFiles::read_dir(&dir).unwrap();
        // Named by path, never dumped: a difference lists the files, not their bytes.
        let embedded: BTreeMap<&str, &[u8]> = embedded_cases().iter().collect();
        let disk: BTreeMap<&str, &[u8]> = on_disk.iter().collect();
        let differing: Vec<String> = embedded
            .keys()
            .chain(disk.keys())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .filter_map(|path| match (embedded.get(path), disk.get(path)) {
                (Some(a), Some(b)) if a == b => None,
                (Some(_), Some(_)) => Some(format!("{path}: changed since the build")),
                (Some(_), None) => Some(format!("{path}: embedded, no longer on disk")),
                _ => Some(format!("{path}: on disk, not embedded")),
            })
            .collect();
        assert!(
            differing.is_empty(),
            "the embedded corpus differs from cases/ (rebuild): {}",
            differing.join("; ")
        );
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
