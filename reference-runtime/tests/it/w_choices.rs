//! The surface-W host choices (`[openwop.choices]`) take effect: a host configured with the
//! other option at each open point does what that option says (the tolerance matrix then shows
//! the corpus accepts it).

use reference_runtime::openwop::OpenWopConfig;
use reference_runtime::{
    AfterTerminalEvents, CancelledPayload, CursorRange, EmptyLastEventId, EnvelopeFields,
    ErrorDetails, EventIdForm, FixtureNodeIds, HostChannelAddress, InterruptIdForm,
    MockProviderSeat, PollForeignParameters, PollPage, RunIdPathForms, StreamValidationOrder,
    UsageCurrency,
};
use serde_json::{Value, json};

use super::w_host::{KEY_A, host_with, run_path};

fn other_options() -> OpenWopConfig {
    let mut config = OpenWopConfig::default();
    let choices = &mut config.choices;
    choices.event_id_form = EventIdForm::Dotted;
    choices.interrupt_id_form = InterruptIdForm::Dotted;
    choices.envelope_fields = EnvelopeFields::WithEngineVersion;
    choices.cancelled_payload = CancelledPayload::AsRequested;
    choices.stream_validation = StreamValidationOrder::BufferFirst;
    choices.after_terminal = AfterTerminalEvents::VendorEvent;
    choices.host_channel = HostChannelAddress::Declared;
    choices.usage_currency = UsageCurrency::Omitted;
    choices.error_details = ErrorDetails::Annotated;
    config
}

#[tokio::test]
async fn events_take_the_other_id_form_and_optional_fields() {
    let host = host_with(other_options(), &[]).await;
    let run = host.create_fixture("conformance-noop").await;
    let log = host.wait_for(&run, "example.run-archived").await;
    for event in &log {
        assert!(
            event["eventId"].as_str().unwrap().starts_with("E."),
            "{event}"
        );
        assert_eq!(event["engineVersion"], 1, "{event}");
    }
    let types: Vec<&str> = log.iter().filter_map(|e| e["type"].as_str()).collect();
    let completed = types.iter().position(|t| *t == "run.completed").unwrap();
    assert_eq!(types[completed + 1..], ["example.run-archived"]);
    // That poll was the first of the finished run: every later reading also holds the event the
    // host appends once it was answered.
    let again = host.poll(&run, "").await;
    let types: Vec<&str> = again["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["type"].as_str())
        .collect();
    assert_eq!(
        types[completed + 1..],
        ["example.run-archived", "example.run-indexed"]
    );
    assert_eq!(
        again["lastSequence"],
        again["events"][types.len() - 1]["sequence"]
    );
}

#[tokio::test]
async fn interrupt_ids_and_cancelled_payloads_take_the_other_option() {
    let host = host_with(other_options(), &[]).await;
    let run = host.create_fixture("conformance-approval").await;
    let log = host.wait_for(&run, "node.suspended").await;
    let suspended = log.iter().find(|e| e["type"] == "node.suspended").unwrap();
    let interrupt = log
        .iter()
        .find_map(|e| e["payload"]["interruptId"].as_str())
        .unwrap_or_else(|| panic!("no interruptId: {suspended}"));
    assert!(interrupt.starts_with("tenant-a/gate."), "{interrupt}");

    let cancellable = host
        .create(json!({"workflowId": "conformance-cancellable", "inputs": {"delayMs": 30000}}))
        .await;
    host.wait_for(&cancellable, "node.started").await;
    let answer = host
        .post(
            &format!("{}/cancel", run_path(&cancellable)),
            Some(KEY_A),
            &json!({}),
        )
        .await;
    assert_eq!(answer.status(), 200);
    let log = host.finished_log(&cancellable).await;
    let cancelled = log.iter().find(|e| e["type"] == "run.cancelled").unwrap();
    let payload = cancelled["payload"].as_object().unwrap();
    assert!(!payload.contains_key("reason"), "{cancelled}");
    assert!(!payload.contains_key("cancelledBy"), "{cancelled}");
}

#[tokio::test]
async fn discovery_declares_the_channel_it_serves_and_no_currency() {
    let host = host_with(other_options(), &[]).await;
    let discovery: Value = host
        .get("/.well-known/openwop", None, &[])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(discovery["heartbeat"]["deliveryChannel"], "/host/channel");
    assert!(discovery["providerUsage"].get("currency").is_none());
    let channel = host.get("/host/channel", Some(KEY_A), &[]).await;
    assert_eq!(channel.status(), 200);
    assert!(
        channel.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    drop(channel);
    assert_eq!(
        host.get("/host/events", Some(KEY_A), &[]).await.status(),
        404
    );
}

#[tokio::test]
async fn errors_carry_a_host_reference_and_buffer_ms_is_checked_first() {
    let host = host_with(other_options(), &[]).await;
    let run = host.create_fixture("conformance-noop").await;
    host.finished_log(&run).await;
    let refused = host
        .stream(&run, "?streamMode=nonsense&bufferMs=9999", &[])
        .await;
    assert_eq!(refused.status(), 400);
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error"], "validation_error", "{body}");
    assert!(body["details"]["hostReference"].is_string(), "{body}");
    let refused = host.stream(&run, "?streamMode=nonsense", &[]).await;
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error"], "unsupported_stream_mode", "{body}");
    assert!(body["details"]["supported"].is_array(), "{body}");
    assert!(body["details"]["hostReference"].is_string(), "{body}");
}

/// The definition a host serves at `GET /workflows/{workflowId}` (asserts 200).
async fn served_definition(host: &super::w_host::Host, workflow_id: &str) -> Value {
    let response = host
        .get(&format!("/workflows/{workflow_id}"), Some(KEY_A), &[])
        .await;
    assert_eq!(response.status(), 200);
    response.json().await.unwrap()
}

#[tokio::test]
async fn envelope_fixtures_name_their_mock_nodes_as_the_chosen_catalogue_edition_does() {
    // The transcribed edition (upstream at 75b28328): one shared node id, no budget configured.
    let shared = host_with(OpenWopConfig::default(), &[]).await;
    let definition = served_definition(&shared, "conformance-envelope-retry-attempted").await;
    assert_eq!(definition["nodes"][0]["id"], "structured-call");
    assert!(definition["nodes"][0]["config"]["maxTokens"].is_null());
    let unknown = shared
        .get("/workflows/no-such-workflow", Some(KEY_A), &[])
        .await;
    assert_eq!(unknown.status(), 404);
    // The per-fixture edition: the node the definition names is the one the mock seam programs.
    let mut config = OpenWopConfig::default();
    config.choices.fixture_node_ids = FixtureNodeIds::PerFixture;
    let host = host_with(config, &[]).await;
    let definition = served_definition(&host, "conformance-envelope-retry-attempted").await;
    let node = definition["nodes"][0]["id"].as_str().unwrap().to_string();
    assert_eq!(node, "retry-attempted-structured-call");
    assert_eq!(definition["nodes"][0]["config"]["maxTokens"], 256);
    let programmed = host
        .post(
            "/conformance/seams/sample/test/mock-ai/program",
            Some(KEY_A),
            &json!({"nodeId": node, "program": [{"stopReason": "end_turn", "content": "{\"valid\": true}"}]}),
        )
        .await;
    assert_eq!(programmed.status(), 200);
    let run = host
        .create_fixture("conformance-envelope-retry-attempted")
        .await;
    let log = host.finished_log(&run).await;
    let started: Vec<&Value> = log.iter().filter(|e| e["type"] == "node.started").collect();
    assert_eq!(started.len(), 1);
    assert_eq!(started[0]["payload"]["nodeId"], node.as_str());
    assert_eq!(log.last().unwrap()["type"], "run.completed", "{log:#?}");
    let budget: Value = host
        .get(
            &format!("/conformance/seams/sample/test/mock-ai/last-dispatch-budget?nodeId={node}"),
            Some(KEY_A),
            &[],
        )
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(budget["maxTokens"], 256);
}

#[tokio::test]
async fn a_poll_pages_refuses_foreign_parameters_and_reads_safe_integer_cursors_on_poll_and_stream()
{
    let mut config = OpenWopConfig::default();
    config.choices.poll_page = PollPage::FourEvents;
    config.choices.poll_foreign_parameters = PollForeignParameters::Refused;
    config.choices.cursor_range = CursorRange::SafeInteger;
    let host = host_with(config, &[]).await;
    let run = host.create_fixture("conformance-multi-node").await;
    // Read on from each page's last event until the pages reach lastSequence.
    let mut log: Vec<Value> = Vec::new();
    let mut query = "timeout=60".to_string();
    loop {
        let page = host.poll(&run, &query).await;
        let events = page["events"].as_array().unwrap();
        assert!(events.len() <= 4, "{page}");
        log.extend(events.iter().cloned());
        let reached = log.last().map_or(-1, |e| e["sequence"].as_i64().unwrap());
        if page["isTerminal"] == true && reached == page["lastSequence"].as_i64().unwrap() {
            break;
        }
        query = format!("afterSequence={reached}&timeout=60");
    }
    let sequences: Vec<i64> = log
        .iter()
        .map(|e| e["sequence"].as_i64().unwrap())
        .collect();
    assert_eq!(sequences, (0..sequences.len() as i64).collect::<Vec<_>>());
    assert!(sequences.len() > 4, "{sequences:?}");
    for query in [
        "lastSequence=1",
        "since=1",
        "afterSequence=9007199254740992",
    ] {
        let response = host
            .get(
                &format!("{}/events/poll?{query}", run_path(&run)),
                Some(KEY_A),
                &[],
            )
            .await;
        assert_eq!(response.status(), 400, "{query}");
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["error"], "validation_error", "{query}: {body}");
    }
    let at_bound = host.poll(&run, "afterSequence=9007199254740991").await;
    assert_eq!(at_bound["events"], json!([]));
    // The same range on a stream's Last-Event-ID: past it 400, at it a resumption past the end.
    let events = format!("{}/events", run_path(&run));
    let beyond = host
        .get(
            &events,
            Some(KEY_A),
            &[("last-event-id", "18446744073709551615")],
        )
        .await;
    assert_eq!(beyond.status(), 400);
    let body: Value = beyond.json().await.unwrap();
    assert_eq!(body["error"], "validation_error", "{body}");
    let at_bound = host
        .get(
            &events,
            Some(KEY_A),
            &[("last-event-id", "9007199254740991")],
        )
        .await;
    assert_eq!(at_bound.status(), 200);
    assert!(!at_bound.text().await.unwrap().contains("data:"));
}

#[tokio::test]
async fn an_empty_last_event_id_is_refused_or_read_as_none_as_the_choice_says() {
    for (choice, status) in [
        (EmptyLastEventId::Refused, 400),
        (EmptyLastEventId::AsAbsent, 200),
    ] {
        let mut config = OpenWopConfig::default();
        config.choices.empty_last_event_id = choice;
        let host = host_with(config, &[]).await;
        let run = host.create_fixture("conformance-noop").await;
        host.finished_log(&run).await;
        let events = format!("{}/events", run_path(&run));
        let empty = host
            .get(&events, Some(KEY_A), &[("last-event-id", "")])
            .await;
        assert_eq!(empty.status(), status, "{choice:?}");
        let body = empty.text().await.unwrap();
        if status == 200 {
            let whole = host.get(&events, Some(KEY_A), &[]).await;
            assert_eq!(
                body,
                whole.text().await.unwrap(),
                "the whole log, as without a cursor"
            );
        } else {
            assert!(body.contains("validation_error"), "{body}");
        }
    }
}

#[tokio::test]
async fn a_run_id_is_read_and_written_in_the_path_forms_the_choice_says() {
    for (choice, tilde_status) in [
        (RunIdPathForms::Both, 200),
        (RunIdPathForms::PercentOnly, 404),
    ] {
        let mut config = OpenWopConfig::default();
        config.choices.run_id_path_forms = choice;
        let host = host_with(config, &[]).await;
        let created = host
            .post(
                "/runs",
                Some(KEY_A),
                &json!({"workflowId": "conformance-noop"}),
            )
            .await;
        let created: Value = created.json().await.unwrap();
        let run = created["runId"].as_str().unwrap().to_string();
        let tilde = host.get(&run_path(&run), Some(KEY_A), &[]).await;
        assert_eq!(tilde.status(), tilde_status, "{choice:?}");
        let percent = format!("/runs/{}", run.replace('/', "%2F"));
        let percent = host.get(&percent, Some(KEY_A), &[]).await;
        assert_eq!(percent.status(), 200, "{choice:?}");
        let written = created["eventsUrl"].as_str().unwrap();
        let form = if choice == RunIdPathForms::PercentOnly {
            "%2F"
        } else {
            "~2F"
        };
        assert!(written.contains(form), "{choice:?}: {written}");
    }
}

#[tokio::test]
async fn the_mock_provider_is_read_at_the_seats_the_choice_says() {
    let mock = json!({"id": "stream-text", "config": {"tokens": ["a", "b"]}});
    let suite = json!({"workflowId": "conformance-stream-text",
                       "configurable": {"mockProvider": mock.clone()}});
    let schema = json!({"workflowId": "conformance-stream-text",
                        "configurable": {"version": 1, "ai": {"mockProvider": mock}}});
    for (choice, suite_status) in [
        (MockProviderSeat::Both, 201),
        (MockProviderSeat::SchemaOnly, 400),
    ] {
        let mut config = OpenWopConfig::default();
        config.choices.mock_provider_seat = choice;
        let host = host_with(config, &[]).await;
        let refused = host.post("/runs", Some(KEY_A), &suite).await;
        assert_eq!(refused.status(), suite_status, "{choice:?}");
        if suite_status == 400 {
            let body: Value = refused.json().await.unwrap();
            assert_eq!(body["error"], "validation_error", "{choice:?}: {body}");
        }
        let taken = host.post("/runs", Some(KEY_A), &schema).await;
        assert_eq!(taken.status(), 201, "{choice:?}");
    }
}
