//! `report.json`: the report model serialised as is, and its JSON Schema.
//!
//! The JSON report is the one machine-readable rendering of [`RunReport`]; every other format
//! is rendered from the same model. [`report_schema`] is what `cargo schemas` writes to
//! `spec/schema/report.schema.json`.

use serde_json::{Map, Value, json};

use super::model::RunReport;

/// The `$id` of the published report schema.
pub const REPORT_SCHEMA_ID: &str =
    "https://conformance-harness.invalid/spec/schema/report.schema.json";

/// Renders the report as pretty JSON with a trailing newline.
///
/// # Errors
///
/// Fails only if a value cannot be represented in JSON (serde_json rejects nothing the model
/// can hold today; the error is kept so a future field cannot turn into a panic).
pub fn to_json_string(report: &RunReport) -> Result<String, serde_json::Error> {
    let mut text = serde_json::to_string_pretty(report)?;
    text.push('\n');
    Ok(text)
}

/// Reads a report back from its JSON text (to re-render it or compare runs).
///
/// # Errors
///
/// The text is not JSON or does not have the report's shape.
pub fn from_json_str(text: &str) -> Result<RunReport, serde_json::Error> {
    serde_json::from_str(text)
}

/// The JSON Schema (draft 2020-12) of `report.json`, generated from [`RunReport`].
///
/// Optional members are `null` when absent (the report always writes every member), so unlike
/// the case schema the `null` branches schemars generates are kept. Rust number formats
/// (`uint32`, `double`, …) are removed: they are not JSON Schema formats.
pub fn report_schema() -> Value {
    published_schema::<RunReport>(REPORT_SCHEMA_ID)
}

/// The published schema of a report-side type (draft 2020-12, `$id` set, no Rust number
/// formats): the report's, the claim's and the load result's.
pub(crate) fn published_schema<T: schemars::JsonSchema>(id: &str) -> Value {
    let mut schema = schemars::generate::SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value();
    spec::schema::strip_rust_number_formats(&mut schema);
    let mut out = Map::new();
    out.insert(
        "$schema".into(),
        json!("https://json-schema.org/draft/2020-12/schema"),
    );
    out.insert("$id".into(), json!(id));
    if let Value::Object(object) = schema {
        for (key, value) in object {
            if key != "$schema" {
                out.insert(key, value);
            }
        }
    }
    Value::Object(out)
}
