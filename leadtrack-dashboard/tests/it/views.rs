//! Saved views over HTTP: saving the inbox's view (filters, sort, columns) for oneself or
//! the team, opening it, and who may delete it.

use crate::common::*;
use chrono::Utc;
use leadtrack_core::types::LeadId;
use serde_json::{Value, json};
use warp::http::StatusCode;

async fn lead(app: &App, body: Value) -> LeadId {
    app.lead_at(&app.alpha, body, Utc::now()).await
}

/// Posts the Views panel's form of the inbox at `inbox` (a query string) as `cookie`'s
/// user, with `fields` besides its token and the view it saves.
async fn save(app: &App, cookie: &str, inbox: &str, fields: &[(&str, &str)]) -> Reply {
    let page = app
        .get(&format!("/projects/alpha/leads?{inbox}"), cookie)
        .await;
    let query = page.hidden("query");
    let mut all = vec![("csrf", page.csrf()), ("query", query)];
    all.extend(fields.iter().map(|(n, v)| (*n, (*v).to_owned())));
    let pairs: Vec<(&str, &str)> = all.iter().map(|(n, v)| (*n, v.as_str())).collect();
    app.send(form("/projects/alpha/views", &encode(&pairs)).header("cookie", cookie))
        .await
}

/// The `view=` id a redirect to a saved view names.
fn opened(reply: &Reply) -> String {
    let location = reply.header("location").unwrap();
    location.rsplit("view=").next().unwrap().to_owned()
}

#[tokio::test]
async fn a_view_keeps_its_filters_sort_and_columns_for_its_owner() {
    let app = app().await;
    let google = lead(&app, json!({"userData": {"email": "g@example.com"}, "attributionData": {"utm_source": "google"}})).await;
    let bing = lead(
        &app,
        json!({"userData": {"email": "b@example.com"}, "attributionData": {"utm_source": "bing"}}),
    )
    .await;
    let member = app.session("member@example.com", MEMBER_PASSWORD).await;
    let inbox = "source=google&sort=email%3Aasc";
    // Two columns, as its form posts them.
    let saved = save(
        &app,
        &member,
        inbox,
        &[
            ("name", " Google leads "),
            ("column", "name"),
            ("column", "email"),
        ],
    )
    .await;
    assert_eq!(saved.status, StatusCode::SEE_OTHER);
    let location = saved.header("location").unwrap().to_owned();
    let id = opened(&saved);
    assert_eq!(
        location,
        format!("/projects/alpha/leads?tab=open&source=google&sort=email%3Aasc&view={id}")
    );
    let page = app.get(&location, &member).await;
    assert!(page.text.contains(&format!("id=\"lead-{google}\"")));
    assert!(!page.text.contains(&format!("id=\"lead-{bing}\"")));
    assert!(
        page.text.contains(&format!(
            "<a href=\"?tab=open&#38;source=google&#38;sort=email%3Aasc&#38;view={id}\" aria-current=\"true\">Google leads</a>"
        )),
        "listed beside the tabs, current"
    );
    // Its columns, not the viewer's: no Source column.
    assert!(page.text.contains("data-col=\"email\""));
    assert!(!page.text.contains("data-col=\"source\""));
    // The same inbox not opened as the view has the viewer's columns.
    let plain = app
        .get("/projects/alpha/leads?source=google", &member)
        .await;
    assert!(plain.text.contains("data-col=\"source\""));
    // Someone else does not see a personal view.
    let owner = app.session("owner@example.com", OWNER_PASSWORD).await;
    let theirs = app.get("/projects/alpha/leads", &owner).await;
    assert!(!theirs.text.contains("Google leads"));
    // Saved again under its name: replaced, same id.
    let again = save(&app, &member, "source=bing", &[("name", "Google leads")]).await;
    assert_eq!(opened(&again), id);
    let views = app
        .store
        .saved_views(app.alpha.id, app.member.id)
        .await
        .unwrap();
    assert_eq!(views.len(), 1);
    assert_eq!(
        (views[0].query.as_str(), views[0].columns.as_deref()),
        ("tab=open&source=bing", None)
    );
}

#[tokio::test]
async fn the_team_sees_a_shared_view_and_only_owners_delete_anothers() {
    let app = app().await;
    let member = app.session("member@example.com", MEMBER_PASSWORD).await;
    let owner = app.session("owner@example.com", OWNER_PASSWORD).await;
    let saved = save(
        &app,
        &member,
        "tab=lost",
        &[("name", "Lost this month"), ("shared", "yes")],
    )
    .await;
    let id = opened(&saved);
    let page = app.get("/projects/alpha/leads", &owner).await;
    assert!(page.text.contains("Lost this month <span class=\"team\""));
    // The owner's own shared view: the member may not delete it.
    let theirs = save(
        &app,
        &owner,
        "tab=rated",
        &[("name", "Done"), ("shared", "yes")],
    )
    .await;
    let theirs = opened(&theirs);
    let delete = |cookie: String, id: String| {
        let app = &app;
        async move {
            let page = app.get("/projects/alpha/leads", &cookie).await;
            let body = encode(&[("csrf", &page.csrf()), ("back", "tab=lost&view=9")]);
            let path = format!("/projects/alpha/views/{id}/delete");
            app.send(form(&path, &body).header("cookie", &cookie)).await
        }
    };
    let refused = delete(member.clone(), theirs.clone()).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    let deleted = delete(member.clone(), id.clone()).await;
    assert_eq!(deleted.status, StatusCode::SEE_OTHER);
    assert_eq!(
        deleted.header("location"),
        Some("/projects/alpha/leads?tab=lost")
    );
    let again = delete(member.clone(), id).await;
    assert_eq!(again.status, StatusCode::NOT_FOUND);
    let by_owner = delete(owner.clone(), theirs).await;
    assert_eq!(by_owner.status, StatusCode::SEE_OTHER);
    let views = app.store.saved_views(app.alpha.id, app.owner.id).await;
    assert!(views.unwrap().is_empty());
}

#[tokio::test]
async fn a_view_without_a_name_is_not_saved_and_says_why() {
    let app = app().await;
    let member = app.session("member@example.com", MEMBER_PASSWORD).await;
    let refused = save(&app, &member, "tab=open", &[("name", "  ")]).await;
    refused.assert_shows(StatusCode::BAD_REQUEST, &["Give the view a name."]);
    let views = app.store.saved_views(app.alpha.id, app.member.id).await;
    assert!(views.unwrap().is_empty());
    // A form from elsewhere changes nothing.
    let body = encode(&[("name", "Forged"), ("query", "tab=open")]);
    let member_cookie = member.clone();
    let forged = app
        .send(form("/projects/alpha/views", &body).header("cookie", &member_cookie))
        .await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN);
}
