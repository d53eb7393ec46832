//! The inbox and a lead's page over HTTP: who sees them, what they show, and rating one lead
//! or several with the same rules as the API.

use crate::common::*;
use chrono::Utc;
use leadtrack_core::label::{LabelMapping, NewLabel};
use leadtrack_core::request::{CreateRoute, NewLead};
use leadtrack_core::types::{Consent, ConsentStatus, LeadId, LeadIdentifier, LeadStatus};
use serde_json::{Value, json};
use warp::http::StatusCode;

async fn lead(app: &App, body: Value) -> LeadId {
    let mut body = body;
    body["projectId"] = json!("alpha");
    let new = NewLead::parse(body.to_string().as_bytes(), CreateRoute::Browser).unwrap();
    app.store
        .create_lead(app.alpha.id, new.data, Utc::now())
        .await
        .unwrap()
        .lead_id
}

async fn label(app: &App, name: &str) -> String {
    let new = NewLabel::done(name, LabelMapping::default());
    app.store
        .create_label(app.alpha.id, new, Utc::now())
        .await
        .unwrap()
        .id
        .to_string()
}

/// Alpha with a conversion webhook connected, and its label `Customer`, sent to it alone.
async fn webhook_customer(app: &App) -> leadtrack_core::types::ConversionId {
    use leadtrack_core::integration::{IntegrationSettings, Secret, WebhookSettings};
    let webhook = IntegrationSettings::Webhook(WebhookSettings {
        url: "https://hooks.example.com/x".into(),
        secret: Secret::new("whsec_x"),
    });
    app.store
        .set_integration(app.alpha.id, webhook, Utc::now())
        .await
        .unwrap();
    let new = NewLabel::done("Customer", LabelMapping::webhook_only());
    let customer = app.store.create_label(app.alpha.id, new, Utc::now()).await;
    leadtrack_core::types::ConversionId::Label(customer.unwrap().id)
}

/// Rates lead `id` from its page as `cookie`'s user, with `fields` besides the form's
/// anti-forgery and one-time tokens; the answer.
async fn rate_from_page(app: &App, id: LeadId, cookie: &str, fields: &[(&str, &str)]) -> Reply {
    let lead_page = format!("/projects/alpha/leads/{id}");
    let page = app.get(&lead_page, cookie).await;
    let (csrf, token) = (page.csrf(), page.hidden("form"));
    let mut all = vec![("csrf", csrf.as_str()), ("form", token.as_str())];
    all.extend_from_slice(fields);
    let path = format!("{lead_page}/rate");
    app.send(form(&path, &encode(&all)).header("cookie", cookie))
        .await
}

async fn stored(app: &App, id: LeadId) -> leadtrack_core::lead::StoredLead {
    app.store
        .find_lead(app.alpha.id, &LeadIdentifier::LeadId(id))
        .await
        .unwrap()
}

#[tokio::test]
async fn the_inbox_is_for_members_of_the_project_only() {
    let app = app().await;
    let ada = lead(
        &app,
        json!({"userData": {"firstName": "Ada", "email": "ada@example.com"}}),
    )
    .await;
    let visitor = app.send(browser("GET", "/projects/alpha/leads")).await;
    assert_eq!(
        (visitor.status, visitor.header("location")),
        (
            StatusCode::SEE_OTHER,
            Some("/login?next=%2Fprojects%2Falpha%2Fleads")
        )
    );
    let member = app.session("member@example.com", MEMBER_PASSWORD).await;
    let inbox = app.get("/projects/alpha/leads", &member).await;
    assert_eq!(inbox.status, StatusCode::OK);
    assert!(inbox.text.contains("ada@<wbr>example.com"));
    assert!(
        !inbox.text.contains(">Settings<"),
        "members have no settings"
    );
    let page = app
        .get(&format!("/projects/alpha/leads/{ada}"), &member)
        .await;
    assert_eq!(page.status, StatusCode::OK);
    for path in [
        "/projects/beta/leads".to_owned(),
        format!("/projects/beta/leads/{ada}"),
        "/projects/alpha/leads/999999".to_owned(),
        "/projects/alpha/leads/abc".to_owned(),
    ] {
        let reply = app.get(&path, &member).await;
        assert_eq!(reply.status, StatusCode::NOT_FOUND, "{path}");
    }
}

#[tokio::test]
async fn tabs_count_and_views_filter_sort_and_page() {
    let app = app().await;
    for (first, gclid) in [("Ada", true), ("Grace", false), ("Alan", true)] {
        let mut attribution = json!({"cid": "1.2"});
        if gclid {
            attribution["gclid"] = json!("G");
        }
        lead(
            &app,
            json!({"userData": {"firstName": first}, "attributionData": attribution}),
        )
        .await;
    }
    let owner = app.session("owner@example.com", OWNER_PASSWORD).await;
    let inbox = app.get("/projects/alpha/leads", &owner).await;
    let counts = inbox
        .text
        .split("class=\"count\" data-count=\"")
        .skip(1)
        .map(|rest| rest.split(['>', '<']).nth(1).unwrap().to_owned())
        .collect::<Vec<_>>();
    assert_eq!(
        counts,
        ["3", "0", "0", "0", "0", "0", "0"],
        "open, mine, due, pending, rated, lost, spam"
    );
    let order: Vec<&str> = ["Alan", "Grace", "Ada"]
        .into_iter()
        .filter(|n| inbox.text.contains(n))
        .collect();
    assert_eq!(order.len(), 3);
    assert!(
        inbox.text.find("Alan").unwrap() < inbox.text.find("Ada").unwrap(),
        "newest first"
    );

    let filtered = app.get("/projects/alpha/leads?gclid=no", &owner).await;
    assert!(filtered.text.contains("Grace") && !filtered.text.contains(">Ada<"));
    let sorted = app
        .get("/projects/alpha/leads?sort=firstName:asc", &owner)
        .await;
    let (ada, alan, grace) = (
        sorted.text.find(">Ada<").unwrap(),
        sorted.text.find(">Alan<").unwrap(),
        sorted.text.find(">Grace<").unwrap(),
    );
    assert!(ada < alan && alan < grace);
    let searched = app.get("/projects/alpha/leads?search=gra", &owner).await;
    assert!(
        searched.text.contains("Page 1 of 1 (1 lead)"),
        "{}",
        searched.text
    );
    let bad = app
        .get("/projects/alpha/leads?tab=nope&from=yesterday", &owner)
        .await;
    assert_eq!(bad.status, StatusCode::OK);
    assert!(bad.text.contains("There is no tab"));
    assert!(bad.text.contains("The start date was not understood"));
}

#[tokio::test]
async fn rating_a_lead_records_who_and_queues_the_conversion() {
    let app = app().await;
    let customer = label(&app, "Customer").await;
    let id = lead(&app, json!({"userData": {"email": "ada@example.com"}})).await;
    let member = app.session("member@example.com", MEMBER_PASSWORD).await;
    let page = app
        .get(&format!("/projects/alpha/leads/{id}"), &member)
        .await;
    assert!(page.text.contains("name=\"conversionId\"") && page.text.contains("Customer"));
    let picked = format!("value=\"{customer}\" checked");
    assert!(
        !page.text.contains(&picked),
        "an open lead's form picks nothing"
    );
    let path = format!("/projects/alpha/leads/{id}/rate");
    let token = page.hidden("form");
    let body = encode(&[
        ("csrf", &page.csrf()),
        ("form", &token),
        ("conversionId", &customer),
        ("price", "1,500.50"),
        ("note", "signed"),
    ]);

    // No token: refused, nothing changes.
    let forged = app
        .send(form(&path, &encode(&[("conversionId", &customer)])).header("cookie", &member))
        .await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN);
    assert_eq!(stored(&app, id).await.status, LeadStatus::Open);

    let bad_price = body.replace("1%2C500.50", "lots");
    let reply = app
        .send(form(&path, &bad_price).header("cookie", &member))
        .await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
    assert!(reply.text.contains("The price must be an amount"));
    assert_eq!(stored(&app, id).await.status, LeadStatus::Open);

    let rated = app.send(form(&path, &body).header("cookie", &member)).await;
    assert_eq!(rated.status, StatusCode::SEE_OTHER, "{}", rated.text);
    let after = rated.header("location").unwrap().to_owned();
    assert_eq!(after, format!("/projects/alpha/leads/{id}?done=queued"));
    let lead = stored(&app, id).await;
    assert_eq!(
        (lead.status, lead.price),
        (LeadStatus::Pending, Some(150_050))
    );
    assert_eq!(lead.note.as_deref(), Some("signed"));
    let jobs = app.store.lead_jobs(app.alpha.id, id).await.unwrap();
    assert_eq!(
        jobs[0]
            .job
            .rated_by
            .as_ref()
            .map(ToString::to_string)
            .as_deref(),
        Some("Mo Member")
    );
    let window = jobs[0].job.due_at - jobs[0].job.created_at;
    assert_eq!(
        window.num_seconds(),
        10,
        "held for the project's undo window"
    );
    let shown = app.get(&after, &member).await;
    shown.assert_shows(
        StatusCode::OK,
        &[
            "Rated. Once the undo window has passed, the conversion goes to",
            "Rated Customer, 1,500.50 USD</span>",
            "Note with the rating: “signed”",
            "<strong>Customer</strong> is saved, and sent in <span data-countdown>10 s</span>",
            "<strong>Customer, 1,500.50 USD</strong> · <span class=\"badge\">queued</span>",
            "<p class=\"note\">“signed”</p>",
            &format!("action=\"/projects/alpha/leads/{id}/undo\" data-undo-form"),
        ],
    );
    // Its form starts at the rating and the price it has.
    assert!(shown.text.contains(&picked), "the form starts at Customer");
    assert!(
        shown
            .text
            .contains("placeholder=\"e.g. 1,500.00\" value=\"1,500.50\"")
    );

    // The same form again (a double click, a repeated Enter, a replay): saved once.
    let replay = app.send(form(&path, &body).header("cookie", &member)).await;
    assert_eq!(
        replay.header("location"),
        Some(format!("/projects/alpha/leads/{id}?done=already").as_str())
    );
    let again = app.get(replay.header("location").unwrap(), &member).await;
    assert!(again.text.contains("This rating was already saved."));
    assert_eq!(
        app.store.lead_jobs(app.alpha.id, id).await.unwrap().len(),
        1
    );
    // Another form while the job waits: the 409 rule, explained at the form.
    let other = body.replace(
        &page.csrf(),
        &format!("{}&form={}", page.csrf(), uuid::Uuid::new_v4()),
    );
    let conflict = app
        .send(form(&path, &other).header("cookie", &member))
        .await;
    assert_eq!(conflict.status, StatusCode::CONFLICT);
    assert!(conflict.text.contains("still being sent"));

    // Undo inside the window: nothing is sent, and the lead is as it was.
    let undo = encode(&[("csrf", &page.csrf())]);
    let undo_path = format!("/projects/alpha/leads/{id}/undo");
    let reply = app
        .send(form(&undo_path, &undo).header("cookie", &member))
        .await;
    assert_eq!(
        reply.header("location"),
        Some(format!("/projects/alpha/leads/{id}?done=undone").as_str())
    );
    let lead = stored(&app, id).await;
    assert_eq!(
        (lead.status, lead.price, lead.note, lead.conversion_id),
        (LeadStatus::Open, None, None, None)
    );
    let undone = app.get(reply.header("location").unwrap(), &member).await;
    assert!(undone.text.contains("Undone. Nothing was sent"));
    assert!(
        undone
            .text
            .contains("Rating undone before anything was sent")
    );
    assert!(
        !undone.text.contains("data-undo-form"),
        "nothing left to undo"
    );
    let late = app
        .send(form(&undo_path, &undo).header("cookie", &member))
        .await;
    assert_eq!(
        late.header("location"),
        Some(format!("/projects/alpha/leads/{id}?done=late").as_str())
    );

    // A form's address asked for as a page leads to its page.
    let reload = app.get(&path, &member).await;
    assert_eq!(
        (reload.status, reload.header("location")),
        (
            StatusCode::SEE_OTHER,
            Some(format!("/projects/alpha/leads/{id}").as_str())
        )
    );

    // The notice is one of the page's own sentences, never text from the link.
    let spoofed = app
        .get(
            &format!("/projects/alpha/leads/{id}?done=Your+account+is+locked"),
            &member,
        )
        .await;
    assert!(!spoofed.text.contains("Your account is locked"));
}

#[tokio::test]
async fn rating_several_leads_lists_the_refused_and_rates_the_rest() {
    let app = app().await;
    let customer = label(&app, "Customer").await;
    let a = lead(&app, json!({"userData": {"firstName": "Ada"}})).await;
    let b = lead(&app, json!({"userData": {"firstName": "Grace"}})).await;
    let c = lead(&app, json!({"userData": {"firstName": "Alan"}})).await;
    let owner = app.session("owner@example.com", OWNER_PASSWORD).await;
    let csrf = app.get("/projects/alpha/leads", &owner).await.csrf();
    let pending = encode(&[("csrf", &csrf), ("conversionId", &customer)]);
    let first = app
        .send(form(&format!("/projects/alpha/leads/{b}/rate"), &pending).header("cookie", &owner))
        .await;
    assert_eq!(first.status, StatusCode::SEE_OTHER);

    let (a, b, c) = (a.to_string(), b.to_string(), c.to_string());
    let body = encode(&[
        ("csrf", &csrf),
        ("back", "tab=open"),
        ("lead", &a),
        ("lead", &b),
        ("lead", &c),
        ("conversionId", "lost"),
    ]);
    let body = format!("{body}&form={}", uuid::Uuid::new_v4());
    let reply = app
        .send(form("/projects/alpha/leads/rate", &body).header("cookie", &owner))
        .await;
    assert_eq!(reply.status, StatusCode::SEE_OTHER, "{}", reply.text);
    let after = reply.header("location").unwrap().to_owned();
    assert!(
        after.starts_with("/projects/alpha/leads?tab=open&bulk="),
        "{after}"
    );
    let page = app.get(&after, &owner).await;
    page.assert_shows(
        StatusCode::OK,
        &[
            "<strong>2 leads rated</strong>, sent in <span data-countdown>",
            "Undo all <kbd>u</kbd>",
            "Grace (#",
            "its last rating is still being sent",
        ],
    );
    for (id, status) in [
        (&a, LeadStatus::Pending),
        (&b, LeadStatus::Pending),
        (&c, LeadStatus::Pending),
    ] {
        let lead = stored(&app, LeadId(id.parse().unwrap())).await;
        assert_eq!(lead.status, status, "lead {id}");
    }
    // A reload re-posts nothing; a replayed form rates nobody twice.
    let replay = app
        .send(form("/projects/alpha/leads/rate", &body).header("cookie", &owner))
        .await;
    let replayed = app.get(replay.header("location").unwrap(), &owner).await;
    assert!(replayed.text.contains("This rating was already saved."));
    let jobs = app
        .store
        .lead_jobs(app.alpha.id, LeadId(a.parse().unwrap()));
    assert_eq!(jobs.await.unwrap().len(), 1);

    // One Undo takes the batch back, and only the batch (Grace keeps her own rating).
    let token = page.hidden("bulk");
    let undo = encode(&[("csrf", &csrf), ("back", "tab=open"), ("bulk", &token)]);
    let reply = app
        .send(form("/projects/alpha/leads/undo", &undo).header("cookie", &owner))
        .await;
    assert_eq!(
        reply.header("location"),
        Some("/projects/alpha/leads?tab=open&undone=2")
    );
    let page = app.get(reply.header("location").unwrap(), &owner).await;
    assert!(page.text.contains("2 ratings undone. Nothing was sent."));
    for (id, status) in [
        (&a, LeadStatus::Open),
        (&b, LeadStatus::Pending),
        (&c, LeadStatus::Open),
    ] {
        let lead = stored(&app, LeadId(id.parse().unwrap())).await;
        assert_eq!(lead.status, status, "lead {id}");
    }
    let none = encode(&[("csrf", &csrf), ("conversionId", "lost")]);
    let reply = app
        .send(form("/projects/alpha/leads/rate", &none).header("cookie", &owner))
        .await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
    assert!(reply.text.contains("Select the leads to rate first."));
}

#[tokio::test]
async fn the_live_count_says_how_many_leads_arrived_since() {
    let app = app().await;
    let owner = app.session("owner@example.com", OWNER_PASSWORD).await;
    let since = Utc::now().timestamp_millis();
    lead(&app, json!({"userData": {"email": "new@example.com"}})).await;
    let reply = app
        .get(&format!("/projects/alpha/leads/new?since={since}"), &owner)
        .await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.header("content-type"), Some("application/json"));
    assert_eq!(reply.text, r#"{"count":1}"#);
    let later = Utc::now().timestamp_millis() + 1_000;
    let reply = app
        .get(&format!("/projects/alpha/leads/new?since={later}"), &owner)
        .await;
    assert_eq!(reply.text, r#"{"count":0}"#);
    let reply = app
        .get(
            "/projects/beta/leads/new?since=0",
            &app.session("member@example.com", MEMBER_PASSWORD).await,
        )
        .await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn the_projects_page_shows_open_leads_the_last_week_and_the_last_delivery_problem() {
    let app = app().await;
    let customer = webhook_customer(&app).await;
    let id = lead(&app, json!({"userData": {"email": "ada@example.com"}})).await;
    lead(&app, json!({"userData": {"email": "grace@example.com"}})).await;
    let owner = app.session("owner@example.com", OWNER_PASSWORD).await;
    let home = app.get("/", &owner).await;
    assert!(home.text.contains("No problem"), "{}", home.text);

    app.rate(&app.alpha, id, customer, None).await;
    app.settle_next_job(Some("HTTP 410: gone"), None).await;
    let home = app.get("/", &owner).await;
    let row = home.text.split("/projects/alpha/leads").nth(1).unwrap();
    let cells: Vec<&str> = row
        .split("class=\"num\" data-label=")
        .skip(1)
        .filter_map(|cell| cell.split_once('>').map(|(_, rest)| rest))
        .take(2)
        .map(|c| c.split('<').next().unwrap())
        .collect();
    assert_eq!(
        cells,
        ["1", "2"],
        "one open (the other is pending), two this week"
    );
    assert!(
        home.text
            .contains("Webhook failed, just now: HTTP 410: gone"),
        "{}",
        home.text
    );
}

#[tokio::test]
async fn a_leads_page_shows_its_consent_and_the_projects_default() {
    let app = app().await;
    app.store
        .update_project(
            app.alpha.id,
            leadtrack_core::project::ProjectSettings {
                default_consent: Some(Consent {
                    ad_user_data: Some(ConsentStatus::Granted),
                    ad_personalization: Some(ConsentStatus::Granted),
                }),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let id = lead(
        &app,
        json!({"userData": {"email": "ada@example.com"}, "consent": {"adUserData": "denied"}}),
    )
    .await;
    let member = app.session("member@example.com", MEMBER_PASSWORD).await;
    let page = app
        .get(&format!("/projects/alpha/leads/{id}"), &member)
        .await;
    assert!(
        page.text.contains("<dt>Ad user data</dt><dd>Denied</dd>"),
        "{}",
        page.text
    );
    assert!(
        page.text
            .contains("<dt>Ad personalization</dt><dd>Granted (project default)</dd>")
    );
}

#[tokio::test]
async fn a_lead_page_shows_a_restatement_and_why_a_platform_got_nothing() {
    use leadtrack_core::integration::{Ga4Settings, IntegrationSettings, Secret, WebhookSettings};
    use leadtrack_core::types::ConversionId;

    let app = app().await;
    for settings in [
        IntegrationSettings::Webhook(WebhookSettings {
            url: "https://hooks.example.com/x".into(),
            secret: Secret::new("whsec_x"),
        }),
        IntegrationSettings::Ga4(Ga4Settings {
            measurement_id: "G-1".into(),
            api_secret: Secret::new("ga4-secret"),
            validate: false,
            base_url: None,
        }),
    ] {
        app.store
            .set_integration(app.alpha.id, settings, Utc::now())
            .await
            .unwrap();
    }
    let mapping = LabelMapping {
        ga4_event: Some("purchase".into()),
        ..LabelMapping::webhook_only()
    };
    let new = NewLabel::done("Customer", mapping);
    let customer = app.store.create_label(app.alpha.id, new, Utc::now());
    let customer = ConversionId::Label(customer.await.unwrap().id);
    let body = json!({"userData": {"email": "ada@example.com"}, "attributionData": {"cid": "1.2"}});
    let id = lead(&app, body).await;
    app.rate(&app.alpha, id, customer, Some(1000)).await;
    // The first rating went out in requests of three conversions each.
    app.settle_next_job(None, Some(3)).await;
    app.rate(&app.alpha, id, customer, Some(2500)).await;

    let member = app.session("member@example.com", MEMBER_PASSWORD).await;
    let page = app
        .get(&format!("/projects/alpha/leads/{id}"), &member)
        .await;
    let newest = page.text.split("class=\"card job\"").nth(1).unwrap();
    let webhook = newest
        .split("<tr>")
        .find(|row| row.contains("Webhook"))
        .unwrap();
    assert!(
        webhook.contains("<span class=\"badge\">restatement</span>") && webhook.contains("pending"),
        "{webhook}"
    );
    let ga4 = newest
        .split("<tr>")
        .find(|row| row.contains("GA4"))
        .unwrap();
    assert!(
        ga4.contains("skipped") && ga4.contains("GA4 cannot restate a conversion&#39;s value"),
        "{ga4}"
    );
    let first = page.text.split("class=\"card job\"").nth(2).unwrap();
    let sent_together = "<span class=\"muted\">· one of 3 sent together</span>";
    assert_eq!(first.matches(sent_together).count(), 2, "{first}");
    assert!(!newest.contains("sent together"));
}

#[tokio::test]
async fn n_saves_and_opens_the_next_open_lead() {
    let app = app().await;
    let customer = label(&app, "Customer").await;
    let older = lead(&app, json!({"userData": {"email": "ada@example.com"}})).await;
    let newer = lead(&app, json!({"userData": {"email": "grace@example.com"}})).await;
    let member = app.session("member@example.com", MEMBER_PASSWORD).await;
    // Rates `id` from its page as `n` does; where the dashboard goes next.
    let rate_and_next = async |id: LeadId| {
        let fields = [("conversionId", customer.as_str()), ("next", "1")];
        let reply = rate_from_page(&app, id, &member, &fields).await;
        reply.header("location").map(str::to_owned)
    };
    let next = rate_and_next(newer).await;
    assert_eq!(next, Some(format!("/projects/alpha/leads/{older}")));
    assert_eq!(stored(&app, newer).await.status, LeadStatus::Pending);
    let last = rate_and_next(older).await;
    assert_eq!(last.as_deref(), Some("/projects/alpha/leads"), "none left");
}

#[tokio::test]
async fn an_owner_sends_the_failed_deliveries_of_a_lead_again() {
    let app = app().await;
    let customer = webhook_customer(&app).await;
    let id = lead(&app, json!({"userData": {"email": "ada@example.com"}})).await;
    app.rate(&app.alpha, id, customer, Some(1000)).await;
    app.settle_next_job(Some("HTTP 410: gone"), None).await;
    let path = format!("/projects/alpha/leads/{id}");
    let retry = format!("{path}/retry");

    let member = app.session("member@example.com", MEMBER_PASSWORD).await;
    let page = app.get(&path, &member).await;
    assert!(!page.text.contains(&retry), "a member is not offered it");
    let refused = app
        .send(form(&retry, &encode(&[("csrf", &page.csrf())])).header("cookie", &member))
        .await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);

    let owner = app.session("owner@example.com", OWNER_PASSWORD).await;
    let page = app.get(&path, &owner).await;
    assert!(page.text.contains("Send the failed deliveries again"));
    let body = encode(&[("csrf", &page.csrf())]);
    let reply = app.send(form(&retry, &body).header("cookie", &owner)).await;
    assert_eq!(
        reply.header("location"),
        Some(format!("{path}?done=retried").as_str())
    );
    let jobs = app.store.lead_jobs(app.alpha.id, id).await.unwrap();
    assert_eq!(jobs.len(), 2);
    assert_eq!(
        jobs[0].job.conversion_event_id,
        jobs[1].job.conversion_event_id
    );
    assert_eq!(stored(&app, id).await.status, LeadStatus::Pending);
    let shown = app.get(reply.header("location").unwrap(), &owner).await;
    assert!(
        shown
            .text
            .contains("The failed deliveries are being sent again")
    );
    assert!(shown.text.contains("Failed deliveries queued again"));
    let again = app.send(form(&retry, &body).header("cookie", &owner)).await;
    assert_eq!(
        again.header("location"),
        Some(format!("{path}?done=unretried").as_str())
    );
}

#[tokio::test]
async fn a_failed_delivery_shows_on_its_row_and_in_needs_attention_with_retry() {
    let app = app().await;
    let customer = webhook_customer(&app).await;
    let failed = lead(
        &app,
        json!({"userData": {"firstName": "Ada", "lastName": "King"}}),
    )
    .await;
    let fine = lead(
        &app,
        json!({"userData": {"firstName": "Grace", "lastName": "Hopper"}}),
    )
    .await;
    app.rate(&app.alpha, failed, customer, Some(1000)).await;
    app.settle_next_job(Some("HTTP 410: the hook is gone"), None)
        .await;
    app.rate(&app.alpha, fine, customer, Some(1000)).await;
    app.settle_next_job(None, None).await;
    let member = app.session("member@example.com", MEMBER_PASSWORD).await;

    let inbox = app.get("/projects/alpha/leads?tab=rated", &member).await;
    let row = |id: LeadId| {
        let start = inbox.text.find(&format!("id=\"lead-{id}\"")).unwrap();
        let rest = &inbox.text[start..];
        rest[..rest.find("</tr>").unwrap()].to_owned()
    };
    let marked = row(failed);
    assert!(
        marked.contains(
            "Webhook failed<span class=\"visually-hidden\">: HTTP 410: the hook is gone</span>"
        ) && marked.contains(&format!(
            "href=\"/projects/alpha/leads/{failed}#conversions\""
        )),
        "{marked}"
    );
    assert!(!row(fine).contains("class=\"trouble\""));
    assert!(
        inbox.text.contains("<a href=\"/projects/alpha/leads/attention\"><span aria-hidden=\"true\">⚠</span> 1 lead needs attention</a>"),
        "the inbox links to them"
    );

    // A member sees the list, without Retry; an owner retries from it and comes back.
    let path = "/projects/alpha/leads/attention";
    let listed = app.get(path, &member).await;
    assert_eq!(listed.status, StatusCode::OK);
    for shown in [
        "Ada King",
        "Customer",
        "Webhook",
        "failed",
        "HTTP 410: the hook is gone",
    ] {
        assert!(listed.text.contains(shown), "{shown}");
    }
    assert!(!listed.text.contains("Grace Hopper"));
    assert!(
        !listed.text.contains("/retry"),
        "a member is not offered Retry"
    );
    let owner = app.session("owner@example.com", OWNER_PASSWORD).await;
    let listed = app.get(path, &owner).await;
    let retry = format!("/projects/alpha/leads/{failed}/retry");
    assert!(listed.text.contains(&format!("action=\"{retry}\"")));
    let body = encode(&[("csrf", &listed.csrf()), ("back", "attention")]);
    let reply = app.send(form(&retry, &body).header("cookie", &owner)).await;
    assert_eq!(
        reply.header("location"),
        Some(format!("{path}?done=retried").as_str())
    );
    let after = app.get(reply.header("location").unwrap(), &owner).await;
    assert!(
        after
            .text
            .contains("The failed deliveries are being sent again")
    );
    assert!(
        after.text.contains("Nothing needs attention"),
        "its retry is on its way"
    );
    let inbox = app.get("/projects/alpha/leads?tab=pending", &member).await;
    assert!(!inbox.text.contains("need attention") && !inbox.text.contains("needs attention"));
}

#[tokio::test]
async fn the_inbox_shows_a_held_rating_with_its_undo() {
    let app = app().await;
    let customer = label(&app, "Customer").await;
    let id = lead(&app, json!({"userData": {"email": "ada@example.com"}})).await;
    let member = app.session("member@example.com", MEMBER_PASSWORD).await;
    rate_from_page(&app, id, &member, &[("conversionId", &customer)]).await;

    let inbox = app.get("/projects/alpha/leads?tab=pending", &member).await;
    inbox.assert_shows(
        StatusCode::OK,
        &[
            "sent in <span data-countdown>10 s</span>",
            &format!("form=\"undo-{id}\""),
            &format!("id=\"undo-{id}\" method=\"post\" action=\"/projects/alpha/leads/{id}/undo\""),
        ],
    );
    let undo = encode(&[("csrf", &inbox.csrf()), ("back", "tab=pending")]);
    let undo_path = format!("/projects/alpha/leads/{id}/undo");
    let reply = app
        .send(form(&undo_path, &undo).header("cookie", &member))
        .await;
    assert_eq!(
        reply.header("location"),
        Some("/projects/alpha/leads?tab=pending&undone=1")
    );
    let after = app.get(reply.header("location").unwrap(), &member).await;
    assert!(after.text.contains("1 rating undone. Nothing was sent."));
    assert_eq!(stored(&app, id).await.status, LeadStatus::Open);
}

#[tokio::test]
async fn each_platform_with_a_click_id_has_its_badge() {
    let app = app().await;
    let ids = json!({"gbraid": "B", "fbp": "fb.1.1.1", "msclkid": "M", "li_fat_id": "L",
        "_ttp": "TTP", "rdt_cid": "R", "_scid": "S", "epik": "P", "twclid": "X"});
    lead(
        &app,
        json!({"userData": {"firstName": "Every"}, "attributionData": ids}),
    )
    .await;
    let owner = app.session("owner@example.com", OWNER_PASSWORD).await;
    let inbox = app.get("/projects/alpha/leads", &owner).await;
    let badges: Vec<&str> = inbox
        .text
        .split("<span class=\"badge\" title=\"Has ")
        .skip(1)
        .map(|rest| rest.split('>').nth(1).unwrap().split('<').next().unwrap())
        .collect();
    assert_eq!(
        badges,
        [
            "Google",
            "Meta",
            "Microsoft",
            "LinkedIn",
            "TikTok",
            "Reddit",
            "Snapchat",
            "Pinterest",
            "X"
        ]
    );

    // A lead from a Facebook ad with only the link's `fbclid` has Meta's badge too.
    let clicked = lead(
        &app,
        json!({"userData": {"firstName": "Fay"}, "attributionData": {"fbclid": "IwAR-1"}}),
    )
    .await;
    let inbox = app.get("/projects/alpha/leads", &owner).await;
    let row = inbox
        .text
        .split(&format!("id=\"lead-{clicked}\""))
        .nth(1)
        .unwrap();
    let row = &row[..row.find("</tr>").unwrap()];
    assert!(row.contains(">Meta</span>"), "{row}");
}

/// The one-time token of lead `id`'s row form on an inbox page.
fn row_token(page: &Reply, id: LeadId) -> String {
    let form = format!("<form id=\"row-{id}\"");
    let rest = &page.text[page.text.find(&form).expect("the row's form")..];
    let field = "name=\"form\" value=\"";
    let rest = &rest[rest.find(field).unwrap() + field.len()..];
    rest[..rest.find('"').unwrap()].to_owned()
}

/// A row saved from the inbox is the lead page's rating: without the script it goes back
/// to the view (`303`) or shows the inbox with the problem; with it (`Accept: JSON`) the
/// answer says how it went, how long the rating waits, and the token for the next save.
#[tokio::test]
async fn a_row_saves_with_a_303_or_as_json_by_the_same_rules() {
    let app = app().await;
    let customer = webhook_customer(&app).await.to_string();
    let ada = lead(&app, json!({"userData": {"email": "ada@example.com"}})).await;
    let grace = lead(&app, json!({"userData": {"email": "grace@example.com"}})).await;
    let member = app.session("member@example.com", MEMBER_PASSWORD).await;
    let inbox = app.get("/projects/alpha/leads?tab=open", &member).await;
    assert!(inbox.text.contains(&format!("id=\"rating-{ada}\"")));
    let csrf = inbox.csrf();
    let save = |id: LeadId, token: &str, price: &str| {
        let body = encode(&[
            ("csrf", &csrf),
            ("form", token),
            ("back", "tab=open&page=1"),
            ("conversionId", &customer),
            ("price", price),
        ]);
        form(&format!("/projects/alpha/leads/{id}/rate"), &body).header("cookie", &member)
    };

    // A bad price: the inbox again, with the problem; nothing changes.
    let token = row_token(&inbox, ada);
    let refused = app.send(save(ada, &token, "lots")).await;
    refused.assert_shows(StatusCode::BAD_REQUEST, &["The price must be an amount"]);
    assert_eq!(stored(&app, ada).await.status, LeadStatus::Open);

    // Without the script: back to the view, at the row; a replay rates nothing again.
    let saved = app.send(save(ada, &token, "1,500")).await;
    assert_eq!(saved.status, StatusCode::SEE_OTHER);
    assert_eq!(
        saved.header("location"),
        Some(format!("/projects/alpha/leads?tab=open&page=1#lead-{ada}").as_str())
    );
    let again = app.send(save(ada, &token, "1,500")).await;
    assert_eq!(again.status, StatusCode::SEE_OTHER);
    let lead = stored(&app, ada).await;
    assert_eq!(
        (lead.status, lead.price),
        (LeadStatus::Pending, Some(150_000))
    );
    assert_eq!(
        app.store.lead_jobs(app.alpha.id, ada).await.unwrap().len(),
        1
    );
    let shown = app.get("/projects/alpha/leads?tab=pending", &member).await;
    assert!(shown.text.contains("sent in"), "the row's rating waits");

    // With the script: JSON.
    let json_save = |request: Request| request.header("accept", "application/json");
    let token = row_token(&inbox, grace);
    let saved = app.send(json_save(save(grace, &token, "250.50"))).await;
    assert_eq!(saved.status, StatusCode::OK, "{}", saved.text);
    let answer: Value = serde_json::from_str(&saved.text).unwrap();
    assert_eq!(answer["rated"], "queued");
    assert_eq!(answer["status"], "pending", "the tabs' counts follow it");
    let held = answer["heldMs"].as_i64().unwrap();
    assert!(held > 0 && held <= 10_000, "waits out the window: {held}");
    assert!(
        answer["form"]
            .as_str()
            .unwrap()
            .parse::<uuid::Uuid>()
            .is_ok()
    );
    assert_eq!(stored(&app, grace).await.price, Some(25_050));
    // Rated again while its rating waits: refused, and said so.
    let fresh = answer["form"].as_str().unwrap().to_owned();
    let refused = app.send(json_save(save(grace, &fresh, "99"))).await;
    assert_eq!(refused.status, StatusCode::CONFLICT);
    let answer: Value = serde_json::from_str(&refused.text).unwrap();
    assert!(
        answer["problem"]
            .as_str()
            .unwrap()
            .contains("still being sent")
    );
    assert_eq!(stored(&app, grace).await.price, Some(25_050));
}

/// The inbox's columns and the colour scheme are each user's own, kept across sign-ins;
/// a forged form changes nothing, and a form never sends anyone off the site.
#[tokio::test]
async fn columns_and_theme_are_kept_per_user() {
    let app = app().await;
    lead(&app, json!({"userData": {"email": "ada@example.com"}, "attributionData": {"utm_source": "google", "utm_medium": "cpc", "utm_campaign": "spring"}})).await;
    let member = app.session("member@example.com", MEMBER_PASSWORD).await;
    let owner = app.session("owner@example.com", OWNER_PASSWORD).await;
    let heading = |name: &str| format!("data-col=\"{name}\"");
    let inbox = app.get("/projects/alpha/leads", &member).await;
    assert!(inbox.text.contains(&heading("email")) && !inbox.text.contains(&heading("campaign")));
    let csrf = inbox.csrf();
    let choose = |back: &str| {
        let body = encode(&[
            ("csrf", &csrf),
            ("back", back),
            ("column", "campaign"),
            ("column", "status"),
            ("column", "nonsense"),
        ]);
        form("/preferences/columns", &body).header("cookie", &member)
    };
    let forged = app
        .send(form("/preferences/columns", "column=campaign").header("cookie", &member))
        .await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN);
    let saved = app.send(choose("/projects/alpha/leads?tab=open")).await;
    assert_eq!(saved.status, StatusCode::SEE_OTHER);
    assert_eq!(
        saved.header("location"),
        Some("/projects/alpha/leads?tab=open")
    );
    let inbox = app.get("/projects/alpha/leads", &member).await;
    assert!(inbox.text.contains("spring"), "the campaign shows");
    for (name, shown) in [
        ("name", true),
        ("campaign", true),
        ("status", true),
        ("email", false),
        ("created", false),
    ] {
        assert_eq!(inbox.text.contains(&heading(name)), shown, "{name}");
    }
    let owners = app.get("/projects/alpha/leads", &owner).await;
    assert!(
        owners.text.contains(&heading("email")),
        "the owner's own columns"
    );
    let elsewhere = app.send(choose("https://evil.example/")).await;
    assert_eq!(elsewhere.header("location"), Some("/"));

    // The theme: back to the page it was switched on; `system` follows the system again.
    let theme = |value: &str| {
        form(
            "/preferences/theme",
            &encode(&[("csrf", &csrf), ("theme", value)]),
        )
        .header("cookie", &member)
        .header(
            "referer",
            &format!("{ORIGIN}/projects/alpha/reports?from=2026-01-01"),
        )
    };
    let dark = app.send(theme("dark")).await;
    assert_eq!(
        dark.header("location"),
        Some("/projects/alpha/reports?from=2026-01-01")
    );
    let page = app.get("/projects/alpha/reports", &member).await;
    assert!(page.text.contains("<html lang=\"en\" data-theme=\"dark\">"));
    let owners = app.get("/projects/alpha/reports", &owner).await;
    assert!(owners.text.contains("<html lang=\"en\">"));
    app.send(theme("system")).await;
    let page = app.get("/projects/alpha/reports", &member).await;
    assert!(page.text.contains("<html lang=\"en\">"));
}

/// Each row's label shows the platforms it goes to, struck through (`off`, with why) where
/// the lead lacks what the platform needs; Open goes nowhere and shows none.
#[tokio::test]
async fn a_rows_marks_say_which_platforms_the_lead_can_reach() {
    use leadtrack_core::integration::{Ga4Settings, IntegrationSettings, Secret};
    let app = app().await;
    let ga4 = IntegrationSettings::Ga4(Ga4Settings {
        measurement_id: "G-1".into(),
        api_secret: Secret::new("ga4-secret"),
        validate: false,
        base_url: None,
    });
    app.store
        .set_integration(app.alpha.id, ga4, Utc::now())
        .await
        .unwrap();
    let mapping = LabelMapping {
        ga4_event: Some("purchase".into()),
        ..LabelMapping::default()
    };
    let label = NewLabel::done("Customer", mapping);
    let customer = app.store.create_label(app.alpha.id, label, Utc::now());
    let customer = customer.await.unwrap().id.to_string();
    let with = lead(
        &app,
        json!({"userData": {"email": "ada@example.com"}, "attributionData": {"cid": "1.2"}}),
    )
    .await;
    let without = lead(&app, json!({"userData": {"email": "bob@example.com"}})).await;
    let member = app.session("member@example.com", MEMBER_PASSWORD).await;
    let inbox = app.get("/projects/alpha/leads", &member).await;
    let marks = |id: LeadId| {
        let row = inbox
            .text
            .split(&format!("id=\"lead-{id}\""))
            .nth(1)
            .unwrap();
        let row = &row[..row.find("</tr>").unwrap()];
        let customer = format!("data-marks=\"{customer}\"");
        let marks = row.split(&customer).nth(1).unwrap();
        marks[..marks.find("</span></span>").unwrap()].to_owned()
    };
    // One compact count: reached (→) and skipped (✕), each platform named on hover.
    let on = marks(with);
    assert!(on.contains("title=\"Google Analytics 4: sent\""), "{on}");
    assert!(on.ends_with(">→1") && !on.contains("✕"), "{on}");
    let off = marks(without);
    assert!(
        off.contains("title=\"Google Analytics 4: not sent,"),
        "{off}"
    );
    assert!(off.contains(">→0</span>") && off.ends_with(">✕1"), "{off}");
    assert!(
        !inbox.text.contains("data-marks=\"open\""),
        "Open sends nothing"
    );
}

/// The filter panel offers the project's forms as a list, every platform's click id under
/// its name (Microsoft, LinkedIn, Google's iOS ids and TikTok included), and quick date
/// ranges.
#[tokio::test]
async fn filters_list_the_forms_every_click_id_and_date_ranges() {
    let app = app().await;
    let bing = lead(&app, json!({"userData": {"email": "ada@example.com"}, "attributionData": {"msclkid": "ms-1", "utm_source": "bing", "utm_medium": "cpc", "utm_campaign": "brand", "wbraid": "w-1"}, "formData": {"formName": "Quote"}})).await;
    let linkedin = lead(&app, json!({"userData": {"email": "bob@example.com"}, "attributionData": {"li_fat_id": "li-1", "utm_source": "linkedin", "utm_medium": "paid-social", "gbraid": "g-1"}, "formData": {"formName": "Contact"}})).await;
    let shouting = lead(
        &app,
        json!({"userData": {"email": "cy@example.com"}, "formData": {"formName": "CONTACT"}, "attributionData": {"ttclid": "tt-1", "twclid": "tw-1"}}),
    )
    .await;
    let member = app.session("member@example.com", MEMBER_PASSWORD).await;
    let inbox = app.get("/projects/alpha/leads", &member).await;
    let select = |id: &str| {
        let options = inbox.text.split(&format!("id=\"f-{id}\"")).nth(1).unwrap();
        options[..options.find("</select>").unwrap()]
            .trim_end()
            .to_owned()
    };
    // One form whatever its case, named as the first variant in order.
    assert!(
        select("form").ends_with(
            "<option value=\"contact\">CONTACT</option><option value=\"quote\">Quote</option>"
        ),
        "{}",
        select("form")
    );
    assert!(select("source").ends_with(
        "<option value=\"bing\">bing</option><option value=\"linkedin\">linkedin</option>"
    ));
    assert!(select("medium").contains("<option value=\"paid-social\">paid-social</option>"));
    assert!(select("campaign").ends_with("<option value=\"brand\">brand</option>"));
    assert!(select("label").ends_with("<option value=\"lost\">Lost</option>"));
    for label in [
        "Google click",
        "Meta click",
        "Microsoft click",
        "LinkedIn click",
        "Google iOS click",
        "TikTok click",
        "Reddit click",
        "Snapchat click",
        "Pinterest click",
        "X click",
    ] {
        assert!(inbox.text.contains(&format!(">{label}</label>")), "{label}");
    }
    let only = |query: &str| {
        let app = &app;
        let member = member.clone();
        let query = query.to_owned();
        async move {
            let page = app
                .get(&format!("/projects/alpha/leads?{query}"), &member)
                .await;
            [bing, linkedin, shouting].map(|id| page.text.contains(&format!("id=\"lead-{id}\"")))
        }
    };
    assert_eq!(only("msclkid=yes").await, [true, false, false]);
    assert_eq!(only("li_fat_id=yes").await, [false, true, false]);
    assert_eq!(
        only("gbraid=yes").await,
        [true, true, false],
        "gbraid or wbraid"
    );
    assert_eq!(only("ttclid=yes").await, [false, false, true]);
    assert_eq!(only("ttclid=no&gbraid=yes").await, [true, true, false]);
    assert_eq!(only("twclid=yes").await, [false, false, true]);
    assert_eq!(only("form=contact").await, [false, true, true]);
    assert_eq!(
        only("formName=Contact").await,
        [false, true, false],
        "an older link's exact form"
    );
    assert_eq!(only("msclkid=no&form=contact").await, [false, true, true]);
    assert_eq!(only("source=bing").await, [true, false, false]);
    assert_eq!(only("medium=paid-social").await, [false, true, false]);
    assert_eq!(only("campaign=brand").await, [true, false, false]);
    let today = Utc::now().date_naive();
    let week = format!("from={}&#38;to={today}", today - chrono::Days::new(6));
    let presets = inbox.text.split("class=\"presets\"").nth(1).unwrap();
    let presets = &presets[..presets.find("</p>").unwrap()];
    assert!(
        presets.contains(&week),
        "the last 7 days, as a link: {presets}"
    );
    assert_eq!(only(&week.replace("&#38;", "&")).await, [true, true, true]);
    // Rated lost (pending while it can be undone), found by the label filter.
    let rated = rate_from_page(&app, linkedin, &member, &[("conversionId", "lost")]).await;
    assert_eq!(rated.status, 303);
    let status = stored(&app, linkedin).await.status;
    let lost = app
        .get(
            &format!("/projects/alpha/leads?tab={status}&label=lost"),
            &member,
        )
        .await;
    assert!(lost.text.contains(&format!("id=\"lead-{linkedin}\"")));
    assert!(
        lost.text
            .contains("<option value=\"lost\" selected>Lost</option>")
    );
    let bad = app.get("/projects/alpha/leads?label=won", &member).await;
    assert!(
        bad.text.contains("The label was not understood"),
        "a bad link is said, not failed"
    );
}

/// The inbox's search box finds full names in either order, without accents, and CRM ids;
/// a link from before (`search=`) still opens its view.
#[tokio::test]
async fn the_search_box_finds_what_people_type() {
    let app = app().await;
    let jonas = lead(&app, json!({"userData": {"firstName": "Jonas", "lastName": "Kaya", "email": "jk@example.com"}, "uniqueIdentifier": "HUB-31"})).await;
    let anna = lead(
        &app,
        json!({"userData": {"firstName": "Anna", "lastName": "Müller", "email": "am@example.com"}}),
    )
    .await;
    let member = app.session("member@example.com", MEMBER_PASSWORD).await;
    for (query, expected) in [
        ("q=Jonas+Kaya", [true, false]),
        ("q=kaya+jonas", [true, false]),
        ("q=muller", [false, true]),
        ("q=hub-31", [true, false]),
        ("search=jonas", [true, false]),
    ] {
        let page = app
            .get(&format!("/projects/alpha/leads?{query}"), &member)
            .await;
        let shown = [jonas, anna].map(|id| page.text.contains(&format!("id=\"lead-{id}\"")));
        assert_eq!(shown, expected, "{query}");
    }
}

/// A search covers every tab: a tab that finds nothing says which tabs do, and links
/// there with the search kept.
#[tokio::test]
async fn a_search_that_finds_nothing_here_says_which_tabs_have_matches() {
    use leadtrack_core::request::StatusUpdate;
    use leadtrack_core::types::ConversionId;
    let app = app().await;
    let zoe = lead(
        &app,
        json!({"userData": {"firstName": "Zoë", "lastName": "Dubois"}}),
    )
    .await;
    lead(
        &app,
        json!({"userData": {"firstName": "Ada", "lastName": "Dubois"}}),
    )
    .await;
    let lost = StatusUpdate {
        identifier: LeadIdentifier::LeadId(zoe),
        conversion_id: ConversionId::Lost,
        price: None,
        note: None,
    };
    let actor = leadtrack_core::account::Actor::api_key("lt_inbox0123");
    app.store
        .update_status(app.alpha.id, &lost, &actor, Utc::now())
        .await
        .unwrap();
    let member = app.session("member@example.com", MEMBER_PASSWORD).await;

    let open = app
        .get("/projects/alpha/leads?q=Zo%C3%AB+Dubois", &member)
        .await;
    open.assert_shows(
        StatusCode::OK,
        &[
            "No open lead matches these filters.",
            "Other tabs have matches: ",
        ],
    );
    let at = open
        .text
        .find("class=\"elsewhere\"")
        .expect("the other tabs");
    let paragraph = &open.text[at..at + open.text[at..].find("</p>").unwrap()];
    // Lost, and pending until its conversion is sent (no worker runs here).
    assert!(paragraph.contains(">Pending (1)</a>."), "{paragraph}");
    assert!(!paragraph.contains("Open"), "{paragraph}");
    let href = paragraph
        .split("href=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap();
    let lost_tab = app
        .get(
            &format!("/projects/alpha/leads{}", href.replace("&#38;", "&")),
            &member,
        )
        .await;
    assert!(
        lost_tab.text.contains(&format!("id=\"lead-{zoe}\"")),
        "{href}"
    );
    assert!(
        lost_tab.text.contains("value=\"Zoë Dubois\""),
        "the search is kept"
    );

    // A search that finds leads here lists no other tab.
    let here = app.get("/projects/alpha/leads?q=Dubois", &member).await;
    assert!(!here.text.contains("class=\"elsewhere\""));
}

/// A search box's words held by more leads than a search counts say so, and the tabs show
/// no counts then rather than wrong ones; a narrower search is counted exactly.
#[tokio::test]
async fn a_search_of_too_many_leads_to_count_says_so() {
    use leadtrack_core::request::query::Q_COUNTED;
    let app = app().await;
    for n in 0..=Q_COUNTED {
        lead(&app, json!({"userData": {"firstName": format!("Bulk{n}")}})).await;
    }
    let owner = app.session("owner@example.com", OWNER_PASSWORD).await;
    let tab_counts = |text: &str| {
        let tabs = &text[text.find("<nav class=\"tabs\"").unwrap()..];
        tabs[..tabs.find("</nav>").unwrap()]
            .matches("class=\"count\" data-count=")
            .count()
    };
    let broad = app.get("/projects/alpha/leads?q=bulk", &owner).await;
    assert_eq!(broad.status, StatusCode::OK);
    assert!(
        broad.text.contains("Page 1 (more than 1000 leads)"),
        "{}",
        broad.text
    );
    // Mine's (none of them assigned to the owner) and Due's (next steps, not the search's
    // matches) alone.
    assert_eq!(tab_counts(&broad.text), 2, "no status tab is counted");
    assert!(
        broad
            .text
            .contains("Due <span class=\"count\" data-count=\"due\">0<")
    );
    assert!(
        broad
            .text
            .contains("Mine <span class=\"count\" data-count=\"mine\">0<")
    );
    assert!(broad.text.contains("rel=\"next\""), "a next page");
    let narrow = app.get("/projects/alpha/leads?q=bulk99", &owner).await;
    // Bulk99 and Bulk990 to Bulk999.
    assert!(
        narrow.text.contains("Page 1 of 1 (11 leads)"),
        "{}",
        narrow.text
    );
    assert!(narrow.text.contains("data-count=\"open\">11</span>"));
    assert_eq!(
        tab_counts(&narrow.text),
        7,
        "open, mine, due, pending, rated, lost, spam"
    );
}

#[tokio::test]
async fn a_member_corrects_a_leads_contact_details_and_the_history_says_who() {
    let app = app().await;
    let id = lead(
        &app,
        json!({"userData": {"firstName": "Ada", "email": "ada@exmaple.com"}}),
    )
    .await;
    let member = app.session("member@example.com", MEMBER_PASSWORD).await;
    let path = format!("/projects/alpha/leads/{id}");
    let page = app.get(&path, &member).await;
    page.assert_shows(
        StatusCode::OK,
        &[
            "<summary>Correct the contact details</summary>",
            "<input id=\"contact-email\" name=\"email\" type=\"email\" value=\"ada@exmaple.com\"",
        ],
    );
    let contact = format!("{path}/contact");
    let fields = |email: &str| {
        encode(&[
            ("csrf", &page.csrf()),
            ("firstName", "Ada"),
            ("lastName", "King"),
            ("email", email),
            ("phone", ""),
            ("companyName", ""),
        ])
    };
    // A bad email comes back with what was typed, and changes nothing.
    let refused = app
        .send(form(&contact, &fields("ada.example.com")).header("cookie", &member))
        .await;
    refused.assert_shows(
        StatusCode::BAD_REQUEST,
        &[
            "“ada.example.com” is no email address: it needs a name, an @ and a domain.",
            "value=\"ada.example.com\"",
            "<details class=\"correct\" open>",
        ],
    );
    assert_eq!(
        stored(&app, id).await.data.user("email"),
        Some("ada@exmaple.com")
    );
    let saved = app
        .send(form(&contact, &fields("ada@example.com")).header("cookie", &member))
        .await;
    assert_eq!(
        saved.header("location"),
        Some(format!("{path}?done=corrected").as_str())
    );
    let lead = stored(&app, id).await;
    assert_eq!(
        (lead.data.user("lastName"), lead.data.user("email")),
        (Some("King"), Some("ada@example.com"))
    );
    let shown = app.get(saved.header("location").unwrap(), &member).await;
    shown.assert_shows(
        StatusCode::OK,
        &[
            "Contact details saved",
            "Corrected the last name and email</span> <span class=\"by\">by Mo Member</span>",
        ],
    );
}
