//! Crash consistency of the SQLite store: the real `reference-runtime` binary on one SQLite file
//! is killed with `SIGKILL` at a seeded-random point of its work, 100 times, and restarted on
//! the same file each time. Per iteration it runs one to three executions (a wiremock provider)
//! and one to three runs (mock providers, delays, an approval gate), in an order and with
//! timings drawn from the iteration's seed; the kill comes once the clients have received the
//! seed's number of answers and events (creation responses and events all count).
//!
//! After each restart every log the clients learned of is read whole and checked: sequences
//! contiguous from the surface's first, everything received before the kill still there,
//! unchanged and in place, exactly one terminal event; an execution the kill interrupted ended
//! `execution.failed` (`internal_error`, not retryable) and its provider was never called again;
//! a run the kill interrupted (suspended ones included) ended `run.failed` (`internal_error`,
//! `details.reason = host-restarted`), never ran again; every key whose creation was answered
//! still replays. At the end every log in the file is checked through the store itself, also
//! those whose creation the kill cut off before the client heard of them.
//!
//! Nothing waits on the wall clock for correctness: readiness is the binary's first stdout
//! line, the kill point is a count of received items, logs are read to their close. A failure
//! names the iteration and its seed; `CRASH_SEED=<seed>` reruns the sequence from that seed.

use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::{FutureExt, StreamExt};
use reference_runtime::store::{EventStore, SqliteEventStore, Surface};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use wiremock::{MockServer, Request, Respond, ResponseTemplate};

use crate::w_host::{KEY_A, run_path};
use crate::x_host::{CANARY, CANARY_ENV, openai_text, sse_answer};

const BINARY: &str = env!("CARGO_BIN_EXE_reference-runtime");
const ITERATIONS: u64 = 100;
const DEFAULT_SEED: u64 = 0x005E_EDC0_DE16;
/// Upper bound of any single wait (a hung runtime fails the test instead of hanging it).
const BOUND: Duration = Duration::from_secs(60);

/// SplitMix64: small, seedable, good enough to pick kill points.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `low..=high`.
    fn range(&mut self, low: u64, high: u64) -> u64 {
        low + self.next() % (high - low + 1)
    }
}

/// The fake provider: an OpenAI chat stream, answered after the delay the request names
/// (`delay <ms>` in its text), so the seed decides how long an execution stays in flight.
struct DelayedProvider;

impl Respond for DelayedProvider {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body = String::from_utf8_lossy(&request.body);
        let delay = body
            .split("delay ")
            .nth(1)
            .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|ms| ms.parse().ok())
            .unwrap_or(0);
        sse_answer(openai_text(&["crash", " ", "safe"])).set_delay(Duration::from_millis(delay))
    }
}

/// A running binary.
struct Process {
    child: Child,
    base: String,
}

impl Process {
    /// Starts the binary on the file and waits for its first stdout line.
    async fn start(config: &Path, db: &Path) -> Process {
        let mut child = Command::new(BINARY)
            .args([
                "--config",
                config.to_str().unwrap(),
                "--listen",
                "127.0.0.1:0",
            ])
            .arg("--store")
            .arg(format!("sqlite:{}", db.display()))
            .env(CANARY_ENV, CANARY)
            .env("RUST_LOG", "error")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("the binary starts");
        let stdout = child.stdout.take().unwrap();
        let mut line = String::new();
        tokio::time::timeout(BOUND, BufReader::new(stdout).read_line(&mut line))
            .await
            .expect("the runtime reports readiness")
            .unwrap();
        let base = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_string();
        Process { child, base }
    }

    /// `SIGKILL` (what `Child::start_kill` sends on Unix), then reaps the process.
    async fn kill(mut self) {
        self.child.start_kill().unwrap();
        let status = self.child.wait().await.unwrap();
        assert!(!status.success(), "killed, not exited: {status}");
    }
}

/// What one creation's client saw before the kill.
#[derive(Debug, Default, Clone)]
struct Seen {
    /// The id the creation answered with.
    id: String,
    /// Events received, in arrival order.
    events: Vec<Value>,
    /// The run reached its approval gate (`interrupt.requested` received).
    suspended: bool,
}

/// What a creation makes.
#[derive(Debug, Clone)]
enum Made {
    /// A surface-X execution (`POST /v1/executions`).
    Execution,
    /// A surface-W run (`POST /runs`).
    Run,
}

/// One creation of an iteration.
#[derive(Debug, Clone)]
struct Creation {
    made: Made,
    key: String,
    body: Value,
    /// The marker the provider sees (executions only).
    marker: Option<String>,
    /// A run of the approval fixture: nobody resolves its gate, so only a restart ends it.
    approval: bool,
}

/// Progress the killer waits on.
#[derive(Debug, Default, Clone, Copy)]
struct Progress {
    /// Creation answers and events received.
    received: u64,
    /// Readers and the creating task still expecting something.
    pending: u64,
}

type Records = Arc<Mutex<Vec<(Creation, Seen)>>>;
type Errors = Arc<Mutex<Vec<String>>>;

fn bump(progress: &watch::Sender<Progress>, received: u64, pending: i64) {
    progress.send_modify(|p| {
        p.received += received;
        p.pending = p.pending.saturating_add_signed(pending);
    });
}

/// The creations of one iteration, drawn from its seed.
fn plan(iteration: u64, rng: &mut Rng) -> Vec<Creation> {
    let mut creations = Vec::new();
    for n in 0..rng.range(1, 3) {
        let marker = format!("crash {iteration}.{n} delay {} end", rng.range(0, 40));
        creations.push(Creation {
            made: Made::Execution,
            key: format!("x-{iteration}-{n}"),
            body: json!({"ability": "text-generation", "input": [{"type": "text", "text": marker}]}),
            marker: Some(marker),
            approval: false,
        });
    }
    for n in 0..rng.range(1, 3) {
        let (body, approval) = match rng.range(0, 3) {
            0 => {
                let tokens: Vec<String> = (0..rng.range(2, 8)).map(|t| format!("t{t} ")).collect();
                let body = json!({"workflowId": "conformance-stream-text", "configurable": {
                    "version": 1, "ai": {"mockProvider": {"id": "stream-text", "config": {
                        "tokens": tokens, "delayMsPerToken": rng.range(0, 8)}}}}});
                (body, false)
            }
            1 => (json!({"workflowId": "conformance-approval"}), true),
            2 => (
                json!({"workflowId": "conformance-delay", "inputs": {"delayMs": rng.range(0, 30)}}),
                false,
            ),
            _ => (json!({"workflowId": "conformance-multi-node"}), false),
        };
        creations.push(Creation {
            made: Made::Run,
            key: format!("w-{iteration}-{n}"),
            body,
            marker: None,
            approval,
        });
    }
    // A seeded shuffle (Fisher–Yates).
    for i in (1..creations.len()).rev() {
        let j = rng.range(0, i as u64) as usize;
        creations.swap(i, j);
    }
    creations
}

/// Reads an execution's SSE stream frame by frame until the server closes it or dies.
async fn read_execution(
    client: reqwest::Client,
    url: String,
    mut on_event: impl FnMut(Value) -> bool,
) {
    let Ok(response) = client.get(url).send().await else {
        return;
    };
    let mut body = response.bytes_stream();
    let mut buffer = String::new();
    while let Some(Ok(chunk)) = body.next().await {
        buffer.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = buffer.find("\n\n") {
            let block: String = buffer.drain(..end + 2).collect();
            let data: String = block
                .lines()
                .filter_map(|l| l.strip_prefix("data: "))
                .collect();
            if data.is_empty() {
                continue;
            }
            let event: Value = serde_json::from_str(&data).expect("a whole frame is JSON");
            if on_event(event) {
                return;
            }
        }
    }
}

/// Long-polls a run's events until it is terminal or suspended (or the server dies).
async fn read_run(
    client: reqwest::Client,
    base: String,
    run_id: String,
    mut on_event: impl FnMut(Value) -> bool,
) {
    let mut after: Option<i64> = None;
    loop {
        let query = after.map_or("timeout=30".to_string(), |a| {
            format!("afterSequence={a}&timeout=30")
        });
        let url = format!("{base}{}/events/poll?{query}", run_path(&run_id));
        let Ok(response) = client.get(url).bearer_auth(KEY_A).send().await else {
            return;
        };
        let Ok(body) = response.json::<Value>().await else {
            return;
        };
        for event in body["events"].as_array().cloned().unwrap_or_default() {
            after = event["sequence"].as_i64();
            if on_event(event) {
                return;
            }
        }
    }
}

/// Drives one iteration's creations against `process` and kills it once `kill_after` items
/// were received (or everything settled first). Returns what the clients saw.
async fn drive_and_kill(
    process: Process,
    creations: Vec<Creation>,
    kill_after: u64,
) -> Vec<(Creation, Seen)> {
    let records: Records = Arc::default();
    let errors: Errors = Arc::default();
    let (progress, mut watching) = watch::channel(Progress {
        received: 0,
        pending: 1,
    });
    let progress = Arc::new(progress);
    let readers: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::default();
    let client = reqwest::Client::builder()
        .tcp_nodelay(true)
        .build()
        .unwrap();
    let creator = {
        let errors = Arc::clone(&errors);
        let (records, progress, readers, client) = (
            Arc::clone(&records),
            Arc::clone(&progress),
            Arc::clone(&readers),
            client.clone(),
        );
        let base = process.base.clone();
        tokio::spawn(async move {
            for creation in creations {
                let (path, auth) = match creation.made {
                    Made::Execution => ("/v1/executions", None),
                    Made::Run => ("/runs", Some(KEY_A)),
                };
                let mut request = client
                    .post(format!("{base}{path}"))
                    .header("idempotency-key", &creation.key)
                    .json(&creation.body);
                if let Some(key) = auth {
                    request = request.bearer_auth(key);
                }
                let Ok(response) = request.send().await else {
                    break;
                };
                let status = response.status().as_u16();
                let Ok(answer) = response.json::<Value>().await else {
                    break;
                };
                let (expected, id) = match creation.made {
                    Made::Execution => (202, &answer["execution_id"]),
                    Made::Run => (201, &answer["runId"]),
                };
                let Some(id) = id.as_str().filter(|_| status == expected) else {
                    errors
                        .lock()
                        .unwrap()
                        .push(format!("creation answered {status} {answer}"));
                    break;
                };
                let id = id.to_string();
                let index = {
                    let mut records = records.lock().unwrap();
                    records.push((
                        creation.clone(),
                        Seen {
                            id: id.clone(),
                            ..Seen::default()
                        },
                    ));
                    records.len() - 1
                };
                bump(&progress, 1, 1);
                let on_event = {
                    let (records, progress) = (Arc::clone(&records), Arc::clone(&progress));
                    move |event: Value| {
                        let done = event_settles(&event);
                        {
                            let mut records = records.lock().unwrap();
                            let seen = &mut records[index].1;
                            seen.suspended |= event["type"] == "interrupt.requested";
                            seen.events.push(event);
                        }
                        bump(&progress, 1, if done { -1 } else { 0 });
                        done
                    }
                };
                let reader = match creation.made {
                    Made::Execution => tokio::spawn(read_execution(
                        client.clone(),
                        format!("{base}/v1/executions/{id}/events"),
                        on_event,
                    )),
                    Made::Run => tokio::spawn(read_run(client.clone(), base.clone(), id, on_event)),
                };
                readers.lock().unwrap().push(reader);
            }
            bump(&progress, 0, -1);
        })
    };
    tokio::time::timeout(
        BOUND,
        watching.wait_for(|p| p.received >= kill_after || p.pending == 0),
    )
    .await
    .expect("the work reaches the kill point")
    .unwrap();
    process.kill().await;
    creator.abort();
    for reader in readers.lock().unwrap().drain(..) {
        reader.abort();
    }
    let _ = creator.await;
    let errors = errors.lock().unwrap().clone();
    assert!(errors.is_empty(), "{errors:?}");
    records.lock().unwrap().clone()
}

/// Whether an event ends what its reader waits for: a terminal event, or a run suspended at
/// its gate.
fn event_settles(event: &Value) -> bool {
    matches!(
        event["type"].as_str(),
        Some(
            "execution.completed"
                | "execution.failed"
                | "run.completed"
                | "run.failed"
                | "run.cancelled"
                | "interrupt.requested"
        )
    )
}

/// Reads a whole log from the restarted process (every log is terminal by then).
async fn whole_log(
    client: &reqwest::Client,
    base: &str,
    creation: &Creation,
    id: &str,
) -> Vec<Value> {
    match creation.made {
        Made::Execution => {
            let events = Arc::new(Mutex::new(Vec::new()));
            let sink = Arc::clone(&events);
            tokio::time::timeout(
                BOUND,
                read_execution(
                    client.clone(),
                    format!("{base}/v1/executions/{id}/events"),
                    move |e| {
                        sink.lock().unwrap().push(e);
                        false
                    },
                ),
            )
            .await
            .expect("a recovered execution's stream closes");
            events.lock().unwrap().clone()
        }
        Made::Run => {
            let url = format!("{base}{}/events/poll?timeout=1", run_path(id));
            let body: Value = client
                .get(url)
                .bearer_auth(KEY_A)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            assert_eq!(
                body["isTerminal"], true,
                "a recovered run is terminal: {body}"
            );
            body["events"].as_array().unwrap().clone()
        }
    }
}

/// Checks one log the client learned of, after the restart; says how it ended.
async fn check_creation(
    client: &reqwest::Client,
    base: &str,
    creation: &Creation,
    seen: &Seen,
) -> &'static str {
    let log = whole_log(client, base, creation, &seen.id).await;
    let first = match creation.made {
        Made::Execution => 1,
        Made::Run => 0,
    };
    let sequences: Vec<u64> = log
        .iter()
        .map(|e| e["sequence"].as_u64().unwrap())
        .collect();
    let expected: Vec<u64> = (first..first + log.len() as u64).collect();
    assert_eq!(sequences, expected, "contiguous from {first}: {log:#?}");
    assert!(
        seen.events.len() <= log.len() && log[..seen.events.len()] == seen.events[..],
        "everything received before the kill is kept unchanged:\nreceived {:#?}\nlog {log:#?}",
        seen.events
    );
    let is_terminal = |e: &Value| {
        matches!(
            e["type"].as_str(),
            Some(
                "execution.completed"
                    | "execution.failed"
                    | "run.completed"
                    | "run.failed"
                    | "run.cancelled"
            )
        )
    };
    let terminals: Vec<&Value> = log.iter().filter(|e| is_terminal(e)).collect();
    assert_eq!(terminals.len(), 1, "exactly one terminal event: {log:#?}");
    let terminal = terminals[0];
    let received_terminal = seen.events.iter().any(is_terminal);
    match creation.made {
        Made::Execution => {
            assert_eq!(log[0]["type"], "execution.accepted", "{log:#?}");
            assert!(is_terminal(log.last().unwrap()), "terminal last: {log:#?}");
            if terminal["type"] == "execution.failed" {
                // The fake provider never fails: only the restart ends an execution failed.
                assert!(!received_terminal);
                assert_eq!(terminal["status"], "failed");
                assert_eq!(terminal["error"]["code"], "internal_error");
                assert_eq!(terminal["error"]["retryable"], false);
            }
            let snapshot: Value = client
                .get(format!("{base}/v1/executions/{}", seen.id))
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            assert_eq!(snapshot["status"], terminal["status"]);
            assert_eq!(snapshot["last_sequence"], log.len() as u64);
            let replay = client
                .post(format!("{base}/v1/executions"))
                .header("idempotency-key", &creation.key)
                .json(&creation.body)
                .send()
                .await
                .unwrap();
            assert_eq!(replay.status(), 200, "an answered key replays");
            let replay: Value = replay.json().await.unwrap();
            assert_eq!(replay["execution_id"], seen.id.as_str());
            assert_eq!(replay["idempotent_replay"], true);
            match (received_terminal, terminal["type"].as_str()) {
                (true, _) => "execution completed, completion received",
                (false, Some("execution.completed")) => "execution completed, unseen",
                _ if seen.events.is_empty() => "execution failed by the restart, nothing received",
                _ => "execution failed by the restart, some events received",
            }
        }
        Made::Run => {
            let starts = log.iter().filter(|e| e["type"] == "run.started").count();
            assert!(starts <= 1, "a run never runs twice: {log:#?}");
            let after: Vec<&Value> = log.iter().skip_while(|e| !is_terminal(e)).skip(1).collect();
            assert!(
                after
                    .iter()
                    .all(|e| e["type"].as_str().unwrap().starts_with("example.")),
                "only vendor events follow the terminal event: {log:#?}"
            );
            if !received_terminal && terminal["type"] == "run.failed" {
                let error = &terminal["payload"]["error"];
                assert_eq!(error["code"], "internal_error", "{terminal}");
                assert_eq!(error["details"]["reason"], "host-restarted", "{terminal}");
                assert_eq!(error["retryable"], false);
            } else {
                assert_eq!(terminal["type"], "run.completed", "{log:#?}");
            }
            if creation.approval {
                // Nobody resolves the gate: the run can only end by the restart rule.
                assert_eq!(terminal["type"], "run.failed", "{log:#?}");
            }
            if seen.suspended {
                assert_eq!(terminal["payload"]["failedNodeId"], "gate", "{terminal}");
            }
            let snapshot: Value = client
                .get(format!("{base}{}", run_path(&seen.id)))
                .bearer_auth(KEY_A)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            let status = terminal["type"]
                .as_str()
                .unwrap()
                .trim_start_matches("run.");
            assert_eq!(snapshot["status"], status, "{snapshot}");
            let replay = client
                .post(format!("{base}/runs"))
                .bearer_auth(KEY_A)
                .header("idempotency-key", &creation.key)
                .json(&creation.body)
                .send()
                .await
                .unwrap();
            assert_eq!(replay.status(), 201, "an answered key replays");
            assert_eq!(replay.headers()["openwop-idempotent-replay"], "true");
            let replay: Value = replay.json().await.unwrap();
            assert_eq!(replay["runId"], seen.id.as_str());
            match (received_terminal, terminal["type"].as_str()) {
                (true, _) => "run completed, completion received",
                (false, Some("run.completed")) => "run completed, unseen",
                _ if log.iter().any(|e| e["type"] == "interrupt.requested") => {
                    "run failed by the restart at its approval gate"
                }
                _ => "run failed by the restart while running",
            }
        }
    }
}

/// Every log in the file, read through the store: contiguous, terminal, the stored sequence is
/// the wire one, the extent matches the events.
fn check_store(db: &Path) -> usize {
    let store = SqliteEventStore::open(db).expect("the file opens after the last kill");
    let mut logs = 0;
    for surface in [Surface::Execution, Surface::Run] {
        for record in store.logs(surface).unwrap() {
            logs += 1;
            let events = store.read_after(&record.id, None).unwrap();
            let first = surface.first_sequence();
            for (offset, event) in events.iter().enumerate() {
                assert_eq!(event.sequence, first + offset as u64, "{}", record.id);
                let wire: Value = serde_json::from_str(&event.json).unwrap();
                assert_eq!(wire["sequence"], event.sequence, "{}", record.id);
            }
            assert_eq!(record.last_sequence, events.last().map(|e| e.sequence));
            assert!(
                record.terminal,
                "every log ended after the restarts: {}",
                record.id
            );
            assert_eq!(
                events.iter().filter(|e| e.terminal).count(),
                1,
                "{}",
                record.id
            );
            if surface == Surface::Execution {
                assert_eq!(
                    &*events[0].event_type, "execution.accepted",
                    "{}",
                    record.id
                );
                assert!(events.last().unwrap().terminal, "{}", record.id);
            }
        }
    }
    logs
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_at_random_points_loses_renumbers_and_duplicates_nothing() {
    let base_seed = std::env::var("CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_SEED);
    let provider = MockServer::builder().start().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .and(wiremock::matchers::path("/v1/chat/completions"))
        .respond_with(DelayedProvider)
        .mount(&provider)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("runtime.toml");
    std::fs::write(
        &config,
        format!(
            r#"
[[providers]]
id = "fake"
kind = "openai-chat"
base_url = "{}"
credential_env = "{CANARY_ENV}"

[[providers.models]]
model = "gpt-test"
abilities = ["text-generation"]
stream = true
"#,
            provider.uri()
        ),
    )
    .unwrap();
    let db = dir.path().join("events.db");
    let client = reqwest::Client::builder()
        .tcp_nodelay(true)
        .build()
        .unwrap();
    let started = std::time::Instant::now();
    let mut process = Process::start(&config, &db).await;
    let mut markers: Vec<(String, bool)> = Vec::new();
    let mut outcome = std::collections::BTreeMap::<&'static str, u64>::new();
    for iteration in 0..ITERATIONS {
        let seed = base_seed.wrapping_add(iteration);
        let mut rng = Rng(seed);
        let creations = plan(iteration, &mut rng);
        // Each creation answers once and sends a handful of events: aim anywhere in that span.
        let kill_after = rng.range(0, creations.len() as u64 * 7);
        let check = async {
            let seen = drive_and_kill(process, creations, kill_after).await;
            let restarted = Process::start(&config, &db).await;
            let mut ends = Vec::new();
            for (creation, seen) in &seen {
                ends.push(check_creation(&client, &restarted.base, creation, seen).await);
            }
            (seen, ends, restarted)
        };
        let (seen, ends, restarted) = match std::panic::AssertUnwindSafe(check).catch_unwind().await
        {
            Ok(done) => done,
            Err(panic) => {
                let message = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                panic!(
                    "iteration {iteration} failed (its seed {seed}; rerun with CRASH_SEED={base_seed}): {message}"
                )
            }
        };
        for (creation, seen) in &seen {
            if let Some(marker) = &creation.marker {
                let completed = seen
                    .events
                    .iter()
                    .any(|e| e["type"] == "execution.completed");
                markers.push((marker.clone(), completed));
            }
        }
        for end in ends {
            *outcome.entry(end).or_default() += 1;
        }
        process = restarted;
    }
    process.kill().await;
    // Never re-submitted: each execution reached the provider at most once, and one whose
    // completion the client saw exactly once.
    let requests = provider.received_requests().await.unwrap();
    for (marker, completed) in &markers {
        let calls = requests
            .iter()
            .filter(|r| String::from_utf8_lossy(&r.body).contains(marker.as_str()))
            .count();
        assert!(calls <= 1, "`{marker}` reached the provider {calls} times");
        if *completed {
            assert_eq!(calls, 1, "`{marker}`");
        }
    }
    let logs = check_store(&db);
    eprintln!(
        "{ITERATIONS} kills from seed {base_seed} in {:.1?}: {logs} logs, {outcome:?}",
        started.elapsed()
    );
}
