//! The dashboard in a real headless Chromium, as a team uses it: sign in, the inbox's tabs,
//! keyboard, search and filters, a lead's page, rating one lead (and seeing its webhook
//! delivered) and several at once, a lead webhook added and removed, and what a member may
//! not see. On a temporary SQLite file, or on PostgreSQL with
//! `LEADTRACK_TEST_BACKEND=postgres` (as `.ci/run` runs them again).

#![cfg(leadtrack_browser)]

use std::time::{Duration, Instant};

use chrono::Utc;
use fantoccini::Locator;
use fantoccini::key::Key;
use leadtrack::core::types::{JobState, LeadId};
use leadtrack::platforms::testkit::{MockPlatform, MockResponse};
use serde_json::json;

use crate::support::browser::Browser;
use crate::support::site::*;

/// Signed in, an owner lands in the inbox: tabs with counts, newest first; `j`, `j`,
/// Enter opens the second lead.
#[tokio::test]
async fn an_owner_lands_in_the_inbox_and_opens_a_lead_by_keyboard() {
    let (browser, site) = (Browser::start().await, site().await);
    let c = &browser.client;
    site.sign_in(&browser, OWNER).await;

    // The inbox: tabs with counts, newest first.
    let tabs = c
        .find(Locator::Css("nav.tabs"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        tabs.contains("Open 5") && tabs.contains("Pending 0"),
        "{tabs}"
    );
    let names: Vec<String> = {
        let mut names = Vec::new();
        for link in c.find_all(Locator::Css("a[data-open]")).await.unwrap() {
            names.push(link.text().await.unwrap());
        }
        names
    };
    assert_eq!(names, ["Linus", "Katherine", "Alan", "Grace", "Ada"]);

    // Keyboard: j, j, Enter opens the second lead.
    press(&browser, "j").await;
    press(&browser, "j").await;
    let current = c
        .find(Locator::Css("tr.current a[data-open]"))
        .await
        .unwrap();
    assert_eq!(current.text().await.unwrap(), "Katherine");
    c.active_element()
        .await
        .unwrap()
        .send_keys(&Key::Enter.to_string())
        .await
        .unwrap();
    wait_until(&browser, "Katherine's page", |url, text| {
        url.contains("/projects/acme/leads/") && text.contains("Rate this lead")
    })
    .await;
    assert!(text(&browser).await.contains("katherine@example.com"));

    browser.close().await;
}

/// `s` marks the inbox's current lead as spam, and takes it out again from the Spam tab;
/// on a lead's page it does the same for that lead.
#[tokio::test]
async fn s_holds_a_lead_as_spam_and_takes_it_out_again() {
    let (browser, site) = (Browser::start().await, site().await);
    let c = &browser.client;
    site.sign_in(&browser, OWNER).await;
    press(&browser, "j").await;
    press(&browser, "s").await;
    wait_until(&browser, "the lead marked", |_, text| {
        text.contains("1 lead marked as spam")
    })
    .await;
    let shown = text(&browser).await;
    assert!(
        shown.contains("Open 4") && shown.contains("Spam 1"),
        "{shown}"
    );
    assert!(!shown.contains("Linus"), "{shown}");

    c.goto(&format!("{}/projects/acme/leads?tab=spam", site.base()))
        .await
        .unwrap();
    assert!(text(&browser).await.contains("marked as spam"));
    press(&browser, "j").await;
    press(&browser, "s").await;
    wait_until(&browser, "the lead freed", |_, text| {
        text.contains("1 lead taken out of spam, to Open.")
    })
    .await;
    assert!(text(&browser).await.contains("Open 5"));

    c.goto(&format!("{}/projects/acme/leads", site.base()))
        .await
        .unwrap();
    c.find(Locator::LinkText("Ada"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_until(&browser, "Ada's page", |_, text| {
        text.contains("Rate this lead")
    })
    .await;
    press(&browser, "s").await;
    wait_until(&browser, "Ada held", |_, text| {
        text.contains("Held as spam: marked as spam")
    })
    .await;
    press(&browser, "s").await;
    wait_until(&browser, "Ada freed", |_, text| {
        text.contains("Taken out of spam")
    })
    .await;
    browser.close().await;
}

/// A lead arriving while the inbox is open shows up as a bar; `/` searches, and a
/// click-id filter narrows the list.
#[tokio::test]
async fn new_leads_show_up_and_search_and_filters_narrow_the_inbox() {
    let (browser, site) = (Browser::start().await, site().await);
    let c = &browser.client;
    site.sign_in(&browser, OWNER).await;
    // A lead arriving while the inbox is open shows up as a bar within 10 seconds.
    c.goto(&format!("{}/projects/acme/leads", site.base()))
        .await
        .unwrap();
    lead(
        site.store(),
        site.acme(),
        json!({"userData": {"email": "new@example.com"}}),
    )
    .await;
    let bar = c.find(Locator::Css("[data-live]")).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !bar.is_displayed().await.unwrap() {
        assert!(Instant::now() < deadline, "no new-leads bar within 10 s");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(bar.text().await.unwrap(), "1 new lead · Show them");
    let title = c.title().await.unwrap();
    assert!(title.starts_with("(1) "), "the tab says so too: {title}");

    // Search with `/`, then a click-id filter.
    c.goto(&format!("{}/projects/acme/leads", site.base()))
        .await
        .unwrap();
    press(&browser, "/").await;
    let search = c.active_element().await.unwrap();
    assert_eq!(search.attr("name").await.unwrap().as_deref(), Some("q"));
    search.send_keys("grace").await.unwrap();
    search.send_keys(&Key::Enter.to_string()).await.unwrap();
    wait_until(&browser, "the search", |url, _| url.contains("q=grace")).await;
    let rows = c.find_all(Locator::Css("a[data-open]")).await.unwrap();
    assert_eq!(rows.len(), 1);
    assert!(text(&browser).await.contains("Page 1 of 1 (1 lead)"));
    c.goto(&format!("{}/projects/acme/leads?gclid=yes", site.base()))
        .await
        .unwrap();
    let mut with_click = Vec::new();
    for link in c.find_all(Locator::Css("a[data-open]")).await.unwrap() {
        with_click.push(link.text().await.unwrap());
    }
    assert_eq!(with_click, ["Alan", "Ada"]);

    browser.close().await;
}

/// A bulk rating rates what it may and says why it refused the rest; the Lost tab's CSV
/// then holds the lost lead.
#[tokio::test]
async fn several_leads_are_rated_at_once_and_the_lost_tab_exports() {
    let (browser, site) = (Browser::start().await, site().await);
    let c = &browser.client;
    site.sign_in(&browser, OWNER).await;
    browser.viewport(1366, 768).await;
    // Several at once. While the page is open, someone rates Alan through the API, so his
    // rating is refused with the reason, and Ada's goes through.
    c.goto(&format!("{}/projects/acme/leads", site.base()))
        .await
        .unwrap();
    let alan = LeadId(3);
    let update = leadtrack::core::request::StatusUpdate {
        identifier: leadtrack::core::types::LeadIdentifier::LeadId(alan),
        conversion_id: site.customer.parse().unwrap(),
        price: None,
        note: None,
    };
    let by = leadtrack::core::account::Actor::api_key("lt_browser00");
    site.store()
        .update_status(site.acme().id, &update, &by, Utc::now())
        .await
        .unwrap();
    for id in [1, 3] {
        c.find(Locator::Id(&format!("pick-{id}")))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
    }
    let counted = c.find(Locator::Css("[data-selected-count]")).await.unwrap();
    assert_eq!(counted.text().await.unwrap(), "2 leads selected");
    c.find(Locator::Css("#bulk-rating"))
        .await
        .unwrap()
        .select_by_value("lost")
        .await
        .unwrap();
    click(c, ".bulk-bar button").await;
    wait_until(&browser, "the bulk result", |_, text| {
        text.contains("not rated")
    })
    .await;
    let said = text(&browser).await;
    assert!(said.contains("1 lead rated"), "{said}");
    assert!(
        said.contains("Alan (#3): its last rating is still being sent"),
        "{said}"
    );
    // The result is a page of its own: a reload shows it again and rates nobody again.
    c.refresh().await.unwrap();
    assert!(text(&browser).await.contains("1 lead rated"));
    let adas = site.store().lead_jobs(site.acme().id, LeadId(1)).await;
    assert_eq!(adas.unwrap().len(), 1, "one job for Ada");

    // The CSV export of a view, as the browser downloads it with its session, once the
    // worker has sent Ada's rating and she is lost.
    site.app.start_worker();
    let deadline = Instant::now() + Duration::from_secs(15);
    let csv = loop {
        let csv = c
            .execute_async(
                "fetch('/projects/acme/leads.csv?tab=lost').then(r => r.text()).then(arguments[0]);",
                vec![],
            )
            .await
            .unwrap();
        let csv = csv.as_str().unwrap().to_owned();
        if csv.lines().count() > 1 || Instant::now() > deadline {
            break csv;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 2, "a header and Ada, the one lost lead: {csv}");
    // The file starts with a byte-order mark, which `fetch`'s `text()` decodes away.
    assert!(lines[0].starts_with("id,created,status"), "{}", lines[0]);
    assert!(
        lines[1].starts_with("1,")
            && lines[1].contains("ada@example.com")
            && lines[1].contains(",lost,"),
        "{}",
        lines[1]
    );

    browser.close().await;
}

/// `1`, `p`, a typed price and submit rate a lead on its page; the worker delivers it to
/// the webhook once, with the price, and the page shows the delivery.
#[tokio::test]
async fn a_lead_rated_on_its_page_reaches_the_webhook_once() {
    let (browser, site) = (Browser::start().await, site().await);
    let c = &browser.client;
    site.sign_in(&browser, OWNER).await;
    // Rate Grace with a label mapped to the webhook; watch the delivery on her page.
    site.app.start_worker();
    c.goto(&format!("{}/projects/acme/leads/2", site.base()))
        .await
        .unwrap();
    press(&browser, "1").await;
    press(&browser, "p").await;
    c.active_element()
        .await
        .unwrap()
        .send_keys("1,250.50")
        .await
        .unwrap();
    click(c, "form[data-rate-form] button[type=submit]").await;
    wait_until(&browser, "the rating saved", |_, text| {
        text.contains("Rated.")
    })
    .await;
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        c.refresh().await.unwrap();
        let shown = text(&browser).await;
        if shown.contains("Webhook: delivered (HTTP 200)") {
            assert!(
                shown.contains("Rated Customer, 1,250.50 EUR by olive"),
                "{shown}"
            );
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the webhook was never delivered:\n{shown}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let received = site.hook.requests();
    let graces: Vec<_> = received
        .iter()
        .filter(|r| r.json()["lead"]["email"] == "grace@example.com")
        .collect();
    assert_eq!(graces.len(), 1);
    assert_eq!(graces[0].json()["price"], 125_050);

    browser.close().await;
}

#[tokio::test]
async fn a_member_sees_no_settings_and_no_other_project() {
    member_sees_no_settings_and_no_other_project(Browser::start().await, site().await).await;
}

async fn member_sees_no_settings_and_no_other_project(browser: Browser, site: Site) {
    let c = &browser.client;
    site.sign_in(&browser, MEMBER).await;
    let nav = c
        .find(Locator::Css("header nav"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(nav.contains("Inbox") && nav.contains("Reports"), "{nav}");
    assert!(!nav.contains("Settings"), "{nav}");
    c.goto(&format!("{}/projects/other/leads", site.base()))
        .await
        .unwrap();
    let shown = text(&browser).await;
    assert!(shown.contains("Page not found"), "{shown}");
    assert!(!shown.contains("secret@other.example"));
    c.goto(&format!("{}/projects/other/leads/6", site.base()))
        .await
        .unwrap();
    assert!(text(&browser).await.contains("Page not found"));
    browser.close().await;
}

#[tokio::test]
async fn an_owner_adds_a_lead_webhook_that_hears_new_leads_then_removes_it() {
    owner_adds_a_lead_webhook_that_hears_new_leads_then_removes_it(
        Browser::start().await,
        site().await,
    )
    .await;
}

async fn owner_adds_a_lead_webhook_that_hears_new_leads_then_removes_it(
    browser: Browser,
    site: Site,
) {
    let c = &browser.client;
    let page = format!("{}/projects/acme/settings/webhooks", site.base());
    site.sign_in(&browser, OWNER).await;
    c.goto(&page).await.unwrap();
    assert!(text(&browser).await.contains("No webhooks yet."));

    let crm = MockPlatform::start(MockResponse::empty(204)).await;
    c.find(Locator::Id("url"))
        .await
        .unwrap()
        .send_keys(&format!("{}/crm", crm.url()))
        .await
        .unwrap();
    // New leads are chosen already; lost ones too.
    click(c, "input[name=event][value='lead.lost']").await;
    click(c, "form.card button[type=submit]").await;
    wait_until(&browser, "the new secret", |_, shown| {
        shown.contains("Copy it now")
    })
    .await;
    let secret = c
        .find(Locator::Css("code.secret"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(secret.starts_with("whsec_"), "{secret}");
    let shown = text(&browser).await;
    assert!(
        shown.contains("lead.created") && shown.contains("lead.lost"),
        "{shown}"
    );

    // A new lead reaches the CRM, signed with the secret the page showed.
    site.app.start_worker();
    let hedy = json!({"userData": {"firstName": "Hedy", "email": "hedy@example.com"}});
    let id = lead(site.store(), site.acme(), hedy).await;
    let posts = crm.wait_for(1, Duration::from_secs(15)).await;
    assert_eq!(posts.len(), 1);
    let body = posts[0].json();
    assert_eq!(
        (body["type"].as_str(), body["lead"]["id"].as_i64()),
        (Some("lead.created"), Some(id.0))
    );
    posts[0].assert_signed(&secret);

    // The page counts the delivery, and shows the secret no more.
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        c.goto(&page).await.unwrap();
        let shown = text(&browser).await;
        if shown.contains("1 delivered") {
            assert!(!shown.contains(&secret));
            break;
        }
        assert!(Instant::now() < deadline, "never counted: {shown}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    click(c, "td.actions button").await;
    wait_until(&browser, "the webhook removed", |_, shown| {
        shown.contains("Webhook removed") && shown.contains("No webhooks yet.")
    })
    .await;
    browser.close().await;
}

/// Inside the undo window, `u` takes a rating back and nothing reaches the conversion
/// webhook or the lead webhooks; `1`, `p`, a typed price and Enter (twice) then rate the
/// lead once, delivered after the window; the same form posted twice queues one job.
#[tokio::test]
async fn undo_in_the_window_sends_nothing_and_a_repeated_enter_rates_once() {
    let (browser, site) = (Browser::start().await, site().await);
    let c = &browser.client;
    let (store, acme) = (site.store(), site.acme());
    site_window(store, acme, 5).await;
    let crm = MockPlatform::start(MockResponse::empty(204)).await;
    let events = leadtrack::core::webhook::WebhookEvents::parse_list("lead.converted").unwrap();
    let new = leadtrack::core::webhook::NewWebhook::new(
        &format!("{}/crm", crm.url()),
        &leadtrack::core::testkit::mock_targets(),
        None,
        events,
    );
    store
        .create_webhook(acme.id, new.unwrap(), Utc::now())
        .await
        .unwrap();
    site.sign_in(&browser, OWNER).await;
    site.app.start_worker();
    let katherine = format!("{}/projects/acme/leads/4", site.base());
    c.goto(&katherine).await.unwrap();
    rate_by_keyboard(&browser, "99").await;
    wait_until(&browser, "the held rating", |_, text| {
        text.contains("is saved, and sent in")
    })
    .await;
    press(&browser, "u").await;
    wait_until(&browser, "the undo", |_, text| {
        text.contains("Undone. Nothing was sent")
    })
    .await;
    // Undone: its job is cancelled, which no worker ever takes (the job queue's
    // conformance checks), so nothing is sent, now or once the window has passed.
    let undone = store.lead_jobs(acme.id, LeadId(4)).await.unwrap();
    assert_eq!(undone[0].job.state, JobState::Cancelled);
    assert!(
        site.hook.requests().is_empty(),
        "no conversion after an undo"
    );
    assert!(crm.requests().is_empty(), "no lead.converted after an undo");

    // Rated again, with Enter pressed twice: one job, delivered once the window is over.
    c.goto(&katherine).await.unwrap();
    rate_by_keyboard(&browser, "99").await;
    press(&browser, &Key::Enter.to_string()).await;
    let deadline = Instant::now() + Duration::from_secs(20);
    while site.hook.requests().is_empty() || crm.requests().is_empty() {
        assert!(Instant::now() < deadline, "never delivered");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let posts = site.hook.requests();
    assert_eq!(posts.len(), 1);
    assert_eq!(posts[0].json()["price"], 9900, "the typed price was saved");
    assert_eq!(crm.requests().len(), 1);
    let jobs = store.lead_jobs(acme.id, LeadId(4)).await.unwrap();
    assert_eq!(jobs.len(), 2, "the undone job and the delivered one");

    // The same form posted twice (a double click that got through): one job.
    c.goto(&format!("{}/projects/acme/leads/5", site.base()))
        .await
        .unwrap();
    let posted = c
        .execute_async(
            "const f = document.querySelector('[data-rate-form]');
             f.querySelector('input[name=conversionId]').checked = true;
             const body = new URLSearchParams(new FormData(f));
             const post = () => fetch(f.action, {method: 'POST', body});
             Promise.all([post(), post()]).then(() => arguments[0](true));",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(posted, json!(true));
    let jobs = store.lead_jobs(acme.id, LeadId(5)).await.unwrap();
    assert_eq!(jobs.len(), 1, "one job for Linus");
    browser.close().await;
}

/// On a lead's page: `1` picks the first label, `p` goes to the price (from the radio
/// button it left focused), `price` is typed, and Enter saves.
async fn rate_by_keyboard(browser: &Browser, price: &str) {
    press(browser, "1").await;
    let focused = browser.client.active_element().await.unwrap();
    focused.send_keys("p").await.unwrap();
    let price_field = browser.client.active_element().await.unwrap();
    assert_eq!(
        price_field.attr("name").await.unwrap().as_deref(),
        Some("price")
    );
    price_field.send_keys(price).await.unwrap();
    price_field
        .send_keys(&Key::Enter.to_string())
        .await
        .unwrap();
}

/// An owner invites someone from the members page; the invitation arrives by email (an SMTP
/// server on loopback); its link, opened signed out, sets up the account and lands in the
/// inbox, signed in; the link then no longer works.
#[tokio::test]
async fn an_invitation_sent_from_the_members_page_is_taken_in_the_browser() {
    let smtp = leadtrack_mail::testkit::SmtpReceiver::start(&[]).await;
    let config = leadtrack_dashboard::Config {
        mailer: Some(leadtrack_mail::Mailer::new(&smtp.url(), "leads@acme.example").unwrap()),
        outbound: leadtrack::platforms::check::client(leadtrack::core::testkit::mock_targets()),
        ..leadtrack_dashboard::Config::default()
    };
    let (browser, site) = (Browser::start().await, site_with(config).await);
    let c = &browser.client;
    site.sign_in(&browser, OWNER).await;
    c.goto(&format!("{}/projects/acme/settings/members", site.base()))
        .await
        .unwrap();
    c.find(Locator::Id("email"))
        .await
        .unwrap()
        .send_keys("nia@example.com")
        .await
        .unwrap();
    click(c, "select#role option[value=viewer]").await;
    click(c, "section[aria-labelledby=invite] button[type=submit]").await;
    wait_until(&browser, "the invitation sent", |_, shown| {
        shown.contains("Invitation sent.")
    })
    .await;
    let shown = text(&browser).await;
    assert!(
        shown.contains("Pending invitations") && shown.contains("nia@example.com"),
        "{shown}"
    );
    let deadline = Instant::now() + Duration::from_secs(15);
    while smtp.messages().is_empty() {
        assert!(Instant::now() < deadline, "no invitation arrived");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let body = smtp.messages()[0].body().to_owned();
    let link = body
        .lines()
        .find(|line| line.contains("/invitations/"))
        .unwrap_or_else(|| panic!("no link in {body}"))
        .trim()
        .to_owned();
    assert!(link.starts_with(site.base()), "{link}");

    click(c, "form[action='/logout'] button").await;
    wait_until(&browser, "signed out", |url, _| url.contains("/login")).await;
    c.goto(&link).await.unwrap();
    wait_until(&browser, "the invitation", |_, shown| {
        shown.contains("Set up your account to join") && shown.contains("as a viewer")
    })
    .await;
    c.find(Locator::Id("name"))
        .await
        .unwrap()
        .send_keys("Nia Newcomer")
        .await
        .unwrap();
    let password = c.find(Locator::Id("password")).await.unwrap();
    password.send_keys("nia's long password").await.unwrap();
    password.send_keys(&Key::Enter.to_string()).await.unwrap();
    wait_until(&browser, "the inbox", |url, _| {
        url.ends_with("/projects/acme/leads")
    })
    .await;
    let who = c
        .find(Locator::Css("header .who"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(who.contains("Nia Newcomer"), "{who}");
    assert!(
        text(&browser).await.contains("Ada"),
        "a viewer sees the leads"
    );

    c.goto(&link).await.unwrap();
    wait_until(&browser, "the dead link", |_, shown| {
        shown.contains("This invitation link no longer works")
    })
    .await;
    browser.close().await;
}

/// The GA4 event of a label is checked as it is typed: the count of characters, and what is
/// wrong in words (not the browser's "match the requested format"); a bad name is not sent.
#[tokio::test]
async fn a_ga4_event_name_is_checked_as_it_is_typed() {
    let (browser, site) = (Browser::start().await, site().await);
    let c = &browser.client;
    site.sign_in(&browser, OWNER).await;
    c.goto(&format!("{}/projects/acme/settings/labels", site.base()))
        .await
        .unwrap();
    let field = c.find(Locator::Id("ga4_event")).await.unwrap();
    let shown = |id: &'static str| async move {
        c.find(Locator::Id(id)).await.unwrap().text().await.unwrap()
    };
    assert_eq!(shown("ga4_event-count").await, "0/40");
    for (typed, count, says) in [
        (
            "qualify-",
            "8/40",
            "“-” is not allowed: use only letters, digits and _.",
        ),
        (
            "session_start",
            "13/40",
            "GA4 keeps “session_start” for its own events",
        ),
        (
            "google_lead",
            "11/40",
            "GA4 keeps names starting with “google_” for itself",
        ),
        ("2nd", "3/40", "Start with a letter."),
        ("qualify_lead", "12/40", ""),
    ] {
        field.clear().await.unwrap();
        field.send_keys(typed).await.unwrap();
        assert_eq!(shown("ga4_event-count").await, count, "{typed}");
        let status = shown("ga4_event-status").await;
        assert!(
            status.contains(says) && (says.is_empty() == status.is_empty()),
            "{typed}: {status}"
        );
    }
    // Looked at, at both widths, while it says what is wrong.
    field.clear().await.unwrap();
    field.send_keys("session_start").await.unwrap();
    browser
        .photograph_at_both_widths("ga4_event", "ga4-event")
        .await;
    field.clear().await.unwrap();
    field.send_keys(&"a".repeat(41)).await.unwrap();
    assert_eq!(shown("ga4_event-count").await, "41/40");
    assert!(
        shown("ga4_event-status")
            .await
            .contains("at most 40 characters")
    );
    // The browser keeps the form: the name is refused before it is sent.
    c.find(Locator::Id("name"))
        .await
        .unwrap()
        .send_keys("Qualified")
        .await
        .unwrap();
    let acme = site.store().project_by_public_id("acme").await.unwrap();
    let labels = site.store().labels(acme.id).await.unwrap().len();
    let url = c.current_url().await.unwrap();
    click(c, "form[action$='/settings/labels'] button[type=submit]").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(c.current_url().await.unwrap(), url);
    assert_eq!(site.store().labels(acme.id).await.unwrap().len(), labels);
}

/// An owner connects Google Ads as a marketer would: Connect with Google, consent on
/// Google's page (a local mock of it), back on the card signed in, the account picked from
/// a list; and a consent refused on Google's page comes back saying so.
#[tokio::test]
async fn an_owner_connects_google_ads_by_signing_in_in_the_browser() {
    use leadtrack::core::integration::Secret;
    use leadtrack::core::oauth::{OAuthApp, Provider};
    use leadtrack::platforms::testkit::sign_in::MockSignIn;

    let google = MockSignIn::start("client-1", "client-secret", "dev-token").await;
    let config = leadtrack_dashboard::Config {
        oauth: vec![OAuthApp {
            provider: Provider::Google,
            client_id: "client-1".to_owned(),
            client_secret: Secret::new("client-secret"),
            developer_token: Some(Secret::new("dev-token")),
            endpoints: google.endpoints(),
        }],
        outbound: leadtrack::platforms::check::client(leadtrack::core::testkit::mock_targets()),
        ..leadtrack_dashboard::Config::default()
    };
    let (browser, site) = (Browser::start().await, site_with(config).await);
    let c = &browser.client;
    site.sign_in(&browser, OWNER).await;
    let page = format!("{}/projects/acme/settings/integrations", site.base());

    // Refused on Google's page.
    c.goto(&page).await.unwrap();
    click(c, "#google-ads .sign-in-button").await;
    wait_until(&browser, "Google's consent page", |_, shown| {
        shown.contains("wants to access")
    })
    .await;
    click(c, "#deny").await;
    wait_until(&browser, "the refusal", |_, shown| {
        shown.contains("Google did not connect: access was not allowed. Nothing was connected.")
    })
    .await;

    // Allowed: back on the card, signed in, with the accounts to pick from.
    click(c, "#google-ads .sign-in-button").await;
    wait_until(&browser, "Google's consent page", |_, shown| {
        shown.contains("wants to access")
    })
    .await;
    click(c, "#allow").await;
    wait_until(&browser, "the account picker", |url, shown| {
        url.contains("saved=google-ads-signed")
            && shown.contains("Signed in with Google as ads-owner@example.com")
    })
    .await;
    browser
        .photograph_at_both_widths("google-ads", "google-sign-in")
        .await;
    let options = c
        .find(Locator::Id("google-ads-customer"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(options.contains("Acme Shop · 1234567890"), "{options}");
    assert!(
        options.contains("Acme Franchise · 7770002222 (through manager 5550001111)"),
        "{options}"
    );
    c.find(Locator::Id("google-ads-customer"))
        .await
        .unwrap()
        .select_by_value("1234567890")
        .await
        .unwrap();
    click(
        c,
        "#google-ads form[action$='/account'] button[type=submit]",
    )
    .await;
    wait_until(&browser, "Google Ads connected", |_, shown| {
        shown.contains("Google Ads connected")
            && shown.contains("Connected as ads-owner@example.com")
    })
    .await;
    let acme = site.store().project_by_public_id("acme").await.unwrap();
    let integrations = site.store().integrations(acme.id).await.unwrap();
    assert_eq!(integrations.google_ads.unwrap().customer_id, "1234567890");
}

/// An owner connects Pinterest in the browser: Connect with Pinterest, consent on its page
/// (a mock that wants the scopes comma-separated and the app's credentials in a Basic
/// header), the ad account picked from Pinterest's list, and the integration kept with the
/// sign-in's refresh token rather than a pasted token.
#[tokio::test]
async fn an_owner_connects_pinterest_by_signing_in_and_picking_the_ad_account() {
    use leadtrack::core::integration::Secret;
    use leadtrack::core::oauth::{OAuthApp, Provider};
    use leadtrack::platforms::testkit::sign_in::{MockSignIn, PINTEREST_ACCOUNT, REFRESH_TOKEN};

    let pinterest = MockSignIn::start_as(Provider::Pinterest, "pin-app", "pin-secret", "").await;
    let config = leadtrack_dashboard::Config {
        oauth: vec![OAuthApp {
            provider: Provider::Pinterest,
            client_id: "pin-app".to_owned(),
            client_secret: Secret::new("pin-secret"),
            developer_token: None,
            endpoints: pinterest.endpoints(),
        }],
        outbound: leadtrack::platforms::check::client(leadtrack::core::testkit::mock_targets()),
        ..leadtrack_dashboard::Config::default()
    };
    let (browser, site) = (Browser::start().await, site_with(config).await);
    let c = &browser.client;
    site.sign_in(&browser, OWNER).await;
    c.goto(&format!(
        "{}/projects/acme/settings/integrations",
        site.base()
    ))
    .await
    .unwrap();
    click(c, "#pinterest .sign-in-button").await;
    wait_until(&browser, "Pinterest's consent page", |_, shown| {
        shown.contains("wants to access")
    })
    .await;
    click(c, "#allow").await;
    let (id, name) = PINTEREST_ACCOUNT;
    wait_until(&browser, "the ad account picker", |url, shown| {
        url.contains("saved=pinterest-signed") && shown.contains(&format!("{name} · {id}"))
    })
    .await;
    browser
        .photograph_at_both_widths("pinterest", "pinterest-sign-in")
        .await;
    click(c, "#pinterest form[action$='/account'] button[type=submit]").await;
    wait_until(&browser, "Pinterest connected", |_, shown| {
        shown.contains("Pinterest connected") && shown.contains("Sign in with Pinterest again")
    })
    .await;
    let acme = site.store().project_by_public_id("acme").await.unwrap();
    let settings = site.store().integrations(acme.id).await.unwrap();
    let settings = settings.pinterest.expect("Pinterest is connected");
    assert_eq!(settings.ad_account_id, id);
    let signed_in = settings.signed_in.expect("kept with the sign-in");
    assert_eq!(signed_in.refresh_token.expose(), REFRESH_TOKEN);
}

/// An owner connects Microsoft Advertising by signing in and picking the account from a
/// list; a label then picks one of the account's offline goals by name, and its page's
/// **Send a test** shows Microsoft's answer there.
#[tokio::test]
async fn an_owner_connects_microsoft_advertising_and_tests_a_label_from_its_page() {
    use leadtrack::core::integration::Secret;
    use leadtrack::core::oauth::{OAuthApp, Provider};
    use leadtrack::platforms::testkit::sign_in::{MICROSOFT_ACCOUNT, MockSignIn};

    let microsoft = MockSignIn::start_as(
        Provider::Microsoft,
        "client-1",
        "client-secret",
        "dev-token",
    )
    .await;
    let config = leadtrack_dashboard::Config {
        oauth: vec![OAuthApp {
            provider: Provider::Microsoft,
            client_id: "client-1".to_owned(),
            client_secret: Secret::new("client-secret"),
            developer_token: Some(Secret::new("dev-token")),
            endpoints: microsoft.endpoints(),
        }],
        outbound: leadtrack::platforms::check::client(leadtrack::core::testkit::mock_targets()),
        ..leadtrack_dashboard::Config::default()
    };
    let (browser, site) = (Browser::start().await, site_with(config).await);
    let c = &browser.client;
    site.sign_in(&browser, OWNER).await;
    let settings = format!("{}/projects/acme/settings", site.base());
    c.goto(&format!("{settings}/integrations")).await.unwrap();
    click(c, "#microsoft-ads .sign-in-button").await;
    wait_until(&browser, "Microsoft's consent page", |_, shown| {
        shown.contains("wants to access")
    })
    .await;
    click(c, "#allow").await;
    let (_, _, name, number) = MICROSOFT_ACCOUNT;
    wait_until(&browser, "the account picker", |url, shown| {
        url.contains("saved=microsoft-ads-signed") && shown.contains(&format!("{name} · {number}"))
    })
    .await;
    browser
        .photograph_at_both_widths("microsoft-ads", "microsoft-sign-in")
        .await;
    click(
        c,
        "#microsoft-ads form[action$='/account'] button[type=submit]",
    )
    .await;
    wait_until(&browser, "Microsoft Advertising connected", |_, shown| {
        shown.contains("Microsoft Advertising connected")
    })
    .await;

    // A new label picks an offline goal from the account's list.
    c.goto(&format!("{settings}/labels")).await.unwrap();
    c.find(Locator::Id("name"))
        .await
        .unwrap()
        .send_keys("Sold")
        .await
        .unwrap();
    let goals = c
        .find(Locator::Id("microsoft_ads_conversion"))
        .await
        .unwrap();
    goals.select_by_value("Offline sale").await.unwrap();
    click(c, "form[action$='/settings/labels'] button[type=submit]").await;
    wait_until(&browser, "the label created", |_, shown| {
        shown.contains("Label created.")
    })
    .await;
    let acme = site.store().project_by_public_id("acme").await.unwrap();
    let labels = site.store().labels(acme.id).await.unwrap();
    let sold = labels.iter().find(|label| label.name == "Sold").unwrap();
    assert_eq!(
        sold.mapping.microsoft_ads_conversion.as_deref(),
        Some("Offline sale")
    );

    // Its page tests it, and shows the answer in place.
    c.goto(&format!("{settings}/labels/{}", sold.id))
        .await
        .unwrap();
    click(
        c,
        "form[action$='/test/microsoft-ads#test-label'] button[type=submit]",
    )
    .await;
    wait_until(
        &browser,
        "Microsoft's answer on the label's page",
        |url, shown| {
            url.contains(&format!("/labels/{}/test/microsoft-ads", sold.id))
                && shown.contains("Label “Sold”")
                && shown.contains("Microsoft Advertising accepted the test")
        },
    )
    .await;
    browser
        .photograph_at_both_widths("test-label", "label-test-answer")
        .await;
}
