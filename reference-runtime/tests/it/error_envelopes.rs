//! Every error in its surface's envelope, whatever the request: a generated corpus of malformed
//! requests (seeded, reproducible: `ENVELOPE_FUZZ_SEED`, `ENVELOPE_FUZZ_REQUESTS`) across every
//! route of both surfaces and the unknown paths under each, sent in-process to the runtime's
//! whole router. For each answer:
//!
//! - no 5xx;
//! - every 4xx carries `application/json` and the envelope of the surface whose path it is
//!   (X: `{"error": {code, message, retryable, provider_code?}}` under `/v1` and every path
//!   outside W's; W: the flat `{"error", "message", "details"?}` under `/.well-known/openwop`,
//!   `/runs`, `/host`, `/conformance`), validated against the published schema;
//! - no error names a credential or request content: the generated requests carry a canary
//!   (in path segments, queries, headers, bearer keys and bodies), the valid test key is sent
//!   too, and neither appears in any error body or header.
//!
//! Listed separately, because they cannot carry an envelope: answers to `HEAD` (bodiless by
//! HTTP, RFC 9110 §9.3.2: their status is still checked), and the protocol errors hyper
//! answers before any routing (a request it cannot parse: `400` or `431` with an empty body,
//! then the connection closed), exercised over a real socket in
//! [`pre_routing_protocol_errors_are_bodiless_4xx_and_close`].

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderName, HeaderValue, Method, Request};
use reference_runtime::config::Config;
use reference_runtime::runtime::{AppState, RuntimeOptions, app, start};
use serde_json::{Value, json};
use spec::schema::{Published, validate};
use tower::ServiceExt;

/// The canary every generated request carries somewhere; no error may contain it.
const CANARY: &str = "zqcanary7f3a";
/// The valid test key of tenant A (a credential: never in an error either).
const KEY_A: &str = "hk_test_openwop_tenant_a";

/// A small deterministic generator (splitmix64): the corpus is the seed's.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// The routes of both surfaces, `{id}`/`{node}` standing for generated segments.
const ROUTES: &[(&str, &str)] = &[
    ("GET", "/v1/runtime"),
    ("GET", "/v1/providers"),
    ("POST", "/v1/executions"),
    ("GET", "/v1/executions/{id}"),
    ("GET", "/v1/executions/{id}/events"),
    ("GET", "/v1/executions/{id}/result"),
    ("POST", "/v1/executions/{id}/cancel"),
    ("GET", "/.well-known/openwop"),
    ("POST", "/runs"),
    ("GET", "/runs/{id}"),
    ("POST", "/runs/{id}/cancel"),
    ("POST", "/runs/{id}/interrupts/{node}"),
    ("GET", "/runs/{id}/events"),
    ("GET", "/runs/{id}/events/poll"),
    ("GET", "/host/events"),
    ("POST", "/runs/{id}/annotations"),
    ("GET", "/runs/{id}/annotations"),
    ("GET", "/conformance/seams/mock-ai/runs/{id}/calls"),
    ("POST", "/conformance/seams/sample/event-log/seed"),
    // Unknown paths under each surface, and outside both.
    ("GET", "/v1/{id}"),
    ("POST", "/v1/executions/{id}/{node}"),
    ("GET", "/runs/{id}/{node}/x"),
    ("GET", "/host/{id}"),
    ("GET", "/.well-known/openwop/{id}"),
    ("POST", "/conformance/{id}"),
    ("GET", "/{id}"),
    ("GET", "/"),
];

/// Which surface's envelope a path must carry: W's prefixes, else X's.
fn surface_of(path: &str) -> &'static str {
    let w = ["/.well-known/openwop", "/runs", "/host", "/conformance"]
        .iter()
        .any(|prefix| {
            path.strip_prefix(prefix)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        });
    if w { "W" } else { "X" }
}

/// A path segment: plausible, hostile, or carrying the canary.
fn segment(g: &mut Gen) -> String {
    match g.below(14) {
        0 => "0190c3e4-7d2a-7c1e-9a4b-3f1e2d3c4b5a".into(),
        1 => format!("tenant-a~2F{CANARY}0123456789"),
        2 => format!("tenant-b%2F{CANARY}0123456789"),
        3 => "%FF%FE%FD".into(),
        4 => format!("{CANARY}%C3%28"),
        5 => "%".into(),
        6 => "%2e%2e".into(),
        7 => format!("{CANARY}{}", "a".repeat(g.below(5000))),
        8 => "%E2%80%AE%00".into(),
        9 => format!("{CANARY}~2F~2F"),
        10 => "tenant-a~2F".into(),
        11 => "%F0%9F%98%80".into(),
        12 => format!("{CANARY}%20%0A"),
        _ => format!("{CANARY}{}", g.next()),
    }
}

/// A query string (without `?`), sometimes none.
fn query(g: &mut Gen) -> Option<String> {
    let pairs = [
        "after=-1".to_string(),
        "after=99999999999999999999999".into(),
        format!("after={CANARY}"),
        "after=1".into(),
        "afterSequence=abc".into(),
        "afterSequence=-5".into(),
        "timeout=0".into(),
        "timeout=999".into(),
        format!("timeout={CANARY}"),
        format!("streamMode={CANARY}"),
        "streamMode=updates,values".into(),
        "streamMode=".into(),
        "bufferMs=-1".into(),
        format!("heartbeatId={CANARY}"),
        format!("{CANARY}=1"),
        "%ZZ=%FF".into(),
        "a=%FF%FE".into(),
        "resumable=true".into(),
        "after=1&after=2".into(),
        "&&&==".into(),
    ];
    if g.chance(30) {
        return None;
    }
    let n = 1 + g.below(3);
    Some(
        (0..n)
            .map(|_| g.pick(&pairs).clone())
            .collect::<Vec<_>>()
            .join("&"),
    )
}

fn method(g: &mut Gen, route_method: &str) -> Method {
    if g.chance(70) {
        return Method::from_bytes(route_method.as_bytes()).unwrap();
    }
    let others = [
        "GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "TRACE", "PROPFIND", "FOO",
    ];
    Method::from_bytes(g.pick(&others).as_bytes()).unwrap()
}

/// A body: none, valid-looking for either surface, hostile JSON, not JSON, or too large.
fn body(g: &mut Gen) -> Vec<u8> {
    match g.below(16) {
        0 | 1 => Vec::new(),
        2 => json!({"ability": "text-generation", "input": [{"type": "text", "text": CANARY}]})
            .to_string()
            .into_bytes(),
        3 => json!({"workflowId": "conformance-noop", "inputs": {"secret": CANARY}})
            .to_string()
            .into_bytes(),
        4 => json!({"workflowId": CANARY, "tags": [CANARY]})
            .to_string()
            .into_bytes(),
        5 => json!({"ability": CANARY, "input": [], CANARY: 1})
            .to_string()
            .into_bytes(),
        6 => format!("{{\"{CANARY}\": ").into_bytes(),
        7 => "[".repeat(2000 + g.below(50_000)).into_bytes(),
        8 => vec![0xFF, 0xFE, 0x00, 0xC3, 0x28],
        9 => json!({"resumeValue": {"x": CANARY}})
            .to_string()
            .into_bytes(),
        10 => json!({"signal": CANARY, "value": CANARY, "nodeId": CANARY})
            .to_string()
            .into_bytes(),
        11 => json!({"deadline_ms": -1, "ability": "x", "input": [{"type": "text"}]})
            .to_string()
            .into_bytes(),
        12 if g.chance(20) => {
            // Over both surfaces' 1 MiB limit.
            let mut big = format!("{{\"x\": \"{CANARY}");
            big.push_str(&"a".repeat((1 << 20) + 10));
            big.push_str("\"}");
            big.into_bytes()
        }
        13 => format!("{CANARY} not json").into_bytes(),
        14 => json!(CANARY).to_string().into_bytes(),
        _ => json!({"events": [{"type": CANARY}], "runId": CANARY})
            .to_string()
            .into_bytes(),
    }
}

fn header_value(text: &str) -> HeaderValue {
    HeaderValue::from_str(text).unwrap()
}

/// Headers: auth (valid, hostile, canary-bearing), content types, versions, keys, cursors.
fn headers(g: &mut Gen) -> Vec<(HeaderName, HeaderValue)> {
    let mut headers = Vec::new();
    match g.below(6) {
        0 | 1 => headers.push((
            axum::http::header::AUTHORIZATION,
            header_value(&format!("Bearer {KEY_A}")),
        )),
        2 => headers.push((
            axum::http::header::AUTHORIZATION,
            header_value(&format!("Bearer {CANARY}")),
        )),
        3 => headers.push((
            axum::http::header::AUTHORIZATION,
            HeaderValue::from_bytes(b"Bearer \xff\xfe").unwrap(),
        )),
        4 => headers.push((
            axum::http::header::AUTHORIZATION,
            header_value(&format!("Basic {CANARY}")),
        )),
        _ => {}
    }
    let content_types = [
        "application/json",
        "application/json; charset=utf-8",
        "text/plain",
        "application/x-www-form-urlencoded",
        "application/vnd.x+json",
        "multipart/form-data; boundary=zz",
    ];
    if g.chance(75) {
        headers.push((
            axum::http::header::CONTENT_TYPE,
            header_value(g.pick::<&str>(&content_types)),
        ));
    }
    if g.chance(25) {
        let versions = ["2", "2.0", "1.0", "3", "abc", "02", ""];
        headers.push((
            HeaderName::from_static("openwop-version"),
            header_value(g.pick::<&str>(&versions)),
        ));
    }
    if g.chance(30) {
        let key = match g.below(4) {
            0 => HeaderValue::from_static("key-1"),
            1 => header_value(&format!("{CANARY}{}", "k".repeat(300))),
            2 => HeaderValue::from_bytes(b"\xff\xfe").unwrap(),
            _ => header_value(CANARY),
        };
        headers.push((HeaderName::from_static("idempotency-key"), key));
    }
    if g.chance(25) {
        let cursors = ["-1", "abc", "1", "99999999999999999999"];
        let cursor = if g.chance(50) {
            header_value(CANARY)
        } else {
            header_value(g.pick::<&str>(&cursors))
        };
        headers.push((HeaderName::from_static("last-event-id"), cursor));
    }
    if g.chance(10) {
        headers.push((
            HeaderName::from_static("x-zq-custom"),
            header_value(&format!("{CANARY}-header")),
        ));
    }
    headers
}

/// One generated request, with its surface.
fn request(g: &mut Gen) -> (Request<Body>, &'static str, String) {
    let (route_method, template) = *g.pick(ROUTES);
    let mut path = template.to_string();
    while path.contains("{id}") {
        path = path.replacen("{id}", &segment(g), 1);
    }
    while path.contains("{node}") {
        path = path.replacen("{node}", &segment(g), 1);
    }
    let surface = surface_of(&path);
    let uri = match query(g) {
        Some(query) => format!("{path}?{query}"),
        None => path.clone(),
    };
    let method = method(g, route_method);
    let mut builder = Request::builder().method(method.clone()).uri(&uri);
    for (name, value) in headers(g) {
        builder = builder.header(name, value);
    }
    let body = if g.chance(85) { body(g) } else { Vec::new() };
    let description = format!("{method} {}", truncate(&uri));
    (
        builder.body(Body::from(body)).unwrap(),
        surface,
        description,
    )
}

fn truncate(text: &str) -> String {
    text.chars().take(120).collect()
}

/// What the corpus found, per (surface, status) and for the listed exceptions.
#[derive(Default)]
struct Tally {
    statuses: BTreeMap<(&'static str, u16), usize>,
    head: usize,
    failures: Vec<String>,
}

/// The surface's envelope, or why not.
fn check_envelope(surface: &str, content_type: Option<&str>, body: &[u8]) -> Result<(), String> {
    let is_json = content_type.is_some_and(|v| {
        v.split(';')
            .next()
            .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"))
    });
    if !is_json {
        return Err(format!("content type {content_type:?}"));
    }
    let value: Value =
        serde_json::from_slice(body).map_err(|_| "the body is not JSON".to_string())?;
    let schema = if surface == "W" {
        Published::OpenWopError
    } else {
        Published::ExecutionError
    };
    validate(schema, &value).map_err(|violations| {
        format!(
            "not the {surface} envelope: {} ({value})",
            violations
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ")
        )
    })
}

async fn router() -> axum::Router {
    let state = AppState::build(RuntimeOptions::new(Config::default())).unwrap();
    app(state).with_state(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_error_of_a_malformed_corpus_is_its_surfaces_envelope() {
    let seed = std::env::var("ENVELOPE_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5EED_0025);
    let requests: usize = std::env::var("ENVELOPE_FUZZ_REQUESTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(12_000);
    let router = router().await;
    let mut g = Gen(seed);
    let mut tally = Tally::default();
    for _ in 0..requests {
        let (request, surface, description) = request(&mut g);
        let is_head = request.method() == Method::HEAD;
        let response =
            tokio::time::timeout(Duration::from_secs(30), router.clone().oneshot(request))
                .await
                .unwrap_or_else(|_| panic!("no answer within 30 s: {description}"))
                .unwrap();
        let status = response.status();
        *tally
            .statuses
            .entry((surface, status.as_u16()))
            .or_default() += 1;
        if status.is_server_error() {
            tally.failures.push(format!("{status} for {description}"));
            continue;
        }
        if is_head {
            // Bodiless by HTTP: listed, its status checked above.
            tally.head += 1;
            continue;
        }
        if !status.is_client_error() {
            // Successes are other tests' subject; a stream is not read here.
            continue;
        }
        let headers = response.headers().clone();
        let content_type = headers
            .get(axum::http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let body = tokio::time::timeout(
            Duration::from_secs(10),
            axum::body::to_bytes(response.into_body(), 1 << 20),
        )
        .await
        .unwrap_or_else(|_| panic!("an error body did not end: {description}"))
        .unwrap();
        if let Err(why) = check_envelope(surface, content_type.as_deref(), &body) {
            tally
                .failures
                .push(format!("{status} for {description}: {why}"));
        }
        let text = String::from_utf8_lossy(&body).to_lowercase();
        let header_text: String = headers
            .iter()
            .map(|(name, value)| format!("{name}: {}\n", String::from_utf8_lossy(value.as_bytes())))
            .collect::<String>()
            .to_lowercase();
        for secret in [CANARY, KEY_A] {
            if text.contains(secret) || header_text.contains(secret) {
                tally.failures.push(format!(
                    "{status} for {description} names request content or a credential: {}",
                    truncate(&String::from_utf8_lossy(&body))
                ));
            }
        }
    }
    let summary: Vec<String> = tally
        .statuses
        .iter()
        .map(|((surface, status), n)| format!("{surface} {status}: {n}"))
        .collect();
    eprintln!(
        "seed {seed:#x}, {requests} requests; HEAD (bodiless, listed): {}; {}",
        tally.head,
        summary.join(", ")
    );
    // The corpus reaches both surfaces' errors and successes.
    for surface in ["X", "W"] {
        for status in [400, 404] {
            assert!(
                tally.statuses.contains_key(&(surface, status)),
                "no {surface} {status} in the corpus: {summary:?}"
            );
        }
    }
    assert!(
        tally.failures.is_empty(),
        "{} of {requests} answers broke the rule (seed {seed:#x}); the first:\n{}",
        tally.failures.len(),
        tally
            .failures
            .iter()
            .take(25)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// The three errors the issue found without an envelope, each pinned.
#[tokio::test]
async fn the_errors_found_bare_now_carry_their_envelope() {
    let router = router().await;
    let cases = [
        ("DELETE", "/v1/executions", "X", 405),
        ("GET", "/v1/executions/%FF%FE", "X", 400),
        ("GET", "/v1/executions/%FF/events", "X", 400),
        ("GET", "/runs/tenant-a~2Fxxxxxxxxxxxxxxxx/nope", "W", 404),
        ("GET", "/host/nope", "W", 404),
        ("PUT", "/runs", "W", 404),
        ("GET", "/v1/nope", "X", 404),
        ("GET", "/elsewhere", "X", 404),
    ];
    for (method, uri, surface, status) in cases {
        let request = Request::builder()
            .method(method)
            .uri(uri)
            .header("authorization", format!("Bearer {KEY_A}"))
            .body(Body::empty())
            .unwrap();
        let response = router.clone().oneshot(request).await.unwrap();
        assert_eq!(response.status().as_u16(), status, "{method} {uri}");
        if surface == "W" {
            assert_eq!(
                response.headers()["openwop-version"],
                "2.0",
                "{method} {uri}"
            );
        }
        let allow = response.headers().get("allow").cloned();
        let content_type = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let body = axum::body::to_bytes(response.into_body(), 1 << 20)
            .await
            .unwrap();
        check_envelope(surface, content_type.as_deref(), &body)
            .unwrap_or_else(|why| panic!("{method} {uri}: {why}"));
        if status == 405 {
            assert!(allow.is_some(), "405 keeps its Allow header");
        }
    }
}

/// Sends raw bytes to a served runtime and reads what comes back until the server closes.
fn exchange(addr: std::net::SocketAddr, bytes: &[u8]) -> Vec<u8> {
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    stream.write_all(bytes).unwrap();
    let mut answer = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => answer.extend_from_slice(&buffer[..n]),
            // A reset after the answer (unread request bytes) ends it too.
            Err(error) if error.kind() == std::io::ErrorKind::ConnectionReset => break,
            Err(error) => panic!("no close within 20 s: {error}"),
        }
    }
    answer
}

/// The listed exception: what hyper refuses before any routing (it writes the status line
/// itself, with no body, and closes) is a bodiless 4xx, never a 5xx or a hang.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pre_routing_protocol_errors_are_bodiless_4xx_and_close() {
    let running = start(
        "127.0.0.1:0".parse().unwrap(),
        RuntimeOptions::new(Config::default()),
    )
    .await
    .unwrap();
    let addr = running.local_addr();
    let huge_header = format!(
        "GET /v1/runtime HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\n\r\n",
        "a".repeat(1 << 20)
    );
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("garbage request line", b"\x00\x01\x02 nonsense\r\n\r\n".to_vec()),
        ("invalid method token", b"G(T /v1/runtime HTTP/1.1\r\nHost: x\r\n\r\n".to_vec()),
        ("invalid header name", b"GET /v1/runtime HTTP/1.1\r\nHo st: x\r\n\r\n".to_vec()),
        ("non-ASCII in the target", b"GET /v1/\xff HTTP/1.1\r\nHost: x\r\n\r\n".to_vec()),
        (
            "two Content-Lengths",
            b"POST /v1/executions HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab"
                .to_vec(),
        ),
        (
            "unknown transfer coding",
            b"POST /runs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: zip\r\n\r\n".to_vec(),
        ),
        (
            "bad chunk size",
            b"POST /runs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer hk_test_openwop_tenant_a\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\nzz\r\n{}\r\n0\r\n\r\n"
                .to_vec(),
        ),
        ("a 1 MiB header", huge_header.into_bytes()),
        ("HTTP/2 without negotiation", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec()),
    ];
    for (what, bytes) in cases {
        let answer = tokio::task::spawn_blocking(move || exchange(addr, &bytes))
            .await
            .unwrap();
        let text = String::from_utf8_lossy(&answer);
        if answer.is_empty() {
            // Closed without an answer: allowed for what is not HTTP at all.
            eprintln!("{what}: closed without an answer");
            continue;
        }
        let status: u16 = text
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("{what}: not a status line: {text}"));
        assert!(
            (400..500).contains(&status),
            "{what}: {status} is not a 4xx: {text}"
        );
        // hyper's own refusal is a status line and no body; what reached the router carries
        // its envelope.
        let body = text.split("\r\n\r\n").nth(1).unwrap_or_default();
        assert!(
            body.is_empty() || text.contains("application/json"),
            "{what}: {text}"
        );
        assert!(!text.contains(CANARY));
        eprintln!("{what}: {}", text.lines().next().unwrap_or_default());
    }
    running.shutdown().await;
}
