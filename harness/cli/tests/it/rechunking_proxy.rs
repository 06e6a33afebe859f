//! No verdict depends on how a host chunked its writes: the whole corpus gives the same
//! per-case verdicts through a re-chunking proxy as without it.
//!
//! The proxy sits between the harness and the built-in host and forwards raw TCP bytes. What
//! the client sends goes upstream unchanged; what the host answers is re-split: the first
//! [`ONE_BYTE_PREFIX`] bytes after each request the client wrote (connections are kept alive
//! and reused, so this is per answer, not per connection) one byte per write, then writes of a random
//! (seeded) length of 1 to [`MAX_SPLIT`] bytes, with a short pause (1–2 ms) before a random
//! (seeded) one write in [`PAUSE_ONE_IN`]. `TCP_NODELAY` on both sockets keeps the writes
//! apart on the wire. The one-byte prefix covers every status line, header block and most
//! bodies whole; the cap keeps long streams cheap (a one-byte write per byte of a long SSE
//! stream would cost seconds per case), and the random splits after it still cut frames and
//! JSON at arbitrary points.
//!
//! A case whose verdict differs is run once more, alone, through the proxy, with longer
//! budgets: a verdict that depends on chunking differs again; one that came from a loaded
//! machine (a case's budget running out with one-byte writes and the kill matrix beside it)
//! does not. The assertion's message gives each differing case's checks that did not pass.
//!
//! The standard profile always runs (two corpus runs, about half a minute); the divergent
//! profile runs when `CI=true` or `CONFORMANCE_SELFTEST=1`, like the kill matrix.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::probed_runner::{corpus, run_probed_at};
use conformance_cli::launch::{BuiltInOptions, BuiltInProfile, start_built_in};
use harness::case::LoadedCase;
use harness::target::Target;
use harness::verdict::Verdict;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// How many bytes at the start of every answer are written one per write.
const ONE_BYTE_PREFIX: usize = 4 * 1024;
/// The longest write after the prefix.
const MAX_SPLIT: u64 = 97;
/// One write in this many (seeded) is preceded by a short pause.
const PAUSE_ONE_IN: u64 = 64;
/// The time scale of the re-run alone of a case whose verdict differed.
const ALONE_TIME_SCALE: f64 = 4.0;

/// A small deterministic generator (SplitMix64): the proxy's splits and pauses are a function
/// of the seed and the connection's index.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `1..=max`.
    fn between_one_and(&mut self, max: u64) -> u64 {
        1 + self.next() % max
    }
}

/// A TCP proxy that re-splits the upstream's answer bytes.
struct RechunkingProxy {
    addr: SocketAddr,
    task: tokio::task::JoinHandle<()>,
    /// Connections accepted so far.
    connections: Arc<AtomicU64>,
    /// Answer bytes forwarded so far.
    bytes: Arc<AtomicU64>,
}

impl RechunkingProxy {
    /// Listens on 127.0.0.1:0 and forwards every connection to `upstream`.
    async fn start(upstream: SocketAddr, seed: u64) -> RechunkingProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let connections = Arc::new(AtomicU64::new(0));
        let bytes = Arc::new(AtomicU64::new(0));
        let (accepted, forwarded) = (Arc::clone(&connections), Arc::clone(&bytes));
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let index = accepted.fetch_add(1, Ordering::Relaxed) + 1;
                let rng = SplitMix(seed ^ index.wrapping_mul(0xA24B_AED4_963E_E407));
                tokio::spawn(forward(client, upstream, rng, Arc::clone(&forwarded)));
            }
        });
        RechunkingProxy {
            addr,
            task,
            connections,
            bytes,
        }
    }
}

impl Drop for RechunkingProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// One connection: the request bytes unchanged, the answer re-split. Either side closing ends
/// both (an HTTP/1.1 client does not half-close while it waits for an answer).
async fn forward(client: TcpStream, upstream: SocketAddr, rng: SplitMix, bytes: Arc<AtomicU64>) {
    let Ok(host) = TcpStream::connect(upstream).await else {
        return;
    };
    let _ = client.set_nodelay(true);
    let _ = host.set_nodelay(true);
    let (client_read, client_write) = client.into_split();
    let (host_read, host_write) = host.into_split();
    let requests = AtomicU64::new(0);
    tokio::select! {
        _ = pass_through(client_read, host_write, &requests) => {}
        _ = rechunk(host_read, client_write, rng, &bytes, &requests) => {}
    }
}

/// Copies the client's bytes upstream unchanged, counting the writes (each starts a new
/// request, or continues one: either way the answer that follows gets a fresh one-byte prefix).
async fn pass_through(
    mut from: impl AsyncRead + Unpin,
    mut to: impl AsyncWrite + Unpin,
    requests: &AtomicU64,
) -> std::io::Result<()> {
    let mut buffer = vec![0u8; 16 * 1024];
    loop {
        let read = from.read(&mut buffer).await?;
        if read == 0 {
            return Ok(());
        }
        requests.fetch_add(1, Ordering::Relaxed);
        to.write_all(&buffer[..read]).await?;
    }
}

/// Copies `from` to `to` in the proxy's writes.
async fn rechunk(
    mut from: impl AsyncRead + Unpin,
    mut to: impl AsyncWrite + Unpin,
    mut rng: SplitMix,
    bytes: &AtomicU64,
    requests: &AtomicU64,
) -> std::io::Result<()> {
    let mut buffer = vec![0u8; 16 * 1024];
    let mut written = 0usize;
    let mut answering = 0u64;
    loop {
        let read = from.read(&mut buffer).await?;
        if read == 0 {
            return to.shutdown().await;
        }
        let seen = requests.load(Ordering::Relaxed);
        if seen != answering {
            // A new request on this (kept-alive) connection: its answer starts one byte a write.
            answering = seen;
            written = 0;
        }
        let mut chunk = &buffer[..read];
        while !chunk.is_empty() {
            let size = if written < ONE_BYTE_PREFIX {
                1
            } else {
                usize::try_from(rng.between_one_and(MAX_SPLIT)).unwrap_or(1)
            }
            .min(chunk.len());
            if rng.between_one_and(PAUSE_ONE_IN) == 1 {
                let pause = rng.between_one_and(2);
                tokio::time::sleep(Duration::from_millis(pause)).await;
            }
            to.write_all(&chunk[..size]).await?;
            to.flush().await?;
            written += size;
            bytes.fetch_add(size as u64, Ordering::Relaxed);
            chunk = &chunk[size..];
        }
    }
}

/// A case's verdict, and what its checks that did not pass said (for the assertion's message).
#[derive(Debug, Clone)]
struct Judged {
    verdict: Verdict,
    unpassed: Vec<String>,
}

/// The corpus against the built-in host of `profile`, directly or through the proxy, `jobs`
/// cases at a time, at `time_scale`; every case's verdict.
async fn verdicts(
    cases: &[LoadedCase],
    profile: BuiltInProfile,
    proxy_seed: Option<u64>,
    jobs: usize,
    time_scale: f64,
) -> BTreeMap<String, Judged> {
    let running = start_built_in(&BuiltInOptions {
        profile,
        ..BuiltInOptions::default()
    })
    .await
    .unwrap();
    let mut target: Target = running.target.clone();
    let proxy = match proxy_seed {
        Some(seed) => {
            let upstream: SocketAddr = target
                .base_url
                .trim_start_matches("http://")
                .parse()
                .unwrap();
            let proxy = RechunkingProxy::start(upstream, seed).await;
            target.base_url = format!("http://{}", proxy.addr);
            Some(proxy)
        }
        None => None,
    };
    let report = run_probed_at(target, cases, jobs, time_scale).await;
    if let Some(proxy) = &proxy {
        // Every case went through the proxy, not around it.
        let connections = proxy.connections.load(Ordering::Relaxed);
        let bytes = proxy.bytes.load(Ordering::Relaxed);
        assert!(
            connections > 0 && (cases.len() < 20 || bytes > 100_000),
            "the proxy forwarded {connections} connections, {bytes} bytes"
        );
        eprintln!("re-chunked: {connections} connections, {bytes} answer bytes");
    }
    drop(proxy);
    running.shutdown().await;
    report
        .cases
        .into_iter()
        .map(|c| {
            let unpassed = c
                .checks
                .iter()
                .filter(|k| k.verdict != Verdict::Pass)
                .map(|k| format!("{} {} ({}): {}", k.verdict, k.check, k.location, k.message))
                .collect();
            let judged = Judged {
                verdict: c.verdict,
                unpassed,
            };
            (c.id, judged)
        })
        .collect()
}

async fn assert_same_verdicts(profile: BuiltInProfile) {
    let cases = corpus();
    let direct = verdicts(&cases, profile, None, 8, 1.0).await;
    let mut proxied = verdicts(&cases, profile, Some(0x5eed_0013), 8, 1.0).await;
    // On a loaded machine (the kill matrix beside it, one-byte writes through the proxy) a
    // case's own budget can run out: ERROR, or an INFO from a cut stream. A verdict that depends
    // on chunking shows again when the case runs alone through the proxy, with budgets
    // [`ALONE_TIME_SCALE`] times the case's (a long repeat such as w.poll.after-sequence-every
    // takes most of its 10 s through the proxy even alone); one that came from the load does not.
    let verdict_of =
        |judged: &BTreeMap<String, Judged>, id: &str| judged.get(id).map(|j| j.verdict);
    let differing: Vec<LoadedCase> = cases
        .iter()
        .filter(|c| verdict_of(&proxied, &c.case.id) != verdict_of(&direct, &c.case.id))
        .cloned()
        .collect();
    if !differing.is_empty() {
        let alone = verdicts(&differing, profile, Some(0x5eed_0013), 1, ALONE_TIME_SCALE).await;
        eprintln!("re-ran alone through the proxy: {alone:#?}");
        proxied.extend(alone);
    }
    assert_eq!(direct.len(), cases.len());
    let passed = direct
        .values()
        .filter(|j| j.verdict == Verdict::Pass)
        .count();
    assert!(
        passed * 2 > cases.len(),
        "only {passed} cases passed directly"
    );
    let changed: Vec<String> = direct
        .iter()
        .filter(|(id, judged)| verdict_of(&proxied, id) != Some(judged.verdict))
        .map(|(id, judged)| {
            format!(
                "{id}: {} directly {:?}, re-chunked {:?}",
                judged.verdict,
                judged.unpassed,
                proxied.get(id)
            )
        })
        .collect();
    assert!(
        changed.is_empty(),
        "[{profile}] verdicts that depend on how the host chunked its writes:\n{}",
        changed.join("\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn rechunked_answers_give_the_same_verdicts() {
    assert_same_verdicts(BuiltInProfile::Standard).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[cfg_attr(
    not(conformance_gated),
    ignore = "the re-chunked divergent run repeats the whole suite: built to run under CI=true or CONFORMANCE_SELFTEST=1, or pass --include-ignored"
)]
async fn rechunked_answers_give_the_same_verdicts_on_the_divergent_profile() {
    assert_same_verdicts(BuiltInProfile::Divergent).await;
}

#[tokio::test]
async fn the_proxy_splits_every_answer_and_keeps_its_bytes() {
    // An upstream that answers one block of bytes per connection in one write.
    let upstream = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let upstream_addr = upstream.local_addr().unwrap();
    let answer: Vec<u8> = (0..20_000u32).map(|i| (i % 251) as u8).collect();
    let sent = answer.clone();
    tokio::spawn(async move {
        let (mut socket, _) = upstream.accept().await.unwrap();
        let mut request = [0u8; 5];
        socket.read_exact(&mut request).await.unwrap();
        assert_eq!(&request, b"hello");
        socket.write_all(&sent).await.unwrap();
        socket.shutdown().await.unwrap();
    });
    let proxy = RechunkingProxy::start(upstream_addr, 7).await;
    let mut client = TcpStream::connect(proxy.addr).await.unwrap();
    client.write_all(b"hello").await.unwrap();
    let mut received = Vec::new();
    let mut reads = 0;
    let mut buffer = [0u8; 4096];
    loop {
        let n = client.read(&mut buffer).await.unwrap();
        if n == 0 {
            break;
        }
        reads += 1;
        received.extend_from_slice(&buffer[..n]);
    }
    assert_eq!(received, answer);
    // One write in one read would mean nothing was split.
    assert!(reads > 1, "{reads} reads");
    // Same seed, same splits.
    let mut a = SplitMix(3);
    let mut b = SplitMix(3);
    assert_eq!(
        (0..16)
            .map(|_| a.between_one_and(MAX_SPLIT))
            .collect::<Vec<_>>(),
        (0..16)
            .map(|_| b.between_one_and(MAX_SPLIT))
            .collect::<Vec<_>>()
    );
}
