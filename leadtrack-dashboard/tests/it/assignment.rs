//! Assignment through the pages: a member takes a lead from its inbox row and finds it
//! under Mine, an owner assigns ticked leads in bulk and one lead on its page, the export
//! names the assignee, and round-robin set in Settings gives new leads out in turn.

use crate::common::{App, MEMBER_PASSWORD, OWNER_PASSWORD, app};
use chrono::Utc;
use leadtrack_core::account::{NewUser, Password};
use leadtrack_core::assignment::RoundRobin;
use leadtrack_core::types::{LeadId, LeadIdentifier, Role, UserId};
use serde_json::json;
use warp::http::StatusCode;

async fn assignee(app: &App, lead: LeadId) -> Option<UserId> {
    let found = app
        .store
        .find_lead(app.alpha.id, &LeadIdentifier::LeadId(lead))
        .await
        .unwrap();
    found.assignee.map(|a| a.id)
}

async fn lead(app: &App, name: &str) -> LeadId {
    let body = json!({"userData": {"firstName": name, "email": format!("{name}@x.io")}, "formData": {"formName": "Contact"}});
    app.lead_at(&app.alpha, body, Utc::now()).await
}

#[tokio::test]
async fn leads_are_taken_from_a_row_assigned_in_bulk_and_listed_under_mine() {
    let app = app().await;
    let (ada, bo, cy) = (
        lead(&app, "Ada").await,
        lead(&app, "Bo").await,
        lead(&app, "Cy").await,
    );
    let member = app.session("member@example.com", MEMBER_PASSWORD).await;
    let owner = app.session("owner@example.com", OWNER_PASSWORD).await;

    let inbox = app.get("/projects/alpha/leads", &member).await;
    inbox.assert_shows(
        StatusCode::OK,
        &[
            "Mine <span class=\"count\" data-count=\"mine\">0</span>",
            &format!("form=\"take-{ada}\""),
            "Assigned to",
        ],
    );
    let taken = app
        .post_form(
            &member,
            &format!("/projects/alpha/leads/{ada}/assign"),
            &[("to", "me"), ("back", "tab=open")],
        )
        .await;
    assert_eq!(taken.status, StatusCode::SEE_OTHER);
    assert_eq!(
        taken.header("location"),
        Some("/projects/alpha/leads?tab=open&assigned=1")
    );
    assert_eq!(assignee(&app, ada).await, Some(app.member.id));
    let banner = app
        .get("/projects/alpha/leads?tab=open&assigned=1", &member)
        .await;
    banner.assert_shows(StatusCode::OK, &["1 lead assigned."]);

    let mine = app.get("/projects/alpha/leads?tab=mine", &member).await;
    mine.assert_shows(
        StatusCode::OK,
        &[
            "<h1>My leads</h1>",
            "Mine <span class=\"count\" data-count=\"mine\">1</span>",
            "aria-current=\"page\">Mine",
            ">Ada</a>",
        ],
    );
    assert!(!mine.text.contains(">Bo</a>"), "only the viewer's leads");
    let owners_mine = app.get("/projects/alpha/leads?tab=mine", &owner).await;
    owners_mine.assert_shows(StatusCode::OK, &["No open lead is assigned to you."]);

    // In bulk: the owner gives Bo and Cy to the member; nobody picked says so.
    let member_id = app.member.id.0.to_string();
    let (bo_id, cy_id) = (bo.to_string(), cy.to_string());
    let bulk = [
        ("lead", bo_id.as_str()),
        ("lead", cy_id.as_str()),
        ("back", "tab=open"),
    ];
    let unpicked = app
        .post_form(&owner, "/projects/alpha/leads/assign", &bulk)
        .await;
    unpicked.assert_shows(
        StatusCode::BAD_REQUEST,
        &["Pick who to assign them to first."],
    );
    assert_eq!(assignee(&app, bo).await, None);
    let mut picked = bulk.to_vec();
    picked.push(("to", &member_id));
    let assigned = app
        .post_form(&owner, "/projects/alpha/leads/assign", &picked)
        .await;
    assert_eq!(
        assigned.header("location"),
        Some("/projects/alpha/leads?tab=open&assigned=2")
    );
    assert_eq!(assignee(&app, cy).await, Some(app.member.id));
    let filtered = app
        .get(
            &format!("/projects/alpha/leads?assignee={member_id}"),
            &owner,
        )
        .await;
    filtered.assert_shows(StatusCode::OK, &[">Ada</a>", ">Bo</a>", ">Cy</a>"]);
    let nobodys = app.get("/projects/alpha/leads?assignee=none", &owner).await;
    assert!(!nobodys.text.contains(">Cy</a>"), "{}", nobodys.text);

    // A viewer takes no leads: nothing changes.
    let viewer = app
        .store
        .create_user(
            NewUser::new(
                "vic@example.com",
                Some("Vic"),
                &Password::new("vic password 1").unwrap(),
            )
            .unwrap(),
            Utc::now(),
        )
        .await
        .unwrap();
    app.store
        .add_member(app.alpha.id, viewer.id, Role::Viewer, Utc::now())
        .await
        .unwrap();
    let refused = app
        .post_form(
            &owner,
            &format!("/projects/alpha/leads/{ada}/assign"),
            &[("to", &viewer.id.0.to_string())],
        )
        .await;
    refused.assert_shows(StatusCode::BAD_REQUEST, &["That person cannot take leads"]);
    assert_eq!(assignee(&app, ada).await, Some(app.member.id));

    // The lead page says who has it, and its history who gave it; the export names them.
    let page = app
        .get(&format!("/projects/alpha/leads/{ada}"), &owner)
        .await;
    page.assert_shows(
        StatusCode::OK,
        &[
            &format!("<option value=\"{member_id}\" selected>Mo Member</option>"),
            "Assigned to Mo Member",
        ],
    );
    app.store
        .set_export(app.alpha.id, app.member.id, true)
        .await
        .unwrap();
    let csv = app.get("/projects/alpha/leads.csv", &member).await;
    let row = csv
        .text
        .lines()
        .find(|line| line.starts_with(&format!("{ada},")))
        .expect("Ada's row");
    assert!(row.contains(",Mo Member,"), "{row}");

    let unassigned = app
        .post_form(
            &owner,
            &format!("/projects/alpha/leads/{ada}/assign"),
            &[("to", "none")],
        )
        .await;
    assert_eq!(
        unassigned.header("location"),
        Some(format!("/projects/alpha/leads/{ada}?done=assigned").as_str())
    );
    assert_eq!(assignee(&app, ada).await, None);
    let page = app
        .get(
            &format!("/projects/alpha/leads/{ada}?done=assigned"),
            &owner,
        )
        .await;
    page.assert_shows(StatusCode::OK, &["Assignment saved.", "Unassigned"]);
}

#[tokio::test]
async fn owners_set_round_robin_and_new_leads_go_out_in_turn() {
    let app = app().await;
    let owner = app.session("owner@example.com", OWNER_PASSWORD).await;
    lead(&app, "Earlier").await;
    let page = app.get("/projects/alpha/settings/assignment", &owner).await;
    page.assert_shows(
        StatusCode::OK,
        &[
            "Give new leads out in turn",
            "> Olive Owner</label>",
            "> Mo Member</label>",
            "value=\"contact\"> Contact</label>",
        ],
    );
    let member = app.session("member@example.com", MEMBER_PASSWORD).await;
    let forbidden = app
        .get("/projects/alpha/settings/assignment", &member)
        .await;
    assert_eq!(forbidden.status, StatusCode::FORBIDDEN);

    let (owner_id, member_id) = (app.owner.id.0.to_string(), app.member.id.0.to_string());
    let path = "/projects/alpha/settings/assignment";
    let empty = app.post_form(&owner, path, &[("on", "yes")]).await;
    empty.assert_shows(
        StatusCode::BAD_REQUEST,
        &["Tick the members who take turns"],
    );
    assert_eq!(app.store.round_robin(app.alpha.id).await.unwrap(), None);
    let on = [
        ("on", "yes"),
        ("member", member_id.as_str()),
        ("member", owner_id.as_str()),
        ("form", "contact"),
    ];
    let saved = app.post_form(&owner, path, &on).await;
    assert_eq!(
        saved.header("location"),
        Some("/projects/alpha/settings/assignment?saved=saved")
    );
    let rule = RoundRobin::new(["contact"], &[app.member.id, app.owner.id]);
    assert_eq!(
        app.store.round_robin(app.alpha.id).await.unwrap(),
        Some(rule)
    );

    let mut turns = Vec::new();
    for name in ["One", "Two", "Three"] {
        let id = lead(&app, name).await;
        turns.push(assignee(&app, id).await);
    }
    let (m, o) = (Some(app.member.id), Some(app.owner.id));
    assert_eq!(turns, [m, o, m]);
    let other_form =
        json!({"userData": {"firstName": "News"}, "formData": {"formName": "Newsletter"}});
    let news = app.lead_at(&app.alpha, other_form, Utc::now()).await;
    assert_eq!(assignee(&app, news).await, None);

    let off = app
        .post_form(&owner, path, &[("member", member_id.as_str())])
        .await;
    assert_eq!(
        off.header("location"),
        Some("/projects/alpha/settings/assignment?saved=off")
    );
    assert_eq!(app.store.round_robin(app.alpha.id).await.unwrap(), None);
    let audit = app.get("/projects/alpha/settings/audit", &owner).await;
    audit.assert_shows(
        StatusCode::OK,
        &[
            "Set round-robin over 2 members, for the forms contact",
            "Turned round-robin off",
        ],
    );
}
