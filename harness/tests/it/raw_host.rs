//! What the raw-TCP hosts of these tests share: reading a request's path off the socket, the
//! target that points the harness at such a host, and running one case against it.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use harness::case::Case;
use harness::run::{CaseExecution, CaseRunner, ClientOptions, HttpDriver, Limits};
use harness::target::Target;
use harness::verdict::Verdict;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Reads a request head off the socket and returns its path (`None` when the peer closed
/// before the head was complete).
pub async fn request_path(socket: &mut TcpStream) -> Option<String> {
    let mut buffer = vec![0u8; 8192];
    let mut read = 0;
    while !buffer[..read].windows(4).any(|w| w == b"\r\n\r\n") {
        match socket.read(&mut buffer[read..]).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => read += n,
        }
    }
    let head = String::from_utf8_lossy(&buffer[..read]).to_string();
    Some(head.split_whitespace().nth(1).unwrap_or("/").to_string())
}

/// A host handing each connection, with its request's path, to `serve` (for answers
/// [`answering`] cannot give: a stream written in pieces, or none at all).
pub async fn serving<F, Fut>(serve: F) -> String
where
    F: Fn(String, TcpStream) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let serve = Arc::new(serve);
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let serve = Arc::clone(&serve);
            tokio::spawn(async move {
                if let Some(path) = request_path(&mut socket).await {
                    serve(path, socket).await;
                }
            });
        }
    });
    format!("http://{address}")
}

/// A host answering each request (one per connection) with what `respond` makes of its path,
/// `delay` after reading it.
pub async fn answering(
    delay: Duration,
    respond: impl Fn(&str) -> String + Send + Sync + 'static,
) -> String {
    let respond = Arc::new(respond);
    serving(move |path, mut socket| {
        let respond = Arc::clone(&respond);
        async move {
            tokio::time::sleep(delay).await;
            let _ = socket.write_all(respond(&path).as_bytes()).await;
        }
    })
    .await
}

/// A whole HTTP/1.1 response closing its connection: `status` (`200 OK`), extra header lines
/// (each ending in CRLF), a JSON body.
pub fn json_response(status: &str, headers: &str, body: &str) -> String {
    format!(
        "HTTP/1.1 {status}\r\n{headers}content-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// An external target at `base_url` with nothing configured.
pub fn external_target(base_url: String) -> Target {
    Target {
        kind: harness::target::TargetKind::External,
        base_url,
        headers: Vec::new(),
        principals: BTreeMap::new(),
        providers: BTreeMap::new(),
        facts: BTreeMap::new(),
        capabilities: Default::default(),
        canary: None,
        upstream: None,
        implementation: None,
        unjudgeable: Default::default(),
    }
}

/// A runner for the host at `base_url`, its driver reading within `limits`.
pub fn runner_for(base_url: String, limits: Limits) -> CaseRunner {
    CaseRunner {
        driver: HttpDriver::new(&ClientOptions::default(), limits).unwrap(),
        target: Arc::new(external_target(base_url)),
        time_scale: 1.0,
        proptest_seed: 1,
        regressions_dir: None,
    }
}

/// A runner for the host at `base_url` whose keep-alive interval is `keepalive_interval_ms`
/// (the fact the close windows are sized by).
pub fn runner_with_keepalive(base_url: String, keepalive_interval_ms: u64) -> CaseRunner {
    let mut target = external_target(base_url);
    target.facts.insert(
        "keepalive_interval_ms".into(),
        serde_json::json!(keepalive_interval_ms),
    );
    CaseRunner {
        target: Arc::new(target),
        ..runner_for(String::new(), Limits::default())
    }
}

/// Runs `case` with `runner` and judges it. A liveness guard far above any case's budget fails
/// the test if the harness hangs.
pub async fn judge_with(runner: &CaseRunner, case: &Case) -> (Verdict, CaseExecution) {
    let execution = tokio::time::timeout(Duration::from_secs(60), runner.run(case))
        .await
        .expect("the harness hung");
    let (verdict, _) = harness::run::judge(&execution);
    (verdict, execution)
}

/// Runs `case` against the host at `base_url` with the driver's `limits`, and judges it.
pub async fn judge_on(case: &Case, base_url: String, limits: Limits) -> (Verdict, CaseExecution) {
    judge_with(&runner_for(base_url, limits), case).await
}

/// Asserts the case was left BLOCKED by one outcome only, the case run's `check` (an
/// `implicit:*` check), whose message tells the operator what to change (`fewer --jobs`).
pub fn assert_blocked_by(check: &str, verdict: Verdict, execution: &CaseExecution) {
    assert_eq!(verdict, Verdict::Blocked, "{execution:#?}");
    let unpassed: Vec<_> = execution
        .checks
        .iter()
        .filter(|c| c.verdict != Verdict::Pass)
        .collect();
    assert_eq!(unpassed.len(), 1, "{execution:#?}");
    assert_eq!(unpassed[0].check, check);
    assert!(
        unpassed[0].message.contains("fewer --jobs"),
        "{}",
        unpassed[0].message
    );
}

/// Asserts a step was cut short and so not judged: the case is ERROR by the implicit
/// step-completed check, and no check FAILs on what the step read before the cut.
pub fn assert_cut_not_judged(verdict: Verdict, execution: &CaseExecution) {
    assert_eq!(verdict, Verdict::Error, "{:#?}", execution.checks);
    assert!(
        (execution.checks.iter())
            .any(|c| c.check == harness::run::STEP_COMPLETED && c.verdict == Verdict::Error),
        "{:#?}",
        execution.checks
    );
    assert!(
        execution.checks.iter().all(|c| c.verdict != Verdict::Fail),
        "{:#?}",
        execution.checks
    );
}

/// The checks that did not pass, by step and check kind.
pub fn not_passed(execution: &CaseExecution) -> Vec<(Option<&str>, &str)> {
    (execution.checks.iter())
        .filter(|c| c.verdict != Verdict::Pass)
        .map(|c| (c.step.as_deref(), c.check.as_str()))
        .collect()
}

/// A host refusing with `refusal` its first `refusals` requests and every request sooner than
/// 900 ms after a refusal (its limit frees only in quiet; a harness polling through it is never
/// answered), and answering the others with `answer(path)`; `requests` counts them all.
pub async fn refusing_until_quiet(
    refusals: usize,
    requests: Arc<AtomicUsize>,
    refusal: fn() -> String,
    answer: impl Fn(&str) -> String + Send + Sync + 'static,
) -> String {
    let last_refusal: Mutex<Option<Instant>> = Mutex::new(None);
    answering(Duration::ZERO, move |path| {
        let mut last = last_refusal.lock().unwrap();
        if requests.fetch_add(1, Ordering::SeqCst) < refusals
            || last.is_some_and(|at| at.elapsed() < Duration::from_millis(900))
        {
            *last = Some(Instant::now());
            refusal()
        } else {
            answer(path)
        }
    })
    .await
}
