//! Rules of the codebase, as tests.

use std::collections::BTreeSet;
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

/// Each `.rs` file under `dir`, with its text.
fn sources(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut files = Vec::new();
    rust_files(dir, &mut files);
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p, text)
        })
        .collect()
}

/// The library files that name the reference runtime at all (in code or in comments).
fn library_offenders(files: &[(PathBuf, String)]) -> Vec<String> {
    files
        .iter()
        .filter(|(_, text)| text.contains("reference_runtime"))
        .map(|(p, _)| p.display().to_string())
        .collect()
}

/// The `[dependencies]` entries of a manifest (not dev- or build-dependencies).
fn normal_dependencies(manifest: &str) -> Vec<String> {
    let mut in_section = false;
    let mut names = Vec::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_section = line == "[dependencies]";
        } else if in_section && let Some((name, _)) = line.split_once(['=', '.']) {
            names.push(name.trim().to_string());
        }
    }
    names
}

/// The names the reference runtime's root re-exports (`pub use …;` in its `lib.rs`): its
/// launching API.
fn launching_api(lib_rs: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for statement in lib_rs.split(';') {
        let Some(path) = statement.trim().strip_prefix("pub use ") else {
            continue;
        };
        let items = match path.split_once('{') {
            Some((_, group)) => group.trim_end_matches('}').to_string(),
            None => path.rsplit("::").next().unwrap_or(path).to_string(),
        };
        for item in items.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let name = item.rsplit(" as ").next().unwrap_or(item);
            names.insert(name.trim().to_string());
        }
    }
    names
}

/// Source text without `//` comments (doc comments may describe the runtime's modules).
fn without_comments(text: &str) -> String {
    text.lines()
        .map(|line| line.split_once("//").map_or(line, |(code, _)| code))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every use of the reference runtime in `text` that is not one of the `api` names at its
/// root: a module path (`reference_runtime::openwop::…`, also inside a `{…}` group), a glob,
/// or the crate named without a path (`use reference_runtime as rt;`).
fn runtime_internals(text: &str, api: &BTreeSet<String>) -> Vec<String> {
    let code = without_comments(text);
    let mut offenders = Vec::new();
    for (at, _) in code.match_indices("reference_runtime") {
        let rest = &code[at + "reference_runtime".len()..];
        let Some(rest) = rest.strip_prefix("::") else {
            offenders.push(format!("reference_runtime{}", first_line(rest)));
            continue;
        };
        let rest = rest.trim_start();
        let items: Vec<String> = match rest.strip_prefix('{') {
            Some(group) => {
                let mut depth = 0usize;
                let end = group
                    .char_indices()
                    .find(|&(_, c)| {
                        match c {
                            '{' => depth += 1,
                            '}' if depth == 0 => return true,
                            '}' => depth -= 1,
                            _ => {}
                        }
                        false
                    })
                    .map_or(group.len(), |(i, _)| i);
                split_top_level(&group[..end])
            }
            None => vec![rest.to_string()],
        };
        for item in items {
            let item = item.trim();
            let name: String = item
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '*')
                .collect();
            if name.is_empty() {
                continue;
            }
            let is_root_item = api.contains(&name);
            if !is_root_item {
                offenders.push(format!("reference_runtime::{}", first_line(item)));
            }
        }
    }
    offenders
}

/// The rest of the line `text` starts on.
fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("").trim_end()
}

/// Splits `a, b::{c, d}, e` at the commas outside braces.
fn split_top_level(group: &str) -> Vec<String> {
    let (mut items, mut current, mut depth) = (Vec::new(), String::new(), 0usize);
    for c in group.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                items.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    items.push(current);
    items
}

/// The harness library judges hosts only through HTTP: no file of it names the reference
/// runtime, and its manifest does not depend on it (a dev-dependency is allowed).
#[test]
fn the_harness_library_never_names_the_reference_runtime() {
    let offenders = library_offenders(&sources(&workspace().join("harness/src")));
    assert!(
        offenders.is_empty(),
        "harness library files name reference_runtime (the built-in target belongs to harness/cli): {offenders:?}"
    );
    let manifest = std::fs::read_to_string(workspace().join("harness/Cargo.toml")).unwrap();
    let dependencies = normal_dependencies(&manifest);
    for forbidden in ["reference-runtime", "axum", "rusqlite"] {
        assert!(
            !dependencies.iter().any(|d| d == forbidden),
            "harness/Cargo.toml [dependencies] lists {forbidden}: {dependencies:?}"
        );
    }
}

/// The `conformance` command (its built-in target, commands and tests) uses the reference
/// runtime only through the launching API its root re-exports, never its modules.
#[test]
fn the_conformance_command_uses_only_the_runtime_launching_api() {
    let lib_rs = std::fs::read_to_string(workspace().join("reference-runtime/src/lib.rs")).unwrap();
    let api = launching_api(&lib_rs);
    assert!(
        api.contains("start") && api.contains("Config"),
        "the runtime's root re-exports no launching API: {api:?}"
    );
    let mut offenders = Vec::new();
    for dir in ["harness/cli/src", "harness/cli/tests"] {
        for (path, text) in sources(&workspace().join(dir)) {
            for internal in runtime_internals(&text, &api) {
                offenders.push(format!("{}: {internal}", path.display()));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "the conformance command reaches into reference_runtime modules (re-export what it needs at the runtime's root): {offenders:?}"
    );
}

/// The guards above fail on files that break them, and pass files that keep them.
mod the_guards {
    use super::*;

    fn api() -> BTreeSet<String> {
        launching_api(
            "//! Docs; not a `pub use` statement.\n\
             pub mod config;\n\
             pub use config::{Config, ProviderConfig};\n\
             pub use runtime::{\n    RunningRuntime,\n    start,\n};\n\
             pub use redact::CredentialSource as Credentials;\n\
             pub use defects::Defect;\n",
        )
    }

    #[test]
    fn the_launching_api_is_what_the_root_re_exports() {
        let names: Vec<String> = api().into_iter().collect();
        assert_eq!(
            names,
            [
                "Config",
                "Credentials",
                "Defect",
                "ProviderConfig",
                "RunningRuntime",
                "start"
            ]
        );
    }

    #[test]
    fn a_library_file_naming_the_runtime_is_an_offender() {
        let files = vec![
            (
                PathBuf::from("harness/src/target.rs"),
                "//! Targets.\nuse crate::upstream::FakeUpstream;\n".to_string(),
            ),
            (
                PathBuf::from("harness/src/sneaky.rs"),
                "//! Sneaky.\nuse reference_runtime::runtime::start;\n".to_string(),
            ),
            (
                PathBuf::from("harness/src/quiet.rs"),
                "//! Quiet.\nfn f() { let _ = reference_runtime::start; }\n".to_string(),
            ),
        ];
        assert_eq!(
            library_offenders(&files),
            ["harness/src/sneaky.rs", "harness/src/quiet.rs"]
        );
    }

    #[test]
    fn a_runtime_normal_dependency_is_found_and_a_dev_dependency_is_not() {
        let manifest = "[package]\nname = \"harness\"\n\n[dependencies]\nspec.workspace = true\n\
                        reference-runtime = { path = \"../reference-runtime\" }\n\n\
                        [dev-dependencies]\ninsta.workspace = true\n";
        assert_eq!(normal_dependencies(manifest), ["spec", "reference-runtime"]);
        let dev_only = "[dependencies]\nspec.workspace = true\n\n\
                        [dev-dependencies]\nreference-runtime.workspace = true\n";
        assert_eq!(normal_dependencies(dev_only), ["spec"]);
    }

    #[test]
    fn root_names_pass() {
        let text = "//! Uses `reference_runtime::openwop` only in a comment.\n\
                    use reference_runtime::{\n    Config, ProviderConfig,\n    start,\n};\n\
                    fn f(d: reference_runtime::Defect) -> reference_runtime::RunningRuntime { todo() }\n\
                    const ALL: usize = reference_runtime::Defect::ALL.len(); // reference_runtime::store\n";
        assert_eq!(runtime_internals(text, &api()), Vec::<String>::new());
    }

    #[test]
    fn module_paths_globs_and_aliases_are_offenders() {
        let text = "use reference_runtime::runtime::{RunningRuntime, RuntimeOptions, start};\n\
                    use reference_runtime::{Config, openwop::{Strictness, ApiKeyConfig}};\n\
                    use reference_runtime::*;\n\
                    use reference_runtime as rt;\n\
                    fn f() { reference_runtime::config::Config::default(); }\n";
        assert_eq!(
            runtime_internals(text, &api()),
            [
                "reference_runtime::runtime::{RunningRuntime, RuntimeOptions, start};",
                "reference_runtime::openwop::{Strictness, ApiKeyConfig}",
                "reference_runtime::*;",
                "reference_runtime as rt;",
                "reference_runtime::config::Config::default(); }",
            ]
        );
    }
}

/// Every source file starts with a module doc comment.
#[test]
fn every_module_is_documented() {
    let mut files = Vec::new();
    for crate_dir in [
        "spec",
        "harness",
        "harness/cli",
        "mock-provider",
        "reference-runtime",
    ] {
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
