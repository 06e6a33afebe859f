//! What a target can do, learned over HTTP exactly as for any host: the execution surface's
//! runtime info and provider manifests, the run events surface's discovery document, and the
//! stream modes its `400 unsupported_stream_mode` lists, and, for a host advertising
//! `heartbeat` whose operator gave no `heartbeat_interval_ms`, the interval its heartbeats tick
//! at on the host channel. Cases needing something the host lacks
//! are SKIP with the reason; what the probe could not establish (a document that answered but
//! could not be read, providers none of which is bound to a role, stream modes it could not
//! probe) is recorded in [`ProbeFindings::unjudgeable`], and cases needing it are BLOCKED.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};
use tokio::time::{Duration, Instant};

use crate::capability::HostCapability;
use crate::case::CaseSurface;
use crate::case::UpstreamSeam;
use crate::case::needs::Need;
use crate::case::needs::NeedForm;
use crate::driver::{HttpDriver, PreparedRequest, ReadMode};
use crate::host::{Target, Unestablished};
use crate::mock_provider_seat::{MOCK_PROVIDER_SEAT_FACT, MockProviderSeat};
use crate::template::{RUN_ID_PATH_ENCODING_FACT, RunIdPathEncoding};
use crate::upstream::role::Role;

/// What probing found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProbeFindings {
    /// What the host has.
    pub capabilities: BTreeSet<HostCapability>,
    /// The host's self-description.
    pub implementation: Option<String>,
    /// Problems worth reporting (never fatal on their own).
    pub notes: Vec<String>,
    /// Needs the probe could not establish either way, with why (see
    /// [`Target::unjudgeable`]).
    pub unjudgeable: std::collections::BTreeMap<Unestablished, String>,
    /// The discovery documents that answered, by path: SHA-256 (hex) of each body as received
    /// (a claim records them).
    pub documents: std::collections::BTreeMap<String, String>,
    /// The host's provider manifests: provider id → model ids in manifest order.
    pub manifests: BTreeMap<String, Vec<String>>,
    /// Facts learned from the host (`openwop_version`: the `OpenWOP-Version` every surface-W
    /// request carries, the highest 2.x discovery lists); an operator's fact of the same name
    /// wins.
    pub facts: std::collections::BTreeMap<String, Value>,
    /// The surfaces' discovery paths that gave no document, by path: what came instead, named
    /// precisely (`no answer within 10 s`, `connection refused`, `answered 404`, …).
    pub absent: std::collections::BTreeMap<String, String>,
}

impl ProbeFindings {
    /// Why the host serves neither surface, when the probe found neither (nor an unreadable
    /// document of either, nor a v1-only OpenWOP host, whose W cases are SKIP with that reason):
    /// each discovery path with what came instead. `None` when the run can go on.
    pub fn refusal(&self, base_url: &str) -> Option<String> {
        let found = self.capabilities.iter().any(|c| {
            matches!(
                c,
                HostCapability::Meets(Need::Surface(_)) | HostCapability::ServesOpenwopV1Only
            )
        }) || self
            .unjudgeable
            .keys()
            .any(|c| matches!(c, Unestablished::Need(Need::Surface(_))));
        if found {
            return None;
        }
        let answers: Vec<String> = self
            .absent
            .iter()
            .map(|(path, what)| format!("GET {path}: {what}"))
            .collect();
        let refused = self
            .absent
            .values()
            .all(|w| w.starts_with("connection refused"));
        Some(format!(
            "{base_url} serves neither surface ({}){}",
            answers.join("; "),
            if refused && !self.absent.is_empty() {
                ": is it running?"
            } else {
                ""
            }
        ))
    }
}

/// What came back instead of a document, named precisely: the status, or why there was no
/// response (`timeout` is the bound each discovery request had).
pub fn describe_answer(exchange: &crate::transcript::Exchange, timeout: Duration) -> String {
    if let Some(response) = &exchange.response {
        return format!("answered {}", response.status);
    }
    let Some(error) = &exchange.transport_error else {
        return "no response".into();
    };
    let message = error.message.to_ascii_lowercase();
    let cause = if message.contains("no response headers before") || message.contains("timed out") {
        format!(
            "no answer within {} s (the connection was accepted)",
            timeout.as_secs_f64()
        )
    } else if message.contains("refused") {
        "connection refused".into()
    } else if message.contains("reset") {
        "the connection was reset".into()
    } else if message.contains("invalid http")
        || message.contains("parse")
        || message.contains("invalid status")
        || message.contains("invalid header")
    {
        "the answer is not HTTP".into()
    } else if message.contains("closed before message completed")
        || message.contains("incomplete")
        || message.contains("connection closed")
    {
        "the connection was closed without an answer".into()
    } else if error.unreachable {
        "the host could not be reached".into()
    } else {
        "no response".into()
    };
    format!("{cause} ({})", error.message)
}

impl ProbeFindings {
    /// Applies the role bindings to what was found: roles sharing one of the host's providers
    /// whose calls the fake providers cannot tell apart (a role without a model when the host
    /// lists too few, two roles on one model) are not available to cases: BLOCKED with the
    /// reason, in `plan` and `run` alike (both call this with the same bindings).
    pub fn scope_roles(&mut self, bindings: &[crate::upstream::RoleBinding]) {
        let models = crate::upstream::models_for(bindings, &self.manifests);
        for (role, why) in crate::upstream::indistinct_roles(bindings, &models) {
            let need = Need::Provider(role);
            self.capabilities
                .remove(&HostCapability::Meets(need.clone()));
            self.unjudgeable.insert(Unestablished::Need(need), why);
        }
    }

    /// Records what probing found in the target (capabilities, what could not be established,
    /// the self-description); the notes stay here for the caller to report.
    pub fn apply_to(&self, target: &mut Target) {
        target
            .capabilities
            .extend(self.capabilities.iter().cloned());
        target.unjudgeable.extend(
            self.unjudgeable
                .iter()
                .map(|(need, why)| (need.clone(), why.clone())),
        );
        target.implementation = self.implementation.clone();
        for (name, value) in &self.facts {
            target
                .facts
                .entry(name.clone())
                .or_insert_with(|| value.clone());
        }
    }
}

/// The request and response header naming the OpenWOP protocol version.
pub(crate) const VERSION_HEADER: &str = "OpenWOP-Version";

/// The fact holding the `OpenWOP-Version` every surface-W request carries.
pub(crate) const VERSION_FACT: &str = "openwop_version";

/// The `OpenWOP-Version` negotiated from discovery, as the facts hold it ([`VERSION_FACT`]).
pub(crate) fn negotiated_version(
    facts: &std::collections::BTreeMap<String, Value>,
) -> Option<&str> {
    facts.get(VERSION_FACT).and_then(Value::as_str)
}

/// The `protocolVersions` a discovery document lists (`M.m` strings), if it lists any.
fn listed(doc: &Value) -> Option<Vec<String>> {
    let versions: Vec<String> = doc
        .get("protocolVersions")?
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .map(String::from)
        .collect();
    (!versions.is_empty()).then_some(versions)
}

/// The highest 2.x version a discovery document lists (by minor, numerically).
fn highest_v2(doc: &Value) -> Option<String> {
    listed(doc)?
        .into_iter()
        .filter_map(|v| {
            let (major, minor) = v.split_once('.')?;
            (major == "2").then(|| minor.parse::<u64>().ok().map(|m| (m, v.clone())))?
        })
        .max_by_key(|(minor, _)| *minor)
        .map(|(_, version)| version)
}

/// The major of a `M.m` version string.
fn major(version: &str) -> Option<&str> {
    version.split_once('.').map(|(major, _)| major)
}

/// The 1.x `protocolVersion` of a document that lists no `protocolVersions`: a v1 capabilities
/// document (v2 requires the list; upstream's v1 hosts name their one version this way).
fn v1_protocol_version(doc: &Value) -> Option<&str> {
    if listed(doc).is_some() {
        return None;
    }
    doc.get("protocolVersion")
        .and_then(Value::as_str)
        .filter(|v| major(v) == Some("1"))
}

/// Whether a header-less discovery answer is already the v2 representation: it lists a 2.x
/// version and prefers a 2.x one (a dual-stack host preferring 1.x answers its v1 document
/// without the header). A document listing no versions is read as it is, unless it names a
/// 1.x `protocolVersion` (a v1 document: v2 on request is asked for).
fn serves_v2_by_default(doc: &Value) -> bool {
    let preferred_v2 = doc
        .get("preferredVersion")
        .and_then(Value::as_str)
        .is_some_and(|v| major(v) == Some("2"));
    match listed(doc) {
        None => v1_protocol_version(doc).is_none(),
        Some(_) => highest_v2(doc).is_some() && preferred_v2,
    }
}

/// Whether a provider manifest lists a model that can play `role`: for `media` one that is
/// asynchronous or outputs an image, audio or video; for a text role one that outputs text or
/// has the `text-generation` ability.
fn role_capable(role: Role, manifest: &Value) -> bool {
    let models = manifest.get("models").and_then(Value::as_array);
    models.into_iter().flatten().any(|model| {
        let outputs: Vec<&str> = model
            .get("output_modalities")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        if role == Role::Media {
            model.get("async").and_then(Value::as_bool) == Some(true)
                || outputs
                    .iter()
                    .any(|m| matches!(*m, "image" | "audio" | "video"))
        } else {
            outputs.contains(&"text")
                || model
                    .get("abilities")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .any(|a| a.as_str() == Some("text-generation"))
        }
    })
}

/// What a discovery request gave.
enum Document {
    /// A JSON document.
    Read(Value),
    /// Nothing there (404, 405, 410, or no answer at all): the host does not serve it.
    Absent,
    /// An answer that is not the document (another status, not JSON), with what came.
    Unreadable(String),
}

/// Classifies the answer to `GET <path>`.
fn document(path: &str, exchange: &crate::transcript::Exchange) -> Document {
    let Some(response) = &exchange.response else {
        return Document::Absent;
    };
    if matches!(response.status, 404 | 405 | 410) {
        return Document::Absent;
    }
    let content_type = response
        .headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("content-type"))
        .map(|h| h.value.clone())
        .unwrap_or_else(|| "no content-type".into());
    match (&response.json, response.status) {
        // JSON by its media type only: a `text/plain` body that happens to parse is not the
        // document (the README: anything else is unreadable).
        (Some(_), 200) if !is_json_media_type(&content_type) => Document::Unreadable(format!(
            "GET {path} answered 200 ({content_type}), not JSON by its media type (application/json or +json)"
        )),
        (Some(json), 200) => Document::Read(json.clone()),
        (None, 200) => Document::Unreadable(format!(
            "GET {path} answered 200 ({content_type}) with a body that is not JSON"
        )),
        (_, status) => {
            Document::Unreadable(format!("GET {path} answered {status} ({content_type})"))
        }
    }
}

/// Whether a `Content-Type` value names JSON: `application/json` or a `+json` suffix type,
/// parameters ignored, case-insensitively.
fn is_json_media_type(content_type: &str) -> bool {
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    essence == "application/json"
        || essence
            .split_once('/')
            .is_some_and(|(_, subtype)| subtype.ends_with("+json"))
}

/// Records the digest of a document's body, when it answered.
fn record_document(found: &mut ProbeFindings, path: &str, exchange: &crate::transcript::Exchange) {
    use sha2::{Digest, Sha256};
    if let Some(response) = &exchange.response {
        found.documents.insert(
            path.to_string(),
            hex::encode(Sha256::digest(response.body.as_bytes())),
        );
    }
}

/// Probes a target. Every request is bounded by `timeout`.
pub async fn probe(driver: &HttpDriver, target: &Target, timeout: Duration) -> ProbeFindings {
    let mut found = ProbeFindings::default();
    let get = |path: &str, auth: bool| {
        let mut headers: Vec<(String, String)> = target
            .headers
            .iter()
            .map(|h| (h.name.clone(), h.value.clone()))
            .collect();
        if auth {
            headers.extend(
                target
                    .principal_headers(crate::case::Principal::A)
                    .into_iter()
                    .map(|h| (h.name, h.value)),
            );
        }
        PreparedRequest {
            method: reqwest::Method::GET,
            url: format!("{}{path}", target.base_url),
            headers,
            body: None,
        }
    };
    let fetch = |request: PreparedRequest| async {
        let now = Instant::now();
        driver
            .exchange(request, ReadMode::Whole, now + timeout, now)
            .await
    };

    // Surface X.
    let runtime = fetch(get("/v1/runtime", false)).await;
    record_document(&mut found, "/v1/runtime", &runtime);
    let execution = match document("/v1/runtime", &runtime) {
        Document::Read(body) if body.get("protocol_version").is_some() => {
            found
                .capabilities
                .insert(Need::Surface(CaseSurface::Execution).into());
            true
        }
        Document::Read(_) => {
            found.unjudgeable.insert(
                Unestablished::Need(Need::Surface(CaseSurface::Execution)),
                "the runtime info document GET /v1/runtime is unreadable: its JSON has no protocol_version".into(),
            );
            false
        }
        Document::Unreadable(what) => {
            found.unjudgeable.insert(
                Unestablished::Need(Need::Surface(CaseSurface::Execution)),
                format!("the runtime info document is unreadable: {what}"),
            );
            false
        }
        Document::Absent => {
            found
                .absent
                .insert("/v1/runtime".into(), describe_answer(&runtime, timeout));
            false
        }
    };
    if execution {
        let providers = fetch(get("/v1/providers", false)).await;
        record_document(&mut found, "/v1/providers", &providers);
        let data = match document("/v1/providers", &providers) {
            Document::Read(body) => body.get("data").and_then(Value::as_array).cloned(),
            _ => None,
        };
        let manifests = data.as_ref().map(|data| {
            data.iter()
                .filter_map(|m| {
                    let id = m.get("provider").and_then(Value::as_str)?;
                    let models = m
                        .get("models")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .filter_map(|model| model.get("model").and_then(Value::as_str))
                        .map(String::from)
                        .collect::<Vec<_>>();
                    Some((id.to_string(), models))
                })
                .collect::<BTreeMap<String, Vec<String>>>()
        });
        if let (Some(manifests), Some(upstream)) = (&manifests, &target.upstream) {
            upstream.learn_models(manifests);
        }
        found.manifests = manifests.clone().unwrap_or_default();
        let listed = manifests.map(|m| m.into_keys().collect::<BTreeSet<String>>());
        match listed {
            Some(ids) => {
                for (&role, id) in &target.providers {
                    if ids.contains(id.as_str()) {
                        found.capabilities.insert(Need::Provider(role).into());
                    } else if !ids.is_empty()
                        && !data
                            .iter()
                            .flatten()
                            .any(|manifest| role_capable(role, manifest))
                    {
                        // The host has providers, but no model of any can play the role (no
                        // media-capable model for `media`): the host lacks the capability,
                        // which is SKIP (the need's reason says so), not BLOCKED.
                    } else if !ids.is_empty() {
                        // The host has providers, but none the harness's fake for this role
                        // stands behind: the harness cannot judge, the host lacks nothing.
                        found.unjudgeable.insert(
                            Unestablished::Need(Need::Provider(role)),
                            format!(
                                "no fake provider is bound to role `{role}`: the host lists providers [{}] and none is `{id}` (--bind {role}=<id>,<wire format>[,<model>])",
                                ids.iter().cloned().collect::<Vec<_>>().join(", ")
                            ),
                        );
                    }
                }
            }
            None => {
                for &role in target.providers.keys() {
                    found.unjudgeable.insert(
                        Unestablished::Need(Need::Provider(role)),
                        "the provider manifests GET /v1/providers are unreadable (no JSON `data` array)".into(),
                    );
                }
            }
        }
    }

    // Surface W. Discovery is read first without `OpenWOP-Version` (the header-less answer is
    // the host's preferred version's representation), then, when that is not a 2.x document,
    // again asking for the v2 representation; the version chosen goes on every W request.
    let discovery_exchange = fetch(get("/.well-known/openwop", false)).await;
    let mut discovery = match document("/.well-known/openwop", &discovery_exchange) {
        Document::Read(doc) if serves_v2_by_default(&doc) => {
            record_document(&mut found, "/.well-known/openwop", &discovery_exchange);
            Document::Read(doc)
        }
        Document::Read(doc) => {
            let asked = highest_v2(&doc).unwrap_or_else(|| "2".into());
            let mut request = get("/.well-known/openwop", false);
            request.headers.push((VERSION_HEADER.into(), asked.clone()));
            let negotiated = fetch(request).await;
            record_document(&mut found, "/.well-known/openwop", &negotiated);
            match document("/.well-known/openwop", &negotiated) {
                Document::Read(v2) if highest_v2(&v2).is_some() => Document::Read(v2),
                _ => {
                    let offered = match (listed(&doc), v1_protocol_version(&doc)) {
                        (Some(versions), _) => {
                            format!("lists protocolVersions [{}]", versions.join(", "))
                        }
                        (None, Some(version)) => format!(
                            "lists no protocolVersions and names protocolVersion `{version}`"
                        ),
                        (None, None) => "lists no protocolVersions".into(),
                    };
                    found
                        .capabilities
                        .insert(HostCapability::ServesOpenwopV1Only);
                    found.notes.push(format!(
                        "the host serves OpenWOP v1 only: discovery {offered} and asked for `{VERSION_HEADER}: {asked}` it gave no 2.x document; the v2 run events chapter (surface W) is not judged"
                    ));
                    Document::Absent
                }
            }
        }
        other => {
            record_document(&mut found, "/.well-known/openwop", &discovery_exchange);
            other
        }
    };
    if let Document::Read(doc) = &discovery
        && let Some(version) = highest_v2(doc)
    {
        found
            .facts
            .insert(VERSION_FACT.into(), Value::String(version));
    }
    let discovery = match std::mem::replace(&mut discovery, Document::Absent) {
        Document::Read(doc) => Some(doc),
        Document::Unreadable(what) => {
            found.unjudgeable.insert(
                Unestablished::Need(Need::Surface(CaseSurface::Openwop)),
                format!("the discovery document is unreadable: {what}"),
            );
            None
        }
        Document::Absent => {
            found.absent.insert(
                "/.well-known/openwop".into(),
                describe_answer(&discovery_exchange, timeout),
            );
            None
        }
    };
    if let Some(doc) = discovery {
        found
            .capabilities
            .insert(Need::Surface(CaseSurface::Openwop).into());
        for id in doc
            .get("fixtures")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .filter(|id| !id.is_empty())
        {
            found.capabilities.insert(HostCapability::fixture(id));
        }
        let mocks = doc
            .pointer("/testing/mockProviders")
            .and_then(Value::as_array);
        for id in mocks
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .filter(|id| !id.is_empty())
        {
            found
                .capabilities
                .insert(Need::MockProvider(id.to_string()).into());
        }
        if let Some(object) = doc.as_object() {
            for (family, record) in object {
                if !family.is_empty()
                    && record.get("status").is_some()
                    && record.get("since").is_some()
                {
                    found.capabilities.insert(capability(family, None, None));
                    for (facet, value) in record.as_object().into_iter().flatten() {
                        if let Some(name) = facet_capability(family, facet, value) {
                            found.capabilities.insert(name);
                        }
                        found
                            .capabilities
                            .extend(facet_members(family, facet, value));
                    }
                }
            }
        }
        // What discovery says of the heartbeats is no operator's fact to give: the advertised
        // minimum interval (an operator's fact of the same name still wins).
        if let Some(seconds) = doc
            .pointer("/heartbeat/minIntervalSec")
            .filter(|v| v.is_number())
        {
            found
                .facts
                .insert("heartbeat_min_interval_sec".into(), seconds.clone());
            if let Some(ms) = seconds.as_f64().map(|s| (s * 1000.0).round()) {
                found
                    .facts
                    .insert("heartbeat_min_interval_ms".into(), json!(ms as u64));
            }
        }
        // The feedback signal kinds and targets the host lists are its choice: the cases
        // annotating a run send a signal of a kind it lists, on a target it lists.
        if let Some(feedback) = doc.get("feedback") {
            if let Some(signal) = crate::feedback_signal::accepted_signal(feedback) {
                found
                    .facts
                    .insert(crate::feedback_signal::FEEDBACK_SIGNAL_FACT.into(), signal);
            }
            if let Some(kind) = crate::feedback_anchor::AnchorKind::accepted(feedback) {
                found.facts.insert(
                    crate::feedback_anchor::FEEDBACK_ANCHOR_FACT.into(),
                    Value::from(kind.as_str()),
                );
            }
        }
        // The conformance seams profile (test seams such as the era-2 log seed) is a metadata
        // key, not a capability family record.
        if doc
            .pointer("/conformance/seamsProfile")
            .and_then(Value::as_str)
            .is_some()
        {
            found
                .capabilities
                .insert(capability("conformance", Some("seamsProfile"), None));
        }
        found.implementation = doc.get("implementation").map(|i| {
            format!(
                "{} {}",
                i.get("name").and_then(Value::as_str).unwrap_or("?"),
                i.get("version").and_then(Value::as_str).unwrap_or("")
            )
            .trim()
            .to_string()
        });
        if found
            .capabilities
            .contains(&capability("heartbeat", None, None))
            && !target.facts.contains_key(HEARTBEAT_INTERVAL_FACT)
        {
            let channel = doc
                .pointer("/heartbeat/deliveryChannel")
                .and_then(Value::as_str)
                .filter(|p| p.starts_with('/'))
                .unwrap_or("/host/events")
                .to_string();
            let window = heartbeat_window(found.facts.get("heartbeat_min_interval_ms"));
            let mut request = get(&channel, true);
            if let Some(version) = negotiated_version(&found.facts) {
                request
                    .headers
                    .push((VERSION_HEADER.into(), version.to_string()));
            }
            match heartbeat_interval(driver, request, window, timeout).await {
                Ok(interval) => {
                    found
                        .facts
                        .insert(HEARTBEAT_INTERVAL_FACT.into(), json!(interval));
                }
                Err(why) => {
                    found.unjudgeable.insert(
                        Unestablished::Need(Need::Fact(HEARTBEAT_INTERVAL_FACT.into())),
                        format!(
                            "{why} on the host channel `{channel}`, so the interval the heartbeat cases size their windows by is unknown: give it (--fact {HEARTBEAT_INTERVAL_FACT}=…)"
                        ),
                    );
                }
            }
        }
        // Upstream's test seams, asked only of a host with what they serve.
        if found
            .capabilities
            .contains(&capability("heartbeat", None, None))
        {
            probe_upstream_seam(&fetch, target, &mut found, UpstreamSeam::HeartbeatTick).await;
        }
        if [
            "conformance-envelope-retry-attempted",
            "conformance-envelope-truncated",
        ]
        .iter()
        .any(|id| found.capabilities.contains(&HostCapability::fixture(id)))
        {
            probe_upstream_seam(&fetch, target, &mut found, UpstreamSeam::LastDispatchBudget).await;
        }
        if found
            .capabilities
            .contains(&HostCapability::fixture("conformance-noop"))
        {
            probe_stream_modes(&fetch, target, &mut found).await;
        } else {
            found.unjudgeable.insert(
                Unestablished::EveryNeedOf(NeedForm::StreamMode),
                "the stream modes were not probed: the host does not list fixture `conformance-noop`, the run the probe needs".into(),
            );
        }
        if found
            .capabilities
            .contains(&HostCapability::fixture("conformance-stream-text"))
            && found
                .capabilities
                .contains(&Need::MockProvider("stream-text".into()).into())
            && !target.facts.contains_key(MOCK_PROVIDER_SEAT_FACT)
        {
            probe_mock_provider_seat(&fetch, target, &mut found).await;
        }
    }
    if let Some(upstream) = &target.upstream {
        found.scope_roles(&upstream.bindings());
    }
    if target.principals.contains_key(&crate::case::Principal::B) {
        found.capabilities.insert(Need::TenantB.into());
    }
    if target.facts.contains_key("subscriber_limit") {
        found.capabilities.insert(Need::SubscriberLimit.into());
    }
    found
}

/// The capability a facet of a discovery capability record gives, if any:
///
/// - an object facet or a `true` one: `capability:{family}.{facet}` (e.g.
///   `capability:envelopes.reliability`);
/// - an array facet, even an empty one (an empty list is a claim, an absent one is not):
///   `capability:{family}.{facet}` (e.g. `capability:supportedEnvelopes.kinds`);
/// - a string facet: `capability:{family}.{facet}={value}` (e.g.
///   `capability:envelopeStrictness.mode=strict`), so cases can select a host by a facet's
///   value, and `!capability:…=value` by its absence (an absent facet has no value).
///
/// `false`, numbers and `null` give nothing.
fn facet_capability(family: &str, facet: &str, value: &Value) -> Option<HostCapability> {
    match value {
        Value::Object(_) | Value::Array(_) | Value::Bool(true) => {
            Some(capability(family, Some(facet), None))
        }
        Value::String(text) => Some(capability(family, Some(facet), Some(text))),
        _ => None,
    }
}

/// The capabilities an array facet's string members give: `capability:{family}.{facet}={member}`
/// for each (e.g. `capability:feedback.targets=event`), so a case can select a host by what a
/// host-chosen list holds, and `!capability:…=member` by what it leaves out.
fn facet_members(family: &str, facet: &str, value: &Value) -> Vec<HostCapability> {
    value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(|member| capability(family, Some(facet), Some(member)))
        .collect()
}

/// `capability:{family}[.{facet}[={value}]]`.
fn capability(family: &str, facet: Option<&str>, value: Option<&str>) -> HostCapability {
    HostCapability::Meets(Need::Capability {
        family: family.to_string(),
        facet: facet.map(String::from),
        value: value.map(String::from),
    })
}

/// The fact the heartbeat cases size their windows by: the interval of the host's heartbeats.
const HEARTBEAT_INTERVAL_FACT: &str = "heartbeat_interval_ms";

/// The interval of the host's heartbeats, read off its host channel (`request`) until one
/// heartbeat has ticked twice: first for the probe's request time (`timeout`), then, when the
/// channel answered but no heartbeat ticked twice yet, for at most `window`. A channel that sent
/// no headers in the request time (a host that may have stopped answering after discovery, or
/// one writing its headers only with a first byte that late) is not read on: the error says why.
async fn heartbeat_interval(
    driver: &HttpDriver,
    request: PreparedRequest,
    window: Duration,
    timeout: Duration,
) -> Result<u64, String> {
    let read = |duration: Duration| {
        let request = request.clone();
        async move {
            let now = Instant::now();
            let stop = crate::driver::StopCondition {
                repeated: Some(("heartbeat.evaluated".into(), "heartbeatId".into())),
                duration: Some(duration),
                ..Default::default()
            };
            driver
                .exchange(
                    request,
                    ReadMode::Stream(stop),
                    now + duration + timeout,
                    now,
                )
                .await
                .response
        }
    };
    match read(timeout).await {
        None => return Err("the probe's request failed".into()),
        Some(response) if response.status == 0 => {
            return Err(format!(
                "no response headers came in the probe's {:.1} s",
                timeout.as_secs_f64()
            ));
        }
        Some(response) if response.status != 200 => {
            return Err(format!("the probe was answered {}", response.status));
        }
        Some(response) => {
            if let Some(interval) = heartbeat_interval_ms(&response.frames) {
                return Ok(interval);
            }
        }
    }
    read(window)
        .await
        .filter(|r| r.status == 200)
        .and_then(|r| heartbeat_interval_ms(&r.frames))
        .ok_or_else(|| {
            format!(
                "no heartbeat ticked twice in the {} s the probe read",
                window.as_secs()
            )
        })
}

/// How long at most the probe reads the host channel for heartbeat ticks when the operator gave
/// no interval (it stops as soon as one heartbeat has ticked twice): 30 s, or two advertised
/// minimum intervals and a second when that is longer, at most 60 s. The seed bounds an
/// interval from below only, so a host whose heartbeats tick more slowly than that still needs
/// the operator's fact; a read stopped on the second tick never depends on when the first came.
fn heartbeat_window(min_interval_ms: Option<&Value>) -> Duration {
    let ms = min_interval_ms
        .and_then(Value::as_u64)
        .map_or(0, |min| min.saturating_mul(2).saturating_add(1_000));
    Duration::from_millis(ms.clamp(30_000, 60_000))
}

/// The interval of the host's heartbeats as the host channel shows it: the longest gap between
/// two consecutive `heartbeat.evaluated` ticks of one heartbeat (whatever the framing: the type
/// in `data.type` or, for a bare message, in `event:`), rounded up to a 100 ms step; `None`
/// when no heartbeat ticked twice.
fn heartbeat_interval_ms(frames: &[crate::transcript::FrameRecord]) -> Option<u64> {
    let mut last: BTreeMap<String, u64> = BTreeMap::new();
    let mut longest: Option<u64> = None;
    for frame in frames {
        let crate::transcript::FrameKind::Event {
            event,
            json: Some(data),
            ..
        } = &frame.kind
        else {
            continue;
        };
        let (kind, message) = match data.get("type").and_then(Value::as_str) {
            Some(kind) => (Some(kind), data.get("payload").unwrap_or(&Value::Null)),
            None => (event.as_deref(), data),
        };
        if kind != Some("heartbeat.evaluated") {
            continue;
        }
        let Some(id) = message.get("heartbeatId").and_then(Value::as_str) else {
            continue;
        };
        if let Some(previous) = last.insert(id.to_string(), frame.at_ms) {
            let gap = frame.at_ms.saturating_sub(previous);
            longest = Some(longest.map_or(gap, |l| l.max(gap)));
        }
    }
    longest
        .filter(|gap| *gap > 0)
        .map(|gap| gap.div_ceil(100) * 100)
}

/// Creates a noop run and asks its events endpoint for an impossible mode: the 400 lists the
/// modes the host serves.
/// The headers of a probe request as principal A, in the negotiated version.
fn principal_a_headers(target: &Target, found: &ProbeFindings) -> Vec<(String, String)> {
    let mut headers: Vec<(String, String)> = target
        .headers
        .iter()
        .map(|h| (h.name.clone(), h.value.clone()))
        .collect();
    headers.extend(
        target
            .principal_headers(crate::case::Principal::A)
            .into_iter()
            .map(|h| (h.name, h.value)),
    );
    if let Some(version) = negotiated_version(&found.facts) {
        headers.push((VERSION_HEADER.into(), version.to_string()));
    }
    headers
}

/// Where the host reads a run's mock provider (open point `w.fixtures.mock-provider-seat`): one
/// `conformance-stream-text` run created as upstream's suite creates it
/// (`configurable.mockProvider`); refused, once more at v2's schema seat
/// (`configurable.ai.mockProvider`, `version: 1`), and when the host takes that, the fact that
/// has every case written so. A host taking neither is left as it is: the cases starting the
/// fixture say what it answered.
async fn probe_mock_provider_seat<F, Fut>(fetch: &F, target: &Target, found: &mut ProbeFindings)
where
    F: Fn(PreparedRequest) -> Fut,
    Fut: std::future::Future<Output = crate::transcript::Exchange>,
{
    let mut headers = principal_a_headers(target, found);
    headers.push(("content-type".into(), "application/json".into()));
    let create = |seat: MockProviderSeat| {
        let mut body = json!({"workflowId": "conformance-stream-text", "configurable": {
            "mockProvider": {"id": "stream-text", "config": {"tokens": ["probe"]}}}});
        seat.write(&mut body);
        fetch(PreparedRequest {
            method: reqwest::Method::POST,
            url: format!("{}/runs", target.base_url),
            headers: headers.clone(),
            body: Some(body.to_string().into_bytes()),
        })
    };
    let status =
        |exchange: &crate::transcript::Exchange| exchange.response.as_ref().map(|r| r.status);
    let suite = status(&create(MockProviderSeat::Suite).await);
    let Some(refused) = suite.filter(|s| MockProviderSeat::refuses_the_body(*s)) else {
        return;
    };
    if status(&create(MockProviderSeat::ConfigurableAi).await)
        .is_some_and(|s| (200..300).contains(&s))
    {
        found.facts.insert(
            MOCK_PROVIDER_SEAT_FACT.into(),
            Value::from(MockProviderSeat::ConfigurableAi.as_str()),
        );
        found.notes.push(format!(
            "the host refused a conformance-stream-text run started as upstream's suite starts it \
             (`configurable.mockProvider`: answered {refused}) and took it at v2's schema seat \
             (`configurable.ai.mockProvider`, `configurable.version: 1`): every case's `POST /runs` \
             body is written so. Upstream leaves the seat open between its suite and its schema, so \
             this is not judged"
        ));
    }
}

/// Whether the host serves an upstream test seam, asked as upstream's suite asks it but with a
/// question of the probe's own (a fresh heartbeat or node id). Served when it answers 200 with
/// the seam's answer; an unserved seam (404, 405, …) is one the host does not have (a case
/// needing `seam:<name>` is SKIP).
async fn probe_upstream_seam<F, Fut>(
    fetch: &F,
    target: &Target,
    found: &mut ProbeFindings,
    seam: crate::case::UpstreamSeam,
) where
    F: Fn(PreparedRequest) -> Fut,
    Fut: std::future::Future<Output = crate::transcript::Exchange>,
{
    let own_id = format!("conformance-probe-{}", uuid::Uuid::new_v4().simple());
    let (method, path, body) = seam.probe_request(&own_id);
    let mut headers = principal_a_headers(target, found);
    if body.is_some() {
        headers.push(("content-type".into(), "application/json".into()));
    }
    let answer = fetch(PreparedRequest {
        method,
        url: format!("{}{path}", target.base_url),
        headers,
        body: body.map(|b| b.to_string().into_bytes()),
    })
    .await;
    let served = answer
        .response
        .as_ref()
        .filter(|r| r.status == 200)
        .and_then(|r| r.json.as_ref())
        .is_some_and(|body| seam.answered_by(body));
    if served {
        found.capabilities.insert(Need::Seam(seam).into());
    }
}

async fn probe_stream_modes<F, Fut>(fetch: &F, target: &Target, found: &mut ProbeFindings)
where
    F: Fn(PreparedRequest) -> Fut,
    Fut: std::future::Future<Output = crate::transcript::Exchange>,
{
    let headers = principal_a_headers(target, found);
    let mut post_headers = headers.clone();
    post_headers.push(("content-type".into(), "application/json".into()));
    let create = fetch(PreparedRequest {
        method: reqwest::Method::POST,
        url: format!("{}/runs", target.base_url),
        headers: post_headers,
        body: Some(
            json!({"workflowId": "conformance-noop"})
                .to_string()
                .into_bytes(),
        ),
    })
    .await;
    let run_id = create
        .response
        .as_ref()
        .and_then(|r| r.json.as_ref())
        .and_then(|j| j.get("runId"))
        .and_then(Value::as_str)
        .map(String::from);
    let Some(run_id) = run_id else {
        found.unjudgeable.insert(
            Unestablished::EveryNeedOf(NeedForm::StreamMode),
            "the stream modes were not probed: the probe could not create a conformance-noop run"
                .into(),
        );
        return;
    };
    // The run-id path form the host reads: `~2F` first (upstream's identity chapter), and when
    // the host does not know the run by it, `%2F` (upstream's OpenAPI parameter text).
    let ask_modes = |encoding: RunIdPathEncoding| {
        fetch(PreparedRequest {
            method: reqwest::Method::GET,
            url: format!(
                "{}/runs/{}/events?streamMode=conformance-probe",
                target.base_url,
                encoding.encode(&run_id)
            ),
            headers: headers.clone(),
            body: None,
        })
    };
    let supported_in = |exchange: &crate::transcript::Exchange| {
        exchange
            .response
            .as_ref()
            .and_then(|r| r.json.as_ref())
            .and_then(|j| j.pointer("/details/supported"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let mut supported = supported_in(&ask_modes(RunIdPathEncoding::Tilde).await);
    if supported.is_empty() {
        let at_percent = supported_in(&ask_modes(RunIdPathEncoding::Percent).await);
        if !at_percent.is_empty() {
            found.facts.insert(
                RUN_ID_PATH_ENCODING_FACT.into(),
                Value::from(RunIdPathEncoding::Percent.as_str()),
            );
            found.notes.push(
                "the host reads a run id in a request path only percent-encoded (`/` as `%2F`; \
                 at `~2F` it did not answer as for its run): the cases write it so. Upstream's \
                 identity chapter has a host accept both forms; the run events chapter does not \
                 say, so this is not judged"
                    .into(),
            );
            supported = at_percent;
        }
    }
    if supported.is_empty() {
        found.unjudgeable.insert(
            Unestablished::EveryNeedOf(NeedForm::StreamMode),
            "the stream modes are unknown: an unsupported streamMode got no 400 listing details.supported".into(),
        );
    }
    for mode in supported
        .iter()
        .filter_map(Value::as_str)
        .filter_map(spec::openwop::StreamMode::from_name)
    {
        found.capabilities.insert(Need::StreamMode(mode).into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discovery_is_json_by_its_media_type_only() {
        for json in [
            "application/json",
            "application/json; charset=utf-8",
            "Application/JSON",
            "application/problem+json",
        ] {
            assert!(is_json_media_type(json), "{json}");
        }
        for other in [
            "text/plain",
            "text/json-ish",
            "application/jsonl",
            "no content-type",
        ] {
            assert!(!is_json_media_type(other), "{other}");
        }
    }

    #[test]
    fn a_document_is_read_as_v1_only_by_what_it_names() {
        // Upstream's v1 hosts (openwop-examples' in-memory host) name one `protocolVersion`.
        let v1 = json!({"protocolVersion": "1.0", "fixtures": []});
        assert!(!serves_v2_by_default(&v1));
        assert_eq!(v1_protocol_version(&v1), Some("1.0"));
        // A document naming no version at all is read as it is; so is a 2.x one.
        assert!(serves_v2_by_default(&json!({"fixtures": []})));
        assert!(serves_v2_by_default(&json!({"protocolVersion": "2.0"})));
        // A listed version wins over the single name.
        let dual = json!({"protocolVersion": "1.0", "protocolVersions": ["1.0", "2.0"], "preferredVersion": "2.0"});
        assert!(serves_v2_by_default(&dual));
        assert_eq!(v1_protocol_version(&dual), None);
        let overlap = json!({"protocolVersions": ["1.0", "2.0"], "preferredVersion": "1.0"});
        assert!(!serves_v2_by_default(&overlap));
    }

    #[test]
    fn a_v1_only_host_is_told_so_not_refused_as_serving_nothing() {
        let mut found = ProbeFindings::default();
        found
            .absent
            .insert("/v1/runtime".into(), "answered 404".into());
        assert!(found.refusal("http://h").is_some());
        found
            .capabilities
            .insert(HostCapability::ServesOpenwopV1Only);
        assert_eq!(found.refusal("http://h"), None);
    }

    #[test]
    fn a_role_is_capable_by_the_models_the_manifest_lists() {
        let text = json!({"provider": "a", "models": [{"model": "m", "abilities": ["text-generation"], "output_modalities": ["text"], "async": false}]});
        let media = json!({"provider": "f", "models": [{"model": "i", "abilities": ["image-generation"], "output_modalities": ["image"], "async": true}]});
        assert!(role_capable(Role::TextPrimary, &text));
        assert!(!role_capable(Role::Media, &text));
        assert!(role_capable(Role::Media, &media));
        assert!(!role_capable(Role::TextSecondary, &media));
    }

    #[test]
    fn facets_give_capabilities_by_their_shape() {
        let facet =
            |value: Value| facet_capability("family", "facet", &value).map(|c| c.to_string());
        assert_eq!(
            facet(json!({"events": []})).as_deref(),
            Some("capability:family.facet")
        );
        assert_eq!(
            facet(json!(true)).as_deref(),
            Some("capability:family.facet")
        );
        assert_eq!(
            facet(json!(["a"])).as_deref(),
            Some("capability:family.facet")
        );
        assert_eq!(facet(json!([])).as_deref(), Some("capability:family.facet"));
        assert_eq!(
            facet(json!("strict")).as_deref(),
            Some("capability:family.facet=strict")
        );
        assert_eq!(
            facet_members("feedback", "targets", &json!(["run", "event", 3]))
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>(),
            [
                "capability:feedback.targets=run",
                "capability:feedback.targets=event"
            ]
        );
        assert!(facet_members("feedback", "targets", &json!("run")).is_empty());
        assert_eq!(facet(json!(false)), None);
        assert_eq!(facet(json!(3)), None);
        assert_eq!(facet(Value::Null), None);
    }

    fn event(at_ms: u64, event: Option<&str>, data: Value) -> crate::transcript::FrameRecord {
        crate::transcript::FrameRecord {
            at_ms,
            kind: crate::transcript::FrameKind::Event {
                id: None,
                event: event.map(String::from),
                data: data.to_string(),
                json: Some(data),
                retry: None,
            },
        }
    }

    #[test]
    fn the_heartbeat_interval_is_read_from_the_ticks_on_the_host_channel() {
        let wrapped = |id: &str| json!({"type": "heartbeat.evaluated", "payload": {"heartbeatId": id, "status": "ok", "changed": false}});
        let bare = |id: &str| json!({"heartbeatId": id, "status": "ok", "changed": false});
        let frames = vec![
            event(100, Some("heartbeat.evaluated"), wrapped("a")),
            event(150, Some("heartbeat.evaluated"), bare("b")),
            // A state change is no tick.
            event(
                600,
                Some("heartbeat.stateChanged"),
                json!({"type": "heartbeat.stateChanged", "payload": {"heartbeatId": "a", "from": {}, "to": {}}}),
            ),
            event(1_120, Some("heartbeat.evaluated"), wrapped("a")),
            event(2_190, None, wrapped("a")),
            // The bare message's type is its `event:`; the longest gap counts, rounded up.
            event(2_460, Some("heartbeat.evaluated"), bare("b")),
        ];
        assert_eq!(heartbeat_interval_ms(&frames), Some(2_400));
        assert_eq!(
            heartbeat_interval_ms(&frames[..2]),
            None,
            "no heartbeat ticked twice"
        );
        assert_eq!(heartbeat_interval_ms(&[]), None);
        // The read stops on a second tick; its bound is 30 s unless the advertised minimum
        // interval needs longer (at most 60 s).
        assert_eq!(
            heartbeat_window(Some(&json!(1_000))),
            Duration::from_millis(30_000)
        );
        assert_eq!(heartbeat_window(None), Duration::from_millis(30_000));
        assert_eq!(
            heartbeat_window(Some(&json!(20_000))),
            Duration::from_millis(41_000)
        );
        assert_eq!(
            heartbeat_window(Some(&json!(60_000))),
            Duration::from_millis(60_000)
        );
    }
}
