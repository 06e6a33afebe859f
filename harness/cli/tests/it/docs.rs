//! The figures and commands README.md and cases/README.md show stay true: the `try` example's
//! profiles and defect count are the built-in runtime's, every defect it names exists, and every
//! `conformance <command>` the README lists is a command.

use std::path::Path;
use std::process::Command;

use conformance_cli::launch::{BuiltInProfile, defect_catalogue};

fn repository_file(path: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join(path),
    )
    .unwrap()
}

/// The fenced block of `text` that starts with the line `first`.
fn block_starting(text: &str, first: &str) -> Vec<String> {
    let start = text
        .find(first)
        .unwrap_or_else(|| panic!("no block starting {first:?}"));
    text[start..]
        .lines()
        .take_while(|l| !l.starts_with("```"))
        .map(String::from)
        .collect()
}

#[test]
fn the_try_example_of_the_cases_readme_shows_the_profiles_and_defects_there_are() {
    let readme = repository_file("cases/README.md");
    let block = block_starting(&readme, "$ conformance try cases/openwop/");
    let profiles: Vec<&str> = block
        .iter()
        .skip_while(|l| !l.starts_with("clean runtime:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    let expected: Vec<&str> = BuiltInProfile::ALL.iter().map(|p| p.as_str()).collect();
    assert_eq!(
        profiles, expected,
        "the example lists every built-in profile, in order"
    );

    let kills_line = block
        .iter()
        .find(|l| l.starts_with("kills "))
        .expect("a `kills K of N` line");
    let words: Vec<&str> = kills_line.split_whitespace().collect();
    let (kills, of): (usize, usize) = (words[1].parse().unwrap(), words[3].parse().unwrap());
    let catalogue = defect_catalogue();
    let surface_w = catalogue.iter().filter(|d| d.surface == "W").count();
    assert_eq!(
        of, surface_w,
        "`{kills_line}`: the W surface has {surface_w} defects"
    );
    let killed: Vec<&str> = block
        .iter()
        .skip_while(|l| !l.starts_with("kills "))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().nth(1))
        .collect();
    assert_eq!(killed.len(), kills, "{block:#?}");
    for name in killed {
        assert!(
            catalogue.iter().any(|d| d.name == name),
            "the example names a defect that does not exist: {name}"
        );
    }
}

#[test]
fn every_command_the_readme_lists_exists() {
    let readme = repository_file("README.md");
    let block = block_starting(&readme, "conformance lint ");
    let commands: Vec<&str> = block
        .iter()
        .filter_map(|l| l.strip_prefix("conformance "))
        .filter_map(|rest| rest.split_whitespace().next())
        .collect();
    assert!(commands.len() >= 10, "{commands:?}");
    for command in commands {
        let output = Command::new(env!("CARGO_BIN_EXE_conformance"))
            .args([command, "--help"])
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "`conformance {command}` (README.md, Other commands) is no command: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}
