//! The envelope-kind catalog and the one flow every inbound envelope passes, in this order:
//!
//! 1. **namespace** (E3): the kind is universal, in a core family (`ui.`, `media.`) or under an
//!    org registered in the vendor-org registry; otherwise `envelope_invalid`.
//! 2. **`supportedEnvelopes`**: a universal kind passes; otherwise it must be a member of the
//!    advertised `kinds`, and with no `kinds` advertised every non-universal kind is refused;
//!    `unknown_envelope_kind`.
//! 3. **`schemaVersions`**: the emitted `schemaVersion` (absent = 0) above the kind's advertised
//!    floor (absent from the map = 0) is refused with `unknown_schema_version`, whatever the
//!    strictness.
//! 4. **`envelopeStrictness`**: below the floor, `strict` refuses with `unknown_schema_version`;
//!    `warn` logs `envelope_schema_version_drift` and the payload is validated against the
//!    advertised version's schema (the only one this host holds).
//! 5. **`envelopeContracts`**: when the node declares `acceptedEnvelopes`, a non-universal kind
//!    outside it is refused with `envelope_invalid` (`details.check: "envelopeContracts"`), a code
//!    distinct from the catalog's `unknown_envelope_kind`; the contract never admits a kind the
//!    catalog refused (the two stack).
//!
//! Every refusal names the check in `details.check` of the node's error. Payload validation
//! against the kind's schema comes after the flow (a violation is retried, see `reliability`).
//!
//! The kinds this host holds a schema for ([`HOST_KINDS`]):
//!
//! | kind | advertised version | payload |
//! |---|---|---|
//! | `example.answer` | 2 | `{reasoning?: string, answer: string, confidence: number 0..1}` |
//! | `example.summary` | (absent: floor 0) | `{reasoning?: string, summary: string}` |
//! | `ui.text` | (absent: floor 0) | `{text: string}` |
//! | `clarification.request` (universal) | 0 | `{question: string}` |
//! | `schema.request`, `schema.response` (universal) | 0 | any object |
//! | `error` (universal) | 0 | `{message: string}` |
//!
//! Every schema keeps to the Tier 1 structured-output subset (`type`, `properties`, `required`,
//! `additionalProperties: false`, `minimum`/`maximum`), so an envelope restricted to it is
//! accepted from any provider: nothing in the flow looks at the provider.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use serde_json::{Value, json};

use crate::known_bad::KnownBad;

use crate::openwop::infra::envelope_settings::{EnvelopeSettings, Strictness};

/// One kind this host knows.
pub(crate) struct HostKind {
    /// The kind.
    pub(crate) kind: &'static str,
    /// The advertised schema version (`None`: absent from `schemaVersions.kinds`).
    pub(crate) version: Option<u32>,
    /// The payload schema of that version.
    pub(crate) schema: fn() -> Value,
}

fn with_reasoning(required: &str, properties: Value) -> Value {
    let mut props = json!({ "reasoning": { "type": "string" } });
    if let (Some(all), Some(extra)) = (props.as_object_mut(), properties.as_object()) {
        all.extend(extra.clone());
    }
    json!({
        "type": "object",
        "properties": props,
        "required": required.split(',').collect::<Vec<_>>(),
        "additionalProperties": false,
    })
}

/// The kinds this host holds a schema for.
pub(crate) const HOST_KINDS: &[HostKind] = &[
    HostKind {
        kind: "example.answer",
        version: Some(2),
        schema: || {
            with_reasoning(
                "answer,confidence",
                json!({
                    "answer": { "type": "string" },
                    "confidence": { "type": "number", "minimum": 0, "maximum": 1 },
                }),
            )
        },
    },
    HostKind {
        kind: "example.summary",
        version: None,
        schema: || with_reasoning("summary", json!({ "summary": { "type": "string" } })),
    },
    HostKind {
        kind: "ui.text",
        version: None,
        schema: || {
            json!({"type": "object", "properties": {"text": {"type": "string"}},
                   "required": ["text"], "additionalProperties": false})
        },
    },
    HostKind {
        kind: "clarification.request",
        version: None,
        schema: || {
            json!({"type": "object", "properties": {"question": {"type": "string"}},
                   "required": ["question"], "additionalProperties": false})
        },
    },
    HostKind {
        kind: "schema.request",
        version: None,
        schema: || json!({"type": "object"}),
    },
    HostKind {
        kind: "schema.response",
        version: None,
        schema: || json!({"type": "object"}),
    },
    HostKind {
        kind: "error",
        version: None,
        schema: || {
            json!({"type": "object", "properties": {"message": {"type": "string"}},
                   "required": ["message"], "additionalProperties": false})
        },
    },
];

/// The payload schema of `example.answer` at version 1 (`confidence` not yet required): the
/// drifting version a defective host validates below-floor envelopes against.
fn example_answer_v1() -> Value {
    with_reasoning(
        "answer",
        json!({
            "answer": { "type": "string" },
            "confidence": { "type": "number", "minimum": 0, "maximum": 1 },
        }),
    )
}

/// What a defective host adds to its catalog (and advertises): a kind under an unregistered org
/// and a kind with no namespace at all, each when its policy decision says so.
fn defective_kinds(defects: &KnownBad) -> [(&'static str, bool); 2] {
    [
        ("acme.widget", defects.admits_unregistered_org_kind()),
        ("answer", defects.admits_unnamespaced_kind()),
    ]
}

/// A compiled payload schema.
pub(crate) struct KindSchema {
    /// The kind.
    pub(crate) kind: String,
    /// The advertised version (0 when absent from the map).
    pub(crate) version: u32,
    /// Whether the payload may carry `reasoning`.
    pub(crate) permits_reasoning: bool,
    /// The schema's declared top-level properties.
    pub(crate) properties: Vec<String>,
    /// The schema's required top-level properties (named by the schema, never the payload).
    pub(crate) required: Vec<String>,
    validator: jsonschema::Validator,
}

impl KindSchema {
    fn compile(kind: &str, version: u32, schema: &Value) -> Self {
        Self::try_compile(kind, version, schema).expect("the host's kind schemas compile")
    }

    fn try_compile(kind: &str, version: u32, schema: &Value) -> Result<Self, String> {
        Ok(KindSchema {
            kind: kind.to_string(),
            version,
            permits_reasoning: schema.pointer("/properties/reasoning").is_some(),
            properties: schema["properties"]
                .as_object()
                .into_iter()
                .flat_map(|p| p.keys().cloned())
                .collect(),
            required: schema["required"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
            validator: spec::schema::compile(schema)?,
        })
    }

    /// A node's plain `config.outputSchema` (upstream's envelope fixtures: the mock's content
    /// is validated against it, no envelope around it), named by its `title` or
    /// `outputSchema`; `None` when it does not compile.
    pub(crate) fn output_schema(schema: &Value) -> Option<Self> {
        let name = schema
            .get("title")
            .and_then(Value::as_str)
            .unwrap_or("outputSchema");
        KindSchema::try_compile(name, 0, schema).ok()
    }

    /// The violations of a payload: `(instance path, failing keyword)` pairs, built from the
    /// schema alone so they never carry the payload's own text.
    pub(crate) fn violations(&self, payload: &Value) -> Vec<Violation> {
        match spec::schema::violations_of(&self.validator, payload) {
            Ok(()) => Vec::new(),
            Err(found) => found
                .into_iter()
                .map(|v| Violation {
                    keyword: v
                        .schema_path
                        .rsplit('/')
                        .next()
                        .unwrap_or_default()
                        .to_string(),
                    instance_path: v.instance_path,
                    message: v.message,
                })
                .collect(),
        }
    }
}

/// One schema violation.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Violation {
    /// Where in the payload (a JSON pointer; the payload's own keys appear only when the schema
    /// declares them).
    pub(crate) instance_path: String,
    /// The schema keyword that failed (`required`, `type`, …).
    pub(crate) keyword: String,
    /// The validator's own message. It may quote the payload: never written anywhere.
    pub(crate) message: String,
}

/// What the flow admitted.
pub(crate) struct Admission<'a> {
    /// The schema the payload must satisfy (the advertised version's).
    pub(crate) schema: &'a KindSchema,
    /// Whether the envelope is below the advertised version (admitted under `warn`).
    pub(crate) drift: bool,
}

/// Why the flow refused an envelope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CatalogRefusal {
    /// The error code.
    pub(crate) code: &'static str,
    /// The check that refused (`namespace`, `supportedEnvelopes`, `schemaVersions`,
    /// `envelopeStrictness`, `envelopeContracts`).
    pub(crate) check: &'static str,
    /// A message naming the kind (a catalog member or a refused name), never payload content.
    pub(crate) message: String,
}

/// The catalog as this host serves it.
pub(crate) struct KindCatalog {
    kinds: Option<Vec<String>>,
    floors: BTreeMap<String, u32>,
    strictness: Strictness,
    schemas: BTreeMap<String, KindSchema>,
    /// Schemas of versions below the advertised one (held only by a defective host).
    earlier: BTreeMap<(String, u32), KindSchema>,
}

static UNIVERSAL: LazyLock<Vec<String>> =
    LazyLock::new(|| spec::registry::orgs().universal_envelope_kinds.clone());

/// Checks that every kind `settings` advertises is one this host has a schema for; returns the
/// message of the first that is not.
pub(crate) fn check_supported_kinds(settings: &EnvelopeSettings) -> Result<(), String> {
    if let Some(kind) = settings
        .supported_kinds
        .iter()
        .find(|k| !HOST_KINDS.iter().any(|h| h.kind == k.as_str()))
    {
        return Err(format!(
            "envelopes.supported_kinds names `{kind}`, a kind this host has no schema for"
        ));
    }
    Ok(())
}

/// Whether a kind is universal (always allowed).
pub(crate) fn is_universal(kind: &str) -> bool {
    UNIVERSAL.iter().any(|k| k == kind)
}

impl KindCatalog {
    /// The catalog from the settings (a defective host adds its extra kinds).
    pub(crate) fn build(settings: &EnvelopeSettings, defects: &KnownBad) -> Self {
        let mut schemas = BTreeMap::new();
        let mut floors = BTreeMap::new();
        for host in HOST_KINDS {
            let schema = (host.schema)();
            schemas.insert(
                host.kind.to_string(),
                KindSchema::compile(host.kind, host.version.unwrap_or(0), &schema),
            );
            if let Some(version) = host.version {
                floors.insert(host.kind.to_string(), version);
            }
        }
        let mut kinds = settings.supported_kinds.clone();
        for (kind, admitted) in defective_kinds(defects) {
            if admitted {
                let open = json!({"type": "object"});
                schemas.insert(kind.to_string(), KindSchema::compile(kind, 0, &open));
                kinds.push(kind.to_string());
            }
        }
        let mut earlier = BTreeMap::new();
        if defects.drift_validated_as_emitted() {
            let kind = "example.answer";
            earlier.insert(
                (kind.to_string(), 1),
                KindSchema::compile(kind, 1, &example_answer_v1()),
            );
        }
        KindCatalog {
            kinds: settings.advertise_kinds.then_some(kinds),
            floors,
            strictness: settings.strictness,
            schemas,
            earlier,
        }
    }

    /// `supportedEnvelopes.kinds` (`None`: advertised without `kinds`).
    pub(crate) fn advertised_kinds(&self) -> Option<&[String]> {
        self.kinds.as_deref()
    }

    /// `schemaVersions.kinds`.
    pub(crate) fn floors(&self) -> &BTreeMap<String, u32> {
        &self.floors
    }

    /// `envelopeStrictness.mode`.
    pub(crate) fn strictness(&self) -> Strictness {
        self.strictness
    }

    /// The schema of a kind, when the host holds one.
    pub(crate) fn schema(&self, kind: &str) -> Option<&KindSchema> {
        self.schemas.get(kind)
    }

    /// Runs the flow on an inbound envelope of `kind` at `version` for a node whose contract is
    /// `contract` (its `acceptedEnvelopes`, when it declares one). Returns the schema the payload
    /// must satisfy.
    pub(crate) fn admit(
        &self,
        kind: &str,
        version: u32,
        contract: Option<&[String]>,
        defects: &KnownBad,
    ) -> Result<Admission<'_>, CatalogRefusal> {
        self.check_namespace(kind)?;
        let substituted = defects.envelope_contract_substitutes()
            && contract.is_some_and(|c| c.iter().any(|k| k == kind));
        let drift = if defects.catalog_checks_swapped() {
            let drift = self.check_versions(kind, version, defects)?;
            self.check_supported(kind, defects)?;
            drift
        } else {
            if !substituted {
                self.check_supported(kind, defects)?;
            }
            self.check_versions(kind, version, defects)?
        };
        self.check_contract(kind, contract, defects)?;
        let schema = match self.schemas.get(kind) {
            Some(schema) => schema,
            // Only a defective host gets here: a kind its contract admitted without a schema.
            None => self
                .schemas
                .get("schema.response")
                .ok_or_else(|| CatalogRefusal {
                    code: "unknown_envelope_kind",
                    check: "supportedEnvelopes",
                    message: "the envelope kind has no schema in this host".to_string(),
                })?,
        };
        // Under warn, drift is validated against the advertised version; a defective host
        // validates it against the emitted version when it holds that schema.
        let schema = match self.earlier.get(&(kind.to_string(), version)) {
            Some(emitted) if drift && defects.drift_validated_as_emitted() => emitted,
            _ => schema,
        };
        Ok(Admission { schema, drift })
    }

    fn check_namespace(&self, kind: &str) -> Result<(), CatalogRefusal> {
        let advertised = self.kinds.iter().flatten().any(|k| k == kind);
        if spec::registry::orgs().is_valid_envelope_kind(kind) || advertised {
            // A defective host's catalog lists a kind with a bad namespace: it admits it here.
            return Ok(());
        }
        Err(CatalogRefusal {
            code: "envelope_invalid",
            check: "namespace",
            message: "the envelope kind is neither universal, a ui./media. kind, nor under a registered org".to_string(),
        })
    }

    fn check_supported(&self, kind: &str, defects: &KnownBad) -> Result<(), CatalogRefusal> {
        if is_universal(kind) || defects.unknown_kind_admitted() {
            return Ok(());
        }
        match &self.kinds {
            Some(kinds) if kinds.iter().any(|k| k == kind) => Ok(()),
            Some(_) => Err(CatalogRefusal {
                code: "unknown_envelope_kind",
                check: "supportedEnvelopes",
                message: "the envelope kind is not in supportedEnvelopes.kinds".to_string(),
            }),
            // A defective host reads an absent catalog as an unrestricted one.
            None if defects.absent_kinds_admit_all() => Ok(()),
            None => Err(CatalogRefusal {
                code: "unknown_envelope_kind",
                check: "supportedEnvelopes",
                message:
                    "supportedEnvelopes advertises no kinds: every non-universal kind is refused"
                        .to_string(),
            }),
        }
    }

    /// Returns whether the envelope drifts below the floor (and was admitted under `warn`).
    fn check_versions(
        &self,
        kind: &str,
        version: u32,
        defects: &KnownBad,
    ) -> Result<bool, CatalogRefusal> {
        let floor = match self.floors.get(kind) {
            Some(floor) => *floor,
            None if defects.absent_floor_unbounded() => u32::MAX,
            None => 0,
        };
        if version > floor && !defects.above_floor_admitted() {
            return Err(CatalogRefusal {
                code: "unknown_schema_version",
                check: "schemaVersions",
                message: format!(
                    "schemaVersion is above the floor this host advertises for {kind} ({floor})"
                ),
            });
        }
        // Strictness governs drift below the floor only; a defective strict host counts the
        // floor itself as drift.
        let at_floor_as_drift = version == floor
            && self.strictness == Strictness::Strict
            && defects.strict_refuses_at_floor();
        if version < floor || at_floor_as_drift {
            match self.strictness {
                Strictness::Strict if !defects.strict_admits_drift() => {
                    return Err(CatalogRefusal {
                        code: "unknown_schema_version",
                        check: "envelopeStrictness",
                        message: format!(
                            "schemaVersion is below the floor advertised for {kind} ({floor}) and envelopeStrictness is strict"
                        ),
                    });
                }
                Strictness::Warn if defects.warn_refuses_drift() => {
                    return Err(CatalogRefusal {
                        code: "unknown_schema_version",
                        check: "envelopeStrictness",
                        message: format!("schemaVersion is below the floor advertised for {kind}"),
                    });
                }
                // Warn, or a defective strict host that treats drift as warn does.
                Strictness::Warn | Strictness::Strict => {
                    tracing::warn!(
                        code = "envelope_schema_version_drift",
                        kind,
                        emitted = version,
                        advertised = floor,
                        "an envelope below the advertised schema version is validated against the advertised version"
                    );
                }
            }
            return Ok(true);
        }
        Ok(false)
    }

    fn check_contract(
        &self,
        kind: &str,
        contract: Option<&[String]>,
        defects: &KnownBad,
    ) -> Result<(), CatalogRefusal> {
        let Some(accepted) = contract else {
            return Ok(());
        };
        if is_universal(kind)
            || accepted.iter().any(|k| k == kind)
            || defects.envelope_contract_ignored()
        {
            return Ok(());
        }
        let code = if defects.envelope_contract_uses_catalog_code() {
            "unknown_envelope_kind"
        } else {
            "envelope_invalid"
        };
        Err(CatalogRefusal {
            code,
            check: "envelopeContracts",
            message: "the node's envelope contract does not accept this kind".to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog(settings: EnvelopeSettings) -> KindCatalog {
        KindCatalog::build(&settings, &KnownBad::clean())
    }

    #[test]
    fn only_kinds_with_a_schema_may_be_advertised() {
        assert!(check_supported_kinds(&EnvelopeSettings::default()).is_ok());
        let unknown = EnvelopeSettings {
            supported_kinds: vec!["acme.widget".into()],
            ..EnvelopeSettings::default()
        };
        assert!(check_supported_kinds(&unknown).is_err());
    }

    fn refusal(result: Result<Admission<'_>, CatalogRefusal>) -> (&'static str, &'static str) {
        match result {
            Ok(admitted) => panic!("admitted {}", admitted.schema.kind),
            Err(r) => (r.code, r.check),
        }
    }

    #[test]
    fn the_flow_runs_in_order() {
        let none = KnownBad::clean();
        let c = catalog(EnvelopeSettings::default());
        assert!(c.admit("example.answer", 2, None, &none).is_ok());
        assert!(c.admit("error", 0, None, &none).is_ok());
        assert_eq!(
            refusal(c.admit("acme.widget", 0, None, &none)),
            ("envelope_invalid", "namespace")
        );
        // Not a member and above its floor: supportedEnvelopes answers first.
        assert_eq!(
            refusal(c.admit("myndhyve.plan", 7, None, &none)),
            ("unknown_envelope_kind", "supportedEnvelopes")
        );
        assert_eq!(
            refusal(c.admit("example.answer", 3, None, &none)),
            ("unknown_schema_version", "schemaVersions")
        );
        // Absent from the map: floor 0.
        assert_eq!(
            refusal(c.admit("example.summary", 1, None, &none)),
            ("unknown_schema_version", "schemaVersions")
        );
        // Below the floor under warn: admitted, validated against the advertised version.
        let drift = c.admit("example.answer", 1, None, &none).unwrap();
        assert!(drift.drift);
        assert_eq!(drift.schema.version, 2);
        let strict = catalog(EnvelopeSettings {
            strictness: Strictness::Strict,
            ..EnvelopeSettings::default()
        });
        assert_eq!(
            refusal(strict.admit("example.answer", 1, None, &none)),
            ("unknown_schema_version", "envelopeStrictness")
        );
    }

    #[test]
    fn absent_kinds_refuse_every_non_universal_kind() {
        let none = KnownBad::clean();
        let c = catalog(EnvelopeSettings {
            advertise_kinds: false,
            ..EnvelopeSettings::default()
        });
        assert!(c.advertised_kinds().is_none());
        assert_eq!(
            refusal(c.admit("example.answer", 2, None, &none)),
            ("unknown_envelope_kind", "supportedEnvelopes")
        );
        assert!(c.admit("clarification.request", 0, None, &none).is_ok());
    }

    #[test]
    fn the_absent_kinds_and_strict_defects_admit() {
        let unrestricted = KnownBad::of([crate::defects::Defect::WAbsentKindsAdmitted]);
        let absent = catalog(EnvelopeSettings {
            advertise_kinds: false,
            ..EnvelopeSettings::default()
        });
        assert!(
            absent
                .admit("example.answer", 2, None, &unrestricted)
                .is_ok()
        );
        let lax = KnownBad::of([crate::defects::Defect::WStrictAdmitsDrift]);
        let strict = catalog(EnvelopeSettings {
            strictness: Strictness::Strict,
            ..EnvelopeSettings::default()
        });
        let admitted = strict.admit("example.answer", 1, None, &lax).unwrap();
        assert!(admitted.drift);
        // Neither defect changes the default configuration.
        let c = catalog(EnvelopeSettings::default());
        assert_eq!(
            refusal(c.admit("myndhyve.plan", 0, None, &unrestricted)),
            ("unknown_envelope_kind", "supportedEnvelopes")
        );
        assert!(c.admit("example.answer", 1, None, &lax).unwrap().drift);
    }

    #[test]
    fn contracts_stack_on_the_catalog() {
        let none = KnownBad::clean();
        let c = catalog(EnvelopeSettings::default());
        let contract = ["example.summary".to_string(), "myndhyve.plan".to_string()];
        assert!(
            c.admit("example.summary", 0, Some(&contract), &none)
                .is_ok()
        );
        assert!(c.admit("schema.request", 0, Some(&contract), &none).is_ok());
        assert_eq!(
            refusal(c.admit("example.answer", 2, Some(&contract), &none)),
            ("envelope_invalid", "envelopeContracts")
        );
        assert_eq!(
            refusal(c.admit("myndhyve.plan", 0, Some(&contract), &none)),
            ("unknown_envelope_kind", "supportedEnvelopes")
        );
    }

    #[test]
    fn violations_never_quote_the_payload() {
        let c = catalog(EnvelopeSettings::default());
        let schema = c.schema("example.answer").unwrap();
        assert!(schema.permits_reasoning);
        let found =
            schema.violations(&json!({"answer": "sk-secret-value-1234", "confidence": "high"}));
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].instance_path, "/confidence");
        assert_eq!(found[0].keyword, "type");
        assert!(
            schema
                .violations(&json!({"answer": "a", "confidence": 0.5}))
                .is_empty()
        );
    }
}
