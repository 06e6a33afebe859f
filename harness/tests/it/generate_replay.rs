//! A generated input that failed is reported as it failed when its replay cannot be judged: a
//! host that fails an input and then stops answering (the replay cut short by the case's
//! budget) is charged with the failure it showed, never called flaky, as if the replay had
//! passed.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use harness::case::lint_case;
use harness::run::Limits;
use harness::verdict::Verdict;
use serde_json::json;
use tokio::io::AsyncWriteExt;

use super::raw_host::{json_response, judge_on, serving};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_input_whose_replay_is_cut_short_is_charged_as_it_failed() {
    let asked = Arc::new(AtomicUsize::new(0));
    let host = {
        let asked = asked.clone();
        serving(move |_path, mut socket| {
            let first = asked.fetch_add(1, Ordering::SeqCst) == 0;
            async move {
                if first {
                    let body = json!({"error": "validation_error", "message": "no"}).to_string();
                    let _ = socket
                        .write_all(json_response("400 Bad Request", "", &body).as_bytes())
                        .await;
                } else {
                    // Every later request is held without an answer past the case's budget.
                    tokio::time::sleep(Duration::from_secs(30)).await;
                }
            }
        })
        .await
    };
    let case = json!({
        "id": "w.generate.replay-probe", "title": "replay", "requirements": ["events.resume.no-refusal-for-unknown-sequence"],
        "level": "MUST", "surface": "openwop", "timeout_ms": 2000,
        "steps": [{"generate": {"strategy": "safe_well_formed_cursor", "var": "cursor", "cases": 2, "steps": [
            {"request": {"path": "/runs/r1/events/poll", "query": {"afterSequence": "${var.cursor}"}},
             "expect": [{"status": 200}]}
        ]}}]
    });
    let case = lint_case("replay.json", case.to_string().as_bytes())
        .unwrap()
        .case;
    let (verdict, execution) = judge_on(&case, host, Limits::default()).await;
    assert_eq!(verdict, Verdict::Fail, "{execution:#?}");
    let generate = execution
        .checks
        .iter()
        .find(|c| c.check == "generate")
        .unwrap_or_else(|| panic!("{execution:#?}"));
    assert!(
        generate
            .message
            .contains("status 400 where 200 was expected")
            && generate
                .message
                .contains("its replay, recorded here, was not judged")
            && !generate.message.contains("flaky"),
        "{}",
        generate.message
    );
}
