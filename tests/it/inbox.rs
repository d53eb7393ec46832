//! The inbox at keyboard speed, in Chromium and in Firefox: every page fits a 1366×768
//! laptop and a 390 px phone (nothing scrolls sideways, no text is cut off, a dozen leads
//! in view on the laptop), rows are rated by keyboard with prices, the review step keeps
//! drafts from the API until they are sent as one batch, the column chooser and the colour
//! scheme are remembered per user, and dark mode keeps WCAG AA contrast. Each page is
//! photographed at both widths into `target/screenshots/`, to be looked at.
//!
//! On a temporary SQLite file, or on PostgreSQL with `LEADTRACK_TEST_BACKEND=postgres`.

#![cfg(leadtrack_browser)]

use std::path::PathBuf;

use fantoccini::Locator;
use fantoccini::key::Key;
use leadtrack::core::account::Actor;
use leadtrack::core::activity::{Attribution, ProjectActivity};
use leadtrack::core::inbound::{InboundHook, Preset};
use leadtrack::core::link::{LinkToken, NewInvitation};
use leadtrack::core::project::ProjectSettings;
use leadtrack::core::request::StatusUpdate;
use leadtrack::core::saved_view::NewSavedView;
use leadtrack::core::types::{LeadId, LeadIdentifier, LeadStatus, Role};
use serde_json::{Value, json};

use crate::support::browser::{Browser, Engine, in_both_browsers};
use crate::support::site::*;

// Each check, once in Chromium and once in Firefox.
in_both_browsers!(
    #[tokio::test]
    a_row_always_fits_with_long_labels_and_every_platform,
    every_page_fits_a_laptop_and_a_phone,
    two_rows_are_rated_by_keyboard_with_prices,
    the_a_key_takes_a_lead_and_mine_lists_it,
    drafts_stay_out_of_the_api_until_sent_as_one_batch_with_one_undo,
    dark_mode_follows_the_system_or_the_switch_and_keeps_aa_contrast,
    the_column_chooser_is_remembered_per_user,
    at_offers_teammates_while_a_comment_is_typed,
    copy_puts_a_webhook_address_on_the_clipboard,
    the_f_key_sets_a_next_step_on_the_browsers_clock,
);

/// A laptop's screen and a phone's.
const WIDTHS: [(u32, u32, &str); 2] = [(1366, 768, "laptop"), (390, 844, "phone")];

/// The Acme site with 25 leads, from several sources and campaigns, some with click ids.
async fn busy_site() -> Site {
    let site = site().await;
    let sources = [
        ("google", "cpc", "spring_sale", Some(("gclid", "Cj0-x"))),
        (
            "facebook",
            "paid_social",
            "retargeting",
            Some(("fbclid", "IwAR-x")),
        ),
        ("bing", "cpc", "brand", Some(("msclkid", "ms-x"))),
        (
            "linkedin",
            "paid_social",
            "cfo_outreach",
            Some(("li_fat_id", "li-x")),
        ),
        ("newsletter", "email", "november", None),
    ];
    let people = [
        "Barbara Liskov",
        "Edsger Dijkstra",
        "Frances Allen",
        "Donald Knuth",
        "Margaret Hamilton",
        "John Backus",
        "Radia Perlman",
        "Ken Thompson",
        "Shafi Goldwasser",
        "Tony Hoare",
        "Sophie Wilson",
        "Niklaus Wirth",
        "Adele Goldberg",
        "Leslie Lamport",
        "Mary Shaw",
        "Dennis Ritchie",
        "Anita Borg",
        "Butler Lampson",
        "Jean Sammet",
        "Peter Naur",
    ];
    for (i, name) in people.iter().enumerate() {
        let (first, last) = name.split_once(' ').unwrap();
        let (source, medium, campaign, click) = sources[i % sources.len()];
        let mut attribution = json!({
            "utm_source": source, "utm_medium": medium, "utm_campaign": campaign,
            "landing_page": format!("https://acme.example/offers/{campaign}"),
        });
        if let Some((name, value)) = click {
            attribution[name] = json!(value);
        }
        let email = format!(
            "{}.{}@example.com",
            first.to_lowercase(),
            last.to_lowercase()
        );
        let body = json!({
            "userData": {"firstName": first, "lastName": last, "email": email,
                "phone": format!("+1 415 555 01{i:02}"), "companyName": "Acme Labs"},
            "attributionData": attribution,
            "formData": {"formName": if i % 2 == 0 { "Contact" } else { "Demo request" }},
        });
        lead(site.store(), site.acme(), body).await;
    }
    // Two saved views beside the tabs: the owner's own, and one for the team.
    let owner = site.store().user_by_email(OWNER.0).await.unwrap();
    for (name, query, shared) in [
        ("Google, newest", "tab=open&source=google", false),
        (
            "Paid social this month",
            "tab=open&medium=paid_social",
            true,
        ),
    ] {
        let view = NewSavedView::new(name, query, None, shared).unwrap();
        let saved = site
            .store()
            .save_view(site.acme().id, owner.id, &view, chrono::Utc::now());
        saved.await.unwrap();
    }
    site
}

/// How far the page scrolls sideways, and the visible elements whose text does not fit
/// them (cut off, or ellipsised): both must be none.
async fn misfits(browser: &Browser) -> (Value, Value) {
    let c = &browser.client;
    let overflow = c
        .execute(
            "return document.documentElement.scrollWidth - document.documentElement.clientWidth;",
            vec![],
        )
        .await
        .unwrap();
    let cut = c
        .execute(
            "return [...document.querySelectorAll('main *, header *')]
               .filter(e => e.offsetParent !== null && !e.closest('.visually-hidden')
                 && e.textContent.trim() !== ''
                 && ['hidden', 'clip'].includes(getComputedStyle(e).overflowX)
                 && e.scrollWidth > e.clientWidth + 1)
               .map(e => e.tagName + '.' + e.className + ': ' + e.textContent.trim().slice(0, 40));",
            vec![],
        )
        .await
        .unwrap();
    (overflow, cut)
}

/// Asserts that the page fits: it does not scroll sideways and cuts no text off (`at` names
/// the page in a failure).
async fn assert_fits(browser: &Browser, at: &str) {
    let (overflow, cut) = misfits(browser).await;
    assert_eq!(overflow, json!(0), "{at} scrolls sideways");
    assert_eq!(cut, json!([]), "{at} cuts text off");
}

/// Saves a screenshot of the page as `target/screenshots/NAME.png`.
async fn photograph(browser: &Browser, name: &str) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    let png = browser.client.screenshot().await.unwrap();
    std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
}

/// Six labels with names of 24 characters, each sent to six connected platforms, as a
/// new team sets them up.
const LONG_LABELS: [&str; 6] = [
    "Qualified: demo booked 1",
    "Qualified: demo booked 2",
    "Proposal sent to finance",
    "Customer: annual license",
    "Customer: monthly online",
    "Referred by our partners",
];

/// The busy site with every platform connected, [`LONG_LABELS`] and a duplicate lead.
async fn heavy_site() -> Site {
    use leadtrack::core::label::NewLabel;
    use leadtrack::core::testkit::{all_integrations, all_mapped};
    let site = busy_site().await;
    let (store, acme, now) = (site.store(), site.acme().id, chrono::Utc::now());
    for settings in all_integrations() {
        store.set_integration(acme, settings, now).await.unwrap();
    }
    for name in LONG_LABELS {
        let label = NewLabel::done(name, all_mapped());
        store.create_label(acme, label, now).await.unwrap();
    }
    // Barbara Liskov again: a duplicate of lead 1.
    let again = json!({"userData": {"firstName": "Barbara", "lastName": "Liskov",
        "email": "barbara.liskov@example.com"}, "attributionData": {"gclid": "Cj0-y"}});
    lead(store, site.acme(), again).await;
    site
}

/// Where the inbox's rows fall short at the current width, as text: a sideways scroll, a
/// label not shown whole in its select, a Save, Undo or price outside the table, a
/// duplicate badge not shown.
async fn row_misfits(browser: &Browser) -> Value {
    let script = "
      const wrap = document.querySelector('.table-wrap');
      const edge = wrap.getBoundingClientRect().right + 0.5;
      const out = [];
      if (wrap.scrollWidth > wrap.clientWidth + 1) out.push('the table scrolls sideways by ' + (wrap.scrollWidth - wrap.clientWidth));
      const ctx = document.createElement('canvas').getContext('2d');
      for (const row of document.querySelectorAll('tr[data-row]')) {
        const name = row.querySelector('.name-line a').textContent;
        const select = row.querySelector('select[data-rating]');
        ctx.font = getComputedStyle(select).font;
        const text = select.options[select.selectedIndex].text;
        if (ctx.measureText(text).width + 24 > select.getBoundingClientRect().width) out.push(name + ': its label is cut: ' + text);
        for (const part of ['select[data-rating]', '[data-save]', 'input.price', '[data-undo]', '.marks:not([hidden])']) {
          const e = row.querySelector(part);
          if (!e || e.closest('[hidden]')) continue;
          const box = e.getBoundingClientRect();
          if (box.width === 0 || box.right > edge) out.push(name + ': ' + part + ' is not fully shown');
        }
        const badge = row.querySelector('.name-line .badge');
        if (badge) {
          const box = badge.getBoundingClientRect(), cell = badge.closest('td').getBoundingClientRect();
          if (box.width === 0 || box.right > cell.right + 0.5) out.push(name + ': its Duplicate badge is hidden');
        }
      }
      return out;";
    browser.client.execute(script, vec![]).await.unwrap()
}

/// A heavy project's inbox fits a laptop without a sideways scroll, with each row's whole
/// label (the longest picked in the first row, so that its platforms' marks show), price,
/// Save and Undo, and the duplicate badge shows at both widths, in both browsers.
async fn a_row_always_fits_with_long_labels_and_every_platform(engine: Engine) {
    let site = heavy_site().await;
    let pick_longest = "
      const select = document.querySelector('tr[data-row] select[data-rating]');
      const longest = [...select.options].reduce((a, b) => (b.text.length > a.text.length ? b : a));
      select.value = longest.value;
      select.dispatchEvent(new Event('change', {bubbles: true}));
      return longest.text;";
    let browser = Browser::start_in(engine).await;
    let c = &browser.client;
    site.sign_in(&browser, OWNER).await;
    for (width, height, screen) in WIDTHS {
        browser.viewport(width, height).await;
        c.goto(&format!("{}/projects/acme/leads", site.base()))
            .await
            .unwrap();
        let picked = c.execute(pick_longest, vec![]).await.unwrap();
        assert_eq!(picked.as_str().map(str::len), Some(24), "{picked}");
        let at = format!("{engine:?} {screen}");
        photograph(&browser, &format!("{at}-heavy-inbox").to_lowercase()).await;
        let (overflow, _) = misfits(&browser).await;
        assert_eq!(overflow, json!(0), "{at}: the page scrolls sideways");
        let count = async |selector: &str| {
            let script = format!("return document.querySelectorAll('{selector}').length;");
            c.execute(&script, vec![]).await.unwrap()
        };
        assert_eq!(
            count(".name-line .badge").await,
            json!(1),
            "{at}: a duplicate"
        );
        assert_eq!(row_misfits(&browser).await, json!([]), "{at}");
        if screen != "laptop" {
            continue;
        }
        // The last row's rating saved from the row: it waits out its undo window
        // there, its Undo beside the label.
        let last = "tr[data-row]:last-of-type";
        let pick = pick_longest.replace("tr[data-row] select", &format!("{last} select"));
        c.execute(&pick, vec![]).await.unwrap();
        c.find(Locator::Css(&format!("{last} [data-save]")))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        let held = ".held-row:not([hidden]) [data-undo]";
        c.wait().for_element(Locator::Css(held)).await.unwrap();
        assert_eq!(count(held).await, json!(1), "{at}: the held rating's Undo");
        assert_eq!(row_misfits(&browser).await, json!([]), "{at}, held");
    }
}

/// A lead's page reads contact details, then the rating form, then the rest, at any width:
/// on a phone the form is not below the status and attribution cards.
async fn assert_rating_follows_the_contact(browser: &Browser, at: &str) {
    let tops = browser
        .client
        .execute(
            "const top = (q) => document.querySelector(q).getBoundingClientRect().top + window.scrollY;
             return [top('.lead-top'), top('#rate-heading'), top('.lead-rest')];",
            vec![],
        )
        .await
        .unwrap();
    let tops: Vec<f64> = serde_json::from_value(tops).unwrap();
    assert!(
        tops[0] <= tops[1] && tops[1] < tops[2],
        "{at}: the lead page's order: {tops:?}"
    );
}

/// Every page a team member sees (a lead's with a conversion and its deliveries), at a
/// laptop's width and a phone's, in both browsers:
/// no page scrolls sideways and no text is cut off; the laptop shows at least 12 leads
/// without scrolling, and the phone shows leads as cards with the first in the first
/// screen.
async fn every_page_fits_a_laptop_and_a_phone(engine: Engine) {
    let site = busy_site().await;
    // Ada's page shows a conversion with its deliveries and a long note.
    let update = StatusUpdate {
        identifier: LeadIdentifier::LeadId(LeadId(1)),
        conversion_id: site.customer.parse().unwrap(),
        price: Some(125_050),
        note: Some(Some(
            "Signed the yearly plan after a long call with the whole team".into(),
        )),
    };
    let by = Actor::api_key("lt_browser00");
    site.store()
        .update_status(site.acme().id, &update, &by, chrono::Utc::now())
        .await
        .unwrap();
    // A comment of Olive's on Ada's lead, which she may edit.
    let olive = site.store().user_by_email(OWNER.0).await.unwrap();
    let olive_id = olive.id;
    let olive = Actor::User {
        id: olive.id,
        name: olive.name,
    };
    // Ada's lead is Olive's: the inbox names her as "You", and Mine lists it.
    site.store()
        .assign(
            site.acme().id,
            &[LeadId(1)],
            Some(olive_id),
            &olive,
            chrono::Utc::now(),
        )
        .await
        .unwrap();
    let said = "Called twice, no answer. @mo can you try on Monday morning?";
    site.store()
        .add_comment(site.acme().id, LeadId(1), &olive, said, chrono::Utc::now())
        .await
        .unwrap();
    // Next steps: one overdue, one later (the Due page, the rows, the lead page).
    for (lead, hours, note) in [
        (
            1,
            -26,
            "Send the quote for 40 seats and the onboarding plan",
        ),
        (2, 50, "Demo"),
    ] {
        let at = chrono::Utc::now() + chrono::Duration::hours(hours);
        let step = leadtrack::core::next_step::NextStep::new(at, note).unwrap();
        site.store()
            .set_next_step(site.acme().id, LeadId(lead), Some(&step), &olive, at)
            .await
            .unwrap();
    }
    // A pending invitation (and its page), an audit event, and links' pages.
    let invite = LinkToken::generate();
    let invitation = NewInvitation::new("nia@example.com", Role::Viewer, &by).unwrap();
    site.store()
        .invite(
            site.acme().id,
            &invitation,
            &invite.hash(),
            chrono::Utc::now(),
        )
        .await
        .unwrap();
    let exported = ProjectActivity::Exported {
        view: "status=open&form=contact&source=google".into(),
    };
    let from = Attribution {
        actor: by.clone(),
        address: Some("203.0.113.77".into()),
    };
    site.store()
        .record_project_event(site.acme().id, &from, &exported, chrono::Utc::now())
        .await
        .unwrap();
    let invitation_page = format!("/invitations/{}", invite.expose());
    let reset_page = format!("/password/reset/{}", LinkToken::generate().expose());
    let confirm_page = format!("/profile/email/{}", LinkToken::generate().expose());
    let label_page = format!("/projects/acme/settings/labels/{}", site.customer);
    let typeform = InboundHook::new(
        site.acme().id,
        ("Typeform: demo requests", Preset::Typeform),
        None,
    );
    site.store().save_inbound_hook(&typeform).await.unwrap();
    let past =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("target/past-leads-{engine:?}.csv"));
    std::fs::write(
        &past,
        "email,firstName,lastName,Phone number,createdAt,Campaign notes
         ada@example.com,Ada,Lovelace,+44 20 7946 0001,2025-03-01 10:00,Met at the spring fair
         ,,,,2025-03-02,
         grace@example.com,Grace,Hopper,+1 202 555 0147,2025-03-03 14:30,Asked for a quote
",
    )
    .unwrap();
    let pages = [
        ("projects", "/"),
        ("profile", "/profile"),
        ("audit", "/projects/acme/settings/audit"),
        ("invitation", invitation_page.as_str()),
        ("forgot-password", "/password/forgot"),
        ("reset-password", reset_page.as_str()),
        ("confirm-email", confirm_page.as_str()),
        ("inbox", "/projects/acme/leads"),
        ("inbox-mine", "/projects/acme/leads?tab=mine"),
        ("due", "/projects/acme/leads/due"),
        (
            "inbox-filtered",
            "/projects/acme/leads?form=contact&source=google&view=1",
        ),
        ("lead", "/projects/acme/leads/1"),
        ("reports", "/projects/acme/reports"),
        (
            "reports-weekly",
            "/projects/acme/reports?per=week&show=value&by=campaign",
        ),
        ("labels", "/projects/acme/settings/labels"),
        ("label", label_page.as_str()),
        ("integrations", "/projects/acme/settings/integrations"),
        ("sources", "/projects/acme/settings/sources"),
        ("inbound", "/projects/acme/settings/inbound"),
        ("import", "/projects/acme/settings/import"),
        ("webhooks", "/projects/acme/settings/webhooks"),
        ("keys", "/projects/acme/settings/keys"),
        ("members", "/projects/acme/settings/members"),
        ("project", "/projects/acme/settings/project"),
        ("spam", "/projects/acme/settings/spam"),
        ("assignment", "/projects/acme/settings/assignment"),
        ("alerts", "/projects/acme/settings/alerts"),
        ("install", "/projects/acme/settings/install"),
    ];
    let browser = Browser::start_in(engine).await;
    let c = &browser.client;
    site.sign_in(&browser, OWNER).await;
    for (width, height, screen) in WIDTHS {
        browser.viewport(width, height).await;
        for (name, path) in pages {
            c.goto(&format!("{}{path}", site.base())).await.unwrap();
            let shot = format!("{engine:?}-{screen}-{name}").to_lowercase();
            photograph(&browser, &shot).await;
            // Parts below the fold: the weekly trend, and a lead's comments.
            let below = match name {
                "reports-weekly" => Some(("trend-heading", "trend")),
                "lead" => Some(("comments", "comments")),
                "reports" => Some(("touch-heading", "touch")),
                _ => None,
            };
            if let Some((id, part)) = below {
                let scroll = format!("document.getElementById('{id}').scrollIntoView();");
                c.execute(&scroll, vec![]).await.unwrap();
                photograph(&browser, &format!("{shot}-{part}")).await;
            }
            let at = format!("{engine:?} {screen} {name}");
            assert_fits(&browser, &at).await;
            if name == "lead" {
                assert_rating_follows_the_contact(&browser, &at).await;
            }
        }
        // A file uploaded: its columns and first rows, mapped.
        c.goto(&format!("{}/projects/acme/settings/import", site.base()))
            .await
            .unwrap();
        let file = c.find(Locator::Css("input[type=file]")).await.unwrap();
        file.send_keys(past.to_str().unwrap()).await.unwrap();
        c.find(Locator::Css("form[enctype] button[type=submit]"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        browser.wait_for("map-title").await;
        photograph(
            &browser,
            &format!("{engine:?}-{screen}-import-file").to_lowercase(),
        )
        .await;
        let at = format!("{engine:?} {screen} the import's mapping");
        assert_fits(&browser, &at).await;
        c.goto(&format!("{}/projects/acme/leads", site.base()))
            .await
            .unwrap();
        // Each of the inbox's panels, open alone, fits too.
        for (n, panel) in ["filters", "columns", "views"].into_iter().enumerate() {
            let open = format!(
                "document.querySelectorAll('details.popover').forEach((d, i) => d.open = i === {n});"
            );
            c.execute(&open, vec![]).await.unwrap();
            photograph(
                &browser,
                &format!("{engine:?}-{screen}-panel-{panel}").to_lowercase(),
            )
            .await;
            let at = format!("{engine:?} {screen} the {panel} panel");
            assert_fits(&browser, &at).await;
        }
        c.goto(&format!("{}/projects/acme/leads", site.base()))
            .await
            .unwrap();
        let visible = c
            .execute(
                "return [...document.querySelectorAll('tr[data-row]')]
                   .filter(r => r.getBoundingClientRect().bottom <= window.innerHeight).length;",
                vec![],
            )
            .await
            .unwrap();
        let visible = visible.as_u64().unwrap();
        if screen == "laptop" {
            assert!(
                visible >= 12,
                "{engine:?}: {visible} leads in view at 1366×768"
            );
        } else {
            assert!(
                visible >= 1,
                "{engine:?}: a lead card in the phone's first screen"
            );
        }
    }
    browser.close().await;
    viewer_pages_fit(&site, engine).await;
}

/// A viewer's inbox and lead page, at both widths: they fit, and show no rating control.
async fn viewer_pages_fit(site: &Site, engine: Engine) {
    let browser = Browser::start_in(engine).await;
    let c = &browser.client;
    site.sign_in(&browser, VIEWER).await;
    for (width, height, screen) in WIDTHS {
        browser.viewport(width, height).await;
        for (name, path) in [
            ("inbox", "/projects/acme/leads"),
            ("lead", "/projects/acme/leads/1"),
        ] {
            c.goto(&format!("{}{path}", site.base())).await.unwrap();
            photograph(
                &browser,
                &format!("{engine:?}-{screen}-viewer-{name}").to_lowercase(),
            )
            .await;
            let at = format!("{engine:?} {screen} a viewer's {name}");
            assert_fits(&browser, &at).await;
            let controls = c
                .execute("return document.querySelectorAll('[data-rating], [data-select], .rate-form, .bulk-bar').length;", vec![])
                .await
                .unwrap();
            assert_eq!(controls, json!(0), "{at} shows rating controls");
        }
    }
    browser.close().await;
}

/// The id of the inbox's current row (`tr.current`), once there is one.
async fn current_row(browser: &Browser) -> i64 {
    let c = &browser.client;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        if let Ok(row) = c.find(Locator::Css("tr.current")).await {
            let id = row.attr("id").await.unwrap().unwrap_or_default();
            return id.trim_start_matches("lead-").parse().unwrap();
        }
        assert!(std::time::Instant::now() < deadline, "no current row");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// Rates the current row by keyboard: `1` picks the first label, `p` goes to the price,
/// `price` is typed, and Enter saves; then the next row is the current one.
async fn rate_current_row(browser: &Browser, price: &str) -> i64 {
    let id = current_row(browser).await;
    press(browser, "1").await;
    press(browser, "p").await;
    let field = browser.client.active_element().await.unwrap();
    assert_eq!(
        field.attr("id").await.unwrap(),
        Some(format!("price-{id}")),
        "p goes to the row's price"
    );
    field.send_keys(price).await.unwrap();
    field.send_keys(&Key::Enter.to_string()).await.unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while current_row(browser).await == id {
        assert!(std::time::Instant::now() < deadline, "saving moves on");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    id
}

/// Two rows rated by keyboard, each with its price, without leaving the list: each is a
/// rating like any other (waiting out its undo window, one job), the row says so, and `?`
/// lists the keys.
async fn two_rows_are_rated_by_keyboard_with_prices(engine: Engine) {
    let site = busy_site().await;
    let browser = Browser::start_in(engine).await;
    let c = &browser.client;
    site.sign_in(&browser, OWNER).await;
    browser.viewport(1366, 768).await;
    site_window(site.store(), site.acme(), 30).await;
    c.goto(&format!("{}/projects/acme/leads", site.base()))
        .await
        .unwrap();
    let counts = async || {
        let mut counts = Vec::new();
        for key in ["open", "pending"] {
            let css = format!("[data-count={key}]");
            let count = c
                .find(Locator::Css(&css))
                .await
                .unwrap()
                .text()
                .await
                .unwrap();
            counts.push(count.parse::<i64>().unwrap());
        }
        counts
    };
    let before = counts().await;
    press(&browser, "j").await;
    let first = rate_current_row(&browser, "1500").await;
    let second = rate_current_row(&browser, "250.50").await;
    assert_ne!(first, second);
    // The tabs' counts follow, without a reload.
    assert_eq!(counts().await, [before[0] - 2, before[1] + 2], "{engine:?}");
    for (id, cents) in [(first, 150_000), (second, 25_050)] {
        let lead = site
            .store()
            .find_lead(site.acme().id, &LeadIdentifier::LeadId(LeadId(id)))
            .await
            .unwrap();
        assert_eq!(
            (
                lead.status,
                lead.price,
                lead.conversion_id.map(|c| c.to_string())
            ),
            (
                LeadStatus::Pending,
                Some(cents),
                Some(site.customer.clone())
            ),
            "{engine:?}: lead {id}"
        );
        let jobs = site.store().lead_jobs(site.acme().id, LeadId(id)).await;
        assert_eq!(jobs.unwrap().len(), 1, "one rating, one job");
        let waiting = c
            .find(Locator::Css(&format!("#lead-{id} .held-row")))
            .await
            .unwrap();
        assert!(
            waiting.text().await.unwrap().starts_with("sent in"),
            "{engine:?}: the row shows its rating waiting"
        );
    }
    press(&browser, "?").await;
    let help = c.find(Locator::Css("dialog[open]")).await.unwrap();
    assert!(help.text().await.unwrap().contains("Keys in the inbox"));
    browser.close().await;
}

/// `a` takes the current row's lead: it is assigned to the viewer, the row says "You", and
/// Mine lists it.
async fn the_a_key_takes_a_lead_and_mine_lists_it(engine: Engine) {
    let site = busy_site().await;
    let browser = Browser::start_in(engine).await;
    let c = &browser.client;
    site.sign_in(&browser, OWNER).await;
    browser.viewport(1366, 768).await;
    c.goto(&format!("{}/projects/acme/leads", site.base()))
        .await
        .unwrap();
    press(&browser, "j").await;
    let id = current_row(&browser).await;
    press(&browser, "a").await;
    wait_until(&browser, "the lead taken", |_, text| {
        text.contains("1 lead assigned.")
    })
    .await;
    let lead = site
        .store()
        .find_lead(site.acme().id, &LeadIdentifier::LeadId(LeadId(id)))
        .await
        .unwrap();
    let olive = site.store().user_by_email(OWNER.0).await.unwrap();
    assert_eq!(lead.assignee.map(|a| a.id), Some(olive.id), "{engine:?}");
    let cell = c
        .find(Locator::Css(&format!("#lead-{id} td[data-col=assignee]")))
        .await
        .unwrap();
    assert_eq!(cell.text().await.unwrap(), "You", "{engine:?}");
    c.goto(&format!("{}/projects/acme/leads?tab=mine", site.base()))
        .await
        .unwrap();
    let rows = c.find_all(Locator::Css("tr[data-row]")).await.unwrap();
    assert_eq!(rows.len(), 1, "{engine:?}: Mine lists the one lead taken");
    assert_eq!(
        rows[0].attr("id").await.unwrap(),
        Some(format!("lead-{id}"))
    );
    browser.close().await;
}

/// What the API says of lead `id`: its status, price (in cents) and how many jobs it has.
async fn seen_by_api(site: &Site, id: i64) -> (String, Option<i64>, usize) {
    let client = site.app.client();
    let identifier = leadtrack::core::api::LeadIdentifier::LeadId(LeadId(id));
    let lead = client.get_lead(&identifier).await.unwrap();
    let jobs = client.get_lead_jobs(&identifier).await.unwrap();
    let lead = serde_json::to_value(&lead).unwrap();
    let price = lead["price"].as_i64();
    (
        lead["status"].as_str().unwrap().to_owned(),
        price,
        jobs.jobs.len(),
    )
}

/// With "review before sending", ratings made in the rows are drafts: the API sees none
/// of them (no status, no job), until "Send N ratings" sends them as one batch, which
/// one Undo (`u`) takes back whole.
async fn drafts_stay_out_of_the_api_until_sent_as_one_batch_with_one_undo(engine: Engine) {
    let site = busy_site().await;
    let review = ProjectSettings {
        review_ratings: Some(true),
        undo_window_seconds: Some(60),
        ..ProjectSettings::default()
    };
    site.store()
        .update_project(site.acme().id, review)
        .await
        .unwrap();
    let browser = Browser::start_in(engine).await;
    let c = &browser.client;
    site.sign_in(&browser, OWNER).await;
    browser.viewport(1366, 768).await;
    press(&browser, "j").await;
    let first = rate_current_row(&browser, "1200").await;
    let second = rate_current_row(&browser, "80").await;
    let bar = c.find(Locator::Css("[data-drafts-bar]")).await.unwrap();
    let said = bar.text().await.unwrap();
    assert!(said.starts_with("2 ratings kept as drafts"), "{said}");
    assert!(said.ends_with("Send 2 ratings"), "{said}");
    for id in [first, second] {
        let badge = c
            .find(Locator::Css(&format!("#lead-{id} [data-draft-badge]")))
            .await
            .unwrap();
        assert!(
            badge.is_displayed().await.unwrap(),
            "{engine:?}: the row's draft"
        );
        assert_eq!(seen_by_api(&site, id).await, ("open".to_owned(), None, 0));
    }
    // Shown as drafts to the rest of the team, after a reload too.
    c.refresh().await.unwrap();
    let shown = c
        .find(Locator::Css(&format!("#price-{first}")))
        .await
        .unwrap();
    assert_eq!(
        shown.prop("value").await.unwrap().as_deref(),
        Some("1,200.00")
    );

    click(c, "[data-drafts-bar] button").await;
    wait_until(&browser, "the batch sent", |_, text| {
        text.contains("2 leads rated")
    })
    .await;
    assert_eq!(
        seen_by_api(&site, first).await,
        ("pending".to_owned(), Some(120_000), 1)
    );
    assert_eq!(
        seen_by_api(&site, second).await,
        ("pending".to_owned(), Some(8_000), 1)
    );
    assert!(
        site.store()
            .drafts(site.acme().id)
            .await
            .unwrap()
            .is_empty()
    );

    press(&browser, "u").await;
    wait_until(&browser, "the batch undone", |_, text| {
        text.contains("2 ratings undone")
    })
    .await;
    for id in [first, second] {
        let (status, _, _) = seen_by_api(&site, id).await;
        assert_eq!(status, "open", "{engine:?}: undone, nothing left to send");
    }
    browser.close().await;
}

/// The text on the page whose contrast with what is behind it is below WCAG AA (4.5:1, or
/// 3:1 for large text), as `tag.class "text" ratio` lines.
async fn low_contrast(browser: &Browser) -> Value {
    browser
        .client
        .execute(
            r#"
            const parse = (c) => { const m = c.match(/[\d.]+/g) || [0, 0, 0, 0];
              return [+m[0], +m[1], +m[2], m.length > 3 ? +m[3] : 1]; };
            const lum = ([r, g, b]) => { const f = (v) => { v /= 255;
              return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
              return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
            const over = (top, under) => { const a = top[3];
              return [0, 1, 2].map((i) => top[i] * a + under[i] * (1 - a)).concat([1]); };
            const behind = (e) => { const layers = [];
              for (let n = e; n; n = n.parentElement) {
                const bg = parse(getComputedStyle(n).backgroundColor);
                if (bg[3] > 0) { layers.push(bg); if (bg[3] >= 1) break; } }
              let color = parse(getComputedStyle(document.documentElement).backgroundColor);
              if (color[3] === 0) color = [255, 255, 255, 1];
              for (const layer of layers.reverse()) color = over(layer, color);
              return color; };
            const low = [];
            for (const e of document.querySelectorAll('body *')) {
              if (e.offsetParent === null || e.closest('.visually-hidden, [hidden], svg')) continue;
              const text = [...e.childNodes].filter((n) => n.nodeType === 3)
                .map((n) => n.textContent.trim()).join('');
              if (!text) continue;
              const style = getComputedStyle(e);
              const back = behind(e);
              const fore = over(parse(style.color), back);
              const [a, b] = [lum(fore), lum(back)];
              const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
              const size = parseFloat(style.fontSize), bold = +style.fontWeight >= 700;
              const needed = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5;
              if (ratio < needed) low.push(e.tagName + '.' + e.className + ' "' + text.slice(0, 30) + '" ' + ratio.toFixed(2));
            }
            return low;"#,
            vec![],
        )
        .await
        .unwrap()
}

/// Dark mode: the system's preference is followed (Chromium emulates a dark system), and
/// the header's switch, remembered per user, sets it in both browsers; every page keeps
/// WCAG AA contrast in both schemes.
async fn dark_mode_follows_the_system_or_the_switch_and_keeps_aa_contrast(engine: Engine) {
    let site = busy_site().await;
    let pages = [
        "/projects/acme/leads",
        "/projects/acme/leads/1",
        "/projects/acme/reports",
        "/projects/acme/settings/labels",
        "/projects/acme/settings/integrations",
        "/projects/acme/settings/project",
        "/",
    ];
    let background = "return getComputedStyle(document.documentElement).backgroundColor;";
    let browser = Browser::start_in(engine).await;
    let c = &browser.client;
    site.sign_in(&browser, OWNER).await;
    browser.viewport(1366, 768).await;
    for path in pages {
        c.goto(&format!("{}{path}", site.base())).await.unwrap();
        assert_eq!(
            low_contrast(&browser).await,
            json!([]),
            "{engine:?} light {path}"
        );
    }
    if engine == Engine::Chromium {
        browser.prefer_dark(true).await;
        c.refresh().await.unwrap();
        assert_eq!(
            c.execute(background, vec![]).await.unwrap(),
            json!("rgb(13, 17, 23)")
        );
        browser.prefer_dark(false).await;
    }
    // The switch: dark, on every page, and remembered.
    c.goto(&format!("{}/projects/acme/reports", site.base()))
        .await
        .unwrap();
    click(c, "button.to-dark").await;
    wait_until(&browser, "dark", |url, _| {
        url.ends_with("/projects/acme/reports")
    })
    .await;
    for path in pages {
        c.goto(&format!("{}{path}", site.base())).await.unwrap();
        assert_eq!(
            c.execute(background, vec![]).await.unwrap(),
            json!("rgb(13, 17, 23)"),
            "{path}"
        );
        assert_eq!(
            low_contrast(&browser).await,
            json!([]),
            "{engine:?} dark {path}"
        );
        let name = path.trim_matches('/').replace('/', "-");
        photograph(&browser, &format!("{engine:?}-dark-{name}").to_lowercase()).await;
    }
    click(c, "button.to-light").await;
    wait_until(&browser, "light", |url, _| url.ends_with('/')).await;
    assert_eq!(
        c.execute(background, vec![]).await.unwrap(),
        json!("rgb(245, 247, 250)")
    );
    browser.close().await;
}

/// The headings of the inbox's columns, in order.
async fn headings(browser: &Browser) -> Vec<String> {
    let mut names = Vec::new();
    for th in browser
        .client
        .find_all(Locator::Css("table.inbox th[data-col]"))
        .await
        .unwrap()
    {
        names.push(th.attr("data-col").await.unwrap().unwrap_or_default());
    }
    names
}

/// The column chooser: a user shows the campaign and hides the email; the choice is kept
/// for them across sessions, and is theirs alone.
async fn the_column_chooser_is_remembered_per_user(engine: Engine) {
    let site = busy_site().await;
    let browser = Browser::start_in(engine).await;
    let c = &browser.client;
    site.sign_in(&browser, OWNER).await;
    browser.viewport(1366, 768).await;
    click(c, ".popover.columns summary").await;
    for name in ["email", "campaign"] {
        let selector = format!(".popover.columns input[value={name}]");
        click(c, &selector).await;
    }
    click(c, ".popover.columns button").await;
    wait_until(&browser, "the chosen columns", |_, text| {
        text.contains("spring_sale")
    })
    .await;
    let chosen = [
        "created", "name", "form", "source", "campaign", "clickIds", "assignee", "price", "status",
    ];
    assert_eq!(headings(&browser).await, chosen, "{engine:?}");
    browser.close().await;

    // A new session of the same user: the same columns. Another user: the defaults.
    let again = Browser::start_in(engine).await;
    site.sign_in(&again, OWNER).await;
    assert_eq!(headings(&again).await, chosen, "{engine:?}: kept");
    again.close().await;
    let member = Browser::start_in(engine).await;
    site.sign_in(&member, MEMBER).await;
    assert!(headings(&member).await.contains(&"email".to_owned()));
    member.close().await;
    // Back to the defaults for the next browser.
    let owner = site.store().user_by_email(OWNER.0).await.unwrap();
    let defaults = leadtrack::core::account::Preferences::default();
    site.store()
        .set_preferences(owner.id, &defaults)
        .await
        .unwrap();
}

/// Typing `@` and the start of a name in a comment offers the teammates it fits; the arrow
/// keys and Enter pick one, which the comment then names (and the server tells).
async fn at_offers_teammates_while_a_comment_is_typed(engine: Engine) {
    let site = site().await;
    let browser = Browser::start_in(engine).await;
    let c = &browser.client;
    site.sign_in(&browser, OWNER).await;
    browser.viewport(1366, 768).await;
    c.goto(&format!("{}/projects/acme/leads/1", site.base()))
        .await
        .unwrap();
    let field = c.find(Locator::Css("#comment-text")).await.unwrap();
    field.send_keys("Call back? @m").await.unwrap();
    let list = c.find(Locator::Css("#mention-list")).await.unwrap();
    assert!(
        list.is_displayed().await.unwrap(),
        "{engine:?}: @m opens the list"
    );
    let offered = c
        .find_all(Locator::Css("#mention-list li:not([hidden])"))
        .await
        .unwrap();
    let mut names = Vec::new();
    for option in &offered {
        names.push(option.text().await.unwrap());
    }
    assert_eq!(names.len(), 1, "{engine:?}: only Mo fits @m: {names:?}");
    assert_eq!(
        field.attr("aria-expanded").await.unwrap().as_deref(),
        Some("true")
    );
    field.send_keys(&Key::Enter.to_string()).await.unwrap();
    let typed = field.prop("value").await.unwrap().unwrap_or_default();
    let handle = offered[0].attr("data-handle").await.unwrap().unwrap();
    assert_eq!(typed, format!("Call back? @{handle} "), "{engine:?}");
    assert!(
        !list.is_displayed().await.unwrap(),
        "{engine:?}: picked, it closes"
    );
    c.find(Locator::Css(".comment-form button[type=submit]"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_until(&browser, "the comment saved", |url, _| {
        url.ends_with("#comments")
    })
    .await;
    let saved = site
        .store()
        .comments(site.acme().id, LeadId(1))
        .await
        .unwrap();
    assert_eq!(saved[0].text, format!("Call back? @{handle}"), "{engine:?}");
    browser.close().await;
}

/// A form tool's page offers Copy beside the webhook's address: a click puts it on the
/// clipboard, and the button says so.
async fn copy_puts_a_webhook_address_on_the_clipboard(engine: Engine) {
    let site = site().await;
    let hook = InboundHook::new(site.acme().id, ("Typeform", Preset::Typeform), None);
    site.store().save_inbound_hook(&hook).await.unwrap();
    let browser = Browser::start_in(engine).await;
    let c = &browser.client;
    site.sign_in(&browser, OWNER).await;
    browser.viewport(1366, 768).await;
    c.goto(&format!("{}/projects/acme/settings/inbound", site.base()))
        .await
        .unwrap();
    let address = c
        .find(Locator::Css("code[data-copyable]"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let copy = c.find(Locator::Css("button.copy")).await.unwrap();
    assert_eq!(
        copy.attr("aria-label").await.unwrap().as_deref(),
        Some("Copy the webhook's address")
    );
    copy.click().await.unwrap();
    wait_until(&browser, "the address copied", |_, text| {
        text.contains("Copied")
    })
    .await;
    // What the clipboard holds, read back by pasting it into a field.
    c.execute(
        "const f = document.createElement('textarea'); f.id = 'pasted'; document.body.append(f);",
        vec![],
    )
    .await
    .unwrap();
    let field = c.find(Locator::Css("#pasted")).await.unwrap();
    field.click().await.unwrap();
    field
        .send_keys(&format!("{}v{}", Key::Control, Key::Null))
        .await
        .unwrap();
    let pasted = field.prop("value").await.unwrap().unwrap_or_default();
    assert_eq!(pasted, address, "{engine:?}");
    browser.close().await;
}

/// The value of the first field `css` finds, as the page holds it now.
async fn field_value(browser: &Browser, css: &str) -> String {
    let script = format!("return document.querySelector({css:?}).value;");
    let value = browser.client.execute(&script, vec![]).await.unwrap();
    value.as_str().unwrap_or_default().to_owned()
}

/// `f` on an inbox row opens its next step in a dialog: the time picked is the browser's
/// clock (Chromium's set to Berlin's, an hour east of UTC in January; Firefox's the
/// machine's), the row shows the step, clicking it opens it again as saved; on the lead
/// page `f` goes to the same step, shown on the browser's clock, and Done ends it.
async fn the_f_key_sets_a_next_step_on_the_browsers_clock(engine: Engine) {
    let site = busy_site().await;
    let browser = Browser::start_in(engine).await;
    let c = &browser.client;
    site.sign_in(&browser, OWNER).await;
    browser.viewport(1366, 768).await;
    if engine == Engine::Chromium {
        browser.time_zone("Europe/Berlin").await;
    }
    let inbox = format!("{}/projects/acme/leads", site.base());
    c.goto(&inbox).await.unwrap();
    press(&browser, "j").await;
    let id = current_row(&browser).await;
    press(&browser, "f").await;
    c.find(Locator::Css("dialog[data-step-dialog][open]"))
        .await
        .unwrap();
    let focused = c.active_element().await.unwrap();
    assert_eq!(
        focused.attr("id").await.unwrap().as_deref(),
        Some("step-at")
    );
    // The browser's offset from UTC on that day, in minutes east.
    let offset = c
        .execute(
            "return -new Date('2030-01-02T10:30').getTimezoneOffset();",
            vec![],
        )
        .await
        .unwrap()
        .as_i64()
        .unwrap();
    if engine == Engine::Chromium {
        assert_eq!(offset, 60, "Berlin's clock");
    }
    c.execute(
        "document.querySelector('dialog [data-step-at]').value = '2030-01-02T10:30';",
        vec![],
    )
    .await
    .unwrap();
    let note = c.find(Locator::Css("#step-note")).await.unwrap();
    note.send_keys("Call back about pricing").await.unwrap();
    note.send_keys(&Key::Enter.to_string()).await.unwrap();
    wait_until(&browser, "the row's step", |_, text| {
        text.contains("· Call back about pricing")
    })
    .await;
    let local = chrono::NaiveDate::from_ymd_opt(2030, 1, 2)
        .unwrap()
        .and_hms_opt(10, 30, 0)
        .unwrap()
        .and_utc();
    let expected = local - chrono::Duration::minutes(offset);
    let steps = site
        .store()
        .next_steps(site.acme().id, &[LeadId(id)])
        .await
        .unwrap();
    assert_eq!(steps.len(), 1, "{engine:?}");
    assert_eq!(
        (steps[0].1.at, steps[0].1.note.as_str()),
        (expected, "Call back about pricing"),
        "{engine:?}"
    );
    // The row's step opens the dialog again, as saved.
    click(c, &format!("#lead-{id} [data-next-step]")).await;
    c.find(Locator::Css("dialog[data-step-dialog][open]"))
        .await
        .unwrap();
    assert_eq!(
        field_value(&browser, "dialog [data-step-at]").await,
        "2030-01-02T10:30"
    );
    assert_eq!(
        field_value(&browser, "dialog [data-step-note]").await,
        "Call back about pricing"
    );
    click(c, "[data-step-cancel]").await;

    // The lead page: f goes to its step, on the browser's clock; Done ends it.
    c.goto(&format!("{inbox}/{id}")).await.unwrap();
    press(&browser, "f").await;
    let focused = c.active_element().await.unwrap();
    assert_eq!(
        focused.attr("id").await.unwrap().as_deref(),
        Some("step-at")
    );
    assert_eq!(
        field_value(&browser, "#step-at").await,
        "2030-01-02T10:30",
        "{engine:?}"
    );
    click(c, "#next-step button[name=done]").await;
    wait_until(&browser, "the step done", |_, text| {
        text.contains("Next step marked done.")
    })
    .await;
    let steps = site.store().next_steps(site.acme().id, &[LeadId(id)]).await;
    assert!(steps.unwrap().is_empty(), "{engine:?}");
    browser.close().await;
}
