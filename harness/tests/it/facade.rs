//! The library's facade, as tests: a few public modules, and no binary-only dependency linked
//! (issue 26; what is public and versioned is in STABILITY.md).

use std::path::Path;
use std::process::Command;

/// The most public modules `harness/src/lib.rs` may declare.
const MAX_PUBLIC_MODULES: usize = 8;

/// Crates only binaries (the `conformance` command, `mock-provider`'s standalone binary, the
/// reference runtime) may link: argument parsing, logging setup, an HTTP server, a database.
const BINARY_ONLY: [&str; 4] = ["clap", "tracing-subscriber", "axum", "rusqlite"];

/// The modules `lib.rs` declares `pub`.
fn public_modules(lib_rs: &str) -> Vec<String> {
    lib_rs
        .lines()
        .filter_map(|line| line.trim().strip_prefix("pub mod "))
        .map(|rest| rest.trim_end_matches([';', '{', ' ']).to_string())
        .collect()
}

#[test]
fn the_library_exports_at_most_eight_modules() {
    let lib_rs =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).unwrap();
    let modules = public_modules(&lib_rs);
    assert!(
        modules.len() <= MAX_PUBLIC_MODULES,
        "harness/src/lib.rs declares {} public modules ({}); the facade keeps at most {MAX_PUBLIC_MODULES}: re-export what users need from one of them and keep the rest `mod`",
        modules.len(),
        modules.join(", ")
    );
    assert!(public_modules("pub mod a;\nmod b;\n  pub mod c {\n").len() == 2);
}

/// The packages `cargo tree -p harness -e normal` lists (each once, without versions).
fn normal_dependency_tree() -> Vec<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml");
    let output = Command::new(cargo)
        .args(["tree", "-p", "harness", "-e", "normal", "--prefix", "none"])
        .arg("--manifest-path")
        .arg(&manifest)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .map(String::from)
        .collect()
}

#[test]
fn the_library_links_no_binary_only_dependency() {
    let linked: Vec<String> = normal_dependency_tree()
        .into_iter()
        .filter(|name| BINARY_ONLY.contains(&name.as_str()))
        .collect();
    assert!(
        linked.is_empty(),
        "the harness library links {linked:?} (cargo tree -p harness -e normal): keep them behind a binary's feature (mock-provider's `cli`) or out of the library's dependencies"
    );
}
