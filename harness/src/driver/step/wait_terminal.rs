//! The `wait_terminal` action: poll a run (an execution) until its status is terminal, and
//! (`settled`, surface W) until its log stops growing.

use std::collections::BTreeMap;

use serde_json::json;

use super::context::StepContext;
use crate::case::{CaseSurface, JsonExpect, Principal, RequestSpec, WaitTerminalSpec};
use crate::driver::http::ReadMode;
use crate::template::TemplateError;
use crate::transcript::StepRecord;

/// Waits for the terminal status (and the settled log).
pub(crate) async fn run(
    cx: &StepContext<'_>,
    wait: &WaitTerminalSpec,
) -> Result<StepRecord, TemplateError> {
    let id = cx.scope.interpolate(&wait.id)?;
    let (path, terminal) = match cx.surface {
        CaseSurface::Execution => (
            format!("/v1/executions/{id}"),
            json!(spec::execution::ExecutionStatus::TERMINAL.map(|s| s.as_str())),
        ),
        CaseSurface::Openwop => (
            format!("/runs/{}", cx.scope.run_id_path_encoding().encode(&id)),
            json!(spec::openwop::RunStatus::TERMINAL.map(|s| s.as_str())),
        ),
    };
    let request = RequestSpec {
        method: "GET".into(),
        path,
        query: BTreeMap::new(),
        headers: BTreeMap::new(),
        auth: None,
        json: None,
        body: None,
        body_filler_bytes: None,
    };
    let until = JsonExpect {
        pointer: "/status".into(),
        one_of: terminal.as_array().cloned(),
        ..JsonExpect::default()
    };
    let (mut exchanges, completed) = cx.poll(&request, &until, None).await?;
    let mut completed = completed;
    if completed && wait.settled == Some(true) && cx.surface == CaseSurface::Openwop {
        let log = RequestSpec {
            path: format!("{}/events/poll", request.path),
            ..request.clone()
        };
        completed = cx.settle(&log, &mut exchanges).await?;
        // The step's last response is the snapshot again, as without it.
        let snapshot = cx.prepare(&request, Principal::A)?;
        exchanges.push(
            cx.driver
                .exchange(snapshot, ReadMode::Whole, cx.deadline, cx.started)
                .await,
        );
    }
    Ok(cx.record("wait_terminal", exchanges, completed))
}
