//! REST hooks end to end, over real sockets: Zapier's calls (subscribe, list, unsubscribe)
//! against the server, with its worker posting each event to a mock target as the lead
//! webhooks do; a target that answers `410 Gone` is unsubscribed; another project's key
//! neither sees nor receives a project's hooks.

use std::time::Duration;

use leadtrack_core::project::NewProject;
use leadtrack_platforms::testkit::{MockPlatform, MockResponse};
use leadtrack_server::testkit::{Parts, TestApp, spawn_app};
use serde_json::{Value, json};

/// `method` on `path` with `key`, and `body` as JSON when given: the status and JSON answer.
async fn call(
    app: &TestApp,
    key: &str,
    (method, path): (&str, &str),
    body: Option<Value>,
) -> (u16, Value) {
    let http = reqwest::Client::new();
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let mut request = http
        .request(method, format!("{}{path}", app.base_url))
        .header("x-api-key", key);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

async fn subscribe(app: &TestApp, key: &str, url: String, event: &str) -> Value {
    let body = json!({"targetUrl": url, "event": event});
    let (status, hook) = call(app, key, ("POST", "/api/hooks"), Some(body)).await;
    assert_eq!(status, 201, "{hook}");
    hook
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscribed_target_hears_its_event_signed_and_410_unsubscribes() {
    let parts = Parts {
        project: "zap",
        worker: true,
        ..Parts::default()
    };
    let app = spawn_app(parts).await;
    let new = NewProject {
        public_id: Some("other".into()),
        name: "Other".into(),
        currency: None,
    };
    let other = app
        .store
        .create_project(new, chrono::Utc::now())
        .await
        .unwrap();
    let other_key = app
        .store
        .issue_api_key(other.id, chrono::Utc::now())
        .await
        .unwrap()
        .key;

    let zapier = MockPlatform::start(MockResponse::json(200, json!({"status": "success"}))).await;
    let gone = MockPlatform::start(MockResponse::empty(410)).await;
    let elsewhere = MockPlatform::start(MockResponse::empty(200)).await;
    let hook = subscribe(
        &app,
        &app.api_key,
        format!("{}/hooks/1", zapier.url()),
        "lead.created",
    )
    .await;
    subscribe(
        &app,
        &app.api_key,
        format!("{}/hooks/2", gone.url()),
        "lead.created",
    )
    .await;
    subscribe(
        &app,
        &other_key,
        format!("{}/hooks/3", elsewhere.url()),
        "lead.created",
    )
    .await;
    let (_, listed) = call(&app, &other_key, ("GET", "/api/hooks"), None).await;
    assert_eq!(
        listed["hooks"].as_array().unwrap().len(),
        1,
        "only its own: {listed}"
    );

    let lead =
        json!({"projectId": "zap", "userData": {"email": "ada@example.com", "firstName": "Ada"}});
    let (status, created) = call(
        &app,
        &app.api_key,
        ("POST", "/api/leads/createServerSideLead"),
        Some(lead),
    )
    .await;
    assert_eq!(status, 201);
    let heard = zapier.wait_for(1, Duration::from_secs(10)).await;
    heard[0].assert_signed(hook["secret"].as_str().unwrap());
    let body = heard[0].json();
    assert_eq!(
        (&body["type"], &body["projectId"]),
        (&json!("lead.created"), &json!("zap"))
    );
    assert_eq!(body["lead"]["id"], created["leadId"]);
    assert_eq!(body["lead"]["email"], "ada@example.com");
    assert_eq!(heard[0].header("x-leadtrack-event"), body["id"].as_str());

    gone.wait_for(1, Duration::from_secs(10)).await;
    app.queues_drained().await;
    let (_, listed) = call(&app, &app.api_key, ("GET", "/api/hooks"), None).await;
    let ids: Vec<&Value> = listed["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| &h["id"])
        .collect();
    assert_eq!(
        ids,
        [&hook["id"]],
        "the target that answered 410 is unsubscribed"
    );
    assert!(
        elsewhere.requests().is_empty(),
        "another project's hook hears nothing"
    );

    let path = format!("/api/hooks/{}", hook["id"].as_str().unwrap());
    let (status, _) = call(&app, &other_key, ("DELETE", &path), None).await;
    assert_eq!(status, 404, "another project's key cannot delete it");
    let (status, _) = call(&app, &app.api_key, ("DELETE", &path), None).await;
    assert_eq!(status, 204);
    let lead = json!({"projectId": "zap", "userData": {"email": "grace@example.com"}});
    call(
        &app,
        &app.api_key,
        ("POST", "/api/leads/createServerSideLead"),
        Some(lead),
    )
    .await;
    app.queues_drained().await;
    assert_eq!(
        (zapier.requests().len(), gone.requests().len()),
        (1, 1),
        "unsubscribed hooks hear nothing more"
    );
}
