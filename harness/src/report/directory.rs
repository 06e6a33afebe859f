//! The report directory: [`write_all`] writes every file format into one folder.
//!
//! ```text
//! <dir>/report.json      the model (schema: spec/schema/report.schema.json)
//! <dir>/junit.xml        one testsuite per surface, one testcase per case
//! <dir>/report.html      summary, requirements, cases with transcripts and diffs
//! <dir>/summary.md       for $GITHUB_STEP_SUMMARY
//! <dir>/repro/<case>.sh  for each FAIL, WARN, ERROR or STALE case (+ scripts and bodies)
//! ```

use std::path::{Path, PathBuf};

use super::model::RunReport;
use super::{html, json, junit, markdown, repro};

/// The files [`write_all`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenReports {
    /// The report directory.
    pub dir: PathBuf,
    /// `report.json`.
    pub json: PathBuf,
    /// `junit.xml`.
    pub junit: PathBuf,
    /// `report.html`.
    pub html: PathBuf,
    /// `summary.md`.
    pub markdown: PathBuf,
    /// The `repro/<case>.sh` scripts, in case order.
    pub repro_scripts: Vec<PathBuf>,
}

/// A report file could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteReportError {
    /// A directory could not be created.
    #[error("failed to create the report directory `{}`", path.display())]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A file could not be written.
    #[error("failed to write `{}`", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A format could not be rendered.
    #[error("failed to render `{}`: {message}", path.display())]
    Render {
        /// The file it was meant for.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
}

/// Writes every report format into `dir` (created when missing): `report.json`, `junit.xml`,
/// `report.html`, `summary.md`, and `repro/<case>.sh` (with its files) for each case whose
/// verdict is FAIL, WARN, ERROR or STALE.
///
/// # Errors
///
/// The first file or directory that could not be created or written, with its path.
pub fn write_all(report: &RunReport, dir: &Path) -> Result<WrittenReports, WriteReportError> {
    create_dir(dir)?;
    let json_path = dir.join("report.json");
    let text = json::to_json_string(report).map_err(|e| WriteReportError::Render {
        path: json_path.clone(),
        message: e.to_string(),
    })?;
    write_file(&json_path, text.as_bytes())?;

    let junit_path = dir.join("junit.xml");
    let xml = junit::to_junit_xml(report).map_err(|e| WriteReportError::Render {
        path: junit_path.clone(),
        message: e.to_string(),
    })?;
    write_file(&junit_path, xml.as_bytes())?;

    let html_path = dir.join("report.html");
    write_file(&html_path, html::to_html(report).as_bytes())?;

    let markdown_path = dir.join("summary.md");
    write_file(&markdown_path, markdown::to_markdown(report).as_bytes())?;

    let mut repro_scripts = Vec::new();
    let repro_dir = dir.join("repro");
    let mut stems: Vec<String> = Vec::new();
    for case in report
        .cases
        .iter()
        .filter(|c| repro::needs_repro(c.verdict))
    {
        if stems.is_empty() {
            create_dir(&repro_dir)?;
        }
        let mut stem = repro::file_stem(&case.id);
        let mut n = 2;
        while stems.contains(&stem) {
            stem = format!("{}-{n}", repro::file_stem(&case.id));
            n += 1;
        }
        stems.push(stem.clone());
        let bundle = repro::repro_bundle_with_stem(report, case, &stem);
        for file in &bundle.files {
            let path = repro_dir.join(&file.path);
            if let Some(parent) = path.parent() {
                create_dir(parent)?;
            }
            write_file(&path, file.contents.as_bytes())?;
        }
        let script_path = repro_dir.join(&bundle.script_name);
        write_file(&script_path, bundle.script.as_bytes())?;
        make_executable(&script_path)?;
        repro_scripts.push(script_path);
    }

    Ok(WrittenReports {
        dir: dir.to_path_buf(),
        json: json_path,
        junit: junit_path,
        html: html_path,
        markdown: markdown_path,
        repro_scripts,
    })
}

fn create_dir(path: &Path) -> Result<(), WriteReportError> {
    std::fs::create_dir_all(path).map_err(|source| WriteReportError::CreateDir {
        path: path.to_path_buf(),
        source,
    })
}

fn write_file(path: &Path, contents: &[u8]) -> Result<(), WriteReportError> {
    std::fs::write(path, contents).map_err(|source| WriteReportError::Write {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(unix)]
fn make_executable(path: &Path) -> Result<(), WriteReportError> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).map_err(|source| {
        WriteReportError::Write {
            path: path.to_path_buf(),
            source,
        }
    })
}

#[cfg(not(unix))]
fn make_executable(_path: &Path) -> Result<(), WriteReportError> {
    Ok(())
}
