//! Leads from Google Ads lead forms, over real sockets, on SQLite (or PostgreSQL with
//! `LEADTRACK_TEST_BACKEND=postgres`): Google's documented sample body kept as a lead,
//! deliveries Google retries (one after another, or at once) kept once, and a post with a
//! wrong key, to a project that set none, or that is not a lead refused with nothing kept.

use futures_util::future::join_all;
use leadtrack_core::integration::Secret;
use leadtrack_core::request::LeadQuery;
use leadtrack_core::source::{LeadSource, SourceKind};
use leadtrack_server::testkit::{Parts, TestApp, spawn_app};
use serde_json::{Value, json};

const KEY: &str = "lead-form-key-7c2d";

/// The sample lead of Google's implementation guide
/// (<https://developers.google.com/google-ads/webhook/docs/implementation>), with the
/// project's key and `lead_id`, and one question of the advertiser's own.
fn google_lead(lead_id: &str, key: &str) -> Value {
    json!({
        "lead_id": lead_id,
        "user_column_data": [
            {"column_name": "Full Name", "string_value": "FirstName LastName", "column_id": "FULL_NAME"},
            {"column_name": "User Phone", "string_value": "+16505550123", "column_id": "PHONE_NUMBER"},
            {"column_name": "User Email", "string_value": "test@example.com", "column_id": "EMAIL"},
            {"column_name": "Which product?", "string_value": "Analytical engine", "column_id": "which_product"}
        ],
        "api_version": "1.0",
        "form_id": 123_456_789,
        "campaign_id": 123_456_789,
        "google_key": key,
        "is_test": true,
        "gcl_id": "TeSter-123-ABCDEFGHIJKLMNOPQRSTUVWXYZ",
        "adgroup_id": 20_000_000_000_i64,
        "creative_id": 30_000_000_000_i64
    })
}

/// An app whose project `site` takes lead form leads sent with [`KEY`].
async fn app() -> TestApp {
    let app = spawn_app(Parts {
        project: "site",
        ..Parts::default()
    })
    .await;
    let source = LeadSource::GoogleLeadForms {
        key: Secret::new(KEY),
    };
    app.store
        .set_lead_source(app.project.id, source.kind(), Some(&source))
        .await
        .unwrap();
    app
}

/// Posts `body` to project `project`'s webhook; its status and body.
async fn post(app: &TestApp, project: &str, body: &Value) -> (u16, Value) {
    let url = format!("{}/webhooks/google/lead-forms/{project}", app.base_url);
    let answer = reqwest::Client::new()
        .post(url)
        .json(body)
        .send()
        .await
        .unwrap();
    let status = answer.status().as_u16();
    (status, answer.json().await.unwrap_or(Value::Null))
}

/// The project's leads, newest first.
async fn leads(app: &TestApp) -> Vec<leadtrack_core::lead::StoredLead> {
    let page = app
        .store
        .list_leads(app.project.id, &LeadQuery::default())
        .await
        .unwrap();
    page.leads
}

#[tokio::test]
async fn a_google_lead_form_lead_is_kept_once_however_often_google_delivers_it() {
    let app = app().await;
    let lead = google_lead("TeSter-123-lead-1", KEY);
    let (status, body) = post(&app, "site", &lead).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["created"], json!(true));
    let kept = leads(&app).await;
    assert_eq!(kept.len(), 1);
    let data = &kept[0].data;
    assert_eq!(body["leadId"], json!(kept[0].id.0));
    assert_eq!(data.user("email"), Some("test@example.com"));
    assert_eq!(data.user("firstName"), Some("FirstName"));
    assert_eq!(data.user("lastName"), Some("LastName"));
    assert_eq!(data.user("phone"), Some("+16505550123"));
    assert_eq!(
        data.attribution("gclid"),
        Some("TeSter-123-ABCDEFGHIJKLMNOPQRSTUVWXYZ")
    );
    assert_eq!(data.attribution("googleCampaignId"), Some("123456789"));
    assert_eq!(data.form_data["Which product?"], json!("Analytical engine"));
    assert_eq!(
        data.form_data["formName"],
        json!("Google Ads lead form 123456789")
    );
    assert_eq!(data.form_data["isTest"], json!(true));

    // Google delivers again until it hears 200: once after another, then five at once.
    let (status, again) = post(&app, "site", &lead).await;
    assert_eq!((status, &again["created"]), (200, &json!(false)));
    assert_eq!(again["leadId"], body["leadId"]);
    let retried = google_lead("TeSter-123-lead-2", KEY);
    let answers = join_all((0..5).map(|_| post(&app, "site", &retried))).await;
    assert!(
        answers.iter().all(|(status, _)| *status == 200),
        "{answers:?}"
    );
    let created = answers
        .iter()
        .filter(|(_, body)| body["created"] == json!(true))
        .count();
    assert_eq!(created, 1, "{answers:?}");
    assert_eq!(leads(&app).await.len(), 2);
}

#[tokio::test]
async fn a_post_with_a_wrong_key_or_to_a_project_without_lead_forms_keeps_nothing() {
    let app = app().await;
    let (status, body) = post(&app, "site", &google_lead("forged-1", "guessed")).await;
    assert_eq!(status, 401);
    assert_eq!(body["code"], json!("invalid_api_key"));
    assert!(!body.to_string().contains(KEY));
    let (status, not_a_lead) = post(&app, "site", &json!({"hello": "world"})).await;
    assert_eq!((status, &not_a_lead["code"]), (400, &json!("invalid_json")));

    // No key set: the same answer, which tells nothing of whether one is.
    app.store
        .set_lead_source(app.project.id, SourceKind::GoogleLeadForms, None)
        .await
        .unwrap();
    let (status, unset) = post(&app, "site", &google_lead("forged-2", KEY)).await;
    assert_eq!((status, &unset), (401, &body));

    let (status, body) = post(&app, "nowhere", &google_lead("forged-3", KEY)).await;
    assert_eq!((status, &body["code"]), (404, &json!("project_not_found")));
    let get = reqwest::get(format!("{}/webhooks/google/lead-forms/site", app.base_url))
        .await
        .unwrap();
    assert_eq!(get.status(), 405);
    assert!(leads(&app).await.is_empty());
}
