//! The async media queue lifecycle: submit, polls, result, cancel, and their errors.

use mock_provider::Endpoint;
use serde_json::{Value, json};

use crate::support::{CANARY, behaviour, body_for, client, register, send, start};

fn key() -> String {
    format!("Key {CANARY}")
}

async fn get(url: &str) -> (u16, Value) {
    let response = client()
        .get(url)
        .header("authorization", key())
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

async fn put(url: &str) -> (u16, Value) {
    let response = client()
        .put(url)
        .header("authorization", key())
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

async fn submit(providers: &mock_provider::FakeProviders, job: Value) -> (String, Value) {
    let id = register(providers, "media", vec![behaviour(job)]);
    let response = send(
        providers,
        "media",
        &body_for(providers, "media", &id, false),
    )
    .await
    .unwrap();
    assert_eq!(response.status(), 200);
    (id, response.json().await.unwrap())
}

#[tokio::test]
async fn a_job_goes_from_queue_to_result() {
    let providers = start().await;
    let (id, submitted) = submit(
        &providers,
        json!({"kind": "async_job",
               "phases": [{"status": "in_queue", "queue_position": 2},
                          {"status": "in_progress", "logs": ["step 1"]}],
               "result": {"seed": 7},
               "artifacts": [{"uri": "https://cdn.example/a.png", "media_type": "image/png"}]}),
    )
    .await;
    assert_eq!(submitted["status"], "IN_QUEUE");
    assert_eq!(submitted["queue_position"], 2);
    let request_id = submitted["request_id"].as_str().unwrap();
    let status_url = submitted["status_url"].as_str().unwrap();
    let response_url = submitted["response_url"].as_str().unwrap();
    assert!(status_url.ends_with(&format!("/media/requests/{request_id}/status")));

    let (status, early) = get(response_url).await;
    assert_eq!(
        (status, early["detail"].as_str()),
        (400, Some("Request is still in progress"))
    );
    assert_eq!(
        get(status_url).await,
        (
            202,
            json!({"status": "IN_QUEUE", "queue_position": 2, "response_url": response_url})
        )
    );
    let (status, progress) = get(&format!("{status_url}?logs=1")).await;
    assert_eq!(
        (status, progress["status"].as_str()),
        (202, Some("IN_PROGRESS"))
    );
    assert_eq!(progress["logs"][0]["message"], "step 1");
    let (status, done) = get(status_url).await;
    assert_eq!((status, done["status"].as_str()), (200, Some("COMPLETED")));
    assert!(done.get("error").is_none());
    assert_eq!(
        get(response_url).await,
        (
            200,
            json!({"seed": 7, "images": [{"url": "https://cdn.example/a.png", "content_type": "image/png"}]})
        )
    );
    assert_eq!(
        put(submitted["cancel_url"].as_str().unwrap()).await,
        (400, json!({"status": "ALREADY_COMPLETED"}))
    );

    let endpoints: Vec<(Endpoint, Option<u32>)> = providers
        .calls(&id)
        .iter()
        .map(|call| (call.endpoint, call.call_index))
        .collect();
    assert_eq!(endpoints.len(), 7);
    assert!(endpoints.iter().all(|(_, index)| *index == Some(1)));
    assert_eq!(endpoints[0].0, Endpoint::QueueSubmit);
    assert_eq!(providers.call_count(&id, "media"), 1, "polls are not calls");
}

#[tokio::test]
async fn a_queued_job_can_be_cancelled() {
    let providers = start().await;
    let (_, submitted) = submit(
        &providers,
        json!({"kind": "async_job", "phases": [{"status": "in_queue", "queue_position": 0}]}),
    )
    .await;
    let cancel_url = submitted["cancel_url"].as_str().unwrap();
    assert_eq!(
        put(cancel_url).await,
        (202, json!({"status": "CANCELLATION_REQUESTED"}))
    );
    let (status, after) = get(submitted["status_url"].as_str().unwrap()).await;
    assert_eq!(
        (status, after["error_type"].as_str()),
        (200, Some("request_cancelled"))
    );
    let (status, _) = get(submitted["response_url"].as_str().unwrap()).await;
    assert_eq!(status, 400);
}

#[tokio::test]
async fn a_failed_job_reports_its_error() {
    let providers = start().await;
    let (_, submitted) = submit(
        &providers,
        json!({"kind": "async_job",
               "failure": {"message": "runner went away", "error_type": "runner_disconnected"}}),
    )
    .await;
    let (status, done) = get(submitted["status_url"].as_str().unwrap()).await;
    assert_eq!(status, 200);
    assert_eq!(done["status"], "COMPLETED");
    assert_eq!(done["error_type"], "runner_disconnected");
    let response = client()
        .get(submitted["response_url"].as_str().unwrap())
        .header("authorization", key())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 500);
    assert_eq!(
        response.headers()["x-fal-error-type"],
        "runner_disconnected"
    );
}

#[tokio::test]
async fn polls_need_the_key_and_a_known_job() {
    let providers = start().await;
    let (_, submitted) = submit(&providers, json!({"kind": "async_job"})).await;
    let status_url = submitted["status_url"].as_str().unwrap();
    let anonymous = client().get(status_url).send().await.unwrap();
    assert_eq!(anonymous.status(), 401);
    let base = providers.base_url("media").unwrap();
    let (status, body) = get(&format!("{base}/requests/no-such-job/status")).await;
    assert_eq!(
        (status, body),
        (404, json!({"detail": "Request not found"}))
    );
}
