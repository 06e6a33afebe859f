//! The requirement registry loader: parsing, lookup, levels, testability and the validation
//! rules, exercised on the embedded registry and on small hand-made ones that break each rule.

use serde_json::{Value, json};
use spec::requirements::{
    Document, Level, RegistryProblem, RequirementRegistry, Severity, Testability, is_valid_id,
    normalise_whitespace, registry,
};

/// A valid one-record registry; tests mutate it to break one rule at a time.
fn minimal() -> Value {
    json!({
        "version": 1,
        "documents": [
            {"id": "execution-protocol", "file": "000.txt", "title": "Execution", "status": "draft"},
            {"id": "run-events", "file": "002.txt", "title": "Events", "status": "stable"}
        ],
        "requirements": [{
            "id": "exec.idempotency.same-request-same-execution",
            "level": "MUST",
            "document": "execution-protocol",
            "section": "Idempotency",
            "quote": "Idempotency-Key reuse with the same request returns that execution",
            "testability": "wire",
            "surface": "X"
        }]
    })
}

fn record(value: &mut Value) -> &mut Value {
    &mut value["requirements"][0]
}

fn problems_of(value: Value) -> Vec<RegistryProblem> {
    let registry = RequirementRegistry::from_json(&value.to_string()).expect("the shape parses");
    registry.validate().expect_err("the registry breaks a rule")
}

#[test]
fn the_minimal_registry_is_valid() {
    let registry = RequirementRegistry::from_json(&minimal().to_string()).expect("parses");
    assert_eq!(registry.validate(), Ok(()));
    assert_eq!(registry.len(), 1);
}

#[test]
fn lookup_and_iteration_cover_the_embedded_registry() {
    let registry = registry();
    let rule = registry
        .get("exec.idempotency.different-request-fails")
        .expect("registered");
    assert_eq!(rule.document, Document::ExecutionProtocol);
    assert_eq!(rule.level, Level::Must);
    assert!(registry.get("exec.no-such-rule").is_none());
    assert_eq!(registry.iter().count(), registry.len());
    assert_eq!(
        registry.in_document(Document::ExecutionProtocol).count()
            + registry.in_document(Document::RunEvents).count(),
        registry.len()
    );
    for requirement in registry {
        assert_eq!(
            requirement.surface,
            requirement.document.surface(),
            "{}",
            requirement.id
        );
    }
}

#[test]
fn the_embedded_registry_round_trips_through_json() {
    let text = serde_json::to_string(registry()).expect("serialises");
    let again = RequirementRegistry::from_json(&text).expect("parses back");
    assert_eq!(&again, registry());
}

#[test]
fn levels_map_to_severities() {
    for (level, severity) in [
        (Level::Must, Severity::Fail),
        (Level::MustNot, Severity::Fail),
        (Level::Should, Severity::Warn),
        (Level::ShouldNot, Severity::Warn),
        (Level::May, Severity::Info),
    ] {
        assert_eq!(level.severity(), severity, "{level}");
        let written = serde_json::to_value(level).expect("serialises");
        assert_eq!(written, json!(level.as_str()));
    }
    assert!(Severity::Fail > Severity::Warn && Severity::Warn > Severity::Info);
}

#[test]
fn testability_parses_and_displays_its_string_form() {
    for text in [
        "wire",
        "not-wire",
        "capability:providerUsage",
        "capability:streamMode.values",
    ] {
        let parsed: Testability = text.parse().expect(text);
        assert_eq!(parsed.to_string(), text);
    }
    assert_eq!(
        "capability:heartbeat"
            .parse::<Testability>()
            .map(|t| t.capability().map(str::to_owned)),
        Ok(Some("heartbeat".to_owned()))
    );
    assert!(!Testability::NotWire.is_testable());
    for bad in [
        "",
        "Wire",
        "capability:",
        "capability",
        "capability:a b",
        "not wire",
    ] {
        let error = bad.parse::<Testability>().expect_err(bad);
        assert!(
            error.to_string().contains("is not a testability"),
            "{error}"
        );
    }
}

#[test]
fn an_unparseable_testability_or_unknown_field_is_a_parse_error() {
    let mut bad_testability = minimal();
    record(&mut bad_testability)["testability"] = json!("sometimes");
    assert!(RequirementRegistry::from_json(&bad_testability.to_string()).is_err());

    let mut unknown_field = minimal();
    record(&mut unknown_field)["severity"] = json!("fail");
    assert!(RequirementRegistry::from_json(&unknown_field.to_string()).is_err());

    let mut bad_level = minimal();
    record(&mut bad_level)["level"] = json!("must");
    assert!(RequirementRegistry::from_json(&bad_level.to_string()).is_err());
}

#[test]
fn the_id_grammar_is_enforced() {
    for good in [
        "exec.a",
        "events.terminal.exactly-one",
        "exec.a1.b-2-c",
        "events.x.y.z",
    ] {
        assert!(is_valid_id(good), "{good}");
    }
    for bad in [
        "exec",
        "exec.",
        "exec..a",
        "Exec.a",
        "exec.A",
        "exec.a--b",
        "exec.a-",
        "exec.-a",
        "exec.a_b",
        "foo.bar",
        "executions.a",
        "exec.a b",
        "",
    ] {
        assert!(!is_valid_id(bad), "{bad:?}");
    }
    let mut value = minimal();
    record(&mut value)["id"] = json!("exec.Idempotency");
    assert_eq!(
        problems_of(value),
        vec![RegistryProblem::BadId {
            id: "exec.Idempotency".into()
        }]
    );
}

#[test]
fn duplicate_ids_are_reported() {
    let mut value = minimal();
    let copy = record(&mut value).clone();
    value["requirements"]
        .as_array_mut()
        .expect("array")
        .push(copy);
    assert_eq!(
        problems_of(value),
        vec![RegistryProblem::DuplicateId {
            id: "exec.idempotency.same-request-same-execution".into()
        }]
    );
}

#[test]
fn not_wire_needs_a_reason_and_only_not_wire_has_one() {
    let mut missing = minimal();
    record(&mut missing)["testability"] = json!("not-wire");
    assert!(matches!(
        problems_of(missing).as_slice(),
        [RegistryProblem::MissingReason { .. }]
    ));

    let mut blank = minimal();
    record(&mut blank)["testability"] = json!("not-wire");
    record(&mut blank)["reason"] = json!("  ");
    assert!(matches!(
        problems_of(blank).as_slice(),
        [RegistryProblem::MissingReason { .. }]
    ));

    let mut unexpected = minimal();
    record(&mut unexpected)["reason"] = json!("because");
    assert!(matches!(
        problems_of(unexpected).as_slice(),
        [RegistryProblem::UnexpectedReason { .. }]
    ));
}

#[test]
fn capability_names_must_be_known() {
    let mut value = minimal();
    record(&mut value)["testability"] = json!("capability:telepathy");
    assert_eq!(
        problems_of(value),
        vec![RegistryProblem::UnknownCapability {
            id: "exec.idempotency.same-request-same-execution".into(),
            capability: "telepathy".into()
        }]
    );
}

#[test]
fn quotes_must_be_non_empty_and_normalised() {
    let mut empty = minimal();
    record(&mut empty)["quote"] = json!(" ");
    assert!(matches!(
        problems_of(empty).as_slice(),
        [RegistryProblem::EmptyQuote { .. }]
    ));

    for quote in ["two  spaces", " leading", "line\nbreak", "• bullet"] {
        let mut value = minimal();
        record(&mut value)["quote"] = json!(quote);
        assert!(
            matches!(
                problems_of(value).as_slice(),
                [RegistryProblem::UnnormalisedQuote { .. }]
            ),
            "{quote:?}"
        );
    }
}

#[test]
fn document_surface_and_prefix_must_agree() {
    let mut wrong_surface = minimal();
    record(&mut wrong_surface)["surface"] = json!("W");
    assert!(matches!(
        problems_of(wrong_surface).as_slice(),
        [RegistryProblem::SurfaceMismatch { .. }]
    ));

    let mut wrong_prefix = minimal();
    record(&mut wrong_prefix)["id"] = json!("events.idempotency.same-request");
    assert!(matches!(
        problems_of(wrong_prefix).as_slice(),
        [RegistryProblem::IdPrefixMismatch { .. }]
    ));

    let mut unlisted = minimal();
    unlisted["documents"]
        .as_array_mut()
        .expect("array")
        .remove(0);
    assert!(matches!(
        problems_of(unlisted).as_slice(),
        [RegistryProblem::UnlistedDocument { .. }]
    ));
}

#[test]
fn every_problem_is_reported_not_only_the_first() {
    let mut value = minimal();
    value["version"] = json!(2);
    record(&mut value)["id"] = json!("bad");
    record(&mut value)["section"] = json!("");
    record(&mut value)["testability"] = json!("not-wire");
    let problems = problems_of(value);
    assert_eq!(problems.len(), 4, "{problems:?}");
}

#[test]
fn whitespace_normalisation_collapses_runs_and_trims_only() {
    assert_eq!(normalise_whitespace("  a\n\n b\t c  "), "a b c");
    assert_eq!(
        normalise_whitespace("MUST NOT — Ünïcode"),
        "MUST NOT — Ünïcode"
    );
    assert_eq!(normalise_whitespace(""), "");
}
