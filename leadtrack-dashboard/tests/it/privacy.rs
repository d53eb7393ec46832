//! A lead's person's data over HTTP, owners only: downloaded as one JSON file, and erased
//! after a page that says how many leads it erases; the lead page then says who erased it
//! and when, and shows nothing of the person.

use crate::common::*;
use chrono::Utc;
use serde_json::json;
use warp::http::StatusCode;

/// Posts the erase form of lead `path` as `cookie`'s user.
async fn erase(app: &App, cookie: &str, path: &str) -> Reply {
    let csrf = app.get("/", cookie).await.csrf();
    let body = encode(&[("csrf", &csrf)]);
    app.send(form(&format!("{path}/erase"), &body).header("cookie", cookie))
        .await
}

#[tokio::test]
async fn an_owner_erases_a_person_after_being_told_how_many_leads_go() {
    let app = app().await;
    let ada = |message: &str| {
        json!({"userData": {"firstName": "Ada", "lastName": "Lovelace", "email": "ada@x.io"},
            "formData": {"message": message}})
    };
    let first = app.lead_at(&app.alpha, ada("Call me"), Utc::now()).await;
    let second = app.lead_at(&app.alpha, ada("Again"), Utc::now()).await;
    let bob = json!({"userData": {"firstName": "Bob", "email": "bob@x.io"}});
    let other = app.lead_at(&app.alpha, bob, Utc::now()).await;
    let path = format!("/projects/alpha/leads/{second}");

    let member = app.session("member@example.com", MEMBER_PASSWORD).await;
    assert!(
        !app.get(&path, &member)
            .await
            .text
            .contains("Erase this person")
    );
    let asked = app.get(&format!("{path}/erase"), &member).await;
    assert_eq!(asked.status, StatusCode::FORBIDDEN);
    assert_eq!(
        erase(&app, &member, &path).await.status,
        StatusCode::FORBIDDEN
    );
    app.get(&path, &member)
        .await
        .assert_shows(StatusCode::OK, &["ada@x.io"]);

    let download = format!("{path}/person.json");
    assert_eq!(
        app.get(&download, &member).await.status,
        StatusCode::FORBIDDEN
    );

    let owner = app.session("owner@example.com", OWNER_PASSWORD).await;
    app.get(&path, &owner).await.assert_shows(
        StatusCode::OK,
        &[
            &format!("href=\"{path}/erase\">Erase this person…</a>"),
            &format!("href=\"{download}\" download>Download this person’s data</a>"),
        ],
    );
    let data = app.get(&download, &owner).await;
    assert_eq!(data.status, StatusCode::OK);
    assert_eq!(data.header("content-type"), Some("application/json"));
    let attachment = format!("attachment; filename=\"person-of-lead-{second}.json\"");
    assert_eq!(
        data.header("content-disposition"),
        Some(attachment.as_str())
    );
    let data: serde_json::Value = serde_json::from_str(&data.text).unwrap();
    let leads = data["leads"].as_array().unwrap();
    assert_eq!(leads.len(), 2, "both of Ada's leads");
    assert_eq!(leads[0]["lead"]["formData"], json!({"message": "Call me"}));
    app.get(&format!("{path}/erase"), &owner)
        .await
        .assert_shows(
            StatusCode::OK,
            &[
                "Erase Ada Lovelace’s data?",
                &format!("erases 2 leads, matched by the email ada@x.io: #{first}, #{second}."),
                "Erase 2 leads</button>",
                "Keep them",
            ],
        );
    let erased = erase(&app, &owner, &path).await;
    assert_eq!(erased.status, StatusCode::SEE_OTHER);
    let back = format!("{path}?done=erased");
    assert_eq!(erased.header("location"), Some(back.as_str()));
    let shown = app.get(&back, &owner).await;
    shown.assert_shows(
        StatusCode::OK,
        &[
            "Erased at the person&#39;s request: their leads are anonymous records now.",
            "by Olive Owner, at the person&#39;s request. What stays names nobody.",
        ],
    );
    for gone in ["ada@x.io", "Lovelace", "Call me", "Erase this person"] {
        assert!(!shown.text.contains(gone), "{gone} is still shown");
    }
    let kept = app
        .get(&format!("/projects/alpha/leads/{other}"), &owner)
        .await;
    kept.assert_shows(StatusCode::OK, &["bob@x.io"]);
    let audit = app.get("/projects/alpha/settings/audit", &owner).await;
    audit.assert_shows(
        StatusCode::OK,
        &[&format!(
            "Erased a person&#39;s 2 leads #{first}, #{second}"
        )],
    );
    app.get(&format!("{path}/erase"), &owner)
        .await
        .assert_shows(StatusCode::OK, &["Nothing is left to erase"]);
}
