//! The capture script in a real headless Chromium, driven through chromedriver
//! (`support/browser.rs`).

#[path = "support/browser.rs"]
mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use chrono::Utc;
use fantoccini::Locator;
use leadtrack::client::Client as ApiClient;
use leadtrack::core::api::{LeadId, LeadIdentifier};
use leadtrack::core::project::{NewProject, Project};
use leadtrack::core::request::LeadQuery;
use leadtrack::core::{Admin, LeadStore};
use leadtrack::sqlite::SqliteStore;
use serde_json::{Value, json};
use warp::Filter;

use support::{Browser, serve};

/// The API (the standalone app, in this process) over a fresh store, counting the CORS
/// preflights of createLead it answers.
struct Api {
    base_url: String,
    store: SqliteStore,
    project: Project,
    key: String,
    preflights: Arc<AtomicUsize>,
}

async fn api() -> Api {
    let store = SqliteStore::open_temporary().await.expect("a store");
    let project = store
        .create_project(
            NewProject {
                public_id: Some("prj_browser".into()),
                name: "Browser".into(),
                currency: None,
            },
            Utc::now(),
        )
        .await
        .expect("a project");
    let key = store
        .issue_api_key(project.id, Utc::now())
        .await
        .expect("a key")
        .key;
    let preflights = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&preflights);
    let count = warp::method()
        .and(warp::path::full())
        .map(
            move |method: warp::http::Method, path: warp::path::FullPath| {
                if method == warp::http::Method::OPTIONS && path.as_str() == "/api/leads/createLead"
                {
                    counter.fetch_add(1, Ordering::SeqCst);
                }
            },
        )
        .untuple_one();
    let addr = serve(count.and(leadtrack::warp::app(store.clone(), Default::default()))).await;
    Api {
        base_url: format!("http://{addr}"),
        store,
        project,
        key,
        preflights,
    }
}

impl Api {
    fn client(&self) -> ApiClient {
        ApiClient::new(&self.base_url).with_api_key(&self.key)
    }

    /// Waits until `count` more writes than `before` reached the store: each create is one.
    async fn wait_for_writes(&self, before: u64, count: u64) {
        let deadline = Instant::now() + Duration::from_secs(15);
        while self.store.write_stats().writes < before + count {
            assert!(
                Instant::now() < deadline,
                "expected {count} writes, saw {}",
                self.store.write_stats().writes - before
            );
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }
}

/// Fills the demo contact form.
async fn fill_form(browser: &Browser) {
    for (name, value) in [
        ("first_name", "Ada"),
        ("last_name", "Lovelace"),
        ("email", "ada@example.com"),
        ("phone", "+44 20 7946 0958"),
        ("company", "Analytical Engines"),
        ("budget", "10k"),
        ("message", "Please call me back"),
    ] {
        browser
            .client
            .find(Locator::Css(&format!("[name={name}]")))
            .await
            .expect("a form field")
            .send_keys(value)
            .await
            .expect("typing");
    }
}

const LANDING_QUERY: &str =
    "gclid=TESTGCLID&fbclid=TESTFBCLID&utm_source=newsletter&utm_medium=email&utm_campaign=spring";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_visit_and_a_double_submit_make_one_fully_attributed_lead() {
    let Some(browser) = Browser::start().await else {
        return;
    };
    let api = api().await;
    let base = &api.base_url;

    // Cookies other tags set, before the landing page loads.
    browser
        .client
        .goto(&format!("{base}/health"))
        .await
        .expect("open the site");
    browser.cookie("_ga", "GA1.1.123456789.1700000000").await;
    browser
        .cookie(
            "_ga_TEST123",
            "GS2.1.s1700000123$o5$g1$t1700000456$j0$l0$h0",
        )
        .await;
    browser.cookie("_fbp", "fb.1.1700000000000.987654321").await;

    let landing = format!("{base}/demo?projectId=prj_browser&{LANDING_QUERY}");
    browser
        .client
        .goto(&landing)
        .await
        .expect("open the landing page");
    wait_for_script(&browser).await;
    browser.click_and_wait("contact", "contact-form").await;
    wait_for_script(&browser).await;
    assert!(
        !browser
            .client
            .current_url()
            .await
            .unwrap()
            .as_str()
            .contains("gclid"),
        "the form is on another page than the click"
    );
    fill_form(&browser).await;

    // Two submit events in a row, as a double click sends them; the page then navigates.
    let before = api.store.write_stats().writes;
    browser
        .client
        .execute("const form = document.getElementById('contact-form'); form.requestSubmit(); form.requestSubmit();", vec![])
        .await
        .expect("submit twice");
    browser.wait_for("thanks").await;
    api.wait_for_writes(before, 2).await;

    let page = api
        .client()
        .get_leads(&LeadQuery::default())
        .await
        .expect("list leads");
    assert_eq!(page.total, 1, "a double submit is one lead");
    let lead = &page.leads[0];
    assert_eq!(lead.form_name.as_deref(), Some("Demo contact"));
    assert_eq!(
        (
            lead.first_name.as_deref(),
            lead.last_name.as_deref(),
            lead.email.as_deref(),
            lead.phone.as_deref(),
            lead.company_name.as_deref()
        ),
        (
            Some("Ada"),
            Some("Lovelace"),
            Some("ada@example.com"),
            Some("+44 20 7946 0958"),
            Some("Analytical Engines")
        )
    );
    let form = lead.form_data.as_ref().expect("form data");
    assert_eq!(form["formMessage"], "Please call me back");
    assert_eq!(form["formFields"]["budget"], "10k");
    assert!(
        form["uniqueEventId"]
            .as_str()
            .is_some_and(|id| id.len() >= 8),
        "{form:?}"
    );

    let attribution = lead.attribution_data.as_ref().expect("attribution");
    assert_eq!(
        attribution["gclid"], "TESTGCLID",
        "kept across the navigation"
    );
    assert_eq!(attribution["cid"], "123456789.1700000000");
    assert_eq!(attribution["sid"], "1700000123");
    assert_eq!(attribution["fbp"], "fb.1.1700000000000.987654321");
    let fbc = attribution["fbc"].as_str().expect("fbc built from fbclid");
    let parts: Vec<&str> = fbc.split('.').collect();
    assert_eq!(
        (parts.len(), parts[0], parts[1], parts[3]),
        (4, "fb", "1", "TESTFBCLID"),
        "{fbc}"
    );
    let built_at = parts[2].parse::<i64>().expect("a millisecond timestamp");
    assert!(
        (Utc::now().timestamp_millis() - built_at).abs() < 120_000,
        "{fbc}"
    );
    assert_eq!(
        (
            attribution["utm_source"].as_str(),
            attribution["utm_medium"].as_str(),
            attribution["utm_campaign"].as_str()
        ),
        (Some("newsletter"), Some("email"), Some("spring"))
    );

    let flow: Value =
        serde_json::from_str(lead.channel_flow.as_deref().expect("a channel flow")).expect("JSON");
    let entries = flow.as_array().expect("an array");
    assert_eq!(entries.len(), 1, "one session, one channel: {flow}");
    assert_eq!(
        entries[0]["ch"],
        json!({"s": "newsletter", "m": "email", "cm": "spring", "ct": "", "tm": ""})
    );
    assert_eq!(entries[0]["lp"], landing);
    assert!(
        (Utc::now().timestamp_millis() - entries[0]["t"].as_i64().expect("a timestamp")).abs()
            < 120_000
    );

    let stored = api
        .store
        .find_lead(api.project.id, &LeadIdentifier::LeadId(lead.id))
        .await
        .unwrap();
    assert_eq!(
        stored.data.device_data.ip_address.as_deref(),
        Some("127.0.0.1"),
        "filled by the server"
    );
    let agent = stored
        .data
        .device_data
        .user_agent
        .clone()
        .unwrap_or_default();
    assert!(agent.contains("Chrome"), "{agent}");

    browser.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_on_another_origin_passes_the_preflight() {
    let Some(browser) = Browser::start().await else {
        return;
    };
    let api = api().await;
    let site = serve(
        leadtrack::warp::demo_allowing([api.base_url.clone()]).recover(|_| async {
            Ok::<_, std::convert::Infallible>(warp::http::StatusCode::NOT_FOUND)
        }),
    )
    .await;
    let page_origin = format!("http://{site}");
    assert_ne!(page_origin, api.base_url, "two origins");

    let landing = format!(
        "{page_origin}/demo/contact?projectId=prj_browser&api={}&utm_source=partner&utm_medium=referral",
        api.base_url
    );
    browser.client.goto(&landing).await.expect("open the page");
    wait_for_script(&browser).await;

    // The script's own API, from the page's origin to the API's.
    let answer = browser
        .client
        .execute_async(
            "const done = arguments[arguments.length - 1];
             leadtrack.trackLead({userData: {email: 'grace@example.com', firstName: 'Grace'}, formData: {formName: 'Callback'}})
               .then(id => done({id}), error => done({error: String(error)}));",
            vec![],
        )
        .await
        .expect("trackLead settles");
    let id = answer["id"]
        .as_i64()
        .map(LeadId)
        .unwrap_or_else(|| panic!("trackLead failed: {answer}"));
    assert!(
        api.preflights.load(Ordering::SeqCst) >= 1,
        "the JSON post was preflighted"
    );
    let lead = api
        .client()
        .get_lead(&LeadIdentifier::LeadId(id))
        .await
        .expect("the lead");
    assert_eq!(
        (lead.email.as_deref(), lead.form_name.as_deref()),
        (Some("grace@example.com"), Some("Callback"))
    );
    let attribution = lead.attribution_data.expect("attribution");
    assert_eq!(
        (
            attribution["utm_source"].as_str(),
            attribution["utm_medium"].as_str()
        ),
        (Some("partner"), Some("referral"))
    );

    // And the form on that page, which navigates away as it submits.
    fill_form(&browser).await;
    let before = api.store.write_stats().writes;
    browser.click_and_wait("send", "thanks").await;
    api.wait_for_writes(before, 1).await;
    let found = api
        .client()
        .get_lead(&LeadIdentifier::Email("ada@example.com".into()))
        .await
        .expect("the form's lead");
    assert_eq!(found.form_name.as_deref(), Some("Demo contact"));
    assert_eq!(
        api.client()
            .get_leads(&LeadQuery::default())
            .await
            .unwrap()
            .total,
        2
    );

    browser.close().await;
}

/// Waits until the page's script has loaded.
async fn wait_for_script(browser: &Browser) {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let loaded = browser
            .client
            .execute("return typeof window.leadtrack === 'object';", vec![])
            .await
            .expect("run JavaScript");
        if loaded == json!(true) {
            return;
        }
        assert!(Instant::now() < deadline, "leadtrack.js did not load");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}
