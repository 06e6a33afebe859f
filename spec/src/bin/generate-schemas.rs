//! Writes the schemas of the `spec` crate to `spec/schema/`.
//!
//! `cargo schemas` (the workspace alias) runs the harness's writer, which also writes the case
//! and report schemas; this binary is the spec crate's own half, usable without the harness.

fn main() -> std::io::Result<()> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schema");
    for generated in spec::schema::generate_all() {
        let path = dir.join(generated.file_name);
        std::fs::write(&path, generated.file_text())?;
        println!("wrote {}", path.display());
    }
    Ok(())
}
