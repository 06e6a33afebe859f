//! The corpus of `spec/upstream/corpus/`: documents shaped as the upstream files describe,
//! valid and invalid, each validated the way the harness validates (event payloads through
//! `validate_run_event_payload`, other definitions through `validate_definition`).

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;
use spec::schema::{Published, validate, validate_definition, validate_run_event_payload};

/// One corpus document.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    name: String,
    /// The event type whose payload this is.
    #[serde(default, rename = "type")]
    event_type: Option<String>,
    /// `<schema stem>` for a whole document, `<schema stem>#<def>` for a definition that is not
    /// an event payload.
    #[serde(default)]
    schema: Option<String>,
    document: Value,
    valid: bool,
    why: String,
}

fn judge(entry: &Entry) -> Result<Result<(), String>, String> {
    let outcome = match (&entry.event_type, &entry.schema) {
        (Some(event_type), None) => {
            validate_run_event_payload(event_type, &entry.document).map(|checked| {
                checked
                    .then_some(())
                    .ok_or(format!("{event_type} has no payload definition"))
            })
        }
        (None, Some(target)) => match target.split_once('#') {
            Some((stem, def)) => {
                let published =
                    Published::from_name(stem).ok_or(format!("no published schema {stem:?}"))?;
                validate_definition(published, def, &entry.document).map(|checked| {
                    checked
                        .then_some(())
                        .ok_or(format!("{target} has no such definition"))
                })
            }
            // A whole document: validated against the schema's root, as the harness does.
            None => {
                let published = Published::from_name(target)
                    .ok_or(format!("no published schema {target:?}"))?;
                validate(published, &entry.document).map(Ok)
            }
        },
        _ => return Err("an entry names exactly one of type and schema".to_string()),
    };
    match outcome {
        Ok(Ok(())) => Ok(Ok(())),
        Ok(Err(unchecked)) => Err(unchecked),
        Err(violations) => Ok(Err(violations
            .iter()
            .map(|v| format!("{} ({})", v.message, v.instance_path))
            .collect::<Vec<_>>()
            .join("; "))),
    }
}

#[test]
fn every_corpus_document_is_judged_as_upstream_describes() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("upstream/corpus");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("spec/upstream/corpus exists")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no corpus files in {}", dir.display());
    let mut failures = Vec::new();
    let (mut valid, mut invalid) = (0, 0);
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let entries: Vec<Entry> = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{} is a corpus: {e}", file.display()));
        let file_name = file.file_name().unwrap().to_string_lossy().to_string();
        for entry in &entries {
            if entry.valid {
                valid += 1;
            } else {
                invalid += 1;
            }
            match judge(entry) {
                Err(problem) => failures.push(format!("{file_name}: {:?}: {problem}", entry.name)),
                Ok(Ok(())) if !entry.valid => failures.push(format!(
                    "{file_name}: {:?} was accepted, but upstream makes it invalid: {}",
                    entry.name, entry.why
                )),
                Ok(Err(violations)) if entry.valid => failures.push(format!(
                    "{file_name}: {:?} was refused ({violations}), but upstream makes it valid: {}",
                    entry.name, entry.why
                )),
                Ok(_) => {}
            }
        }
    }
    assert!(
        valid > 0 && invalid > 0,
        "the corpus needs valid and invalid documents"
    );
    assert!(
        failures.is_empty(),
        "{} corpus documents misjudged:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
