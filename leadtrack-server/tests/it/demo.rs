//! `/demo/lead`: the demo's contact page reads back the lead it sent, and nothing else.

use chrono::Utc;
use leadtrack_core::project::NewProject;
use leadtrack_core::request::{CreateRoute, NewLead};
use leadtrack_core::{Admin, LeadStore};
use leadtrack_server::app;
use leadtrack_sqlite::SqliteStore;
use leadtrack_warp::Config;
use serde_json::{Value, json};
use warp::http::StatusCode;

const RECEIPT: &str = "0b9c6a52-8d1e-4f0a-9c3b-2f7e5d4a1c88";

#[tokio::test]
async fn a_lead_is_read_back_only_with_the_receipt_it_was_sent_with() {
    let store = SqliteStore::open_temporary().await.unwrap();
    let project = store
        .create_project(
            NewProject {
                public_id: Some("prj_demo".into()),
                name: "Demo".into(),
                currency: None,
            },
            Utc::now(),
        )
        .await
        .unwrap();
    let create = |body: Value| {
        let store = store.clone();
        async move {
            let lead = NewLead::parse(body.to_string().as_bytes(), CreateRoute::Server).unwrap();
            store
                .create_lead_via(project.id, CreateRoute::Browser, lead.data, Utc::now())
                .await
                .unwrap()
                .lead_id
        }
    };
    let with_receipt = create(json!({
        "userData": {"email": "demo@example.com"},
        "formData": {"formName": "Demo contact", "formFields": {"receipt": RECEIPT}}
    }))
    .await;
    let without = create(json!({"userData": {"email": "real@example.com"}})).await;
    let app = app(store, Config::default());
    let get = |path: String| {
        let app = app.clone();
        async move {
            let response = warp::test::request().path(&path).reply(&app).await;
            let body: Value = serde_json::from_slice(response.body()).unwrap();
            (response.status(), body)
        }
    };
    let url = |lead: i64, receipt: &str| {
        format!("/demo/lead?projectId=prj_demo&leadId={lead}&receipt={receipt}")
    };

    let (status, body) = get(url(with_receipt.0, RECEIPT)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["lead"]["id"], json!(with_receipt.0));
    assert_eq!(body["lead"]["email"], "demo@example.com");

    let not_found = json!({"message": "Not found", "code": "not_found"});
    for path in [
        url(with_receipt.0, "0b9c6a52-8d1e-4f0a-9c3b-2f7e5d4a1c89"),
        url(without.0, RECEIPT),
        url(with_receipt.0, "short"),
        url(999, RECEIPT),
        format!(
            "/demo/lead?projectId=prj_other&leadId={}&receipt={RECEIPT}",
            with_receipt.0
        ),
        format!("/demo/lead?projectId=prj_demo&leadId={}", with_receipt.0),
    ] {
        assert_eq!(
            get(path.clone()).await,
            (StatusCode::NOT_FOUND, not_found.clone()),
            "{path}"
        );
    }
}
