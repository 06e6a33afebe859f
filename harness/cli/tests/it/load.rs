//! `conformance load`: against the clean built-in runtime every subscriber of both surfaces
//! gets exactly its log (with forced disconnects and `Last-Event-ID` resumption), and against
//! the known-bad runtime that drops events under load the command exits 1 and names the gap.
//! The counts are small for a debug build; the 1,000-subscriber run is a release-build command
//! (README.md, "Load").

use std::process::Command;

use conformance_cli::launch::{BuiltInOptions, BuiltInProfile, start_built_in};
use harness::load::{AnomalyKind, LoadPlan, LoadSurface, LoadVerdict, run_load};
use harness::target::Target;
use indicatif::ProgressBar;

fn plan(surface: LoadSurface) -> LoadPlan {
    let mut plan = LoadPlan::new(surface);
    plan.subscribers = 50;
    plan.events = 60;
    plan.event_interval_ms = 5;
    plan.disconnect_every = Some(15);
    plan.seed = 7;
    if surface == LoadSurface::Openwop {
        plan.stream_mode = Some("debug".parse().unwrap());
    }
    plan
}

async fn built_in(defects: &[&str]) -> conformance_cli::launch::BuiltIn {
    start_built_in(&BuiltInOptions {
        defects: defects.iter().map(ToString::to_string).collect(),
        max_subscribers_per_run: Some(0),
        ..BuiltInOptions::default()
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_clean_runtime_loses_nothing_on_either_surface() {
    let running = built_in(&[]).await;
    for surface in [LoadSurface::Execution, LoadSurface::Openwop] {
        let result = run_load(&running.target, &plan(surface), &ProgressBar::hidden())
            .await
            .unwrap();
        let t = &result.totals;
        assert_eq!(
            (
                result.verdict,
                t.lost,
                t.duplicated,
                t.reordered,
                t.after_terminal
            ),
            (LoadVerdict::Pass, 0, 0, 0, 0),
            "{surface:?}: {:#?}",
            result.anomalies
        );
        assert_eq!(t.completed_subscribers, 50);
        assert!(t.expected_deliveries >= 50 * 60, "{surface:?}: {t:?}");
        assert_eq!(t.deliveries, t.expected_deliveries);
        assert!(
            result.connections.resumptions > 0,
            "disconnects were forced"
        );
        assert!(result.latency_ms.count > 0 && !result.latency_histogram.is_empty());
    }
    running.shutdown().await;
}

/// The divergent profile numbers an execution's events 2, 4, 6, … (the protocol asks only for a
/// monotonic sequence) and appends a vendor event after a run's terminal one: the load judges
/// every subscriber against the log as the host wrote it and passes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runtime_numbering_its_logs_another_way_passes() {
    let running = start_built_in(&BuiltInOptions {
        profile: BuiltInProfile::Divergent,
        max_subscribers_per_run: Some(0),
        ..BuiltInOptions::default()
    })
    .await
    .unwrap();
    for surface in [LoadSurface::Execution, LoadSurface::Openwop] {
        let mut plan = plan(surface);
        plan.subscribers = 10;
        let result = run_load(&running.target, &plan, &ProgressBar::hidden())
            .await
            .unwrap();
        assert_eq!(
            result.verdict,
            LoadVerdict::Pass,
            "{surface:?}: {:#?} {:?} {:?}",
            result.anomalies,
            result.not_judged_reasons,
            result.logs
        );
        assert!(result.totals.deliveries >= result.totals.expected_deliveries);
        assert!(result.totals.expected_deliveries >= 10 * 60, "{surface:?}");
        if surface == LoadSurface::Execution {
            // The log is numbered with gaps (else this test proves nothing): its terminal
            // event's sequence is past its count of events.
            let log = &result.logs[0];
            let (terminal, _) = log.terminal.clone().expect("a terminal event");
            assert!(terminal > log.events as u64 && terminal % 2 == 0, "{log:?}");
        }
    }
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runtime_dropping_events_under_load_fails_and_the_gap_is_named() {
    let running = built_in(&["w-drops-event-under-load"]).await;
    for surface in [LoadSurface::Execution, LoadSurface::Openwop] {
        let mut plan = plan(surface);
        plan.disconnect_every = None;
        plan.subscribers = 10;
        let result = run_load(&running.target, &plan, &ProgressBar::hidden())
            .await
            .unwrap();
        assert_eq!(result.verdict, LoadVerdict::Fail, "{surface:?}");
        assert!(result.totals.lost > 0);
        let lost = result
            .anomalies
            .iter()
            .find(|a| a.kind == AnomalyKind::Lost)
            .unwrap();
        assert!(!lost.sequences.is_empty());
        assert!(
            lost.detail
                .contains(&format!("sequence {}", lost.sequences[0])),
            "{}",
            lost.detail
        );
    }
    running.shutdown().await;
}

#[test]
fn the_command_exits_1_and_names_the_gap() {
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_conformance"))
        .args([
            "load",
            "--defect",
            "w-drops-event-under-load",
            "--surface",
            "openwop",
            "--subscribers",
            "5",
            "--events",
            "40",
            "--quiet",
            "--report-dir",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("Lost on "), "{stdout}");
    assert!(stdout.contains("never arrived: sequence "), "{stdout}");
    for file in ["load-openwop.json", "load.html", "load.md"] {
        assert!(dir.path().join(file).is_file(), "{file}");
    }
    let html = std::fs::read_to_string(dir.path().join("load.html")).unwrap();
    assert!(html.contains("<svg") && !html.contains("<script"));
    let result: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("load-openwop.json")).unwrap(),
    )
    .unwrap();
    let schema = harness::load::load_result_schema();
    let validator = spec::schema::compile(&schema).unwrap();
    assert!(
        validator.is_valid(&result),
        "the result follows its published schema"
    );
}

/// The upstream-framing profile reads run ids in paths only percent-encoded and answers its
/// v1 discovery without `OpenWOP-Version`: a load that does not speak to it as the cases do
/// (the probe's negotiated version and path form) cannot follow its runs, one that does
/// passes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_load_speaks_to_the_host_as_the_probe_found_it() {
    let running = start_built_in(&BuiltInOptions {
        profile: BuiltInProfile::UpstreamFraming,
        max_subscribers_per_run: Some(0),
        ..BuiltInOptions::default()
    })
    .await
    .unwrap();
    let unlearned = run_load(&running.target, &learned_plan(), &ProgressBar::hidden()).await;
    assert!(
        !matches!(&unlearned, Ok(result) if result.verdict == LoadVerdict::Pass),
        "the profile is loaded without what the probe learns: the test proves nothing"
    );
    let mut target = running.target.clone();
    assert_loads_once_learned(&mut target, &Default::default()).await;
    running.shutdown().await;
}

/// Five W subscribers on one run.
fn learned_plan() -> LoadPlan {
    let mut plan = plan(LoadSurface::Openwop);
    plan.subscribers = 5;
    plan
}

/// Learns `target` with the operator's facts `told`, then asserts a W load of it passes with
/// every subscriber read to the end.
async fn assert_loads_once_learned(target: &mut Target, told: &harness::run::HostOverrides) {
    harness::load::learn_the_host(target, told).await.unwrap();
    let result = run_load(target, &learned_plan(), &ProgressBar::hidden())
        .await
        .unwrap();
    assert_eq!(
        result.verdict,
        LoadVerdict::Pass,
        "{:#?} {:?}",
        result.anomalies,
        result.not_judged_reasons
    );
    assert_eq!(result.totals.completed_subscribers, 5);
}

/// A host the probe found serving OpenWOP v1 only gets no v2 load: not judged, saying why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_serving_openwop_v1_only_is_told_so_and_not_loaded() {
    let running = built_in(&[]).await;
    let mut target = running.target.clone();
    target
        .capabilities
        .insert(harness::target::HostCapability::ServesOpenwopV1Only);
    let result = run_load(&target, &plan(LoadSurface::Openwop), &ProgressBar::hidden())
        .await
        .unwrap();
    assert_eq!(result.verdict, LoadVerdict::NotJudged);
    assert!(
        result.not_judged_reasons[0].contains("OpenWOP v1 only"),
        "{:?}",
        result.not_judged_reasons
    );
    assert_eq!(result.totals.deliveries, 0);
    running.shutdown().await;
}

/// The operator's facts win over the probe's, as in a run: told that the host reads run ids
/// percent-encoded, the load writes them so (the standard runtime reads both forms).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_operators_facts_win_over_the_probes() {
    let running = built_in(&[]).await;
    let mut told = harness::run::HostOverrides::default();
    told.add_fact("run_id_path_encoding=percent").unwrap();
    let mut target = running.target.clone();
    assert_loads_once_learned(&mut target, &told).await;
    assert_eq!(
        target.facts.get("run_id_path_encoding"),
        Some(&serde_json::json!("percent"))
    );
    running.shutdown().await;
}
