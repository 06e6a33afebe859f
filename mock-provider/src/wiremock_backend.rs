//! Serves plans from a wiremock `MockServer`.
//!
//! wiremock answers with a `ResponseTemplate` (whole body, optional delay) or, for a mock built
//! with `respond_with_err`, drops the connection. One request must go either way, so two mocks
//! are mounted: the first one's matcher runs the dispatch, matches (→ reset) when the plan is a
//! reset, and otherwise parks the plan in a slot that the second mock's responder takes.
//! wiremock holds its state's write lock while it matches and builds the template of one
//! request, so no other request can touch the slot in between.

use std::net::TcpListener;
use std::sync::{Arc, Mutex, PoisonError};

use wiremock::matchers::any;
use wiremock::{Match, Mock, MockServer, Request, Respond, ResponseTemplate};

use crate::config::Backend;
use crate::dispatch::{IncomingRequest, ProviderState};
use crate::plan::{PlanAction, ResponsePlan};

type Slot = Arc<Mutex<Option<ResponsePlan>>>;

fn incoming(request: &Request) -> IncomingRequest {
    IncomingRequest {
        method: request.method.as_str().to_owned(),
        path: request.url.path().to_owned(),
        query: request.url.query().map(str::to_owned),
        headers: request
            .headers
            .iter()
            .map(|(name, value)| {
                (
                    name.as_str().to_ascii_lowercase(),
                    String::from_utf8_lossy(value.as_bytes()).into_owned(),
                )
            })
            .collect(),
        body: request.body.clone().into(),
    }
}

/// Runs the dispatch; matches when the answer is a connection reset.
struct DispatchMatcher {
    state: Arc<ProviderState>,
    slot: Slot,
}

impl Match for DispatchMatcher {
    fn matches(&self, request: &Request) -> bool {
        let plan = self.state.handle(&incoming(request), Backend::Wiremock);
        if matches!(plan.action, PlanAction::ResetConnection) {
            return true;
        }
        *self.slot.lock().unwrap_or_else(PoisonError::into_inner) = Some(plan);
        false
    }
}

/// Serves the plan the matcher parked.
struct PlannedResponder {
    slot: Slot,
}

impl Respond for PlannedResponder {
    fn respond(&self, _request: &Request) -> ResponseTemplate {
        let plan = self
            .slot
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let Some(ResponsePlan {
            delay_before_headers,
            action: PlanAction::Respond(response),
        }) = plan
        else {
            return ResponseTemplate::new(500)
                .set_body_string("mock-provider: internal error: no planned response");
        };
        let body = response.concatenated_body();
        let mut template = ResponseTemplate::new(response.status);
        for (name, value) in &response.headers {
            template = template.append_header(name.as_str(), value.as_str());
        }
        template = template.set_body_bytes(body);
        if !delay_before_headers.is_zero() {
            template = template.set_delay(delay_before_headers);
        }
        template
    }
}

/// Starts the wiremock server on `listener` with the dispatch mounted.
pub(crate) async fn start(listener: TcpListener, state: Arc<ProviderState>) -> MockServer {
    let server = MockServer::builder()
        .listener(listener)
        .disable_request_recording()
        .start()
        .await;
    let slot: Slot = Arc::new(Mutex::new(None));
    Mock::given(DispatchMatcher {
        state,
        slot: slot.clone(),
    })
    .respond_with_err(|_: &Request| std::io::Error::from(std::io::ErrorKind::ConnectionReset))
    .with_priority(1)
    .named("mock-provider dispatch (reset)")
    .mount(&server)
    .await;
    Mock::given(any())
        .respond_with(PlannedResponder { slot })
        .with_priority(2)
        .named("mock-provider dispatch (respond)")
        .mount(&server)
        .await;
    server
}
