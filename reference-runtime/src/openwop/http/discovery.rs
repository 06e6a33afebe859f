//! `GET /.well-known/openwop` (no auth): what this host implements, with a strong `ETag`
//! (`If-None-Match` → 304). Presence is the claim, so only implemented families are listed.

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use spec::openwop::{EVENT_LOG_SCHEMA_VERSION, PROTOCOL_VERSION};

use crate::openwop::infra::choices::VersionDefault;

use super::version::VERSION_HEADER;
use crate::openwop::engine::ai::node::mock_provider_ids;
use crate::openwop::engine::envelopes::catalog::KindCatalog;
use crate::openwop::engine::pricing;
use crate::openwop::infra::config::MAX_BODY_BYTES;
use crate::openwop::infra::config::OpenWopConfig;
use crate::openwop::infra::era2;

/// The response header naming the representation's version.
const VERSION_HEADER_NAME: header::HeaderName = header::HeaderName::from_static(VERSION_HEADER);

/// The serialised document and its `ETag`, and the v1 document a dual-stack host answers
/// without `OpenWOP-Version` ([`VersionDefault::V1UnlessAsked`]).
pub(crate) struct DiscoveryDocument {
    body: String,
    etag: String,
    v1: Option<(String, String)>,
}

/// The version this host serves besides 2.x under [`VersionDefault::V1UnlessAsked`].
const V1_VERSION: &str = "1.0";

fn etag_of(body: &str) -> String {
    format!(
        "\"{}\"",
        &hex::encode(Sha256::digest(body.as_bytes()))[..32]
    )
}

impl DiscoveryDocument {
    /// Builds the document.
    pub(crate) fn build(
        config: &OpenWopConfig,
        fixtures: Vec<String>,
        catalog: &KindCatalog,
    ) -> Self {
        let mut document = document(config, fixtures);
        if let Some(root) = document.as_object_mut() {
            root.extend(envelope_and_feedback_families(config, catalog));
        }
        let v1 = (config.choices.version_default == VersionDefault::V1UnlessAsked).then(|| {
            // The overlap: both versions listed, 1.x preferred (upstream's versioning).
            let versions = json!([V1_VERSION, PROTOCOL_VERSION]);
            if let Some(root) = document.as_object_mut() {
                root.insert("protocolVersions".into(), versions.clone());
                root.insert("preferredVersion".into(), json!(V1_VERSION));
            }
            // This host's v1 representation names its versions and itself, nothing of v2.
            let v1 = json!({
                "protocolVersions": versions,
                "preferredVersion": V1_VERSION,
                "protocolVersion": V1_VERSION,
                "implementation": document.get("implementation").cloned().unwrap_or(Value::Null),
            })
            .to_string();
            let etag = etag_of(&v1);
            (v1, etag)
        });
        let body = document.to_string();
        let etag = etag_of(&body);
        DiscoveryDocument { body, etag, v1 }
    }
}

fn record(witness: &str, facets: Value) -> Value {
    let mut record = json!({ "status": "stable", "since": PROTOCOL_VERSION, "witness": witness });
    if let (Some(record), Some(facets)) = (record.as_object_mut(), facets.as_object()) {
        record.extend(facets.clone());
    }
    record
}

/// The `heartbeat` record's facets: the intervals and, unless the host leaves it to the default,
/// the host channel's address.
fn heartbeat_facets(config: &OpenWopConfig) -> Value {
    let mut facets = json!({
        "minIntervalSec": config.heartbeat.min_interval_sec,
        "maxRuntimeMs": config.heartbeat.max_runtime_ms,
    });
    if let Some(address) = config.choices.host_channel.declared() {
        facets["deliveryChannel"] = json!(address);
    }
    facets
}

/// The document: versions, implementation, seeded fixtures, mock providers, and the capability
/// records of `providerUsage` (when advertised), `heartbeat`, `scheduling` and `limits`.
pub(crate) fn document(config: &OpenWopConfig, fixtures: Vec<String>) -> Value {
    let mut document = json!({
        "protocolVersions": [PROTOCOL_VERSION],
        "preferredVersion": PROTOCOL_VERSION,
        "protocolVersion": PROTOCOL_VERSION,
        "implementation": {
            "name": "conformance-harness reference-runtime",
            "version": env!("CARGO_PKG_VERSION"),
            "vendor": "conformance-harness",
        },
        "eventLogSchemaVersion": EVENT_LOG_SCHEMA_VERSION,
        "fixtures": fixtures,
        "testing": {
            "mockProviders": mock_provider_ids(),
            "testKeyPrefix": config.test_key_prefix,
        },
        "providerUsage": record("witnessable-gated", json!({
            "costEstimates": true,
            "currency": pricing::CURRENCY,
        })),
        "heartbeat": record("witnessable-gated", heartbeat_facets(config)),
        "scheduling": record("claims-check", scheduling_facets()),
        "limits": record("claims-check", limits_facets(config)),
    });
    if config.choices.usage_currency == crate::openwop::infra::choices::UsageCurrency::Omitted
        && let Some(usage) = document
            .pointer_mut("/providerUsage")
            .and_then(Value::as_object_mut)
    {
        usage.remove("currency");
    }
    if !config.provider_usage.advertise
        && let Some(families) = document.as_object_mut()
    {
        families.remove("providerUsage");
    }
    document
}

/// The `limits` record's facets: the envelope limits, the request body ceiling and, when the
/// host sets one, each run's wall-clock ceiling (`maxRunDurationMs`, which also caps
/// `heartbeat.maxRuntimeMs`).
fn limits_facets(config: &OpenWopConfig) -> Value {
    let mut facets = json!({
        "clarificationRounds": 0,
        "schemaRounds": config.envelopes.schema_rounds,
        "envelopesPerTurn": 1,
        "maxRequestBodyBytes": MAX_BODY_BYTES,
    });
    if config.max_run_duration_ms > 0 {
        facets["maxRunDurationMs"] = json!(config.max_run_duration_ms);
    }
    facets
}

/// The `scheduling` record's facets: of the four upstream's `scheduling` record admits (`cron`,
/// `delayed`, `calendar`, `maxFutureHorizon`), the three kinds of schedule this host does not
/// honour, each `false` (its schedules are fixed intervals from configuration, documented in
/// `scheduling`); no horizon, since nothing is scheduled ahead. The record is closed upstream,
/// so the interval substrate is documented rather than advertised.
fn scheduling_facets() -> Value {
    json!({ "cron": false, "delayed": false, "calendar": false })
}

/// The reliability events this host emits (`envelopes.reliability.events`).
const RELIABILITY_EVENTS: [&str; 5] = [
    "envelope.retry-attempted",
    "envelope.retry-exhausted",
    "envelope.refusal",
    "envelope.truncated",
    "envelope.recovery-applied",
];

/// The families of AI envelopes, feedback and test seams: `supportedEnvelopes`,
/// `schemaVersions`, `envelopeStrictness`, `envelopeContracts`, `envelopes` (Tier 1 subset,
/// reasoning posture, reliability), `feedback`, and `conformance.seamsProfile` when the seams
/// are mounted. (`providerUsage.costEstimates`/`currency` are in [`document`].)
fn envelope_and_feedback_families(
    config: &OpenWopConfig,
    catalog: &KindCatalog,
) -> serde_json::Map<String, Value> {
    let mut supported = json!({});
    if let Some(kinds) = catalog.advertised_kinds() {
        supported["kinds"] = json!(kinds);
    }
    let events: Vec<&str> = RELIABILITY_EVENTS
        .into_iter()
        // With no schema round a failed attempt is never retried: the host never emits
        // envelope.retry-attempted, so it does not list it ("only the other reliability
        // events it emits").
        .filter(|e| config.envelopes.schema_rounds > 0 || *e != "envelope.retry-attempted")
        .collect();
    let rounds = config.envelopes.schema_rounds;
    let mut families = serde_json::Map::new();
    let mut add = |name: &str, value: Value| {
        families.insert(name.to_string(), value);
    };
    add("supportedEnvelopes", record("witnessable-gated", supported));
    add(
        "schemaVersions",
        record("witnessable-gated", json!({ "kinds": catalog.floors() })),
    );
    add(
        "envelopeStrictness",
        record(
            "witnessable-gated",
            json!({ "mode": catalog.strictness().as_str() }),
        ),
    );
    add(
        "envelopeContracts",
        record("witnessable-gated", json!({ "advertised": true })),
    );
    add(
        "envelopes",
        record(
            "witnessable-gated",
            json!({
                "tierOneSubsetCompliance": "strict",
                "reasoning": { "promptDirective": "advisory" },
                "reliability": {
                    "events": events,
                    "maxRetryAttempts": rounds + 1,
                    "completion": {
                        "distinguishesTruncation": true,
                        "truncationBudgetMultiplier": config.envelopes.truncation_budget_multiplier,
                    },
                },
            }),
        ),
    );
    let mut feedback_facets = json!({ "targets": config.feedback.targets.kinds() });
    if config.feedback.advertise_signals {
        feedback_facets["signals"] = json!(config.feedback.signals.kinds());
    }
    add("feedback", record("witnessable-gated", feedback_facets));
    if config.seams_enabled {
        add(
            "conformance",
            json!({ "seamsProfile": era2::SEAMS_PROFILE }),
        );
    }
    families
}

/// `GET /.well-known/openwop`: the document, or 304 when `If-None-Match` names its `ETag`.
pub(crate) fn respond(doc: &DiscoveryDocument, headers: &HeaderMap) -> Response {
    // A dual-stack host answers its v1 document unless v2 is asked for (the version
    // middleware has already refused a malformed or unlisted major).
    let asked_v2 = headers
        .get(VERSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim().split('.').next() == Some("2"));
    let (body, etag_text, version) = match &doc.v1 {
        Some((body, etag)) if !asked_v2 => (body, etag.as_str(), V1_VERSION),
        _ => (&doc.body, doc.etag.as_str(), PROTOCOL_VERSION),
    };
    let etag = HeaderValue::from_str(etag_text).unwrap_or(HeaderValue::from_static("\"0\""));
    let cache = HeaderValue::from_static("public, max-age=300");
    let matches = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(',')
                .map(|t| t.trim().trim_start_matches("W/"))
                .any(|t| t == etag_text || t == "*")
        });
    let version = HeaderValue::from_static(version);
    if matches {
        return (
            StatusCode::NOT_MODIFIED,
            [
                (header::ETAG, etag),
                (header::CACHE_CONTROL, cache),
                (VERSION_HEADER_NAME, version),
            ],
        )
            .into_response();
    }
    (
        [
            (header::ETAG, etag),
            (header::CACHE_CONTROL, cache),
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            ),
            (VERSION_HEADER_NAME, version),
        ],
        body.clone(),
    )
        .into_response()
}
