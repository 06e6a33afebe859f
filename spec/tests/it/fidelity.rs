//! Fidelity to upstream: the published schemas compared with the committed transcription of the
//! upstream facts (`spec/upstream/`), and the upstream-shaped corpus validated the way the
//! harness validates. `cargo test -p spec --test it -- fidelity --nocapture` prints the summary
//! and the closing note (counts of defs and run event types compared, identical and deviating,
//! and one line per reviewed deviation: where | direction | kind | reason).

use std::path::{Path, PathBuf};

use crate::fidelity_comparer::{Transcription, closing_note, compare, load_corpus, run_corpus};
use serde_json::Value;
use spec::schema::Published;

fn upstream_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("upstream")
}

fn transcription() -> Transcription {
    Transcription::load(&upstream_dir()).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn published_schemas_state_the_upstream_facts() {
    let comparison = compare(&transcription());
    println!("{}", comparison.summary());
    let failures = comparison.failures();
    assert!(
        failures.is_empty(),
        "{} fidelity failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn the_closing_note_counts_every_type_and_lists_every_deviation() {
    let transcription = transcription();
    let comparison = compare(&transcription);
    let payloads = Published::RunEventPayloads.generate();
    let type_index = payloads["_typeIndex"]
        .as_object()
        .expect("the published payloads carry _typeIndex");
    let note = closing_note(&transcription, &comparison, type_index);
    println!("{note}");
    assert!(
        note.contains(&format!(
            "run event types compared: {0} of {0},",
            type_index.len()
        )),
        "every run event type's payload def is compared:\n{note}"
    );
    for deviation in &transcription.deviations {
        assert!(
            note.contains(&format!("  {} | ", deviation.location)),
            "the note lists `{}`",
            deviation.location
        );
    }
}

#[test]
fn a_changed_required_set_in_the_transcription_fails_naming_the_def_and_the_file() {
    let mut transcription = transcription();
    let Some((source, def)) = transcription.facts.iter_mut().find_map(|file| {
        let source = file.source.clone();
        file.defs
            .iter_mut()
            .find(|(_, shape)| shape.get("published").is_some() && shape.get("required").is_some())
            .map(|(name, shape)| {
                shape["required"]
                    .as_array_mut()
                    .expect("required is an array")
                    .push(Value::String("a-member-upstream-never-named".into()));
                (source, name.clone())
            })
    }) else {
        panic!("the transcription has no published def with a required set");
    };
    let upstream = transcription
        .source(&source)
        .map(|s| s.path.clone())
        .expect("the source is in sources.json");
    let failures = compare(&transcription).failures();
    assert!(
        failures
            .iter()
            .any(|f| f.contains(&format!("def `{source}#{def}`"))
                && f.contains(&format!("{source}#{def}/required"))
                && f.contains(&upstream)),
        "expected a failure naming `{source}#{def}` and `{upstream}`, got:\n{}",
        failures.join("\n")
    );
}

#[test]
fn a_changed_facet_required_set_fails_naming_the_family_def_and_the_capabilities_file() {
    let mut transcription = transcription();
    for facet in ["envelopesPerTurn", "maxRequestBodyBytes"] {
        let mut changed = transcription.clone();
        let limits = changed
            .facts
            .iter_mut()
            .filter(|file| file.source == "capabilities")
            .find_map(|file| file.defs.get_mut("limits"))
            .expect("the capabilities transcription states the limits family");
        let required = limits["required"]
            .as_array_mut()
            .expect("limits has a required set");
        // One facet leaves the set, or one joins it: either way the family def fails.
        match required.iter().position(|v| v == facet) {
            Some(i) => {
                required.remove(i);
            }
            None => required.push(Value::String(facet.into())),
        }
        let failures = compare(&changed).failures();
        assert!(
            failures
                .iter()
                .any(|f| f.contains("def `capabilities#limits`")
                    && f.contains("capabilities#limits/required")
                    && f.contains("schemas/v2/capabilities.schema.json")),
            "expected a failure naming `capabilities#limits` and the capabilities file, got:\n{}",
            failures.join("\n")
        );
    }
    transcription.deviations.clear();
    assert!(
        compare(&transcription)
            .failures()
            .iter()
            .any(|f| f.contains("capabilities#prompts/properties/defaults")),
        "without its reviewed deviation, the one remaining facet difference fails"
    );
}

#[test]
fn the_upstream_corpus_validates_as_upstream_says() {
    let entries = load_corpus(&upstream_dir().join("corpus")).unwrap_or_else(|e| panic!("{e}"));
    let failures = run_corpus(&entries);
    println!("corpus: {} documents judged", entries.len());
    assert!(
        failures.is_empty(),
        "{} corpus failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_overlay_has_its_reviewed_deviation_and_back() {
    use crate::fidelity_comparer::DeviationKind;
    use spec::overlay::OVERLAYS;
    let transcription = transcription();
    let mut problems = Vec::new();
    for overlay in &OVERLAYS {
        if !transcription.deviations.iter().any(|d| {
            d.kind == DeviationKind::Overlay
                && d.location == overlay.location
                && d.seed.as_deref() == Some(overlay.seed)
                && d.reason.contains(overlay.sentence)
        }) {
            problems.push(format!(
                "overlay `{}` has no `overlay` deviation quoting \"{}\"",
                overlay.location, overlay.sentence
            ));
        }
    }
    // Every overlay of either surface is applied in `spec::overlay`.
    for deviation in &transcription.deviations {
        if deviation.kind == DeviationKind::Overlay
            && !OVERLAYS.iter().any(|o| o.location == deviation.location)
        {
            problems.push(format!(
                "deviation `{}` is an overlay that spec::overlay does not apply",
                deviation.location
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
