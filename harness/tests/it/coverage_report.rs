//! Requirement coverage: which cases cover which requirements, totals per level, document and
//! testability, unknown ids as errors, and the uncovered wire MUST list.

use harness::case::Case;
use harness::coverage::CoverageReport;
use spec::requirements::RequirementRegistry;

fn registry() -> RequirementRegistry {
    RequirementRegistry::from_json(
        r#"{
      "version": 1,
      "documents": [
        {"id": "execution-protocol", "file": "000.txt", "title": "X", "status": "draft"},
        {"id": "run-events", "file": "002.txt", "title": "W", "status": "stable"}
      ],
      "requirements": [
        {"id": "exec.a.must-wire", "level": "MUST", "document": "execution-protocol", "section": "A", "quote": "a", "testability": "wire", "surface": "X"},
        {"id": "exec.a.must-not-wire", "level": "MUST NOT", "document": "execution-protocol", "section": "A", "quote": "b", "testability": "wire", "surface": "X"},
        {"id": "exec.a.not-wire", "level": "MUST", "document": "execution-protocol", "section": "A", "quote": "c", "testability": "not-wire", "reason": "tooling", "surface": "X"},
        {"id": "events.b.should", "level": "SHOULD", "document": "run-events", "section": "B", "quote": "d", "testability": "wire", "surface": "W"},
        {"id": "events.b.heartbeat", "level": "MUST", "document": "run-events", "section": "B", "quote": "e", "testability": "capability:heartbeat", "surface": "W"},
        {"id": "events.b.feedback", "level": "MAY", "document": "run-events", "section": "B | pipes", "quote": "f", "testability": "capability:feedback", "surface": "W"}
      ]
    }"#,
    )
    .unwrap()
}

fn case(json: serde_json::Value) -> Case {
    serde_json::from_value(json).unwrap()
}

fn corpus() -> Vec<Case> {
    vec![
        case(serde_json::json!({
            "id": "x.one", "title": "one", "requirements": ["exec.a.must-wire"], "level": "MUST",
            "surface": "execution",
            "steps": [{"request": {"path": "/v1/executions"}, "expect": [{"status": 202}]}]
        })),
        case(serde_json::json!({
            "id": "w.two", "title": "two", "requirements": ["events.b.should", "events.nope"], "level": "SHOULD",
            "surface": "openwop",
            "steps": [{"repeat": {"var": "i", "from": 0, "to": 2, "steps": [
                {"stream": {"path": "/runs/r/events"}, "expect": [
                    {"status": 200, "requirements": ["events.b.heartbeat"]}
                ]}
            ]}}]
        })),
        case(serde_json::json!({
            "id": "x.three", "title": "three", "requirements": ["exec.a.must-wire"], "level": "MUST",
            "surface": "execution",
            "steps": [{"concurrent": {"count": 2, "request": {"path": "/v1/executions"}}, "expect": [
                {"each": [{"status": 200, "requirements": ["exec.unknown.nested"]}]}
            ]}]
        })),
    ]
}

#[test]
fn requirements_map_to_the_cases_that_cite_them_at_any_depth() {
    let report = CoverageReport::compute(&corpus(), &registry());
    let cases_of = |id: &str| {
        report
            .requirements
            .iter()
            .find(|r| r.id == id)
            .unwrap()
            .cases
            .clone()
    };
    assert_eq!(cases_of("exec.a.must-wire"), ["x.one", "x.three"]);
    assert_eq!(cases_of("events.b.should"), ["w.two"]);
    assert_eq!(
        cases_of("events.b.heartbeat"),
        ["w.two"],
        "a check's requirements inside repeat"
    );
    assert!(cases_of("exec.a.must-not-wire").is_empty());
    let ids: Vec<&str> = report.requirements.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(
        ids.len(),
        6,
        "every registry requirement is listed, in registry order"
    );
    assert_eq!(ids[0], "exec.a.must-wire");
}

#[test]
fn unknown_requirement_ids_are_errors() {
    let report = CoverageReport::compute(&corpus(), &registry());
    let errors: Vec<(String, String)> = report
        .errors
        .iter()
        .map(|e| (e.case.clone(), e.requirement.clone()))
        .collect();
    assert_eq!(
        errors,
        [
            ("w.two".to_string(), "events.nope".to_string()),
            ("x.three".to_string(), "exec.unknown.nested".to_string())
        ]
    );
}

#[test]
fn totals_and_percentages() {
    let report = CoverageReport::compute(&corpus(), &registry());
    let row = |rows: &[harness::coverage::CoverageTotals], key: &str| {
        let r = rows.iter().find(|r| r.key == key).unwrap();
        (r.covered, r.total)
    };
    assert_eq!(row(&report.by_level, "MUST"), (2, 3));
    assert_eq!(row(&report.by_level, "MUST NOT"), (0, 1));
    assert_eq!(row(&report.by_level, "SHOULD"), (1, 1));
    assert_eq!(row(&report.by_level, "SHOULD NOT"), (0, 0));
    assert_eq!(row(&report.by_level, "MAY"), (0, 1));
    assert_eq!(row(&report.by_document, "execution-protocol"), (1, 3));
    assert_eq!(row(&report.by_document, "run-events"), (2, 3));
    assert_eq!(row(&report.by_testability, "wire"), (2, 3));
    assert_eq!(row(&report.by_testability, "capability:*"), (1, 2));
    assert_eq!(row(&report.by_testability, "not-wire"), (0, 1));
    assert_eq!(row(&report.by_capability, "capability:heartbeat"), (1, 1));
    let keys: Vec<&str> = report
        .by_testability
        .iter()
        .map(|r| r.key.as_str())
        .collect();
    assert_eq!(keys, ["wire", "capability:*", "not-wire"]);
    let wire = report.wire_covered_percent.unwrap();
    assert!((wire - 200.0 / 3.0).abs() < 1e-9, "{wire}");
    assert_eq!(report.capability_covered_percent, Some(50.0));
    assert_eq!(
        report
            .by_level
            .iter()
            .find(|r| r.key == "SHOULD NOT")
            .unwrap()
            .percent,
        None
    );
}

#[test]
fn uncovered_wire_must_lists_must_and_must_not_only() {
    let report = CoverageReport::compute(&corpus(), &registry());
    let ids: Vec<&str> = report
        .uncovered_wire_must()
        .iter()
        .map(|r| r.id.as_str())
        .collect();
    assert_eq!(ids, ["exec.a.must-not-wire"]);
}

#[test]
fn empty_corpus_covers_nothing_and_renders() {
    let report = CoverageReport::compute(&[], &registry());
    assert_eq!(report.wire_covered_percent, Some(0.0));
    assert_eq!(report.uncovered_wire_must().len(), 2);
    assert!(report.errors.is_empty());
    let markdown = report.to_markdown();
    assert!(markdown.contains("Wire requirements covered: **0.0%**"));
}

#[test]
fn markdown_and_json_renderings() {
    let report = CoverageReport::compute(&corpus(), &registry());
    let markdown = report.to_markdown();
    assert!(markdown.contains("| MUST | 2 | 3 | 66.7% |"), "{markdown}");
    assert!(markdown.contains("case `w.two` cites requirement `events.nope`"));
    assert!(markdown.contains("| `exec.a.must-not-wire` | MUST NOT | wire | A |"));
    assert!(
        markdown.contains("B \\| pipes"),
        "pipes in sections cannot break the table"
    );
    assert!(
        !markdown.contains("exec.a.not-wire"),
        "not-wire requirements are not listed as gaps"
    );
    let json = report.to_json();
    assert_eq!(
        json["requirements"][0]["cases"],
        serde_json::json!(["x.one", "x.three"])
    );
    assert_eq!(json["errors"][0]["requirement"], "events.nope");
}

#[test]
fn the_real_registry_has_wire_musts_to_cover() {
    let report = CoverageReport::compute(&[], spec::requirements::registry());
    assert!(!report.uncovered_wire_must().is_empty());
    assert_eq!(
        report.requirements.len(),
        spec::requirements::registry().len()
    );
}
