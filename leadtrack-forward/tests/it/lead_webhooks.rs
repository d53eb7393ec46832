//! Lead webhooks end to end: several webhooks of one project at local receivers, each
//! getting exactly the events it subscribes to, once, signed with its own secret; retries
//! keep the event id and body; permanent failures stop.

use std::time::Duration;

use crate::common::*;
use chrono::Utc;
use leadtrack_core::integration::Secret;
use leadtrack_core::request::StatusUpdate;
use leadtrack_core::types::{AttemptOutcome, ConversionId, LeadId, LeadIdentifier};
use leadtrack_core::webhook::{NewWebhook, Webhook, WebhookEvent, WebhookEvents, WebhookStatus};
use leadtrack_core::{LeadStore, LeadWebhooks as _};
use leadtrack_platforms::testkit::{MockPlatform, MockResponse, Recorded};
use leadtrack_platforms::webhook;
use serde_json::{Value, json};

async fn add(
    f: &Fixture,
    receiver: &MockPlatform,
    path: &str,
    secret: &str,
    events: &str,
) -> Webhook {
    let new = NewWebhook::new(
        &format!("{}{path}", receiver.url()),
        &leadtrack_core::testkit::mock_targets(),
        Some(Secret::new(secret)),
        WebhookEvents::parse_list(events).unwrap(),
    )
    .unwrap();
    f.store
        .create_webhook(f.project.id, new, Utc::now())
        .await
        .unwrap()
}

async fn rate(f: &Fixture, lead: LeadId, conversion_id: ConversionId) {
    let update = StatusUpdate {
        identifier: LeadIdentifier::LeadId(lead),
        conversion_id,
        price: Some(1250),
        note: None,
    };
    f.store
        .update_status(f.project.id, &update, &rater(), Utc::now())
        .await
        .unwrap();
}

async fn statuses(f: &Fixture) -> Vec<WebhookStatus> {
    f.store.webhooks(f.project.id).await.unwrap()
}

/// Checks the signature with `secret` and that the header repeats the body's id; returns
/// the body.
fn verified(request: &Recorded, secret: &str) -> Value {
    let timestamp = request.assert_signed(secret);
    assert!((Utc::now().timestamp() - timestamp).abs() < 60);
    let body = request.json();
    assert_eq!(
        request.header(webhook::EVENT_HEADER),
        body["id"].as_str(),
        "the header repeats the event id"
    );
    assert_eq!(request.header("content-type"), Some("application/json"));
    body
}

fn types(bodies: &[Value]) -> Vec<(String, i64)> {
    let mut seen: Vec<(String, i64)> = bodies
        .iter()
        .map(|b| {
            (
                b["type"].as_str().unwrap().to_owned(),
                b["lead"]["id"].as_i64().unwrap(),
            )
        })
        .collect();
    seen.sort();
    seen
}

#[tokio::test]
async fn each_webhook_gets_its_events_once_signed_with_its_own_secret() {
    let f = fixture().await;
    let crm_receiver = MockPlatform::start(MockResponse::json(200, json!({"ok": true}))).await;
    let chat_receiver = MockPlatform::start(MockResponse::empty(204)).await;
    add(
        &f,
        &crm_receiver,
        "/crm",
        "whsec_crm",
        "lead.created,lead.converted",
    )
    .await;
    add(
        &f,
        &chat_receiver,
        "/chat",
        "whsec_chat",
        "lead.created,lead.updated,lead.lost",
    )
    .await;

    let ada = json!({"formData": {"uniqueEventId": "form-1"}, "userData": {"firstName": "Ada"}});
    let a = create_lead(&f, ada).await;
    let again =
        json!({"formData": {"uniqueEventId": "form-1"}, "userData": {"lastName": "Lovelace"}});
    assert_eq!(create_lead(&f, again).await, a);
    rate(&f, a, ConversionId::Label(f.label)).await;
    let b = create_lead(&f, json!({"userData": {"email": "grace@example.com"}})).await;
    rate(&f, b, ConversionId::Lost).await;

    let worker = worker(&f.store, fast());
    settle_events(&f, &worker).await;
    // More runs find nothing: every event went exactly once.
    for _ in 0..5 {
        assert!(!worker.run_once().await.unwrap());
    }

    let crm: Vec<Value> = crm_receiver
        .requests()
        .iter()
        .inspect(|r| assert_eq!((r.method.as_str(), r.path.as_str()), ("POST", "/crm")))
        .map(|r| verified(r, "whsec_crm"))
        .collect();
    let chat: Vec<Value> = chat_receiver
        .requests()
        .iter()
        .inspect(|r| assert_eq!(r.path, "/chat"))
        .map(|r| verified(r, "whsec_chat"))
        .collect();
    assert_eq!(
        types(&crm),
        [
            ("lead.converted".to_owned(), a.0),
            ("lead.created".to_owned(), a.0),
            ("lead.created".to_owned(), b.0),
        ]
    );
    assert_eq!(
        types(&chat),
        [
            ("lead.created".to_owned(), a.0),
            ("lead.created".to_owned(), b.0),
            ("lead.lost".to_owned(), b.0),
            ("lead.updated".to_owned(), a.0),
        ]
    );

    // Both webhooks got the same event id for the same creation.
    let created_a = |bodies: &[Value]| {
        bodies
            .iter()
            .find(|b| b["type"] == "lead.created" && b["lead"]["id"] == a.0)
            .unwrap()["id"]
            .clone()
    };
    assert_eq!(created_a(&crm), created_a(&chat));
    // The conversion carries the rating, and the conversion's event id, which the
    // conversion webhook and the platforms received too.
    let converted = crm.iter().find(|b| b["type"] == "lead.converted").unwrap();
    let job = f.job(a).await;
    assert_eq!(converted["id"], json!(job.job.event_id));
    assert_eq!(converted["jobId"], json!(job.job.id));
    assert_eq!(converted["conversionId"], json!(f.label));
    assert_eq!(converted["price"], json!(1250));
    assert_eq!(converted["lead"]["lastName"], json!("Lovelace"));
    let conversion_hook = f.platforms.hook.requests();
    let same = conversion_hook
        .iter()
        .find(|r| r.json()["lead"]["id"] == a.0)
        .unwrap();
    assert_eq!(same.header(webhook::EVENT_HEADER), converted["id"].as_str());
    let lost = chat.iter().find(|b| b["type"] == "lead.lost").unwrap();
    assert_eq!(lost["conversionId"], json!("lost"));
    assert_eq!(lost["label"], Value::Null);
    // A creation shows the lead as created, before the merge.
    let first = chat
        .iter()
        .find(|b| b["type"] == "lead.created" && b["lead"]["id"] == a.0)
        .unwrap();
    assert_eq!(
        (&first["lead"]["firstName"], &first["lead"]["lastName"]),
        (&json!("Ada"), &Value::Null)
    );

    let counts: Vec<(u64, u64, u64)> = statuses(&f)
        .await
        .iter()
        .map(|s| (s.pending, s.delivered, s.failed))
        .collect();
    assert_eq!(counts, [(0, 3, 0), (0, 4, 0)]);
}

#[tokio::test]
async fn failed_posts_are_retried_with_the_same_event_and_permanent_refusals_stop() {
    let f = fixture().await;
    let flaky = MockPlatform::start(MockResponse::empty(200)).await;
    flaky.push(MockResponse::empty(503).with_header("Retry-After", "1"));
    flaky.push(MockResponse::empty(500));
    let gone = MockPlatform::start(MockResponse::json(410, json!({"error": "gone"}))).await;
    add(&f, &flaky, "/hook", "whsec_flaky", "lead.created").await;
    add(&f, &gone, "/hook", "whsec_gone", "lead.created").await;
    create_lead(&f, json!({"userData": {"firstName": "Ada"}})).await;

    settle_events(&f, &worker(&f.store, fast())).await;

    let tries = flaky.requests();
    assert_eq!(tries.len(), 3);
    for attempt in &tries {
        verified(attempt, "whsec_flaky");
        assert_eq!(attempt.body, tries[0].body, "the same body each time");
    }
    assert!(
        tries[1].received - tries[0].received >= Duration::from_millis(950),
        "Retry-After: 1 was honoured"
    );
    assert_eq!(gone.requests().len(), 1, "a 410 is not retried");

    let statuses = statuses(&f).await;
    let flaky_status = &statuses[0];
    assert_eq!(
        (
            flaky_status.pending,
            flaky_status.delivered,
            flaky_status.failed
        ),
        (0, 1, 0)
    );
    let last = flaky_status.last_attempt.as_ref().unwrap();
    assert_eq!(
        (last.outcome, last.http_status),
        (AttemptOutcome::Delivered, Some(200))
    );
    let gone_status = &statuses[1];
    assert_eq!((gone_status.delivered, gone_status.failed), (0, 1));
    let last = gone_status.last_attempt.as_ref().unwrap();
    assert_eq!(
        (last.outcome, last.http_status),
        (AttemptOutcome::Failed, Some(410))
    );
    assert_eq!(last.error.as_deref(), Some(r#"HTTP 410: {"error":"gone"}"#));
}

#[tokio::test]
async fn a_removed_webhook_gets_nothing_more() {
    let f = fixture().await;
    let receiver = MockPlatform::start(MockResponse::empty(200)).await;
    let hook = add(&f, &receiver, "/hook", "whsec_x", "lead.created").await;
    create_lead(&f, json!({"userData": {"firstName": "Ada"}})).await;
    assert!(f.store.remove_webhook(f.project.id, hook.id).await.unwrap());
    create_lead(&f, json!({"userData": {"firstName": "Grace"}})).await;
    settle_events(&f, &worker(&f.store, fast())).await;
    assert!(receiver.requests().is_empty());
}

/// A REST hook's target that answers `410 Gone` is unsubscribed at once: the hook is
/// removed and hears nothing more, while a webhook of the dashboard that answers `410`
/// stays (its failure shown), and a REST hook that fails otherwise is retried.
#[tokio::test]
async fn a_rest_hook_answered_410_is_unsubscribed_and_others_are_retried() {
    let f = fixture().await;
    let gone = MockPlatform::start(MockResponse::empty(410)).await;
    let flaky = MockPlatform::start(MockResponse::empty(200)).await;
    flaky.push(MockResponse::empty(503));
    let targets = leadtrack_core::testkit::mock_targets();
    let rest = |url: String| NewWebhook::rest_hook(&url, &targets, WebhookEvent::LeadCreated);
    for url in [
        format!("{}/zap", gone.url()),
        format!("{}/n8n", flaky.url()),
    ] {
        let hook = rest(url).unwrap();
        f.store
            .create_webhook(f.project.id, hook, Utc::now())
            .await
            .unwrap();
    }
    let plain = add(&f, &gone, "/plain", "whsec_plain", "lead.created").await;
    create_lead(&f, json!({"userData": {"firstName": "Ada"}})).await;
    let worker = worker(&f.store, fast());
    settle_events(&f, &worker).await;

    let hooks = statuses(&f).await;
    let urls: Vec<&str> = hooks.iter().map(|s| s.webhook.url.as_str()).collect();
    assert_eq!(urls, [format!("{}/n8n", flaky.url()), plain.url.clone()]);
    assert_eq!((hooks[0].delivered, hooks[0].failed), (1, 0));
    assert_eq!((hooks[1].delivered, hooks[1].failed), (0, 1));
    assert_eq!(flaky.requests().len(), 2, "a 503 is retried");

    create_lead(&f, json!({"userData": {"firstName": "Grace"}})).await;
    settle_events(&f, &worker).await;
    let paths: Vec<String> = gone.requests().iter().map(|r| r.path.clone()).collect();
    assert_eq!(
        paths,
        ["/zap", "/plain", "/plain"],
        "the removed hook heard once"
    );
}
