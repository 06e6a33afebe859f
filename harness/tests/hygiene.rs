//! Rules of the codebase, as tests.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The harness judges hosts only through HTTP: its library never names the reference runtime,
/// except the launcher, which uses only the runtime's public start-up API.
#[test]
fn the_harness_library_never_imports_the_reference_runtime() {
    let src = workspace().join("harness/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let offenders: Vec<String> = files
        .iter()
        .filter(|p| {
            !p.ends_with("launch.rs") && !p.starts_with(src.join("cli")) && !p.ends_with("main.rs")
        })
        .filter(|p| {
            std::fs::read_to_string(p)
                .unwrap()
                .contains("reference_runtime")
        })
        .map(|p| p.display().to_string())
        .collect();
    assert!(
        offenders.is_empty(),
        "only harness/src/launch.rs may name reference_runtime: {offenders:?}"
    );
    let launch = std::fs::read_to_string(src.join("launch.rs")).unwrap();
    for line in launch.lines().filter(|l| l.contains("reference_runtime::")) {
        assert!(
            [
                "config::",
                "defects::",
                "redact::CredentialSource",
                "runtime::"
            ]
            .iter()
            .any(|api| line.contains(api)),
            "launch.rs uses a runtime internal: {line}"
        );
    }
}

/// Every source file starts with a module doc comment.
#[test]
fn every_module_is_documented() {
    let mut files = Vec::new();
    for crate_dir in ["spec", "harness", "mock-provider", "reference-runtime"] {
        for sub in ["src", "tests", "benches"] {
            let dir = workspace().join(crate_dir).join(sub);
            if dir.is_dir() {
                rust_files(&dir, &mut files);
            }
        }
    }
    let undocumented: Vec<String> = files
        .iter()
        .filter(|p| {
            !std::fs::read_to_string(p)
                .unwrap()
                .trim_start()
                .starts_with("//!")
        })
        .map(|p| {
            p.strip_prefix(workspace())
                .unwrap_or(p)
                .display()
                .to_string()
        })
        .collect();
    assert!(
        undocumented.is_empty(),
        "files without a `//!` module doc: {undocumented:?}"
    );
}
