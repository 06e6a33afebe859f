//! Load mode: many concurrent subscribers on each of several runs (W) or executions (X), every
//! subscriber's sequence judged against its log's full read.
//!
//! - [`plan`]: what a load run does and its bounds.
//! - `workload`: creating the logs on the host and reading each one whole after its end.
//! - `subscriber`: one subscriber with forced disconnects, `Last-Event-ID` resumption and
//!   back-off on 429 (and, on surface W, on 503 with `Retry-After`).
//! - `judge`: lost, duplicated, reordered, after-terminal and unexpected events.
//! - `metrics`: percentiles, the latency histogram, deliveries over time.
//! - [`result`]: the published result document; [`render`]: its Markdown and HTML pages.
//!
//! A load run talks to the target it is given only, stops by itself at the plan's time bound,
//! and judges no host for timing: latency and throughput are figures, never verdicts.

pub mod plan;
pub mod render;
pub mod result;

mod judge;
mod metrics;
mod subscriber;
mod workload;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use indicatif::ProgressBar;
use tokio::sync::Semaphore;
use tokio::time::Instant;

pub use plan::{LoadPlan, LoadSurface, PlanError};
pub use result::{Anomaly, AnomalyKind, CLOCK_CAVEAT, LoadResult, LoadVerdict, load_result_schema};

use crate::capability::HostCapability;
use crate::host::Target;
use crate::mock_provider_seat::MockProviderSeat;
use result::{Connections, LogSummary, MAX_ANOMALIES, StreamSummary, Totals};
use subscriber::{SubscriberContext, SubscriberRecord};

/// A load run could not start.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The plan is outside its bounds.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// The HTTP client could not be built.
    #[error("failed to build the HTTP client: {0}")]
    Client(String),
    /// The host did not create a run or execution.
    #[error("log {index} was not created: {message}")]
    Create {
        /// Which log.
        index: usize,
        /// Why.
        message: String,
    },
}

/// Longest the probe may wait for each of its answers ([`learn_the_host`]).
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// Probes `target` as a run does and records what it found (on surface W the negotiated
/// `OpenWOP-Version`, the run-id path encoding the host reads, where it reads a run's mock
/// provider, whether it serves OpenWOP v1 only), so the load speaks to the host as the cases
/// do; the operator's facts (`told`) go to the probe and win over what it finds, as in a run.
/// Returns the probe's notes for the operator.
pub async fn learn_the_host(
    target: &mut Target,
    told: &crate::run::HostOverrides,
) -> Result<Vec<String>, LoadError> {
    let driver = crate::driver::HttpDriver::new(
        &crate::driver::ClientOptions::default(),
        Default::default(),
    )
    .map_err(|e| LoadError::Client(e.to_string()))?;
    let findings = crate::probe::probe(&driver, &told.as_told(target), PROBE_TIMEOUT).await;
    findings.apply_to(target);
    told.apply(target);
    Ok(findings.notes.clone())
}

/// Longest a full read of the logs may take after the subscribers are done.
const FULL_READ_BOUND: Duration = Duration::from_secs(60);

/// Runs `plan` against `target`; `progress` counts deliveries (use [`ProgressBar::hidden`]
/// for none).
pub async fn run_load(
    target: &Target,
    plan: &LoadPlan,
    progress: &ProgressBar,
) -> Result<LoadResult, LoadError> {
    plan.validate()?;
    let client = reqwest::Client::builder()
        .no_proxy()
        .http1_only()
        .connect_timeout(Duration::from_secs(10))
        .build()
        .map_err(|e| LoadError::Client(e.to_string()))?;
    let started_at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let run_started = Instant::now();
    let deadline = run_started + plan.time_limit();
    let run_tag = uuid::Uuid::new_v4().simple().to_string();
    if plan.surface == LoadSurface::Openwop
        && target
            .capabilities
            .contains(&HostCapability::ServesOpenwopV1Only)
    {
        let why = format!(
            "{}, so the v2 run events chapter's load is not run",
            crate::host::OPENWOP_V1_ONLY_REASON
        );
        return Ok(assemble(
            target,
            plan,
            started_at,
            0.0,
            &[],
            &[],
            &[],
            vec![why],
        ));
    }
    let mut logs = Vec::with_capacity(plan.logs);
    let mut seat = MockProviderSeat::of(&target.facts);
    for index in 0..plan.logs {
        let log = workload::create(&client, target, plan, index, &run_tag, deadline, &mut seat)
            .await
            .map_err(|message| LoadError::Create { index, message })?;
        logs.push(log);
    }
    let delivered = Arc::new(AtomicU64::new(0));
    let context = Arc::new(SubscriberContext {
        client: client.clone(),
        headers: workload::request_headers(target, plan.surface),
        plan: plan.clone(),
        run_started,
        deadline,
        connect_permits: Arc::new(Semaphore::new(plan.connect_concurrency)),
        delivered: Arc::clone(&delivered),
    });
    progress.set_length((plan.logs * plan.subscribers * plan.events) as u64);
    let mut tasks = Vec::with_capacity(plan.logs * plan.subscribers);
    for (index, log) in logs.iter().enumerate() {
        for subscriber in 0..plan.subscribers {
            tasks.push(tokio::spawn(subscriber::subscribe(
                Arc::clone(&context),
                index,
                subscriber,
                log.stream_url.clone(),
            )));
        }
    }
    let ticker = {
        let progress = progress.clone();
        let delivered = Arc::clone(&delivered);
        tokio::spawn(async move {
            loop {
                progress.set_position(delivered.load(Ordering::Relaxed));
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        })
    };
    let mut records: Vec<SubscriberRecord> = Vec::with_capacity(tasks.len());
    for task in tasks {
        match task.await {
            Ok(record) => records.push(record),
            Err(error) => records.push(SubscriberRecord {
                gave_up: Some(format!("the subscriber task failed: {error}")),
                ..SubscriberRecord::default()
            }),
        }
    }
    ticker.abort();
    progress.set_position(delivered.load(Ordering::Relaxed));
    let wall_s = run_started.elapsed().as_secs_f64();

    let read_deadline = Instant::now() + FULL_READ_BOUND;
    let mut not_judged = Vec::new();
    let mut reads = Vec::with_capacity(logs.len());
    for log in &logs {
        match workload::read_whole(&client, target, plan.surface, log, read_deadline).await {
            Ok(read) => reads.push(Some(read)),
            Err(message) => {
                not_judged.push(format!("log {} could not be read whole: {message}", log.id));
                reads.push(None);
            }
        }
    }
    Ok(assemble(
        target, plan, started_at, wall_s, &logs, &reads, &records, not_judged,
    ))
}

#[allow(clippy::too_many_arguments)]
fn assemble(
    target: &Target,
    plan: &LoadPlan,
    started_at: String,
    wall_s: f64,
    logs: &[workload::CreatedLog],
    reads: &[Option<workload::FullRead>],
    records: &[SubscriberRecord],
    mut not_judged: Vec<String>,
) -> LoadResult {
    let modes = plan.modes();
    let mixed = modes.len() > 1;
    let mut totals = Totals {
        subscribers: records.len(),
        ..Totals::default()
    };
    let mut anomalies: Vec<Anomaly> = Vec::new();
    let mut connections = Connections::default();
    let mut latencies = Vec::new();
    let mut arrivals = Vec::new();
    let mut ttfe = Vec::new();
    let mut ttfb = Vec::new();
    let mut per_stream_fps = Vec::new();
    let mut streams = Vec::new();
    let mut incomplete = 0usize;
    let mut failed_reads = false;
    let summaries: Vec<LogSummary> = logs
        .iter()
        .zip(reads)
        .map(|(log, read)| {
            let terminal = read
                .as_ref()
                .and_then(|r| r.terminal(plan.surface))
                .map(|e| (e.sequence, e.event_type.clone()));
            let read_problem = read.as_ref().and_then(|r| r.problem.clone());
            failed_reads |= read_problem.is_some();
            LogSummary {
                id: log.id.clone(),
                events: read.as_ref().map_or(0, |r| r.events.len()),
                terminal,
                read_problem,
            }
        })
        .collect();
    for record in records {
        let log_id = logs.get(record.log).map_or("?", |l| l.id.as_str());
        totals.deliveries += record.deliveries.len() as u64;
        totals.completed_subscribers += usize::from(record.completed);
        if !record.completed {
            incomplete += 1;
        }
        connections.opened += u64::from(record.connections);
        connections.forced_disconnects += u64::from(record.forced_disconnects);
        connections.resumptions += u64::from(record.resumptions);
        connections.rate_limited += u64::from(record.rate_limited);
        connections.rate_limited_without_retry_after +=
            u64::from(record.rate_limited_without_retry_after);
        connections.at_capacity += u64::from(record.at_capacity);
        connections.errors += record.errors.len() as u64;
        for error in &record.errors {
            if connections.first_errors.len() < 10 {
                connections.first_errors.push(error.clone());
            }
        }
        latencies.extend(record.deliveries.iter().filter_map(|d| d.latency_ms));
        arrivals.extend(record.deliveries.iter().map(|d| d.at_ms));
        ttfe.extend(record.time_to_first_event_ms);
        ttfb.extend(record.time_to_first_byte_ms);
        let fps = if record.reading_ms > 0.0 {
            record.deliveries.len() as f64 / (record.reading_ms / 1000.0)
        } else {
            0.0
        };
        per_stream_fps.push(fps);
        streams.push(StreamSummary {
            log: log_id.to_string(),
            subscriber: record.subscriber,
            connections: record.connections,
            deliveries: record.deliveries.len() as u64,
            time_to_first_byte_ms: record.time_to_first_byte_ms.map(metrics::round3),
            time_to_first_event_ms: record.time_to_first_event_ms.map(metrics::round3),
            largest_gap_ms: metrics::round3(record.largest_gap_ms),
            frames_per_s: metrics::round3(fps),
        });
        let Some(Some(read)) = reads.get(record.log) else {
            continue;
        };
        let expected = judge::expected(plan.surface, &modes, read);
        totals.expected_deliveries += expected.required_deliveries();
        let terminal = read.terminal(plan.surface).map(|e| e.sequence);
        for anomaly in judge::judge(log_id, record, &expected, terminal, mixed) {
            // What a subscriber that did not finish never got is not judged as lost.
            if anomaly.kind == AnomalyKind::Lost && !record.completed {
                continue;
            }
            let exact = anomaly.count;
            match anomaly.kind {
                AnomalyKind::Lost => totals.lost += exact,
                AnomalyKind::Duplicated => totals.duplicated += exact,
                AnomalyKind::Reordered => totals.reordered += exact,
                AnomalyKind::AfterTerminal => totals.after_terminal += exact,
                AnomalyKind::Unexpected => totals.unexpected += exact,
                AnomalyKind::OpenAfterTerminal => totals.open_after_terminal += 1,
                AnomalyKind::KeepaliveGap => totals.keepalive_gaps += 1,
            }
            if anomalies.len() < MAX_ANOMALIES {
                anomalies.push(anomaly);
            }
        }
    }
    if incomplete > 0 {
        let first = records
            .iter()
            .find_map(|r| r.gave_up.clone())
            .unwrap_or_default();
        not_judged.push(format!(
            "{incomplete} subscriber(s) did not read their stream to the end (first reason: {first})"
        ));
    }
    let fails = anomalies.iter().any(|a| a.kind.fails()) || failed_reads;
    let verdict = if fails {
        LoadVerdict::Fail
    } else if !not_judged.is_empty() {
        LoadVerdict::NotJudged
    } else {
        LoadVerdict::Pass
    };
    streams.sort_by(|a, b| a.frames_per_s.total_cmp(&b.frames_per_s));
    streams.truncate(10);
    LoadResult {
        harness_version: env!("CARGO_PKG_VERSION").to_string(),
        target: target.base_url.clone(),
        target_kind: target.kind.to_string(),
        plan: plan.clone(),
        started_at,
        wall_s: metrics::round3(wall_s),
        verdict,
        not_judged_reasons: not_judged,
        frames_per_s_total: metrics::round3(if wall_s > 0.0 {
            totals.deliveries as f64 / wall_s
        } else {
            0.0
        }),
        totals,
        latency_ms: metrics::percentiles(&latencies),
        time_to_first_event_ms: metrics::percentiles(&ttfe),
        time_to_first_byte_ms: metrics::percentiles(&ttfb),
        frames_per_s_per_stream: metrics::percentiles(&per_stream_fps),
        connections,
        clock_caveat: CLOCK_CAVEAT.to_string(),
        latency_histogram: metrics::histogram(&latencies),
        deliveries_over_time: metrics::timeline(&arrivals),
        logs: summaries,
        anomalies,
        slowest_streams: streams,
    }
}
