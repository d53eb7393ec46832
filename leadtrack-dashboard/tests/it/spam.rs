//! Spam in the dashboard over HTTP: the Spam tab, marking and freeing leads one at a time
//! and in bulk, trusting a freed lead's address or domain, duplicates, and the Spam
//! settings; each read back from the store.

use crate::common::*;
use chrono::Utc;
use leadtrack_core::lead::StoredLead;
use leadtrack_core::request::{CreateRoute, NewLead};
use leadtrack_core::spam::SpamReason;
use leadtrack_core::types::{LeadId, LeadIdentifier, LeadStatus};
use serde_json::{Value, json};
use warp::http::StatusCode;

/// A lead of Alpha from a createLead body, held as `spam` when given.
async fn lead(app: &App, body: Value, spam: Option<SpamReason>) -> LeadId {
    let mut body = body;
    body["projectId"] = json!("alpha");
    let new = NewLead::parse(body.to_string().as_bytes(), CreateRoute::Browser).unwrap();
    let created = app
        .store
        .create_screened_lead(
            app.alpha.id,
            CreateRoute::Browser,
            new.data,
            spam,
            Utc::now(),
        )
        .await;
    created.unwrap().lead_id
}

async fn stored(app: &App, id: LeadId) -> StoredLead {
    let by_id = LeadIdentifier::LeadId(id);
    app.store.find_lead(app.alpha.id, &by_id).await.unwrap()
}

#[tokio::test]
async fn spam_waits_in_its_tab_and_people_sort_it_out_in_bulk() {
    let app = app().await;
    let person = lead(&app, json!({"userData": {"firstName": "Ada"}}), None).await;
    let junk = json!({"userData": {"firstName": "Bot"}});
    let bot = lead(&app, junk, Some(SpamReason::Burst)).await;
    let member = app.session("member@example.com", MEMBER_PASSWORD).await;

    let open = app.get("/projects/alpha/leads", &member).await;
    open.assert_shows(StatusCode::OK, &[">Ada<", "Mark as spam <kbd>s</kbd>"]);
    assert!(!open.text.contains(">Bot<"), "spam is out of Open");
    let tab = app.get("/projects/alpha/leads?tab=spam", &member).await;
    tab.assert_shows(
        StatusCode::OK,
        &[
            ">Bot<",
            "burst from one address",
            "Not spam <kbd>s</kbd>",
            "Spam <span class=\"count\" data-count=\"spam\">1</span>",
        ],
    );

    let freed = app
        .post_form(
            &member,
            "/projects/alpha/leads/not-spam",
            &[
                ("back", "tab=spam"),
                ("lead", &bot.to_string()),
                ("lead", &person.to_string()),
            ],
        )
        .await;
    assert_eq!(freed.status, StatusCode::SEE_OTHER);
    let back = freed.header("location").unwrap().to_owned();
    assert_eq!(
        back, "/projects/alpha/leads?tab=spam&freed=1",
        "only spam is freed"
    );
    let shown = app.get(&back, &member).await;
    shown.assert_shows(StatusCode::OK, &["1 lead taken out of spam, to Open."]);
    let bot_now = stored(&app, bot).await;
    assert_eq!(
        (bot_now.status, bot_now.spam_reason),
        (LeadStatus::Open, None)
    );

    let spammed = app
        .post_form(
            &member,
            "/projects/alpha/leads/spam",
            &[
                ("back", "tab=open"),
                ("lead", &bot.to_string()),
                ("lead", &person.to_string()),
            ],
        )
        .await;
    let back = spammed.header("location").unwrap().to_owned();
    assert_eq!(back, "/projects/alpha/leads?tab=open&spammed=2");
    for id in [bot, person] {
        let now = stored(&app, id).await;
        assert_eq!(
            (now.status, now.spam_reason),
            (LeadStatus::Spam, Some(SpamReason::Marked))
        );
    }
    let page = app
        .get(&format!("/projects/alpha/leads/{person}"), &member)
        .await;
    page.assert_shows(
        StatusCode::OK,
        &[
            "Held as spam:</strong> marked as spam",
            "Held as spam: marked as spam",
            "by Mo Member",
        ],
    );
    let visitor = app.send(form("/projects/alpha/leads/spam", "lead=1")).await;
    assert_eq!(visitor.header("location"), Some("/login"));
}

#[tokio::test]
async fn a_freed_lead_offers_owners_to_trust_its_address_and_domain() {
    let app = app().await;
    let body = json!({"userData": {"email": "jo@mailinator.com"},
        "deviceData": {"ipAddress": "203.0.113.7"}});
    let id = lead(&app, body, Some(SpamReason::DisposableEmail)).await;
    let page = format!("/projects/alpha/leads/{id}");
    let member = app.session("member@example.com", MEMBER_PASSWORD).await;
    let freed = app
        .post_form(
            &member,
            "/projects/alpha/leads/not-spam",
            &[("lead", &id.to_string())],
        )
        .await;
    assert_eq!(
        freed.header("location"),
        Some(format!("{page}?done=freed").as_str())
    );
    let as_member = app.get(&format!("{page}?done=freed"), &member).await;
    as_member.assert_shows(StatusCode::OK, &["Taken out of spam"]);
    assert!(
        !as_member.text.contains("Trust address"),
        "an owner's decision"
    );
    let trust = format!("{page}/trust");
    let refused = app.post_form(&member, &trust, &[("what", "domain")]).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);

    let owner = app.session("owner@example.com", OWNER_PASSWORD).await;
    let offered = app.get(&format!("{page}?done=freed"), &owner).await;
    offered.assert_shows(
        StatusCode::OK,
        &[
            "Trust address 203.0.113.7",
            "Trust email domain mailinator.com",
        ],
    );
    for what in ["domain", "address"] {
        let trusted = app.post_form(&owner, &trust, &[("what", what)]).await;
        assert_eq!(
            trusted.header("location"),
            Some(format!("{page}?done=trusted").as_str())
        );
    }
    let project = app.store.project("alpha").await.unwrap();
    assert_eq!(project.spam_rules.trusted_domains, ["mailinator.com"]);
    assert!(project.spam_rules.trusts("203.0.113.7".parse().unwrap()));
    let after = app.get(&format!("{page}?done=freed"), &owner).await;
    assert!(!after.text.contains("Trust address"), "trusted already");
}

#[tokio::test]
async fn duplicates_are_badged_linked_and_filtered() {
    let app = app().await;
    let first = lead(
        &app,
        json!({"userData": {"firstName": "Ada", "email": "ada@x.io"}}),
        None,
    )
    .await;
    let again = json!({"userData": {"firstName": "Ada L", "email": " ADA@x.io"}});
    let again = lead(&app, again, None).await;
    let other = lead(
        &app,
        json!({"userData": {"firstName": "Bo", "email": "bo@x.io"}}),
        None,
    )
    .await;
    let owner = app.session("owner@example.com", OWNER_PASSWORD).await;
    let inbox = app.get("/projects/alpha/leads", &owner).await;
    let badge = format!(
        "href=\"/projects/alpha/leads/{first}\" title=\"The same person as lead #{first}\">Duplicate</a>"
    );
    inbox.assert_shows(StatusCode::OK, &[&badge, "Duplicates only"]);
    let only = app
        .get("/projects/alpha/leads?duplicates=yes", &owner)
        .await;
    only.assert_shows(StatusCode::OK, &[">Ada L<"]);
    assert!(!only.text.contains(">Bo<") && !only.text.contains(">Ada<"));
    let duplicate = app
        .get(&format!("/projects/alpha/leads/{again}"), &owner)
        .await;
    duplicate.assert_shows(
        StatusCode::OK,
        &[
            &format!("of <a href=\"/projects/alpha/leads/{first}\">lead #{first}</a>"),
            "Same person",
            &format!("Ada (#{first})"),
        ],
    );
    let original = app
        .get(&format!("/projects/alpha/leads/{first}"), &owner)
        .await;
    original.assert_shows(
        StatusCode::OK,
        &["Same person", &format!("Ada L (#{again})")],
    );
    let stranger = app
        .get(&format!("/projects/alpha/leads/{other}"), &owner)
        .await;
    assert!(!stranger.text.contains("Same person"));
}

#[tokio::test]
async fn owners_set_the_spam_rules_and_problems_are_shown_at_their_fields() {
    let app = app().await;
    let owner = app.session("owner@example.com", OWNER_PASSWORD).await;
    let path = "/projects/alpha/settings/spam";
    let page = app.get(path, &owner).await;
    page.assert_shows(
        StatusCode::OK,
        &["Held leads an hour", "value=\"20000\"", "Trusted addresses"],
    );
    let bad = app
        .post_form(
            &owner,
            path,
            &[
                ("held_budget", "lots"),
                ("trusted_addresses", "10.0.0.300"),
                ("blocked_domains", "spam.test"),
            ],
        )
        .await;
    bad.assert_shows(
        StatusCode::BAD_REQUEST,
        &[
            "The held budget is a number of leads an hour",
            "&#34;10.0.0.300&#34; is not an address or network (CIDR)",
        ],
    );
    assert_eq!(
        app.store
            .project("alpha")
            .await
            .unwrap()
            .spam_rules
            .blocked_domains,
        Vec::<String>::new()
    );
    let saved = app
        .post_form(
            &owner,
            path,
            &[
                ("held_budget", "500"),
                ("trusted_addresses", "192.0.2.10\n198.51.100.0/24"),
                ("trusted_domains", ""),
                ("blocked_domains", "@Spam.test"),
                ("blocked_addresses", ""),
                ("blocked_words", "crypto, SEO services"),
            ],
        )
        .await;
    assert_eq!(
        saved.header("location"),
        Some("/projects/alpha/settings/spam?saved=saved")
    );
    let rules = app.store.project("alpha").await.unwrap().spam_rules;
    assert_eq!(rules.held_budget, 500);
    assert_eq!(rules.trusted_addresses.len(), 2);
    assert_eq!(rules.blocked_domains, ["spam.test"]);
    assert_eq!(rules.blocked_words, ["crypto", "seo services"]);
    let shown = app
        .get("/projects/alpha/settings/spam?saved=saved", &owner)
        .await;
    shown.assert_shows(
        StatusCode::OK,
        &[
            "Spam settings saved.",
            "192.0.2.10\n198.51.100.0/24</textarea>",
        ],
    );
    let member = app.session("member@example.com", MEMBER_PASSWORD).await;
    assert_eq!(app.get(path, &member).await.status, StatusCode::FORBIDDEN);
}
