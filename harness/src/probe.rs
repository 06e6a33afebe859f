//! What a target can do, learned over HTTP exactly as for any host: the execution surface's
//! runtime info and provider manifests, the run events surface's discovery document, and the
//! stream modes its `400 unsupported_stream_mode` lists. Cases needing something the host lacks
//! are SKIP with the reason; what the probe could not establish (a document that answered but
//! could not be read, providers none of which is bound to a role, stream modes it could not
//! probe) is recorded in [`ProbeFindings::unjudgeable`], and cases needing it are BLOCKED.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};
use tokio::time::{Duration, Instant};

use crate::driver::{HttpDriver, PreparedRequest, ReadMode};
use crate::target::Target;

/// What probing found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProbeFindings {
    /// Capability names.
    pub capabilities: BTreeSet<String>,
    /// The host's self-description.
    pub implementation: Option<String>,
    /// Problems worth reporting (never fatal on their own).
    pub notes: Vec<String>,
    /// Needs the probe could not establish either way, with why (see
    /// [`Target::unjudgeable`]).
    pub unjudgeable: std::collections::BTreeMap<String, String>,
    /// The discovery documents that answered, by path: SHA-256 (hex) of each body as received
    /// (a claim records them).
    pub documents: std::collections::BTreeMap<String, String>,
    /// The surfaces' discovery paths that gave no document, by path: what came instead, named
    /// precisely (`no answer within 10 s`, `connection refused`, `answered 404`, …).
    pub absent: std::collections::BTreeMap<String, String>,
}

impl ProbeFindings {
    /// Why the host serves neither surface, when the probe found neither (nor an unreadable
    /// document of either): each discovery path with what came instead. `None` when the run can
    /// go on.
    pub fn refusal(&self, base_url: &str) -> Option<String> {
        let found = self
            .capabilities
            .iter()
            .chain(self.unjudgeable.keys())
            .any(|c| c.starts_with("surface:"));
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
    }
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
        (Some(json), 200) => Document::Read(json.clone()),
        (None, 200) => Document::Unreadable(format!(
            "GET {path} answered 200 ({content_type}) with a body that is not JSON"
        )),
        (_, status) => {
            Document::Unreadable(format!("GET {path} answered {status} ({content_type})"))
        }
    }
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
            found.capabilities.insert("surface:execution".into());
            true
        }
        Document::Read(_) => {
            found.unjudgeable.insert(
                "surface:execution".into(),
                "the runtime info document GET /v1/runtime is unreadable: its JSON has no protocol_version".into(),
            );
            false
        }
        Document::Unreadable(what) => {
            found.unjudgeable.insert(
                "surface:execution".into(),
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
        let manifests = match document("/v1/providers", &providers) {
            Document::Read(body) => body.get("data").and_then(Value::as_array).map(|data| {
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
            }),
            _ => None,
        };
        if let (Some(manifests), Some(upstream)) = (&manifests, &target.upstream) {
            upstream.learn_models(manifests);
        }
        let listed = manifests.map(|m| m.into_keys().collect::<BTreeSet<String>>());
        match listed {
            Some(ids) => {
                for (role, id) in &target.providers {
                    if ids.contains(id.as_str()) {
                        found.capabilities.insert(format!("provider:{role}"));
                    } else if !ids.is_empty() {
                        // The host has providers, but none the harness's fake for this role
                        // stands behind: the harness cannot judge, the host lacks nothing.
                        found.unjudgeable.insert(
                            format!("provider:{role}"),
                            format!(
                                "no fake provider is bound to role `{role}`: the host lists providers [{}] and none is `{id}` (--bind {role}=<id>,<wire format>[,<model>])",
                                ids.iter().cloned().collect::<Vec<_>>().join(", ")
                            ),
                        );
                    }
                }
            }
            None => {
                for role in target.providers.keys() {
                    found.unjudgeable.insert(
                        format!("provider:{role}"),
                        "the provider manifests GET /v1/providers are unreadable (no JSON `data` array)".into(),
                    );
                }
            }
        }
    }

    // Surface W.
    let discovery_exchange = fetch(get("/.well-known/openwop", false)).await;
    record_document(&mut found, "/.well-known/openwop", &discovery_exchange);
    let discovery = match document("/.well-known/openwop", &discovery_exchange) {
        Document::Read(doc) => Some(doc),
        Document::Unreadable(what) => {
            found.unjudgeable.insert(
                "surface:openwop".into(),
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
        found.capabilities.insert("surface:openwop".into());
        for id in doc
            .get("fixtures")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            found.capabilities.insert(format!("fixture:{id}"));
        }
        let mocks = doc
            .pointer("/testing/mockProviders")
            .and_then(Value::as_array);
        for id in mocks.into_iter().flatten().filter_map(Value::as_str) {
            found.capabilities.insert(format!("mock-provider:{id}"));
        }
        if let Some(object) = doc.as_object() {
            for (family, record) in object {
                if record.get("status").is_some() && record.get("since").is_some() {
                    found.capabilities.insert(format!("capability:{family}"));
                    for (facet, value) in record.as_object().into_iter().flatten() {
                        if let Some(name) = facet_capability(family, facet, value) {
                            found.capabilities.insert(name);
                        }
                    }
                }
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
                .insert("capability:conformance.seamsProfile".into());
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
        if found.capabilities.contains("fixture:conformance-noop") {
            probe_stream_modes(&fetch, target, &mut found).await;
        } else {
            found.unjudgeable.insert(
                "stream-mode:*".into(),
                "the stream modes were not probed: the host does not list fixture `conformance-noop`, the run the probe needs".into(),
            );
        }
    }
    if target.principals.contains_key("b") {
        found.capabilities.insert("tenant-b".into());
    }
    if target.facts.contains_key("subscriber_limit") {
        found.capabilities.insert("subscriber-limit".into());
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
fn facet_capability(family: &str, facet: &str, value: &Value) -> Option<String> {
    match value {
        Value::Object(_) | Value::Array(_) | Value::Bool(true) => {
            Some(format!("capability:{family}.{facet}"))
        }
        Value::String(text) => Some(format!("capability:{family}.{facet}={text}")),
        _ => None,
    }
}

/// Creates a noop run and asks its events endpoint for an impossible mode: the 400 lists the
/// modes the host serves.
async fn probe_stream_modes<F, Fut>(fetch: &F, target: &Target, found: &mut ProbeFindings)
where
    F: Fn(PreparedRequest) -> Fut,
    Fut: std::future::Future<Output = crate::transcript::Exchange>,
{
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
            "stream-mode:*".into(),
            "the stream modes were not probed: the probe could not create a conformance-noop run"
                .into(),
        );
        return;
    };
    let refused = fetch(PreparedRequest {
        method: reqwest::Method::GET,
        url: format!(
            "{}/runs/{}/events?streamMode=conformance-probe",
            target.base_url,
            spec::openwop::encode_run_id_for_path(&run_id)
        ),
        headers,
        body: None,
    })
    .await;
    let supported = refused
        .response
        .as_ref()
        .and_then(|r| r.json.as_ref())
        .and_then(|j| j.pointer("/details/supported"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if supported.is_empty() {
        found.unjudgeable.insert(
            "stream-mode:*".into(),
            "the stream modes are unknown: an unsupported streamMode got no 400 listing details.supported".into(),
        );
    }
    for mode in supported.iter().filter_map(Value::as_str) {
        if spec::openwop::StreamMode::from_name(mode).is_some() {
            found.capabilities.insert(format!("stream-mode:{mode}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facets_give_capabilities_by_their_shape() {
        let facet = |value: Value| facet_capability("family", "facet", &value);
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
        assert_eq!(facet(json!(false)), None);
        assert_eq!(facet(json!(3)), None);
        assert_eq!(facet(Value::Null), None);
    }
}
