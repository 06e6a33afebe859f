//! "CI rejects drift": the committed schemas equal what the types generate.

use spec::schema::{REGENERATE_COMMAND, generate_all};

#[test]
fn committed_schemas_match_the_types() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schema");
    let mut drifted = Vec::new();
    for generated in generate_all() {
        let path = dir.join(generated.file_name);
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        if committed != generated.file_text() {
            drifted.push(format!("spec/schema/{}", generated.file_name));
        }
    }
    assert!(
        drifted.is_empty(),
        "published schemas differ from the types that generate them: {}\nrun `{REGENERATE_COMMAND}` to regenerate them, review the diff, and commit it",
        drifted.join(", ")
    );
}
