//! Next steps over HTTP: set on a lead's page on the person's clock, refused when
//! malformed, marked done, recorded in the history; the Due page (everyone's and Mine) and
//! its Done; the inbox's Due tab and each row's step; and the form posted from a row going
//! back to its view.

use crate::common::*;
use chrono::{Duration, TimeZone, Utc};
use leadtrack_core::account::Actor;
use leadtrack_core::next_step::NextStep;
use leadtrack_core::types::LeadId;
use serde_json::json;
use warp::http::StatusCode;

async fn lead(app: &App, first_name: &str) -> LeadId {
    let body = json!({"userData": {"firstName": first_name, "email": format!("{first_name}@example.com")}});
    app.lead_at(&app.alpha, body, Utc::now()).await
}

async fn plan(app: &App, lead: LeadId, at: chrono::DateTime<Utc>, note: &str) {
    let by = Actor::User {
        id: app.member.id,
        name: app.member.name.clone(),
    };
    let step = NextStep::new(at, note).unwrap();
    app.store
        .set_next_step(app.alpha.id, lead, Some(&step), &by, Utc::now())
        .await
        .unwrap();
}

async fn step_of(app: &App, lead: LeadId) -> Option<NextStep> {
    let steps = app.store.next_steps(app.alpha.id, &[lead]).await.unwrap();
    steps.into_iter().next().map(|(_, step)| step)
}

#[tokio::test]
async fn a_member_plans_a_next_step_on_their_clock_and_marks_it_done() {
    let app = app().await;
    let id = lead(&app, "Ada").await;
    let member = app.session("member@example.com", MEMBER_PASSWORD).await;
    let path = format!("/projects/alpha/leads/{id}");
    let page = app.get(&path, &member).await;
    page.assert_shows(
        StatusCode::OK,
        &[
            "<h2 id=\"step-heading\">Next step</h2>",
            "None planned",
            "<input id=\"step-at\" name=\"at\" type=\"datetime-local\" required data-step-at>",
        ],
    );
    let post = |fields: &[(&str, &str)]| {
        let mut all = vec![("csrf", page.csrf())];
        all.extend(fields.iter().map(|(k, v)| (*k, (*v).to_owned())));
        let pairs: Vec<(&str, &str)> = all.iter().map(|(k, v)| (*k, v.as_str())).collect();
        form(&format!("{path}/next-step"), &encode(&pairs)).header("cookie", &member)
    };

    // 10:30 in Berlin (UTC+1 in December) is 09:30 UTC.
    let saved = app
        .send(post(&[
            ("at", "2026-12-01T10:30"),
            ("offset", "60"),
            ("note", "  Call back about pricing "),
        ]))
        .await;
    assert_eq!(
        saved.header("location"),
        Some(format!("{path}?done=planned").as_str())
    );
    let at = Utc.with_ymd_and_hms(2026, 12, 1, 9, 30, 0).unwrap();
    let planned = NextStep::new(at, "Call back about pricing").unwrap();
    assert_eq!(step_of(&app, id).await, Some(planned.clone()));
    let shown = app.get(saved.header("location").unwrap(), &member).await;
    shown.assert_shows(
        StatusCode::OK,
        &[
            "Next step saved.",
            "value=\"2026-12-01T09:30\" data-utc=\"2026-12-01T09:30:00.000Z\"",
            "value=\"Call back about pricing\"",
            "Set the next step for 2026-12-01 09:30 UTC: “Call back about pricing”</span> <span class=\"by\">by Mo Member</span>",
        ],
    );

    // Malformed: refused in words, and the step stays as it was.
    for (fields, problem) in [
        (vec![("at", "")], "Pick the day and time of the next step."),
        (
            vec![("at", "next week")],
            "The day and time must look like 2026-12-01 09:30.",
        ),
        (
            vec![("at", "2026-12-02T09:00"), ("offset", "5000")],
            "The time zone sent with the form is not one.",
        ),
    ] {
        let refused = app.send(post(&fields)).await;
        refused.assert_shows(StatusCode::BAD_REQUEST, &["Next step not saved", problem]);
        assert_eq!(step_of(&app, id).await, Some(planned.clone()));
    }

    let done = app.send(post(&[("done", "1")])).await;
    assert_eq!(
        done.header("location"),
        Some(format!("{path}?done=followed").as_str())
    );
    assert_eq!(step_of(&app, id).await, None);
    let shown = app.get(done.header("location").unwrap(), &member).await;
    shown.assert_shows(
        StatusCode::OK,
        &[
            "Next step marked done.",
            "None planned",
            "Marked the next step done</span> <span class=\"by\">by Mo Member</span>",
        ],
    );
}

#[tokio::test]
async fn the_due_page_lists_what_is_due_soonest_first_and_mine() {
    let app = app().await;
    let now = Utc::now();
    let (ada, grace, alan) = (
        lead(&app, "Ada").await,
        lead(&app, "Grace").await,
        lead(&app, "Alan").await,
    );
    plan(&app, ada, now - Duration::hours(1), "").await;
    plan(&app, grace, now - Duration::days(2), "Send the quote").await;
    plan(&app, alan, now + Duration::days(3), "Demo").await;
    let member = app.session("member@example.com", MEMBER_PASSWORD).await;
    app.post_form(
        &member,
        &format!("/projects/alpha/leads/{grace}/assign"),
        &[("to", "me")],
    )
    .await;

    let due = app.get("/projects/alpha/leads/due", &member).await;
    due.assert_shows(
        StatusCode::OK,
        &[
            "Everyone's <span class=\"count\">2</span>",
            "Mine <span class=\"count\">1</span>",
            "overdue 2 days",
            "Send the quote",
            "overdue 1 h",
        ],
    );
    let (at_grace, at_ada) = (
        due.text.find(">Grace").unwrap(),
        due.text.find(">Ada").unwrap(),
    );
    assert!(at_grace < at_ada, "soonest first");
    assert!(!due.text.contains(">Alan"), "not due today");

    let mine = app.get("/projects/alpha/leads/due?mine=yes", &member).await;
    mine.assert_shows(
        StatusCode::OK,
        &[">Grace", "<td data-label=\"Assigned to\">You</td>"],
    );
    assert!(!mine.text.contains(">Ada"));
    let done = app
        .post_form(
            &member,
            &format!("/projects/alpha/leads/{grace}/next-step"),
            &[("done", "1"), ("from", "due-mine")],
        )
        .await;
    let back = done.header("location").unwrap();
    assert_eq!(back, "/projects/alpha/leads/due?mine=yes&done=followed");
    app.get(back, &member).await.assert_shows(
        StatusCode::OK,
        &["Next step marked done.", "Nothing of yours is due today."],
    );

    // The inbox: a Due tab with its count, and each row's step under its name.
    let inbox = app.get("/projects/alpha/leads", &member).await;
    inbox.assert_shows(
        StatusCode::OK,
        &[
            "<a href=\"/projects/alpha/leads/due\">Due <span class=\"count\" data-count=\"due\">1</span></a>",
            "data-note=\"Demo\"",
            "due in 2 days",
            "· Demo</span></button>",
            "data-step-action=\"/projects/alpha/leads/",
            "<dialog class=\"step-dialog\" data-step-dialog",
            "<dt><kbd>f</kbd></dt>",
        ],
    );
}

#[tokio::test]
async fn a_step_set_from_an_inbox_row_goes_back_to_its_view() {
    let app = app().await;
    let id = lead(&app, "Ada").await;
    let member = app.session("member@example.com", MEMBER_PASSWORD).await;
    let saved = app
        .post_form(
            &member,
            &format!("/projects/alpha/leads/{id}/next-step"),
            &[
                ("at", "2030-01-02T08:00"),
                ("note", "Call"),
                ("from", "inbox"),
                ("back", "tab=open&sort=created"),
            ],
        )
        .await;
    assert_eq!(
        saved.header("location"),
        Some("/projects/alpha/leads?tab=open&sort=created")
    );
    let at = Utc.with_ymd_and_hms(2030, 1, 2, 8, 0, 0).unwrap();
    assert_eq!(
        step_of(&app, id).await,
        Some(NextStep::new(at, "Call").unwrap())
    );
    // Another project's lead is not found; so is a lead that does not exist.
    let missing = app
        .post_form(
            &member,
            "/projects/alpha/leads/999999/next-step",
            &[("at", "2030-01-02T08:00")],
        )
        .await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn reports_count_the_open_leads_without_a_next_step() {
    let app = app().await;
    let member = app.session("member@example.com", MEMBER_PASSWORD).await;
    let ada = lead(&app, "Ada").await;
    lead(&app, "Grace").await;
    lead(&app, "Alan").await;
    let reports = app.get("/projects/alpha/reports", &member).await;
    reports.assert_shows(
        StatusCode::OK,
        &[
            "<h2 id=\"follow-up-heading\">Follow-ups</h2>",
            "<strong>3</strong> of 3 open leads have no next step.",
        ],
    );
    plan(&app, ada, Utc::now() + Duration::days(1), "").await;
    let reports = app.get("/projects/alpha/reports", &member).await;
    reports.assert_shows(
        StatusCode::OK,
        &["<strong>2</strong> of 3 open leads have no next step. <a href=\"/projects/alpha/leads/due\">"],
    );
}
