//! Deleting a lead over HTTP: owners only, after a page that asks; the lead goes with its
//! history and the project's history keeps its id; a lead whose conversion may still be on
//! its way stays.

use crate::common::*;
use chrono::Utc;
use leadtrack_core::StoreError;
use leadtrack_core::types::{ConversionId, LeadIdentifier};
use serde_json::json;
use warp::http::StatusCode;

/// Posts the delete form of lead `path` as `cookie`'s user.
async fn delete(app: &App, cookie: &str, path: &str) -> Reply {
    let csrf = app.get("/", cookie).await.csrf();
    let body = encode(&[("csrf", &csrf)]);
    app.send(form(&format!("{path}/delete"), &body).header("cookie", cookie))
        .await
}

#[tokio::test]
async fn an_owner_deletes_a_lead_after_being_asked_and_the_project_remembers_its_id() {
    let app = app().await;
    let ada = json!({"userData": {"firstName": "Ada", "email": "ada@x.io"}});
    let id = app.lead_at(&app.alpha, ada, Utc::now()).await;
    let path = format!("/projects/alpha/leads/{id}");
    let member = app.session("member@example.com", MEMBER_PASSWORD).await;
    let as_member = app.get(&path, &member).await;
    assert!(
        !as_member.text.contains("Delete lead"),
        "an owner's decision"
    );
    let asked = app.get(&format!("{path}/delete"), &member).await;
    assert_eq!(asked.status, StatusCode::FORBIDDEN);
    assert_eq!(
        delete(&app, &member, &path).await.status,
        StatusCode::FORBIDDEN
    );

    let owner = app.session("owner@example.com", OWNER_PASSWORD).await;
    app.get(&path, &owner).await.assert_shows(
        StatusCode::OK,
        &[&format!("href=\"{path}/delete\">Delete lead…</a>")],
    );
    app.get(&format!("{path}/delete"), &owner)
        .await
        .assert_shows(
            StatusCode::OK,
            &[
                "Delete Ada?",
                &format!("Delete lead #{id}</button>"),
                "Keep it",
            ],
        );
    let deleted = delete(&app, &owner, &path).await;
    let inbox = format!("/projects/alpha/leads?deleted={id}");
    assert_eq!(deleted.header("location"), Some(inbox.as_str()));
    let shown = app.get(&inbox, &owner).await;
    let said = format!("Lead #{id} deleted, with its history and conversions.");
    shown.assert_shows(StatusCode::OK, &[&said]);
    assert!(!shown.text.contains(">Ada<"));
    let gone = app
        .store
        .find_lead(app.alpha.id, &LeadIdentifier::LeadId(id))
        .await;
    assert!(matches!(gone, Err(StoreError::NotFound(_))), "{gone:?}");
    assert_eq!(app.get(&path, &owner).await.status, StatusCode::NOT_FOUND);
    let audit = app.get("/projects/alpha/settings/audit", &owner).await;
    audit.assert_shows(
        StatusCode::OK,
        &[&format!(
            "<th scope=\"row\" data-label=\"Who\">Olive Owner</th>\n      \
             <td data-label=\"What\">Lead #{id} deleted</td>\n      \
             <td class=\"mono\" data-label=\"From\">127.0.0.1</td>"
        )],
    );
}

#[tokio::test]
async fn a_lead_whose_rating_waits_to_be_sent_is_not_deleted() {
    let app = app().await;
    let id = app
        .lead_at(
            &app.alpha,
            json!({"userData": {"email": "bo@x.io"}}),
            Utc::now(),
        )
        .await;
    app.rate(&app.alpha, id, ConversionId::Lost, None).await;
    let owner = app.session("owner@example.com", OWNER_PASSWORD).await;
    let path = format!("/projects/alpha/leads/{id}");
    let refused = delete(&app, &owner, &path).await;
    let back = format!("{path}?done=undeletable");
    assert_eq!(refused.header("location"), Some(back.as_str()));
    app.get(&back, &owner).await.assert_shows(
        StatusCode::OK,
        &["Not deleted: its conversion is still waiting or being sent."],
    );
    let kept = app
        .store
        .find_lead(app.alpha.id, &LeadIdentifier::LeadId(id))
        .await;
    assert!(kept.is_ok());
}
