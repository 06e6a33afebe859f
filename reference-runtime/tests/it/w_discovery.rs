//! Surface W: the discovery document validates against the published `discovery.json` (each
//! family record closed over the facets upstream's `capabilities.schema.json` admits) under
//! every configuration a built-in profile applies to what discovery advertises.

use crate::w_host::*;
use reference_runtime::openwop::OpenWopConfig;
use reference_runtime::{HostChannelAddress, Strictness, UsageCurrency};
use serde_json::Value;
use spec::schema::{Published, validate};

/// The discovery-relevant settings of the built-in profiles (`standard`, `alternate`,
/// `strict`, `divergent`; `deferred` advertises as `standard`), plus the seams.
fn profiles() -> Vec<(&'static str, OpenWopConfig)> {
    let standard = OpenWopConfig::default();
    let mut alternate = OpenWopConfig::default();
    alternate.envelopes.strictness = Strictness::Strict;
    alternate.envelopes.advertise_kinds = false;
    alternate.feedback.advertise_signals = false;
    alternate.provider_usage.advertise = false;
    let mut strict = OpenWopConfig::default();
    strict.envelopes.strictness = Strictness::Strict;
    let mut divergent = OpenWopConfig::default();
    divergent.choices.host_channel = HostChannelAddress::Declared;
    divergent.choices.usage_currency = UsageCurrency::Omitted;
    divergent.max_subscribers_per_run = 0;
    let seams = OpenWopConfig {
        seams_enabled: true,
        ..OpenWopConfig::default()
    };
    vec![
        ("standard", standard),
        ("alternate", alternate),
        ("strict", strict),
        ("divergent", divergent),
        ("seams", seams),
    ]
}

async fn discovery(config: OpenWopConfig) -> Value {
    let host = host_with(config, &[]).await;
    host.get("/.well-known/openwop", None, &[])
        .await
        .json()
        .await
        .expect("discovery is JSON")
}

#[tokio::test]
async fn every_profile_advertises_only_facets_upstream_admits() {
    for (profile, config) in profiles() {
        let doc = discovery(config).await;
        if let Err(violations) = validate(Published::Discovery, &doc) {
            panic!("{profile}: discovery violates discovery.json: {violations:?}\n{doc}");
        }
    }
}

#[tokio::test]
async fn a_facet_the_family_does_not_admit_is_refused_by_the_schema() {
    let mut doc = discovery(OpenWopConfig::default()).await;
    validate_doc(Published::Discovery, &doc);
    // What this host advertised before its scheduling record was closed: none of the four is a
    // facet upstream's `scheduling` record admits.
    for facet in ["triggers", "minIntervalSec", "overlap", "source"] {
        let mut changed = doc.clone();
        changed["scheduling"][facet] = Value::Bool(true);
        assert!(
            validate(Published::Discovery, &changed).is_err(),
            "scheduling.{facet} is refused"
        );
    }
    doc["limits"]
        .as_object_mut()
        .expect("limits is advertised")
        .remove("envelopesPerTurn");
    assert!(
        validate(Published::Discovery, &doc).is_err(),
        "a record without a facet its family requires is refused"
    );
}

#[tokio::test]
async fn the_run_ceiling_is_advertised_when_set_and_caps_the_heartbeat_budget() {
    let doc = discovery(OpenWopConfig::default()).await;
    validate_doc(Published::Discovery, &doc);
    assert_eq!(doc["limits"]["maxRunDurationMs"], 600_000);
    assert!(
        doc["heartbeat"]["maxRuntimeMs"].as_u64().unwrap() <= 600_000,
        "maxRuntimeMs is capped by limits.maxRunDurationMs"
    );
    let none = discovery(OpenWopConfig {
        max_run_duration_ms: 0,
        ..OpenWopConfig::default()
    })
    .await;
    assert!(none["limits"].get("maxRunDurationMs").is_none());
}
