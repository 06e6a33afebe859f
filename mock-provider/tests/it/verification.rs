//! Recording and verification: what was received, and errors that list it without secrets.

use mock_provider::{Endpoint, VerificationError, marker};
use serde_json::json;

use crate::support::{CANARY, behaviour, client, openai_body, register, send, start};

#[tokio::test]
async fn calls_record_credential_headers_body_and_order() {
    let providers = start().await;
    let id = register(
        &providers,
        "openai-primary",
        vec![
            behaviour(json!({"kind": "http_error", "error": "service_unavailable"})),
            behaviour(json!({"kind": "completion"})),
        ],
    );
    let body = openai_body(&id, false, false);
    send(&providers, "openai-primary", &body).await.unwrap();
    send(&providers, "openai-primary", &body).await.unwrap();

    let calls = providers.calls(&id);
    assert_eq!(calls.len(), 2);
    let indexes: Vec<Option<u32>> = calls.iter().map(|call| call.call_index).collect();
    assert_eq!(indexes, [Some(1), Some(2)]);
    let statuses: Vec<Option<u16>> = calls.iter().map(|call| call.response_status).collect();
    assert_eq!(statuses, [Some(503), Some(200)]);
    let first = &calls[0];
    assert_eq!(first.instance, "openai-primary");
    assert_eq!(first.endpoint, Endpoint::ChatCompletions);
    assert_eq!(first.method, "POST");
    assert_eq!(first.path, "/openai-primary/v1/chat/completions");
    assert_eq!(first.credential.as_deref(), Some(CANARY));
    assert!(first.credential_is_canary);
    assert_eq!(
        first.header("authorization"),
        Some(format!("Bearer {CANARY}").as_str())
    );
    assert_eq!(first.body_json(), Some(body));
    assert!(calls[0].sequence < calls[1].sequence);
    assert!(calls[0].received_instant <= calls[1].received_instant);
    assert_eq!(providers.call_count(&id, "openai-primary"), 2);
    assert_eq!(providers.call_count(&id, "anthropic-secondary"), 0);
}

#[tokio::test]
async fn verification_errors_list_the_requests_without_secrets() {
    let providers = start().await;
    let id = register(
        &providers,
        "openai-primary",
        vec![behaviour(json!({"kind": "completion"}))],
    );
    assert!(providers.assert_never_called(&id).is_ok());
    assert!(
        providers
            .assert_called_exactly(&id, "openai-primary", 0)
            .is_ok()
    );

    // A host that leaks the key into the prompt: the listing must still not show it.
    let mut body = openai_body(&id, false, false);
    body["messages"][0]["content"] = json!(format!("Say hi. {} key={CANARY}", marker(&id)));
    send(&providers, "openai-primary", &body).await.unwrap();

    let error = providers
        .assert_called_exactly(&id, "openai-primary", 2)
        .expect_err("one call is not two");
    assert!(matches!(
        error,
        VerificationError::CallCount {
            expected: 2,
            actual: 1,
            ..
        }
    ));
    let message = error.to_string();
    assert!(message.contains("expected 2 call(s), got 1"), "{message}");
    assert!(
        message.contains("/openai-primary/v1/chat/completions"),
        "{message}"
    );
    assert!(message.contains("credential=canary"), "{message}");
    assert!(!message.contains(CANARY), "{message}");

    let error = providers
        .assert_never_called(&id)
        .expect_err("it was called");
    assert!(!error.to_string().contains(CANARY));
    let debug = format!("{:?}", providers.calls(&id));
    assert!(!debug.contains(CANARY), "{debug}");
}

#[tokio::test]
async fn forget_drops_a_script_and_its_records() {
    let providers = start().await;
    let id = register(
        &providers,
        "openai-primary",
        vec![behaviour(json!({"kind": "completion"}))],
    );
    send(
        &providers,
        "openai-primary",
        &openai_body(&id, false, false),
    )
    .await
    .unwrap();
    assert!(providers.forget(&id));
    assert!(providers.calls(&id).is_empty());
    let response = send(
        &providers,
        "openai-primary",
        &openai_body(&id, false, false),
    )
    .await
    .unwrap();
    assert_eq!(response.status(), 400, "a forgotten script is unknown");
    assert!(!providers.forget("never-registered"));
}

#[tokio::test]
async fn requests_without_a_script_are_recorded_as_unmatched() {
    let providers = start().await;
    let url = format!(
        "{}/nowhere/v1/chat/completions",
        providers.base_url("openai-primary").unwrap()
    );
    let response = client()
        .post(url)
        .bearer_auth(CANARY)
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);
    let unmatched = providers.unmatched_calls();
    assert_eq!(unmatched.len(), 1);
    assert_eq!(unmatched[0].endpoint, Endpoint::Unknown);
    assert_eq!(unmatched[0].instance, "openai-primary");
}

#[tokio::test]
async fn a_model_scoped_key_plays_the_calls_naming_that_model_with_its_own_counter() {
    // One provider, two models, two lists: what a one-provider host with fallback between its
    // models sees.
    let providers = start().await;
    let id = crate::support::unique_id("scoped");
    let failing = behaviour(json!({"kind": "http_error", "error": "service_unavailable"}));
    let completing = behaviour(json!({"kind": "completion"}));
    providers
        .register(mock_provider::Script {
            id: id.clone(),
            calls: [
                ("openai-primary@gpt-a".to_owned(), vec![failing]),
                ("openai-primary".to_owned(), vec![completing]),
            ]
            .into_iter()
            .collect(),
        })
        .expect("script registers");
    let mut body = openai_body(&id, false, false);
    body["model"] = json!("gpt-a");
    let first = send(&providers, "openai-primary", &body).await.unwrap();
    body["model"] = json!("gpt-b");
    let second = send(&providers, "openai-primary", &body).await.unwrap();

    assert_eq!(first.status(), 503);
    assert_eq!(second.status(), 200);
    let calls = providers.calls(&id);
    let keys: Vec<Option<&str>> = calls.iter().map(|c| c.script_key.as_deref()).collect();
    assert_eq!(keys, [Some("openai-primary@gpt-a"), Some("openai-primary")]);
    let indexes: Vec<Option<u32>> = calls.iter().map(|call| call.call_index).collect();
    assert_eq!(indexes, [Some(1), Some(1)]);
    assert_eq!(providers.call_count(&id, "openai-primary"), 2);
}

#[tokio::test]
async fn a_model_scoped_key_of_an_unknown_instance_is_refused() {
    let providers = start().await;
    let refused = providers.register(mock_provider::Script {
        id: crate::support::unique_id("scoped-unknown"),
        calls: [(
            "nowhere@gpt-a".to_owned(),
            vec![behaviour(json!({"kind": "completion"}))],
        )]
        .into_iter()
        .collect(),
    });
    assert!(refused.is_err());
}

#[tokio::test]
async fn text_paths_are_served_with_and_without_the_v1_segment() {
    let providers = start().await;
    let id = register(
        &providers,
        "openai-primary",
        vec![
            behaviour(json!({"kind": "completion"})),
            behaviour(json!({"kind": "completion"})),
        ],
    );
    let base = providers.base_url("openai-primary").unwrap();
    for path in ["/v1/chat/completions", "/chat/completions"] {
        let response = client()
            .post(format!("{base}{path}"))
            .bearer_auth(CANARY)
            .json(&openai_body(&id, false, false))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{path}");
    }
    assert_eq!(providers.call_count(&id, "openai-primary"), 2);
    assert!(providers.unmatched_calls().is_empty());
}

#[tokio::test]
async fn a_scripts_request_to_a_wrong_path_is_attributed_to_it_without_being_a_call() {
    let providers = start().await;
    let id = register(
        &providers,
        "openai-primary",
        vec![behaviour(json!({"kind": "completion"}))],
    );
    let base = providers.base_url("openai-primary").unwrap();
    let response = client()
        .post(format!("{base}/wrong/v1/chat/completions"))
        .bearer_auth(CANARY)
        .json(&openai_body(&id, false, false))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);
    assert_eq!(providers.call_count(&id, "openai-primary"), 0);
    let calls = providers.calls(&id);
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].endpoint, Endpoint::Unknown);
    assert_eq!(calls[0].call_index, None);
    assert_eq!(calls[0].path, "/openai-primary/wrong/v1/chat/completions");
    assert_eq!(providers.unmatched_calls().len(), 1);
    assert_eq!(
        mock_provider::ProviderKind::OpenaiResponses.paths(),
        ["POST /v1/responses"]
    );
    let _ = marker(&id);
}
