//! The case and report schemas in `spec/schema/` equal what the types generate ("CI rejects
//! drift"), and every case file validates against the committed case schema.

use std::path::Path;

#[test]
fn case_and_report_schemas_match_the_types() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec/schema");
    for (file, schema) in [
        ("case.schema.json", harness::case::case_schema()),
        ("report.schema.json", harness::report::report_schema()),
        ("claim.schema.json", harness::report::claim::claim_schema()),
    ] {
        let committed = std::fs::read_to_string(dir.join(file)).unwrap_or_default();
        assert!(
            committed == spec::schema::to_file_text(&schema),
            "spec/schema/{file} differs from the types that generate it: run `{}` to regenerate it, review the diff, and commit it",
            spec::schema::REGENERATE_COMMAND
        );
    }
}

#[test]
fn every_case_file_validates_against_the_committed_case_schema() {
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec/schema/case.schema.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let validator = spec::schema::compile(&schema).unwrap();
    let corpus =
        harness::case::load_corpus(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases"))
            .unwrap();
    assert!(corpus.problems.is_empty(), "{:#?}", corpus.problems);
    for loaded in &corpus.cases {
        let text = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../cases")
                .join(&loaded.file),
        )
        .unwrap();
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert!(
            spec::schema::violations_of(&validator, &value).is_ok(),
            "{}",
            loaded.file
        );
    }
}
