//! Alerts through the pages: each member chooses theirs per project in their profile (the
//! hourly digest starting with the current hour), and owners set the project's chat
//! channels, whose URLs are kept and never shown again.

use crate::common::{App, MEMBER_PASSWORD, OWNER_PASSWORD, app};
use chrono::{DurationRound, TimeDelta, Utc};
use leadtrack_core::alert::{AlertPreferences, ChatKind, NewLeads};
use warp::http::StatusCode;

async fn alerts_of(app: &App, email: &str) -> AlertPreferences {
    let members = app.store.members(app.alpha.id).await.unwrap();
    let member = members.into_iter().find(|m| m.user.email == email);
    member.expect("a member").alerts
}

#[tokio::test]
async fn members_choose_their_alerts_per_project_in_their_profile() {
    let app = app().await;
    let member = app.session("member@example.com", MEMBER_PASSWORD).await;
    let page = app.get("/profile", &member).await;
    page.assert_shows(
        StatusCode::OK,
        &[
            "<legend>Alpha</legend>",
            "<option value=\"off\" selected>Off</option>",
            "name=\"assigned\" value=\"yes\" checked",
            "name=\"next_steps\" value=\"yes\" checked> Next steps due on my leads",
        ],
    );
    assert!(
        !page.text.contains("name=\"failures\""),
        "failed conversions are the owners'"
    );
    let saved = app
        .post_form(
            &member,
            "/profile/alerts",
            &[
                ("project", "alpha"),
                ("new_leads", "hourly"),
                ("next_steps", "yes"),
            ],
        )
        .await;
    assert_eq!(
        saved.header("location"),
        Some("/profile?saved=alerts#alerts")
    );
    let hour = Utc::now().duration_trunc(TimeDelta::hours(1)).unwrap();
    let chosen = alerts_of(&app, "member@example.com").await;
    assert_eq!(
        chosen,
        AlertPreferences {
            new_leads: NewLeads::Hourly,
            assigned: false,
            failures: false,
            next_steps: true,
            digest_until: Some(hour),
        }
    );
    let page = app.get("/profile?saved=alerts", &member).await;
    page.assert_shows(
        StatusCode::OK,
        &["Alerts saved.", "<option value=\"hourly\" selected>"],
    );
    // Another user's project, or a choice that is none: nothing changes.
    let beta = app
        .post_form(
            &member,
            "/profile/alerts",
            &[("project", "beta"), ("new_leads", "instant")],
        )
        .await;
    assert_eq!(beta.status, StatusCode::NOT_FOUND);
    let bogus = app
        .post_form(
            &member,
            "/profile/alerts",
            &[("project", "alpha"), ("new_leads", "always")],
        )
        .await;
    assert_eq!(bogus.status, StatusCode::NOT_FOUND);
    assert_eq!(alerts_of(&app, "member@example.com").await, chosen);

    let owner = app.session("owner@example.com", OWNER_PASSWORD).await;
    let page = app.get("/profile", &owner).await;
    page.assert_shows(
        StatusCode::OK,
        &["<legend>Beta</legend>", "name=\"failures\""],
    );
}

#[tokio::test]
async fn owners_set_chat_channels_whose_urls_are_never_shown_again() {
    let app = app().await;
    let owner = app.session("owner@example.com", OWNER_PASSWORD).await;
    let path = "/projects/alpha/settings/alerts";
    let page = app.get(path, &owner).await;
    page.assert_shows(
        StatusCode::OK,
        &[
            "Slack",
            "Microsoft Teams",
            "Google Chat",
            "never its email or phone",
        ],
    );
    let url = "https://hooks.slack.com/services/T000/B000/very-secret";
    let saved = app
        .post_form(&owner, &format!("{path}/slack"), &[("url", url)])
        .await;
    assert_eq!(
        saved.header("location"),
        Some("/projects/alpha/settings/alerts?saved=saved")
    );
    let channels = app.store.chat_channels(app.alpha.id).await.unwrap();
    assert_eq!(
        channels
            .iter()
            .map(|c| (c.kind, c.url.as_str()))
            .collect::<Vec<_>>(),
        [(ChatKind::Slack, url)]
    );
    let page = app.get(&format!("{path}?saved=saved"), &owner).await;
    page.assert_shows(StatusCode::OK, &["Channel saved", "connected"]);
    assert!(!page.text.contains("very-secret"), "the URL is never shown");

    let refused = app
        .post_form(
            &owner,
            &format!("{path}/teams"),
            &[("url", "https://10.0.0.1/hook")],
        )
        .await;
    refused.assert_shows(
        StatusCode::BAD_REQUEST,
        &["The address is private (10.0.0.1)"],
    );
    let removed = app
        .post_form(&owner, &format!("{path}/slack/remove"), &[])
        .await;
    assert_eq!(
        removed.header("location"),
        Some("/projects/alpha/settings/alerts?saved=removed")
    );
    assert_eq!(app.store.chat_channels(app.alpha.id).await.unwrap(), []);
    let unknown = app
        .post_form(&owner, &format!("{path}/irc"), &[("url", url)])
        .await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    let audit = app.get("/projects/alpha/settings/audit", &owner).await;
    audit.assert_shows(
        StatusCode::OK,
        &[
            "Set the Slack channel for new leads",
            "Removed the Slack channel",
        ],
    );

    let member = app.session("member@example.com", MEMBER_PASSWORD).await;
    assert_eq!(app.get(path, &member).await.status, StatusCode::FORBIDDEN);
}
