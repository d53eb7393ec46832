//! The viewer role over HTTP: a viewer reads the inbox, a lead and the reports, without
//! their rating controls, and is refused (`403`, nothing changed) every rating, spam
//! decision and export.

use crate::common::*;
use chrono::Utc;
use leadtrack_core::account::{NewUser, Password};
use leadtrack_core::types::{LeadIdentifier, LeadStatus, Role};
use serde_json::json;
use warp::http::StatusCode;

const VIEWER_PASSWORD: &str = "viewer password 1";

/// Vi Viewer, a viewer of `alpha`, signed in: their cookie.
async fn viewer(app: &App) -> String {
    let password = Password::new(VIEWER_PASSWORD).unwrap();
    let new = NewUser::new("viewer@example.com", Some("Vi Viewer"), &password).unwrap();
    let user = app.store.create_user(new, Utc::now()).await.unwrap();
    app.store
        .add_member(app.alpha.id, user.id, Role::Viewer, Utc::now())
        .await
        .unwrap();
    app.session("viewer@example.com", VIEWER_PASSWORD).await
}

#[tokio::test]
async fn a_viewer_reads_leads_and_reports_without_rating_controls() {
    let app = app().await;
    let lead = app
        .lead_at(
            &app.alpha,
            json!({"userData": {"firstName": "Ada", "email": "ada@example.com"}}),
            Utc::now(),
        )
        .await;
    let cookie = viewer(&app).await;
    let inbox = app.get("/projects/alpha/leads", &cookie).await;
    assert_eq!(inbox.status, StatusCode::OK);
    assert!(inbox.text.contains(&format!("id=\"lead-{lead}\"")));
    for control in [
        "data-rating",
        "class=\"bulk-bar\"",
        "leads.csv",
        "data-save",
    ] {
        assert!(!inbox.text.contains(control), "{control} shown to a viewer");
    }
    let page = app
        .get(&format!("/projects/alpha/leads/{lead}"), &cookie)
        .await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.text.contains("Ada"));
    assert!(!page.text.contains("Rate this lead"));
    let reports = app.get("/projects/alpha/reports", &cookie).await;
    assert_eq!(reports.status, StatusCode::OK);
    // A member sees the controls, and the export once an owner allows it.
    let member = app.session("member@example.com", MEMBER_PASSWORD).await;
    let theirs = app.get("/projects/alpha/leads", &member).await;
    assert!(theirs.text.contains("data-rating") && !theirs.text.contains("leads.csv"));
}

#[tokio::test]
async fn members_export_once_an_owner_allows_it_and_no_longer_when_stopped() {
    let app = app().await;
    app.lead_at(
        &app.alpha,
        json!({"userData": {"email": "ada@example.com"}}),
        Utc::now(),
    )
    .await;
    let member = app.session("member@example.com", MEMBER_PASSWORD).await;
    let owner = app.session("owner@example.com", OWNER_PASSWORD).await;
    let export = |cookie: String| {
        let app = &app;
        async move { app.get("/projects/alpha/leads.csv", &cookie).await.status }
    };
    assert_eq!(export(owner.clone()).await, StatusCode::OK, "owners export");
    let refused = app.get("/projects/alpha/leads.csv", &member).await;
    refused.assert_shows(StatusCode::FORBIDDEN, &["Owners allow exports"]);
    // The owner allows it on the members page, then stops it.
    let path = format!("/projects/alpha/settings/members/{}/export", app.member.id);
    let toggle = |allowed: &'static str| {
        let (app, owner, path) = (&app, owner.clone(), path.clone());
        async move {
            let page = app.get("/projects/alpha/settings/members", &owner).await;
            let body = encode(&[("csrf", &page.csrf()), ("allowed", allowed)]);
            app.send(form(&path, &body).header("cookie", &owner)).await
        }
    };
    let allowed = toggle("yes").await;
    assert_eq!(allowed.status, StatusCode::SEE_OTHER);
    assert_eq!(export(member.clone()).await, StatusCode::OK);
    let inbox = app.get("/projects/alpha/leads", &member).await;
    assert!(inbox.text.contains("leads.csv"), "the Export link shows");
    let page = app.get("/projects/alpha/settings/members", &owner).await;
    assert!(page.text.contains("May export"));
    toggle("").await;
    assert_eq!(export(member.clone()).await, StatusCode::FORBIDDEN);
    // A member cannot allow themselves.
    let theirs = app.get("/projects/alpha/leads", &member).await;
    let body = encode(&[("csrf", &theirs.csrf()), ("allowed", "yes")]);
    let own = app.send(form(&path, &body).header("cookie", &member)).await;
    assert_eq!(own.status, StatusCode::FORBIDDEN);
    assert_eq!(export(member).await, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn a_viewer_rates_marks_and_exports_nothing() {
    let app = app().await;
    let lead = app
        .lead_at(
            &app.alpha,
            json!({"userData": {"email": "ada@example.com"}}),
            Utc::now(),
        )
        .await;
    let cookie = viewer(&app).await;
    let page = app
        .get(&format!("/projects/alpha/leads/{lead}"), &cookie)
        .await;
    let csrf = page.csrf();
    let lead_id = lead.0.to_string();
    for (path, fields) in [
        (
            format!("/projects/alpha/leads/{lead}/rate"),
            vec![
                ("conversionId", "lost"),
                ("form", "6f1c1b1e-8a43-4a5e-9a57-0c1f4d3a2b10"),
            ],
        ),
        (
            "/projects/alpha/leads/rate".to_owned(),
            vec![("conversionId", "lost"), ("lead", lead_id.as_str())],
        ),
        (
            "/projects/alpha/leads/spam".to_owned(),
            vec![("lead", lead_id.as_str())],
        ),
    ] {
        let mut all = vec![("csrf", csrf.as_str())];
        all.extend(fields);
        let reply = app
            .send(form(&path, &encode(&all)).header("cookie", &cookie))
            .await;
        reply.assert_shows(StatusCode::FORBIDDEN, &["Viewers only read"]);
    }
    let export = app.get("/projects/alpha/leads.csv", &cookie).await;
    assert_eq!(export.status, StatusCode::FORBIDDEN);
    let stored = app
        .store
        .find_lead(app.alpha.id, &LeadIdentifier::LeadId(lead))
        .await
        .unwrap();
    assert_eq!(
        (stored.status, stored.conversion_id),
        (LeadStatus::Open, None),
        "nothing changed"
    );
}
